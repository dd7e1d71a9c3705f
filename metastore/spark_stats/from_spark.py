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
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from metastore import names
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
from metastore.stats.rows import StatsRow, empty_row
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
    statistics: list[StatsRow] = field(default_factory=list)
    """Column statistics to write (engine ENGINE), one row per converted column, for the
    core's statistics write (metastore.stats.writes)."""
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
    analyzed = int(time.time())
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
        row = empty_row(names.identifier(name), hive_type.lower(), ctype.kind.value, ENGINE)
        row["LAST_ANALYZED"] = analyzed
        try:
            values = column_values(spark, spark_name)
            fill_row(row, ctype, values, num_rows, max_kll_values)
        except ValueError as exc:  # HistogramFormatError included
            log.warning("Spark statistics of column %s skipped: %s", spark_name, exc)
            continue
        statistics.append(row)
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


def fill_row(
    row: StatsRow,
    ctype: ColumnType,
    values: Mapping[str, str],
    num_rows: int | None,
    max_kll_values: int = MAX_KLL_VALUES,
) -> None:
    """ROW with the Hive statistics of a column of CTYPE from Spark's VALUES (stat ->
    text); ValueError for what Spark would not read, or what Hive needs and Spark did not
    give."""
    version = parse_java_long(_need(values, "version"), (-(2**31), 2**31 - 1))
    if str(version) != VERSION:
        raise ValueError(f"statistics version {version} (only {VERSION} is read)")
    nulls = _need_count(values, "nullCount")
    non_null = num_rows - nulls if num_rows is not None and num_rows >= nulls else None
    kind = ctype.kind
    row["NUM_NULLS"] = nulls
    if kind is Kind.BOOLEAN:
        row["NUM_TRUES"], row["NUM_FALSES"] = _boolean_counts(values, non_null)
        return
    if kind is Kind.BINARY:
        row["MAX_COL_LEN"], row["AVG_COL_LEN"] = _lengths(values)
        return
    row["NUM_DISTINCTS"] = _need_count(values, "distinctCount") + (1 if nulls > 0 else 0)
    if kind is Kind.STRING:
        row["MAX_COL_LEN"], row["AVG_COL_LEN"] = _lengths(values)
        return
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
    row["HISTOGRAM"] = histogram or None
    if kind is Kind.DECIMAL:
        row["BIG_DECIMAL_LOW_VALUE"] = _decimal(low)
        row["BIG_DECIMAL_HIGH_VALUE"] = _decimal(high)
    elif kind is Kind.DOUBLE:
        row["DOUBLE_LOW_VALUE"], row["DOUBLE_HIGH_VALUE"] = low, high
    else:  # integers; dates in days and timestamps in seconds, as the row keeps them
        row["LONG_LOW_VALUE"], row["LONG_HIGH_VALUE"] = low, high


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


def _decimal(value: Decimal | None) -> str | None:
    """A decimal bound as the row keeps it: the exact text, its scale kept ('-10.50'), and
    zero without a sign, as Hive's unscaled value has none."""
    if value is None:
        return None
    text = format(value, "f")
    return text.removeprefix("-") if value.is_zero() else text
