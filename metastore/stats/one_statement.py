"""A per-call statistics write on PostgreSQL in one statement: the function
colstats_write_statistics (schema 0009) locks the table, finds the partition, upserts the
rows, marks their columns in COLUMN_STATS_ACCURATE and moves the table's and the
partition's versions, as metastore.stats.writes does in five statements, so that the write
costs one round trip and the commit.

What the function leaves to this side: the checks of the rows against their columns'
types (metastore.stats.validate), made on the types it returns, after it wrote (an error
rolls the transaction back, the write with it); and every case it refuses, with nothing
written (a table or partition not found under the names given, a column the owner lacks,
a text longer than its column keeps): the general path of metastore.stats.writes then
runs, finds a partition whose name was given in another spelling, or raises its error.
A write whose rows name a column twice takes the general path from the start.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any, NamedTuple

from sqlalchemy import TextClause, text
from sqlalchemy.orm import Session

from metastore import names
from metastore.stats.rows import StatsRow
from metastore.store.driver import driver_rows
from metastore.store.models import WRITE_FUNCTION


class Written(NamedTuple):
    """The table or partition a write wrote, for the checks of its rows."""

    where: str
    """How messages name it."""
    column_types: dict[str, str]
    """Its columns: name -> type, as stored."""


@functools.cache
def _call() -> TextClause:
    return text(
        f"SELECT written, column_names, column_types FROM {WRITE_FUNCTION}"
        "(:catalog, :db, :table, :partition, CAST(:rows AS jsonb))"
    )


def write(
    s: Session,
    db_arg: str,
    table_name: str,
    partition: str | None,
    catalog: str | None,
    rows: list[StatsRow],
    engine: str,
) -> Written | None:
    """Write ROWS of table TABLE_NAME of database DB_ARG (named as for lookup.table) or of
    its partition PARTITION (None: the table's own) for ENGINE, in one statement; None,
    with nothing written, where the general path must write them (see the module
    docstring)."""
    cat, db_name = names.split_catalog(db_arg)
    if catalog:
        cat = names.identifier(catalog)
    columns = [row["COLUMN_NAME"] for row in rows]
    if not db_name or not table_name or len(set(columns)) < len(columns):
        return None
    params = {
        "catalog": cat,
        "db": names.identifier(db_name),
        "table": names.identifier(table_name),
        "partition": partition,
        "rows": json.dumps([_json_row(row, engine) for row in rows]),
    }
    written, column_names, column_types = driver_rows(s, _call(), params)[0]
    if not written:
        return None
    where = f"{params['db']}.{params['table']}"
    where = f"partition {partition} of {where}" if partition is not None else f"table {where}"
    return Written(where, dict(zip(column_names, column_types, strict=True)))


def _json_row(row: StatsRow, engine: str) -> dict[str, Any]:
    """ROW as the function reads it (jsonb_populate_recordset): ENGINE set, COLUMN_TYPE in
    lower case (absent when not given), bytes in bytea's hex form and the doubles JSON has
    no number for as text."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, bytes | bytearray | memoryview):
            value = "\\x" + bytes(value).hex()
        elif isinstance(value, float) and not math.isfinite(value):
            value = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
        out[key] = value
    out["ENGINE"] = engine
    out["COLUMN_TYPE"] = (row["COLUMN_TYPE"] or "").lower() or None
    return out
