"""A list of values as one bound parameter, whatever its length: an array on PostgreSQL,
JSON text read with json_each on SQLite. A statement with such parameters is built and
compiled once (no expanding IN of one parameter per value), so it can run on the driver
(metastore.store.transactions.driver_rows)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import BigInteger, Text, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.elements import ColumnElement


def among(
    dialect: str, name: str, *, text: bool = False
) -> Callable[[ColumnElement[Any]], ColumnElement[bool]]:
    """A condition that a column is among the values of parameter NAME (of ids, or of TEXT
    values), for DIALECT; the parameter's value is `values(dialect, ...)`."""
    values: Any
    if dialect == "postgresql":
        array = bindparam(name, type_=ARRAY(Text if text else BigInteger))
        values = func.unnest(array).table_valued("value").render_derived()
    else:
        values = func.json_each(bindparam(name, type_=Text)).table_valued("value")
    return lambda column: column.in_(select(values.c.value))


def values(dialect: str, items: Iterable[Any]) -> Any:
    """ITEMS as the value of an `among` parameter for DIALECT, in sorted order."""
    ordered = sorted(items)
    return ordered if dialect == "postgresql" else json.dumps(ordered)
