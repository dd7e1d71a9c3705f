"""One set of statistics for Spark and for Hive-format readers (issue 10): conversions
between Hive-format column statistics and the ``spark.sql.statistics.*`` parameters that
Spark's optimizer reads and ``ANALYZE TABLE`` writes. No database code.

* histogram.py - Spark's histogram text (HistogramSerializer in lz4-java's block framing).
* kll_bins.py - ``histogram_from_kll`` / ``kll_from_histogram``, the estimates between Spark's
  equi-height histograms and Hive's KLL sketches (NumPy and DataSketches).
* values.py - Java's text of numbers, decimals, dates and timestamps as Spark keeps them.
"""
