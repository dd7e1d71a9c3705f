"""`column_statistics`: what DuckDB's planner learns of a column, from the metastore's
statistics, and its two encodings (an Arrow IPC batch of one row; DuckDB 1.2's msgpack).

Where the numbers come from, for a column of a table:

* the table's statistics (TAB_COL_STATS, engine hive) when COLUMN_STATS_ACCURATE marks
  the column current;
* otherwise, for a partitioned table, the merge of its partitions' statistics
  (metastore.stats.reads.aggregate_statistics, HMS's merge: the union of the NDV sketches
  where every partition has one);
* otherwise the table's statistics that are not current, for the distinct count only;
* for a partition key, the partition values themselves.

What is sent as true, since DuckDB prunes with it (airport.md section 5):

* bounds only from current statistics: the table's marked accurate, or partitions that all
  have statistics for the column, every one marked accurate. Otherwise min and max are
  unknown, never stale. A timestamp's bounds, kept in whole seconds, are widened to the
  microseconds around them; a decimal's are rounded outward to the column's scale (and
  dropped when they no longer fit its precision); a float's low bound is rounded down to
  a float. The high bound of float and double columns is never sent: DuckDB orders NaN
  above every number, and Hive's statistics do not say whether a column holds NaN.
* has_null false only when current statistics count no NULL; has_not_null false only when
  they count as many NULLs as the current row count (numRows with BASIC_STATS);
* distinct_count is DuckDB's: distinct non-null values. Hive's numDVs counts NULL as one
  value where there are nulls, so 1 is taken off then; a union of sketches (which hold no
  NULL) is taken as it is. It is capped at the non-null rows when the row count is
  current. It is an estimate (an HLL sketch's, or the largest of the partitions' when
  they have no sketches to merge), which DuckDB uses for join orders only; 0 means
  unknown;
* strings: Hive keeps no bounds for them, so min is '' and max the highest UTF-8 text
  (DuckDB reads a NULL bound as the text 'NULL'); max_string_length is a byte bound: 4
  bytes a character of maxColLen (current statistics) or of varchar(n)/char(n);
  contains_unicode is always true (nothing says the text is ASCII).
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import logging
import math
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
from sqlalchemy.orm import Session

from metastore import names
from metastore.columns import Column
from metastore.flight import types
from metastore.flight.catalog import TableShape
from metastore.iceberg import parameters as iceberg
from metastore.iceberg import tables as iceberg_tables
from metastore.stats import accurate
from metastore.stats.queries import table_stats_by_name
from metastore.stats.reads import StatsTarget, aggregate_statistics
from metastore.stats.rows import StatsRow, as_stats_row
from metastore.store import shapes
from metastore.vocabulary import DEFAULT_ENGINE, Kind, base_type, type_parameters

log = logging.getLogger(__name__)

UNKNOWN_STRING_MIN = ""
UNKNOWN_STRING_MAX = "\U0010ffff\U0010ffff"
"""The highest valid UTF-8 text DuckDB keeps (8 bytes of a string's prefix)."""
MAX_DISTINCT = 2**63 - 1


@dataclasses.dataclass(frozen=True)
class ColumnStatistics:
    """What DuckDB is told of one column. MIN and MAX are Python values of the column's
    Arrow type, None when unknown."""

    has_null: bool = True
    has_not_null: bool = True
    distinct_count: int = 0
    min: Any = None
    max: Any = None
    max_string_length: int | None = None


@dataclasses.dataclass(frozen=True)
class _Partition:
    name: str
    accurate_columns: frozenset[str]
    row_count: int | None


def column_statistics(s: Session, shape: TableShape, index: int) -> ColumnStatistics:
    """The statistics of field INDEX of SHAPE (see the module docstring)."""
    column = shape.fields[index]
    partitions = _partitions(s, shape.stored.tbl_id) if shape.keys else []
    if index >= len(shape.columns):
        return _key_statistics(column, index - len(shape.columns), shape, partitions)
    if types.is_nested(column.arrow) or pa.types.is_null(column.arrow):
        return ColumnStatistics()
    name = column.name.lower()
    table_rows = table_stats_by_name(s, shape.catalog, shape.db, shape.name, [name], DEFAULT_ENGINE)
    table_row = as_stats_row(table_rows[0]) if table_rows else None
    table_accurate = name in accurate.accurate_columns(
        shape.params.get(accurate.KEY)
    ) and _of_current_snapshot(shape)
    if table_row is not None and table_accurate:
        rows = accurate.current_row_count(shape.params)
        return _from_row(column, table_row, current=True, rows=rows, sketch_union=False)
    if partitions:
        target = StatsTarget(
            shape.catalog,
            shape.db,
            shape.name,
            [name],
            [p.name for p in partitions],
            DEFAULT_ENGINE,
        )
        merged, found = aggregate_statistics(s, target, merge_histograms=False)
        if merged:
            current = found == len(partitions) and all(
                name in p.accurate_columns for p in partitions
            )
            counts = [p.row_count for p in partitions]
            rows = sum(c for c in counts if c is not None) if None not in counts else None
            union = found >= 2 and merged[0]["BIT_VECTOR"] is not None
            return _from_row(column, merged[0], current=current, rows=rows, sketch_union=union)
    if table_row is not None:
        return _from_row(column, table_row, current=False, rows=None, sketch_union=False)
    return _unknown(column)


def _of_current_snapshot(shape: TableShape) -> bool:
    """Whether the statistics of SHAPE describe its data as it is now: always for a Hive
    table (COLUMN_STATS_ACCURATE says it), for an Iceberg table when they were computed for
    its current snapshot (an HMS beside colstats keeps COLUMN_STATS_ACCURATE across
    commits)."""
    params = shape.params
    if not iceberg.is_iceberg(params):
        return True
    location, stated = (
        params.get(iceberg.METADATA_LOCATION),
        params.get(iceberg.STATISTICS_SNAPSHOT),
    )
    if not location or not stated:
        return False
    try:
        current = iceberg_tables.current_snapshot_id(shape.where, location)
    except iceberg_tables.IcebergError as e:
        log.warning("%s: %s", shape.where, e)
        return False
    return str(current) == stated


def _partitions(s: Session, tbl_id: int) -> list[_Partition]:
    """The partitions of table TBL_ID with their statistics' state."""
    return [
        _Partition(
            name,
            frozenset(accurate.accurate_columns(params.get(accurate.KEY))),
            accurate.current_row_count(params),
        )
        for name, params in shapes.partition_states(s, tbl_id)
    ]


def _unknown(column: Column) -> ColumnStatistics:
    return ColumnStatistics(max_string_length=_declared_length(column))


def _declared_length(column: Column) -> int | None:
    """A byte bound of a varchar(n) or char(n) column's values: 4 bytes a character."""
    if base_type(column.hive_type) in ("varchar", "char"):
        parameters = type_parameters(column.hive_type)
        if parameters:
            return 4 * parameters[0]
    return None


def _from_row(
    column: Column, row: StatsRow, *, current: bool, rows: int | None, sketch_union: bool
) -> ColumnStatistics:
    nulls = row["NUM_NULLS"]
    known_nulls = nulls if current and nulls is not None and nulls >= 0 else None
    has_null = known_nulls is None or known_nulls > 0
    has_not_null = not (known_nulls is not None and rows is not None and known_nulls >= rows)
    distinct = row["NUM_DISTINCTS"] or 0
    if distinct > 0 and not sketch_union and (nulls or 0) > 0:
        distinct -= 1
    if current and rows is not None and known_nulls is not None:
        distinct = min(distinct, max(rows - known_nulls, 0))
    kind = row["STATS_KIND"]
    if kind == Kind.BOOLEAN and current:  # unknown counts (-1: Spark writes none) give 0
        distinct = int((row["NUM_TRUES"] or 0) > 0) + int((row["NUM_FALSES"] or 0) > 0)
    low, high = _bounds(column.arrow, row) if current and has_not_null else (None, None)
    length = _declared_length(column)
    if current and kind == Kind.STRING and row["MAX_COL_LEN"] is not None:
        measured = 4 * max(row["MAX_COL_LEN"], 0)
        length = measured if length is None else min(length, measured)
    return ColumnStatistics(
        has_null=has_null,
        has_not_null=has_not_null,
        distinct_count=min(max(distinct, 0), MAX_DISTINCT),
        min=low,
        max=high,
        max_string_length=length if pa.types.is_string(column.arrow) else None,
    )


def _bounds(arrow: pa.DataType, row: StatsRow) -> tuple[Any, Any]:
    """The true bounds of ARROW's values that current statistics ROW give (None: unknown)."""
    kind = row["STATS_KIND"]
    if pa.types.is_integer(arrow) and kind == Kind.LONG:
        low, high = row["LONG_LOW_VALUE"], row["LONG_HIGH_VALUE"]
        least, most = -(2 ** (arrow.bit_width - 1)), 2 ** (arrow.bit_width - 1) - 1
        return (
            None if low is None else min(max(low, least), most),
            None if high is None else min(max(high, least), most),
        )
    if pa.types.is_floating(arrow) and kind == Kind.DOUBLE:
        return _float_low(arrow, row["DOUBLE_LOW_VALUE"]), None
    if pa.types.is_decimal(arrow) and kind == Kind.DECIMAL:
        return (
            _decimal(arrow, row["BIG_DECIMAL_LOW_VALUE"], decimal.ROUND_FLOOR),
            _decimal(arrow, row["BIG_DECIMAL_HIGH_VALUE"], decimal.ROUND_CEILING),
        )
    if pa.types.is_date32(arrow) and kind == Kind.DATE:
        return _day(row["LONG_LOW_VALUE"]), _day(row["LONG_HIGH_VALUE"])
    if pa.types.is_timestamp(arrow) and kind == Kind.TIMESTAMP:
        return (
            _instant(arrow, row["LONG_LOW_VALUE"], low=True),
            _instant(arrow, row["LONG_HIGH_VALUE"], low=False),
        )
    if pa.types.is_boolean(arrow) and kind == Kind.BOOLEAN:
        trues, falses = row["NUM_TRUES"] or 0, row["NUM_FALSES"] or 0
        if trues < 0 or falses < 0 or trues + falses == 0:  # unknown counts (-1), or none
            return None, None
        return falses == 0, trues > 0
    return None, None


def _float_low(arrow: pa.DataType, low: float | None) -> float | None:
    if low is None or math.isnan(low):
        return None
    if arrow.bit_width == 32 and math.isfinite(low):
        import numpy as np

        narrowed = np.float32(low)
        if float(narrowed) > low:
            narrowed = np.nextafter(narrowed, np.float32(-np.inf))
        return float(narrowed)
    return low


WIDE = decimal.Context(prec=80)
"""Room for any decimal Hive keeps (38 digits) while rounding: Python's default context holds
28 digits, and would refuse the bounds of decimal(38,10)."""


def _decimal(arrow: pa.DataType, text: str | None, rounding: str) -> decimal.Decimal | None:
    if text is None:
        return None
    try:
        value = decimal.Decimal(text)
        if not value.is_finite():
            return None
        rounded = value.quantize(
            decimal.Decimal(1).scaleb(-arrow.scale), rounding=rounding, context=WIDE
        )
    except decimal.InvalidOperation:
        return None
    return rounded if len(rounded.as_tuple().digits) <= arrow.precision else None


def _day(days: int | None) -> datetime.date | None:
    if days is None:
        return None
    try:
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=days)
    except OverflowError:
        return None


