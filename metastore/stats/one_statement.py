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

A write that is all of its call's transaction (a single-object update) goes further
(`write_alone`): its rows are checked first, against the owner's columns as last seen
(OwnerColumns), and colstats_write_statistics_alone (schema 0010) writes them in a statement
that is a transaction of its own, only when those are still the owner's columns. One round
trip in all: none for BEGIN, none for COMMIT (Transactions.alone). When the columns are not
known, have changed, or do not fit the rows (a column may have been added since), the
function answers them and writes nothing; the rows are checked again against these. A write
whose rows fail that check, or that the function refuses for another reason, takes the path
above in the call's transaction, which then says why.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from sqlalchemy import TextClause, text
from sqlalchemy.orm import Session

from metastore.errors import MetastoreError
from metastore.stats.rows import StatsRow
from metastore.stats.validate import owner_rows
from metastore.store.driver import driver_rows
from metastore.store.models import WRITE_ALONE_FUNCTION, WRITE_FUNCTION
from metastore.store.seen_tables import SeenTables, table_key

if TYPE_CHECKING:
    from metastore.store.transactions import Transactions


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


@functools.cache
def _alone_call() -> TextClause:
    return text(
        f"SELECT written, column_names, column_types FROM {WRITE_ALONE_FUNCTION}"
        "(:catalog, :db, :table, :partition, CAST(:rows AS jsonb), CAST(:names AS text[]), "
        "CAST(:types AS text[]))"
    )


Columns = tuple[tuple[str, ...], tuple[str, ...]]
"""An owner's columns: their names and types, in order, as stored."""


OwnerColumns = SeenTables[Columns]
"""The columns of the owners of the writes alone, as last seen, by table (its partitions
mostly have its columns): what `write_alone` checks rows against before it writes."""


def write_alone(
    tx: Transactions,
    known: OwnerColumns,
    db_arg: str,
    table_name: str,
    partition: str | None,
    catalog: str | None,
    rows: list[StatsRow],
    engine: str,
) -> bool:
    """Write ROWS of table TABLE_NAME of database DB_ARG (named as for lookup.table) or of
    its partition PARTITION (None: the table's own) for ENGINE in one statement that is a
    transaction of its own, checked first against the owner's columns KNOWN (see the module
    docstring); True when written, False (nothing written) where the caller's transaction
    must write them. Only for a write that is all of its call's transaction, on
    PostgreSQL."""
    key = table_key(db_arg, table_name, catalog)
    if key is None:
        return False
    params: dict[str, Any] = {
        "catalog": key[0],
        "db": key[1],
        "table": key[2],
        "partition": partition,
        "rows": None,
        "names": None,
        "types": None,
    }
    columns = known.get(key)
    for answered_now in (False, True):  # the columns last seen, then those answered
        checked = None if columns is None else _checked(rows, columns, engine)
        if checked is None and answered_now:  # the rows do not fit the owner's columns
            return False  # the general path says why
        if checked is not None and columns is not None:
            params.update(rows=_json(checked), names=list(columns[0]), types=list(columns[1]))
        else:  # the owner's columns asked for, nothing written
            params.update(rows=None, names=None, types=None)
        written, column_names, column_types = tx.alone(_alone_call(), params)[0]
        if written:
            return True
        if column_names is None:  # no such table or partition under these names
            return False
        answered = (tuple(column_names), tuple(column_types))
        if checked is not None and answered == columns:  # refused for another reason
            return False
        known.put(key, answered)
        columns = answered
    return False


def _checked(rows: list[StatsRow], columns: Columns, engine: str) -> list[StatsRow] | None:
    """ROWS checked against the owner's COLUMNS (metastore.stats.validate.owner_rows), or
    None when they do not fit them."""
    try:
        return owner_rows(rows, dict(zip(*columns, strict=True)), "", engine)
    except MetastoreError:
        return None


def _json(rows: Sequence[StatsRow]) -> str:
    """ROWS (checked: ENGINE and COLUMN_TYPE set) as the function reads them: bytes in
    bytea's hex form, the doubles JSON has no number for as text, the fields left unset
    absent (jsonb_populate_recordset reads them as NULL; a write of one kind of statistics
    leaves most unset, and half the text is parsed)."""
    given = [{key: value for key, value in row.items() if value is not None} for row in rows]
    try:
        return json.dumps(given, default=_hex, allow_nan=False, separators=(",", ":"))
    except ValueError:  # a double that is not finite
        return json.dumps([_json_row(row, row["ENGINE"]) for row in rows], separators=(",", ":"))


def _hex(value: Any) -> str:
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    raise TypeError(f"{type(value).__name__} is not kept in a statistics row")


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
    columns = [row["COLUMN_NAME"] for row in rows]
    if len(set(columns)) < len(columns):
        return None
    owner = table_key(db_arg, table_name, catalog)
    if owner is None:
        return None
    params = {
        "catalog": owner[0],
        "db": owner[1],
        "table": owner[2],
        "partition": partition,
        "rows": json.dumps([_json_row(row, engine) for row in rows], separators=(",", ":")),
    }
    written, column_names, column_types = driver_rows(s, _call(), params)[0]
    if not written:
        return None
    where = f"{params['db']}.{params['table']}"
    where = f"partition {partition} of {where}" if partition is not None else f"table {where}"
    return Written(where, dict(zip(column_names, column_types, strict=True)))


def _json_row(row: StatsRow, engine: str) -> dict[str, Any]:
    """ROW as the function reads it (jsonb_populate_recordset): ENGINE set, COLUMN_TYPE in
    lower case (absent when not given), bytes in bytea's hex form, the doubles JSON has no
    number for as text, the fields left unset absent (read as NULL)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if value is None:
            continue
        if isinstance(value, bytes | bytearray | memoryview):
            value = "\\x" + bytes(value).hex()
        elif isinstance(value, float) and not math.isfinite(value):
            value = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
        out[key] = value
    out["ENGINE"] = engine
    out.pop("COLUMN_TYPE", None)
    if row["COLUMN_TYPE"]:
        out["COLUMN_TYPE"] = row["COLUMN_TYPE"].lower()
    return out
