"""A list of values as one bound parameter, whatever its length: an array's text on PostgreSQL,
JSON text read with json_each on SQLite. A statement with such parameters is built and
compiled once (no expanding IN of one parameter per value), so it can run on the driver
(metastore.store.driver)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
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
        # An untyped parameter cast in the SQL: the value is the array's text (`values`),
        # which SQLAlchemy would take apart as a list if the parameter were an ARRAY.
        array = cast(bindparam(name), ARRAY(Text if text else BigInteger))
        values = func.unnest(array).table_valued("value").render_derived()
    else:
        values = func.json_each(bindparam(name, type_=Text)).table_valued("value")
    return lambda column: column.in_(select(values.c.value))


def among_few(
    dialect: str, name: str, count: int
) -> Callable[[ColumnElement[Any]], ColumnElement[bool]]:
    """As `among` for ids, in a statement built for COUNT of them: for one,
    `column = CAST(:name AS BIGINT)`, whose parameter is the id (`few_values` gives the value
    for either).

    Why: an index lookup, where `among` is a semi-join on a list the database unpacks (on
    SQLite, for the rows below one table: 0.107 against 0.137 ms for get_table, in
    process), and on PostgreSQL a plan that costs the same whatever its value. PostgreSQL
    estimates an array parameter at ten values, so its plan made once for all calls looked
    dearer than one made for a single id: with plan_cache_mode auto it planned the statement
    again at every call (the rows below one table 0.33 ms so, against 0.10 ms; colstats's
    connections set force_generic_plan, see metastore.store.transactions). The id is sent
    as text and cast in the SQL, as the arrays are: psycopg 3 sends an int as smallint,
    integer or bigint by its size, and keeps a prepared statement per parameter types."""
    if count == 1:
        return lambda column: column == cast(bindparam(name), BigInteger)
    return among(dialect, name)


def few_values(dialect: str, ids: Sequence[int]) -> Any:
    """The value of a parameter of `among_few` for IDS (distinct): the id's text when there
    is one, else as `values` gives them."""
    return str(int(ids[0])) if len(ids) == 1 else values(dialect, ids)


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


def values(dialect: str, items: Iterable[int] | Iterable[str]) -> str:
    """ITEMS (ids, or text values) as the value of an `among` or `any_of` parameter for
    DIALECT, in sorted order: JSON on SQLite; on PostgreSQL the text of an array, which the
    statement casts to its type. Not a Python list there: the driver adapts a list item by
    item on every call (psycopg 3: 178 against 153 µs for a statement of three short arrays,
    on loopback), and the statements on the driver read up to five such lists each."""
    ordered: list[Any] = sorted(items)
    if dialect != "postgresql":
        return json.dumps(ordered)
    return array_text(ordered)


def array_text(items: Iterable[Any]) -> str:
    """ITEMS, in their order, as the text of a PostgreSQL array, for a parameter that the
    statement casts to its array type: ids, numbers, text, bytes (bytea) and None (NULL).
    psycopg adapts a list item by item on every call. The statistics upsert (20 arrays),
    interleaved: 10 rows 1,215 µs with lists against 1,041 with their text, 2,000 rows
    113 against 97 ms, 20,000 rows 1.11 against 1.13 s."""
    return "{" + ",".join(_array_item(item) for item in items) + "}"


def _array_item(item: Any) -> str:
    """ITEM as an element of a PostgreSQL array's text: NULL, a number as PostgreSQL reads
    it, bytes in bytea's hex form and a text value in double quotes, their backslashes and
    double quotes escaped by a backslash."""
    if item is None:
        return "NULL"
    if isinstance(item, int):
        return str(int(item))  # int() for a bool, which str() would spell True
    if isinstance(item, float):
        if math.isfinite(item):
            return repr(item)  # the shortest text that reads back as the same double
        return "NaN" if math.isnan(item) else "Infinity" if item > 0 else "-Infinity"
    if isinstance(item, bytes | bytearray | memoryview):
        return '"\\\\x' + bytes(item).hex() + '"'
    text: str = item
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
