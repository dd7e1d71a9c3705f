"""Hive's column types as Arrow types, as DuckDB reads them, and partition values as values
of those types.

| Hive | Arrow | DuckDB |
|---|---|---|
| boolean | bool | BOOLEAN |
| tinyint, smallint, int, bigint | int8, int16, int32, int64 | TINYINT ... BIGINT |
| float, double | float32, float64 | FLOAT, DOUBLE |
| decimal(p,s) (bare decimal: (10,0)) | decimal128(p,s) | DECIMAL(p,s) |
| string, varchar(n), char(n) | utf8 | VARCHAR |
| binary | binary | BLOB |
| date | date32 | DATE |
| timestamp | timestamp[us] | TIMESTAMP |
| timestamp with local time zone | timestamp[us, UTC] | TIMESTAMP WITH TIME ZONE |
| interval_year_month, interval_day_time | month_day_nano_interval | INTERVAL |
| void | null | "NULL" |
| array<T> | list<T> | T[] |
| map<K,V> | map<K,V> | MAP(K, V) |
| struct<a:T,...> | struct<a: T, ...> | STRUCT(a T, ...) |
| uniontype<T,...> | sparse_union<T,...> | UNION(...) |

Timestamps are microseconds, DuckDB's TIMESTAMP: Hive's nanoseconds have no place there.

`statistics_covered` says which types DuckDB's Airport extension takes statistics for: a
type it does not know there fails the query (airport.md section 5), so a table advertises
statistics only when every column's type is covered. BLOB is left out although DuckDB takes
it: its bounds pass through Value::ToString, which escapes bytes, so no value says
"unknown" truthfully.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pyarrow as pa


def duckdb_type(arrow: pa.DataType) -> str:
    """DuckDB's name of the type it reads ARROW as (LogicalType::ToString), as it sends it
    in a column_statistics request."""
    simple = {
        pa.bool_(): "BOOLEAN",
        pa.int8(): "TINYINT",
        pa.int16(): "SMALLINT",
        pa.int32(): "INTEGER",
        pa.int64(): "BIGINT",
        pa.float32(): "FLOAT",
        pa.float64(): "DOUBLE",
        pa.string(): "VARCHAR",
        pa.binary(): "BLOB",
        pa.date32(): "DATE",
        pa.timestamp("us"): "TIMESTAMP",
        pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE",
        pa.month_day_nano_interval(): "INTERVAL",
        pa.null(): '"NULL"',
    }
    if arrow in simple:
        return simple[arrow]
    if pa.types.is_decimal(arrow):
        return f"DECIMAL({arrow.precision},{arrow.scale})"
    if pa.types.is_map(arrow):
        return f"MAP({duckdb_type(arrow.key_type)}, {duckdb_type(arrow.item_type)})"
    if pa.types.is_list(arrow):
        return f"{duckdb_type(arrow.value_type)}[]"
    if pa.types.is_struct(arrow):
        return "STRUCT(" + ", ".join(f"{f.name} {duckdb_type(f.type)}" for f in arrow) + ")"
    if pa.types.is_union(arrow):
        return "UNION(" + ", ".join(f"{f.name} {duckdb_type(f.type)}" for f in arrow) + ")"
    raise ValueError(f"no DuckDB type for {arrow}")


def is_nested(arrow: pa.DataType) -> bool:
    return bool(pa.types.is_nested(arrow)) and not pa.types.is_union(arrow)


_COVERED = (
    pa.types.is_boolean,
    pa.types.is_integer,
    pa.types.is_floating,
    pa.types.is_string,
    pa.types.is_date32,
    pa.types.is_timestamp,
    pa.types.is_decimal,
)
# DuckDB 1.2's Airport (the msgpack answer) reads numbers of these types only, besides
# VARCHAR and the nested types; DATE, DECIMAL and TIMESTAMP fail there.
_COVERED_LEGACY = (
    pa.types.is_boolean,
    pa.types.is_integer,
    pa.types.is_floating,
    pa.types.is_string,
)


def statistics_covered(arrow: pa.DataType, *, legacy: bool) -> bool:
    """Whether DuckDB's Airport takes statistics of a column of ARROW (LEGACY: DuckDB 1.2's,
    which also takes TIMESTAMP WITH TIME ZONE)."""
    if is_nested(arrow):
        return True
    if legacy:
        timestamp_tz = pa.types.is_timestamp(arrow) and arrow.tz is not None
        return timestamp_tz or any(test(arrow) for test in _COVERED_LEGACY)
    return any(test(arrow) for test in _COVERED)


_EPOCH = datetime.datetime(1970, 1, 1)
_TRUE = ("true", "1")
_FALSE = ("false", "0")


def key_value(text: str | None, arrow: pa.DataType) -> Any:
    """The value of a partition key of type ARROW whose partition value is TEXT (None for
    the default partition): a Python value pa.scalar takes for ARROW, or None for a text
    that is no value of the type (the key reads as NULL there, as in Spark)."""
    if text is None:
        return None
    try:
        if pa.types.is_string(arrow):
            return text
        if pa.types.is_integer(arrow):
            number = int(text.strip())
            bits = arrow.bit_width
            return number if -(2 ** (bits - 1)) <= number < 2 ** (bits - 1) else None
        if pa.types.is_boolean(arrow):
            lowered = text.strip().lower()
            return True if lowered in _TRUE else False if lowered in _FALSE else None
        if pa.types.is_floating(arrow):
            return float(text)
        if pa.types.is_decimal(arrow):
            value = decimal.Decimal(text.strip())
            if not value.is_finite():
                return None
            # Python's default context holds 28 digits; Hive's decimals have up to 38.
            scaled = value.quantize(
                decimal.Decimal(1).scaleb(-arrow.scale), context=decimal.Context(prec=80)
            )
            if scaled != value or len(scaled.as_tuple().digits) > arrow.precision:
                return None
            return scaled
        if pa.types.is_date32(arrow):
            return datetime.date.fromisoformat(text.strip())
        if pa.types.is_timestamp(arrow):
            moment = datetime.datetime.fromisoformat(text.strip())
            if moment.tzinfo is not None:
                moment = moment.astimezone(datetime.UTC).replace(tzinfo=None)
            if arrow.tz is not None:
                return moment.replace(tzinfo=datetime.UTC)
            return moment
        if pa.types.is_binary(arrow):
            return text.encode()
    except (ValueError, ArithmeticError):
        return None
    return None
