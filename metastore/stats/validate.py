"""The checks a statistics row passes before it is written, whatever door it came through.

A door decodes its request into StatsRows (metastore.stats.rows), checking what its wire
format leaves open (a missing field, a union with no member); this module checks what
makes statistics wrong for their column: a kind that does not fit the column's type, NaN
or infinite values where a number is needed, a low value above the high value, text longer
than the HMS schema keeps. Each check raises InvalidInput with a message that names the
column; nothing is ever cut short or coerced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import String

from metastore.errors import InvalidInput, InvalidObject
from metastore.stats.rows import StatsRow
from metastore.store import models as m
from metastore.vocabulary import Kind, kinds_for_type


def _width(column: str) -> int:
    """The width of a text column of the statistics tables (the HMS schema's)."""
    type_ = m.TableColumnStats.__table__.c[column].type
    assert isinstance(type_, String) and type_.length is not None
    return type_.length


MAX_TYPE_LENGTH = _width("COLUMN_TYPE")
MAX_ENGINE_LENGTH = _width("ENGINE")
MAX_DECIMAL_TEXT_LENGTH = _width("BIG_DECIMAL_LOW_VALUE")


def bad(column: str, problem: str) -> InvalidInput:
    """InvalidInput for a problem with the statistics of COLUMN."""
    return InvalidInput(f"column {column!r}: {problem}")


def check_engine(engine: str) -> None:
    if len(engine) > MAX_ENGINE_LENGTH:
        raise InvalidInput(
            f"engine is {len(engine)} characters long; at most {MAX_ENGINE_LENGTH} are kept"
        )


def _check_length(column: str, field: str, text: str | None, limit: int) -> None:
    if text is not None and len(text) > limit:
        raise bad(column, f"{field} is {len(text)} characters long; at most {limit} are kept")


def _check_range(column: str, low: Any, high: Any) -> None:
    if low is not None and high is not None and low > high:
        raise bad(column, f"lowValue {low} is greater than highValue {high}")


def _check_double(column: str, field: str, value: float | None, finite: bool = False) -> None:
    if value is None:
        return
    if math.isnan(value):
        raise bad(column, f"{field} is NaN")
    if finite and math.isinf(value):
        raise bad(column, f"{field} is infinite")


def checked(row: StatsRow, column_type: str) -> StatsRow:
    """A copy of ROW, checked for a column of COLUMN_TYPE (the table's or the partition's
    type of the column), with COLUMN_TYPE set to the column's type when the row names none
    (lower case, as HMS stores it)."""
    column = row["COLUMN_NAME"]
    kind = Kind(row["STATS_KIND"])
    member = kind.member
    allowed = kinds_for_type(column_type)
    if kind not in allowed:
        expected = (
            " or ".join(k.member for k in allowed) or "none (no statistics are kept for this type)"
        )
        raise bad(
            column, f"{member} does not fit a column of type {column_type!r}; expected {expected}"
        )
    stored_type = (row["COLUMN_TYPE"] or column_type).lower()
    _check_length(column, "colType", stored_type, MAX_TYPE_LENGTH)
    if kind in (Kind.STRING, Kind.BINARY):
        _check_double(column, f"{member}.avgColLen", row["AVG_COL_LEN"], finite=True)
    elif kind is Kind.DOUBLE:
        low, high = row["DOUBLE_LOW_VALUE"], row["DOUBLE_HIGH_VALUE"]
        _check_double(column, f"{member}.lowValue", low)
        _check_double(column, f"{member}.highValue", high)
        _check_range(column, low, high)
    elif kind is Kind.DECIMAL:
        low_text, high_text = row["BIG_DECIMAL_LOW_VALUE"], row["BIG_DECIMAL_HIGH_VALUE"]
        _check_range(column, low_text and Decimal(low_text), high_text and Decimal(high_text))
        _check_length(column, f"{member}.lowValue", low_text, MAX_DECIMAL_TEXT_LENGTH)
        _check_length(column, f"{member}.highValue", high_text, MAX_DECIMAL_TEXT_LENGTH)
    elif kind in (Kind.LONG, Kind.DATE, Kind.TIMESTAMP):
        _check_range(column, row["LONG_LOW_VALUE"], row["LONG_HIGH_VALUE"])
    out = row.copy()
    out["COLUMN_TYPE"] = stored_type
    return out


def owner_rows(
    rows: Sequence[StatsRow], column_types: dict[str, str], where: str, engine: str
) -> list[StatsRow]:
    """ROWS of one table or partition (WHERE), checked against its COLUMN_TYPES."""
    out = []
    seen: set[str] = set()
    for row in rows:
        column = row["COLUMN_NAME"]
        if column in seen:
            raise InvalidInput(f"column {column!r} appears twice in one request")
        seen.add(column)
        if column not in column_types:
            raise InvalidObject(f"{where} has no column {column!r}")
        stored = checked(row, column_types[column])
        stored["ENGINE"] = engine
        out.append(stored)
    return out
