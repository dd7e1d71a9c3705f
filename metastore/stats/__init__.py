"""The statistics core: column statistics read, merged, checked and written over the HMS
schema, whatever door a request came through. Nothing here knows the IDL.

* :mod:`~metastore.stats.rows` - a column's statistics as a typed row (StatsRow);
* :mod:`~metastore.stats.queries` - the statistics tables: bulk upserts, deletes, one-query
  reads;
* :mod:`~metastore.stats.reads` - one column, many columns of a table or its partitions, and
  the merge of many partitions (get_aggr_stats_for);
* :mod:`~metastore.stats.writes` - writes and deletes, with COLUMN_STATS_ACCURATE beside the
  rows;
* :mod:`~metastore.stats.validate` - what makes statistics wrong for their column;
* :mod:`~metastore.stats.aggregate` - merging rows; :mod:`~metastore.stats.accurate` -
  COLUMN_STATS_ACCURATE.
"""