_MICROS = 1_000_000


def _instant(arrow: pa.DataType, seconds: int | None, *, low: bool) -> int | None:
    """Microseconds since 1970 bounding the values of a second SECONDS, as writers keep it:
    the floor of the time, or its truncation toward zero (before 1970). Outward both ways:
    the bound holds for either."""
    if seconds is None:
        return None
    if low:
        return seconds * _MICROS if seconds > 0 else (seconds - 1) * _MICROS + 1
    return (seconds + 1) * _MICROS - 1


def _key_statistics(
    column: Column, key_index: int, shape: TableShape, partitions: Sequence[_Partition]
) -> ColumnStatistics:
    """A partition key's statistics, from the values of the table's partitions."""
    if not partitions:
        return _unknown(column)
    key_names = [k.name.lower() for k in shape.keys]
    values = []
    for partition in partitions:
        try:
            text = names.partition_values(partition.name, key_names)[key_index]
        except (names.InvalidNameError, IndexError):
            return _unknown(column)
        raw = None if text == names.DEFAULT_PARTITION_VALUE else text
        values.append(types.key_value(raw, column.arrow))
    present = [v for v in values if v is not None]
    has_null = len(present) < len(values)
    distinct = len(set(present))
    if pa.types.is_floating(column.arrow):
        numbers = [v for v in present if not math.isnan(v)]
        low, high = (min(numbers) if numbers else None), None
    else:
        low = min(present) if present else None
        high = max(present) if present else None
    if pa.types.is_timestamp(column.arrow):
        low, high = _micros(low), _micros(high)
    length = None
    if pa.types.is_string(column.arrow):
        length = max((len(v.encode()) for v in present), default=0)
        low = UNKNOWN_STRING_MIN if low is None else low
    return ColumnStatistics(
        has_null=has_null,
        has_not_null=bool(present),
        distinct_count=distinct,
        min=low,
        max=high,
        max_string_length=length,
    )


