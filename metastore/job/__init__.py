"""The statistics job: HMS column statistics for a table and every partition, in one scan.

It runs in a Spark driver and its executors and talks to the metastore through the Thrift
client only: nothing here imports the server's database layer (SQLAlchemy, Alembic, drivers).

* :mod:`metastore.job.options` - what to analyze (:class:`AnalyzeOptions`);
* :mod:`metastore.job.source` - reading the data and planning the columns and partitions;
* :mod:`metastore.job.scan` - the one pass over the data, into partial statistics;
* :mod:`metastore.job.accumulators` - partial statistics of Arrow arrays, and their merge;
* :mod:`metastore.job.writer` - registering tables and partitions, writing statistics;
* :mod:`metastore.job.client` - the Thrift client, with retries;
* :mod:`metastore.job.analyze` - the job from start to summary (:func:`run`).
"""
