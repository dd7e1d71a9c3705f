"""A list of values as one bound parameter, whatever its length: an array on PostgreSQL,
JSON text read with json_each on SQLite. A statement with such parameters is built and
compiled once (no expanding IN of one parameter per value), so it can run on the driver
(metastore.store.driver)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import BigInteger, Text, any_, bindparam, cast, func, select
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


def any_of(
    dialect: str, name: str, *, text: bool = False
) -> Callable[[ColumnElement[Any]], ColumnElement[bool]]:
    """As `among`, but on PostgreSQL `column = ANY(array)`: a condition an index on the
    column answers directly, whatever the planner estimates (`among` is a semi-join, whose
    method it chooses from its estimates, which a table not yet analyzed gets wrong)."""
    if dialect != "postgresql":
        return among(dialect, name, text=text)
    array = cast(bindparam(name), ARRAY(Text if text else BigInteger))
    return lambda column: column == any_(array)


def values(dialect: str, items: Iterable[Any]) -> Any:
    """ITEMS as the value of an `among` parameter for DIALECT, in sorted order."""
    ordered = sorted(items)
    return ordered if dialect == "postgresql" else json.dumps(ordered)