def _micros(moment: datetime.datetime | None) -> int | None:
    if moment is None:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.UTC).replace(tzinfo=None)
    delta = moment - datetime.datetime(1970, 1, 1)
    return (delta.days * 86_400 + delta.seconds) * _MICROS + delta.microseconds


# -- encodings ------------------------------------------------------------------------------


def arrow_answer(stats: ColumnStatistics, arrow: pa.DataType) -> bytes:
    """STATS for a column of type ARROW as DuckDB reads them: an IPC stream of one batch
    of one row."""
    low, high = stats.min, stats.max
    if pa.types.is_string(arrow):
        low = UNKNOWN_STRING_MIN if low is None else low
        high = UNKNOWN_STRING_MAX if high is None else high
    has_null, has_not_null = stats.has_null, stats.has_not_null
    if not has_null and not has_not_null:  # DuckDB would read "no rows at all"
        has_null = has_not_null = True
    columns: dict[str, pa.Array] = {
        "has_not_null": pa.array([has_not_null], pa.bool_()),
        "has_null": pa.array([has_null], pa.bool_()),
        "distinct_count": pa.array([stats.distinct_count], pa.uint64()),
        "min": pa.array([low], arrow),
        "max": pa.array([high], arrow),
    }
    if pa.types.is_string(arrow):
        if stats.max_string_length is not None:
            columns["max_string_length"] = pa.array([stats.max_string_length], pa.uint64())
        columns["contains_unicode"] = pa.array([True], pa.bool_())
    batch = pa.RecordBatch.from_pydict(columns)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return bytes(sink.getvalue().to_pybytes())


