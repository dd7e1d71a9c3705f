"""``spark.sql.statistics.*`` parameters written by Spark -> Hive-format statistics.

Spark's ``ANALYZE TABLE`` writes its statistics only as parameters, through
``alter_table_with_environment_context`` or ``alter_partitions``, and sends every
``spark.sql.statistics.*`` key it read back again on any later alter (its echo). colstats keeps
one source of truth: it stores what Spark computed as Hive-format statistics (engine ``hive``)
for Hive, Trino and ``get_*_statistics_req``, stores none of the ``spark.sql.statistics.*``
keys (Spark gets them derived again, to_spark.py), and recognises the echo by the digest
colstats sent with them (properties.py), so an echo of an old derivation never overwrites
newer statistics another engine wrote.

Conversion, per column found by its ``.version`` key (version 2 only: Spark 2.4 and later):

* ``numNulls`` = nullCount; ``numDVs`` = distinctCount + 1 when nullCount > 0 (Hive counts
  NULL as a value; Trino subtracts it again).
* low/high parsed per type as the JVM parses them: integers, doubles (NaN leaves the bound
  unset: Hive cannot store it), floats (the double of the float), exact decimals, dates (days),
  timestamps (Spark's UTC text, floored to whole seconds).
* strings: maxColLen = maxLen, avgColLen = avgLen (Spark's ceiling of the average), no
  low/high; binaries the same without NDV.
* booleans: Spark keeps no true/false counts. When min == max every non-null row holds that
  value, so the counts are exact (numRows - nullCount, and 0); when the column has no
  non-null row both are 0; otherwise both are -1, which Trino and Impala read as unknown.
* histogram -> a KLL sketch in Hive's units (kll_bins.kll_from_histogram): an estimate.
* Malformed values: Spark drops a column whose numbers do not parse (and fails queries on a
  min/max that does not parse); colstats skips such a column with a warning, and never fails
  the alter. Columns that are not in the table are skipped too.

Basic statistics: Spark's numRows and totalSize become Hive's, and numRows makes
COLUMN_STATS_ACCURATE's BASIC_STATS true. Marking the converted columns accurate is left to
the statistics write, which does it for every column it writes.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hive_metastore_thrift import ttypes as t
from metastore.spark_stats.histogram import MAX_KLL_VALUES, decode_histogram
from metastore.spark_stats.properties import (
    DIGEST_KEY,
    NUM_ROWS,
    TABLE_GROUP,
    TOTAL_SIZE,
    VERSION,
    column_names,
    column_values,
    echoed_groups,
    group_hashes,
    is_spark_key,
    spark_keys,
)
from metastore.spark_stats.to_spark import Columns
from metastore.spark_stats.values import (
    MICROS_PER_SECOND,
    ColumnType,
    column_type,
    decimal_at_scale,
    parse_big_decimal,
    parse_date,
    parse_java_double,
    parse_java_float,
    parse_java_long,
    parse_timestamp,
)
from metastore.stats import accurate
from metastore.thrift_stats import STRUCTS, make_union, thrift_decimal
from metastore.vocabulary import DEFAULT_ENGINE, Kind

log = logging.getLogger(__name__)

ENGINE = DEFAULT_ENGINE
"""The statistics engine the converted statistics are written for."""


@dataclass(frozen=True)
class FromSpark:
    """What to store for an incoming table or partition."""

    parameters: dict[str, str]
    """The parameters to keep: the incoming ones without spark.sql.statistics.* keys and
    without DIGEST_KEY, with the converted basic statistics and COLUMN_STATS_ACCURATE."""
    statistics: list[t.ColumnStatisticsObj] = field(default_factory=list)
    """Column statistics to write (engine ENGINE), one per converted column."""
    basic: dict[str, str] = field(default_factory=dict)
    """The converted basic statistics (numRows, totalSize), also in parameters."""
    echo: bool = False
    """Whether the incoming spark.sql.statistics.* keys are all exactly what colstats
    derived (then nothing is converted)."""
    echoed: frozenset[str] = frozenset()
    """The columns (and TABLE_GROUP for the table's own keys) sent back unchanged: not
    converted."""


def hive_statistics(
    parameters: Mapping[str, str],
    columns: Columns,
    *,
    max_kll_values: int = MAX_KLL_VALUES,
) -> FromSpark:
    """Hive-format statistics of a table or partition from its incoming PARAMETERS (an
    alter's new parameters); COLUMNS are its columns, (name, Hive type)."""
    spark = spark_keys(parameters)
    kept = {k: v for k, v in parameters.items() if not is_spark_key(k) and k != DIGEST_KEY}
    if not spark:
        return FromSpark(kept)
    echoed = echoed_groups(parameters)
    if echoed >= set(group_hashes(spark)):
        return FromSpark(kept, echo=True, echoed=frozenset(echoed))
    num_rows = _long(spark, NUM_ROWS)
    basic: dict[str, str] = {}
    if TABLE_GROUP not in echoed:
        total_size = _long(spark, TOTAL_SIZE)
        if num_rows is not None:
            basic["numRows"] = str(num_rows)
            kept[accurate.KEY] = accurate.with_basic(kept.get(accurate.KEY))
        if total_size is not None:
            basic["totalSize"] = str(total_size)
        kept.update(basic)
    types = {name.lower(): (name, hive_type) for name, hive_type in columns}
    statistics = []
    for spark_name in column_names(spark):
        if spark_name in echoed:
            continue
        name, hive_type = types.get(spark_name.lower(), (spark_name, ""))
        ctype = column_type(hive_type) if hive_type else None
        if ctype is None:
            log.warning(
                "Spark statistics of column %s skipped: no such column, or no statistics for "
                "its type %r",
                spark_name,
                hive_type,
            )
            continue
        try:
            values = column_values(spark, spark_name)
            data = column_data(ctype, values, num_rows, max_kll_values)
        except ValueError as exc:  # HistogramFormatError included
            log.warning("Spark statistics of column %s skipped: %s", spark_name, exc)
            continue
        statistics.append(t.ColumnStatisticsObj(name, hive_type, data))
    return FromSpark(kept, statistics, basic, echoed=frozenset(echoed))


def _long(spark: Mapping[str, str], key: str) -> int | None:
    text = spark.get(key)
    if text is None:
        return None
    try:
        return parse_java_long(text.strip(), (0, 2**63 - 1))
    except ValueError:
        log.warning("%s=%r is not a count; not converted", key, text)
        return None


def column_data(
    ctype: ColumnType,
    values: Mapping[str, str],
    num_rows: int | None,
    max_kll_values: int = MAX_KLL_VALUES,
) -> t.ColumnStatisticsData:
    """The Hive statistics of a column of CTYPE from Spark's VALUES (stat -> text);
    ValueError for what Spark would not read, or what Hive needs and Spark did not give."""
    version = parse_java_long(_need(values, "version"), (-(2**31), 2**31 - 1))
    if str(version) != VERSION:
        raise ValueError(f"statistics version {version} (only {VERSION} is read)")
    nulls = _need_count(values, "nullCount")
    non_null = num_rows - nulls if num_rows is not None and num_rows >= nulls else None
    kind = ctype.kind
    if kind is Kind.BOOLEAN:
        trues, falses = _boolean_counts(values, non_null)
        return make_union(kind, t.BooleanColumnStatsData(trues, falses, nulls))
    if kind is Kind.BINARY:
        longest, average = _lengths(values)
        return make_union(kind, t.BinaryColumnStatsData(longest, average, nulls))
    ndv = _need_count(values, "distinctCount") + (1 if nulls > 0 else 0)
    if kind is Kind.STRING:
        longest, average = _lengths(values)
        return make_union(kind, t.StringColumnStatsData(longest, average, nulls, ndv))
    low, high = (_bound(ctype, values.get(stat), stat == "max") for stat in ("min", "max"))
    if low is not None and high is not None and low > high:
        raise ValueError(f"min {values['min']} is greater than max {values['max']}")
    histogram = None
    if "histogram" in values:
        from metastore.spark_stats.kll_bins import kll_from_histogram  # NumPy: only when needed

        decoded = decode_histogram(values["histogram"])
        histogram = kll_from_histogram(
            decoded, kind, non_null_rows=non_null, max_values=max_kll_values
        )
    return make_union(kind, _ranged(kind, low, high, nulls, ndv, histogram))


def _need(values: Mapping[str, str], stat: str) -> str:
    if stat not in values:
        raise ValueError(f"no {stat}")
    return values[stat]


def _need_count(values: Mapping[str, str], stat: str) -> int:
    return parse_java_long(_need(values, stat), (0, 2**63 - 1))


def _lengths(values: Mapping[str, str]) -> tuple[int, float]:
    return _need_count(values, "maxLen"), float(_need_count(values, "avgLen"))


def _boolean_counts(values: Mapping[str, str], non_null: int | None) -> tuple[int, int]:
    """numTrues and numFalses: exact when all non-null rows hold one value (or none), -1
    (unknown) otherwise."""
    low, high = (values.get(stat) for stat in ("min", "max"))
    for text in (low, high):
        if text is not None and text.lower() not in ("true", "false"):
            raise ValueError(f"{text!r} is not a boolean")  # Scala's toBoolean refuses it
    if non_null == 0:
        return 0, 0
    if non_null is not None and low is not None and high is not None:
        if low.lower() == high.lower() == "true":
            return non_null, 0
        if low.lower() == high.lower() == "false":
            return 0, non_null
    return -1, -1


def _bound(ctype: ColumnType, text: str | None, upward: bool) -> Any:
    """A low or high in Hive's terms (None when absent, or NaN)."""
    if text is None:
        return None
    kind = ctype.kind
    if kind is Kind.LONG:
        limits = ctype.integer_range
        assert limits is not None
        return parse_java_long(text, limits)
    if kind is Kind.DOUBLE:
        value = parse_java_float(text) if ctype.base == "float" else parse_java_double(text)
        return None if math.isnan(value) else value
    if kind is Kind.DECIMAL:
        decimal = decimal_at_scale(parse_big_decimal(text), ctype, upward)
        if decimal is None:
            raise ValueError(f"{text} does not fit decimal({ctype.precision},{ctype.scale})")
        return decimal
    if kind is Kind.DATE:
        return parse_date(text)
    return parse_timestamp(text) // MICROS_PER_SECOND


def _ranged(kind: Kind, low: Any, high: Any, nulls: int, ndv: int, histogram: bytes | None) -> Any:
    """The Thrift statistics struct of a kind with low and high values."""
    if kind is Kind.DECIMAL:
        low = thrift_decimal(low) if low is not None else None
        high = thrift_decimal(high) if high is not None else None
    elif kind is Kind.DATE:
        low = t.Date(low) if low is not None else None
        high = t.Date(high) if high is not None else None
    elif kind is Kind.TIMESTAMP:
        low = t.Timestamp(low) if low is not None else None
        high = t.Timestamp(high) if high is not None else None
    return STRUCTS[kind](
        lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv, histogram=histogram
    )
