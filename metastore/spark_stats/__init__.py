"""One set of statistics for Spark and for Hive-format readers (issue 10): conversions
between Hive-format column statistics and the ``spark.sql.statistics.*`` parameters that
Spark's optimizer reads and ``ANALYZE TABLE`` writes. No database code.

* :func:`with_spark_statistics` / :func:`spark_statistics` (to_spark.py) - the parameters to
  serve Spark for a table or partition, from its parameters and stored statistics rows, with
  the digest parameter :data:`DIGEST_KEY` that recognises their echo.
* :func:`hive_statistics` (from_spark.py) - what to store when a client sends
  ``spark.sql.statistics.*`` keys: parameters to keep, Thrift column statistics, and whether
  the keys are an echo of what colstats derived.
* :func:`encode_histogram` / :func:`decode_histogram` (histogram.py) - Spark's histogram text.
* kll_bins.py - ``histogram_from_kll`` / ``kll_from_histogram``, the estimates between Spark's
  equi-height histograms and Hive's KLL sketches. It needs NumPy and DataSketches, which the
  rest does not import: a server loads them only when a histogram is converted.
* values.py - Java's text of numbers, decimals, dates and timestamps as Spark keeps them.
"""

from metastore.spark_stats.from_spark import ENGINE, FromSpark, hive_statistics
from metastore.spark_stats.histogram import (
    DEFAULT_BINS,
    Histogram,
    HistogramBin,
    HistogramFormatError,
    decode_histogram,
    encode_histogram,
)
from metastore.spark_stats.properties import DIGEST_KEY, PREFIX, statistics_digest
from metastore.spark_stats.to_spark import (
    spark_column_names,
    spark_statistics,
    with_spark_statistics,
)

__all__ = [
    "DEFAULT_BINS",
    "DIGEST_KEY",
    "ENGINE",
    "PREFIX",
    "FromSpark",
    "Histogram",
    "HistogramBin",
    "HistogramFormatError",
    "decode_histogram",
    "encode_histogram",
    "hive_statistics",
    "spark_column_names",
    "spark_statistics",
    "statistics_digest",
    "with_spark_statistics",
]