_NUMERIC_FIELDS = {
    "boolean": False,
    "tinyint": 0,
    "smallint": 0,
    "integer": 0,
    "bigint": 0,
    "utinyint": 0,
    "usmallint": 0,
    "uinteger": 0,
    "ubigint": 0,
    "hugeint_high": 0,
    "hugeint_low": 0,
    "float_": 0.0,
    "double_": 0.0,
}
_INTEGER_FIELDS = {8: "tinyint", 16: "smallint", 32: "integer", 64: "bigint"}
_TIMESTAMP_INFINITY = 2**63 - 1


def legacy_answer(stats: ColumnStatistics, arrow: pa.DataType) -> dict[str, Any]:
    """STATS as DuckDB 1.2's Airport reads them: a msgpack map whose numeric min and max
    are always taken (has_min and has_max are ignored there), so an unknown bound is the
    type's extreme; a float's max is NaN, which DuckDB orders above every number."""
    low: dict[str, Any] = dict(_NUMERIC_FIELDS)
    high: dict[str, Any] = dict(_NUMERIC_FIELDS)
    if pa.types.is_boolean(arrow):
        low["boolean"] = bool(stats.min) if stats.min is not None else False
        high["boolean"] = bool(stats.max) if stats.max is not None else True
    elif pa.types.is_integer(arrow):
        field = _INTEGER_FIELDS[arrow.bit_width]
        low[field] = stats.min if stats.min is not None else -(2 ** (arrow.bit_width - 1))
        high[field] = stats.max if stats.max is not None else 2 ** (arrow.bit_width - 1) - 1
    elif pa.types.is_floating(arrow):
        field = "float_" if arrow.bit_width == 32 else "double_"
        low[field] = stats.min if stats.min is not None else -math.inf
        high[field] = math.nan
    elif pa.types.is_timestamp(arrow):
        low["bigint"] = stats.min if stats.min is not None else -_TIMESTAMP_INFINITY
        high["bigint"] = stats.max if stats.max is not None else _TIMESTAMP_INFINITY
    strings = {"min": UNKNOWN_STRING_MIN, "max": UNKNOWN_STRING_MAX}
    if pa.types.is_string(arrow) and stats.min is not None and stats.max is not None:
        strings = {"min": stats.min, "max": stats.max}
    has_null, has_not_null = stats.has_null, stats.has_not_null
    if not has_null and not has_not_null:
        has_null = has_not_null = True
    return {
        "has_null": has_null,
        "has_no_null": has_not_null,
        "distinct_count": stats.distinct_count,
        "numeric_stats": {
            "has_min": stats.min is not None,
            "has_max": stats.max is not None,
            "min": low,
            "max": high,
        },
        "string_stats": strings,
    }
