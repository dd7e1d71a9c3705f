"""Hive-format statistics -> the ``spark.sql.statistics.*`` parameters Spark's optimizer reads.

Spark never reads ``TAB_COL_STATS`` / ``PART_COL_STATS``; it reads statistics only from the
table's (or partition's) parameters (``HiveExternalCatalog.statsFromProperties``), and falls
back to Hive's ``totalSize`` (else ``rawDataSize``) and ``numRows`` only when there is no
``spark.sql.statistics.*`` key at all, and only when they are > 0
(``HiveClientImpl.readHiveStats``). The rules colstats follows:

* Column statistics are derived only for the columns COLUMN_STATS_ACCURATE marks accurate,
  and only from the kind of statistics Hive writes for the column's type (a Trino
  ``longStats`` of a timestamp column is left out: its unit is not Hive's).
* ``numRows`` only when BASIC_STATS is accurate and numRows > 0: an accurate 0 is what Hive
  leaves on a table created empty and filled by files, and Spark itself ignores 0.
* ``totalSize`` (required by Spark whenever another key is present): Hive's totalSize when >
  0, else rawDataSize when > 0 (as readHiveStats, whatever BASIC_STATS says: they describe
  files), else numRows x Spark's row-size estimate (``EstimationUtils.getSizePerRow``: 8
  bytes plus each column's avgLen, or its type's defaultSize without statistics).
* Nothing is derived when there is neither a size nor a row count: a made-up size would
  steer Spark's join planning (a small one makes it broadcast the table), and without keys
  Spark keeps its own estimate. Nothing is derived either when only a size is known: Spark
  reads Hive's totalSize by itself.
* Values: ``version=2``; ``nullCount``; ``distinctCount`` without Hive's NULL (NDV - 1 when
  numNulls > 0), capped at the non-null rows and at least 1 when there are some; min/max in
  Spark's text for the Spark type (see values.py), both or neither, left out when they do
  not fit the type (Spark would fail the query at planning time); ``avgLen``/``maxLen`` the
  type's defaultSize for fixed-width types, the ceiling of Hive's average and the maximum for
  strings and binaries (defaultSize when all rows are NULL, as Spark writes them); booleans
  from numTrues/numFalses (min false when falses > 0, max true when trues > 0, distinctCount
  the number of those that are > 0; nothing when either count is unknown, i.e. negative);
  ``histogram`` from Hive's KLL sketch (kll_bins.histogram_from_kll).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from metastore.spark_properties import schema_fields, split_value
from metastore.spark_stats.histogram import DEFAULT_BINS, encode_histogram
from metastore.spark_stats.properties import (
    COLUMN_PREFIX,
    DIGEST_KEY,
    NUM_ROWS,
    TOTAL_SIZE,
    VERSION,
    is_spark_key,
    statistics_digest,
)
from metastore.spark_stats.values import (
    MICROS_PER_SECOND,
    ColumnType,
    big_decimal_text,
    column_type,
    date_text,
    decimal_at_scale,
    default_size,
    java_double_text,
    java_float_text,
    timestamp_text,
)
from metastore.stats import accurate
from metastore.vocabulary import Kind

log = logging.getLogger(__name__)

ROW_OVERHEAD = 8
"""EstimationUtils.getSizePerRow's bytes per row besides the columns."""

Columns = Iterable[tuple[str, str]]
"""(name, Hive type) of each column, in table order."""


def spark_statistics(
    parameters: Mapping[str, str],
    columns: Columns,
    rows: Iterable[Mapping[str, Any]],
    *,
    num_bins: int = DEFAULT_BINS,
) -> dict[str, str]:
    """The spark.sql.statistics.* parameters for a table or partition (empty when nothing is
    derived; see the module's rules).

    PARAMETERS are its stored parameters (numRows, totalSize, rawDataSize,
    COLUMN_STATS_ACCURATE); COLUMNS its columns, named as Spark names them (see
    spark_column_names); ROWS its statistics rows of engine 'hive', mappings of
    StatsRows (metastore.stats.rows). Long values are split as Spark splits them.
    """
    columns = list(columns)
    if not columns and not accurate.row_count(parameters):
        # Nothing is derived without columns, and nothing is said without a row count (the
        # rule below), as for most partitions: spared the parsing, once per partition.
        return {}
    basic = accurate.basic_accurate(parameters.get(accurate.KEY))
    fresh = {c.lower() for c in accurate.accurate_columns(parameters.get(accurate.KEY))}
    num_rows = (accurate.row_count(parameters) or None) if basic else None
    by_name = {str(row["COLUMN_NAME"]).lower(): row for row in rows}
    derived: dict[str, dict[str, str]] = {}
    row_size = ROW_OVERHEAD
    for name, hive_type in columns:
        ctype = column_type(hive_type)
        row = by_name.get(name.lower()) if name.lower() in fresh else None
        stats = None
        if ctype is not None and row is not None:
            stats = column_statistics(name, ctype, row, num_rows, num_bins)
        if stats:
            derived[name] = stats
        average = stats.get("avgLen") if stats else None
        row_size += int(average) if average is not None else default_size(hive_type)
    total_size = _positive(parameters.get("totalSize")) or _positive(parameters.get("rawDataSize"))
    if total_size is None and num_rows is not None:
        total_size = num_rows * row_size
    if total_size is None or (num_rows is None and not derived):
        return {}
    out = {TOTAL_SIZE: str(total_size)}
    if num_rows is not None:
        out[NUM_ROWS] = str(num_rows)
    for name, stats in derived.items():
        for stat, value in stats.items():
            out.update(split_value(f"{COLUMN_PREFIX}{name}.{stat}", value))
    return out


def with_spark_statistics(
    parameters: Mapping[str, str],
    columns: Columns,
    rows: Iterable[Mapping[str, Any]],
    *,
    num_bins: int = DEFAULT_BINS,
) -> dict[str, str]:
    """The parameters to return to a client: PARAMETERS with the derived keys of
    spark_statistics and their DIGEST_KEY. When keys are derived, any spark.sql.statistics.*
    keys stored before are replaced; when none are, PARAMETERS are returned as they are."""
    derived = spark_statistics(parameters, columns, rows, num_bins=num_bins)
    if not derived:
        return dict(parameters)
    out = {k: v for k, v in parameters.items() if not is_spark_key(k) and k != DIGEST_KEY}
    out.update(derived)
    digest = statistics_digest(derived)
    assert digest is not None
    out[DIGEST_KEY] = digest
    return out


def spark_column_names(parameters: Mapping[str, str]) -> dict[str, str]:
    """Lower-cased name -> name as Spark spells it, from the schema Spark keeps in a data
    source table's parameters (spark.sql.sources.schema, or its numParts and parts); empty
    when there is none or it does not parse. Spark matches column statistics to its columns
    by exact name (CatalogStatistics.toPlanStats), and the metastore's names are lower case."""
    fields = schema_fields(parameters) or []
    return {str(f["name"]).lower(): str(f["name"]) for f in fields}


# ------------------------------------------------------------------------------------------
# One column


def column_statistics(
    name: str,
    ctype: ColumnType,
    row: Mapping[str, Any],
    num_rows: int | None,
    num_bins: int = DEFAULT_BINS,
) -> dict[str, str] | None:
    """Stat -> Spark text for one column of CTYPE from its statistics ROW; None when the
    row's kind is not the one Hive writes for the type."""
    if row["STATS_KIND"] != ctype.kind.value:
        log.debug("column %s: %s statistics are not derived for Spark", name, row["STATS_KIND"])
        return None
    nulls = _count(row["NUM_NULLS"])
    non_null = num_rows - nulls if num_rows is not None and nulls is not None else None
    if non_null is not None and non_null < 0:
        non_null = None
    out = {"version": VERSION}
    if nulls is not None:
        out["nullCount"] = str(nulls)
    kind = ctype.kind
    if kind is Kind.BOOLEAN:
        out.update(_boolean(_count(row["NUM_TRUES"]), _count(row["NUM_FALSES"])))
    elif kind.has_ndv:
        distinct = spark_distinct_count(row["NUM_DISTINCTS"], nulls, non_null)
        if distinct is not None:
            out["distinctCount"] = str(distinct)
    out.update(_lengths(ctype, row, non_null))
    found = _bounds(name, ctype, row)
    bounds = None
    if found is not None:
        bounds, (out["min"], out["max"]) = found
    if kind.has_range and row["HISTOGRAM"] and num_bins > 0:
        histogram = _histogram(name, ctype, row, bounds, non_null, out, num_bins)
        if histogram is not None:
            out["histogram"] = histogram
    return out


def spark_distinct_count(ndv: int | None, nulls: int | None, non_null: int | None) -> int | None:
    """Spark's distinctCount of Hive's NDV: NULL not counted (NDV - 1 when there are NULLs),
    no more than the non-null rows and at least 1 when there are some; None when unknown."""
    if ndv is None or ndv < 0:
        return None
    distinct = ndv - 1 if nulls is not None and nulls > 0 else ndv
    distinct = max(distinct, 0)
    if non_null is not None:
        distinct = min(distinct, non_null)
        if non_null > 0:
            distinct = max(distinct, 1)
    return distinct


def _count(value: int | None) -> int | None:
    """A count, None when unknown (absent or negative, as Trino and Impala write -1)."""
    return value if value is not None and value >= 0 else None


def _positive(text: str | None) -> int | None:
    """A basic statistic > 0, parsed leniently (None when absent, malformed or <= 0)."""
    if not text:  # as most partitions say: spared a raised ValueError
        return None
    try:
        value = int(text.strip())
    except ValueError:
        return None
    return value if value > 0 else None


def _boolean(trues: int | None, falses: int | None) -> dict[str, str]:
    if trues is None or falses is None:
        return {}
    out = {"distinctCount": str((trues > 0) + (falses > 0))}
    if trues or falses:
        out["min"] = "false" if falses > 0 else "true"
        out["max"] = "true" if trues > 0 else "false"
    return out


def _lengths(ctype: ColumnType, row: Mapping[str, Any], non_null: int | None) -> dict[str, str]:
    if ctype.fixed_width or non_null == 0:
        return {"avgLen": str(ctype.default_size), "maxLen": str(ctype.default_size)}
    out = {}
    average, longest = row["AVG_COL_LEN"], row["MAX_COL_LEN"]
    if average is not None and math.isfinite(average) and average >= 0:
        out["avgLen"] = str(math.ceil(average))
    if longest is not None and longest >= 0:
        out["maxLen"] = str(longest)
    return out


Bound = int | float | Decimal


def _bounds(
    name: str, ctype: ColumnType, row: Mapping[str, Any]
) -> tuple[tuple[Bound, Bound], tuple[str, str]] | None:
    """The stored low and high of a column with a range, in Spark's units (days, micros),
    at the column's scale for decimals, and their Spark texts; None when either is missing
    or they do not fit."""
    kind = ctype.kind
    if not kind.has_range:
        return None
    if kind is Kind.DOUBLE:
        low, high = row["DOUBLE_LOW_VALUE"], row["DOUBLE_HIGH_VALUE"]
    elif kind is Kind.DECIMAL:
        low, high = row["BIG_DECIMAL_LOW_VALUE"], row["BIG_DECIMAL_HIGH_VALUE"]
        if low is not None and high is not None:
            low = decimal_at_scale(Decimal(low), ctype, upward=False)
            high = decimal_at_scale(Decimal(high), ctype, upward=True)
    else:
        low, high = row["LONG_LOW_VALUE"], row["LONG_HIGH_VALUE"]
        if kind is Kind.TIMESTAMP and low is not None and high is not None:
            low, high = low * MICROS_PER_SECOND, high * MICROS_PER_SECOND
    if low is None or high is None:
        return None
    if isinstance(low, float) and (math.isnan(low) or math.isnan(high)):
        return None
    limits = ctype.integer_range
    if low > high or (limits is not None and not limits[0] <= low <= high <= limits[1]):
        log.warning("column %s: low %s and high %s do not fit %s", name, low, high, ctype.base)
        return None
    try:
        texts = _range_text(ctype, low, high)
    except ValueError as exc:
        log.warning("column %s: %s", name, exc)
        return None
    return (low, high), texts


def _range_text(ctype: ColumnType, low: Bound, high: Bound) -> tuple[str, str]:
    return _text(ctype, low), _text(ctype, high)


def _text(ctype: ColumnType, value: Bound) -> str:
    if ctype.kind is Kind.DOUBLE:
        number = float(value)
        return java_float_text(number) if ctype.base == "float" else java_double_text(number)
    if isinstance(value, Decimal):
        return big_decimal_text(value)
    if ctype.kind is Kind.DATE:
        return date_text(int(value))
    if ctype.kind is Kind.TIMESTAMP:
        return timestamp_text(int(value))
    return str(value)


def _histogram(
    name: str,
    ctype: ColumnType,
    row: Mapping[str, Any],
    bounds: tuple[Bound, Bound] | None,
    non_null: int | None,
    stats: Mapping[str, str],
    num_bins: int,
) -> str | None:
    from metastore.sketches import SketchFormatError  # NumPy and DataSketches: only when needed
    from metastore.spark_stats.kll_bins import histogram_from_kll

    low, high = (float(bounds[0]), float(bounds[1])) if bounds is not None else (None, None)
    distinct = int(stats["distinctCount"]) if "distinctCount" in stats else None
    try:
        histogram = histogram_from_kll(
            bytes(row["HISTOGRAM"]),
            ctype.kind,
            non_null_rows=non_null,
            distinct=distinct,
            low=low,
            high=high,
            num_bins=num_bins,
        )
    except SketchFormatError as exc:
        log.warning("column %s: the histogram is not a KLL sketch (%s)", name, exc)
        return None
    return encode_histogram(histogram) if histogram is not None else None
