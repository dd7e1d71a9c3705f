"""The statistics job: HMS column statistics for a table and every partition, in one scan.

It runs in a Spark driver and its executors and talks to the metastore through the Thrift
client only: nothing here imports the server's database layer (SQLAlchemy, Alembic, drivers).

* :mod:`metastore.job.options` - what to analyze (:class:`AnalyzeOptions`);
* :mod:`metastore.job.prepare` - every check that needs no scan, before Spark starts;
* :mod:`metastore.job.source` - the columns and partitions to analyze (the plan);
* :mod:`metastore.job.located` - file sources: a folder, or a table found in the metastore;
* :mod:`metastore.job.ddl` - the --schema of csv and json, read without Spark;
* :mod:`metastore.job.scan` - the one pass over the data, into partials merged on executors;
* :mod:`metastore.job.accumulators` - partial statistics of Arrow arrays, and their merge;
* :mod:`metastore.job.skew` - skewed values, with a frequent-items sketch;
* :mod:`metastore.job.progress` - the progress bar or log lines;
* :mod:`metastore.job.storage` - the storage descriptor registered for each format;
* :mod:`metastore.job.writer` - registering tables and partitions, writing statistics in
  units that are undone when they fail;
* :mod:`metastore.job.table_level` - the table level of a run that read some partitions
  only (--incremental, --partition), merged from every partition's statistics and sketches;
* :mod:`metastore.job.interrupts` - Ctrl-C and SIGTERM during a run;
* :mod:`metastore.job.client` - the Thrift client: failover across URIs, retries, set_ugi,
  the metastore's answers as the job's exceptions (:mod:`metastore.job.errors`);
* :mod:`metastore.job.connection` - which URIs, Kerberos or TLS: the options, then Hive's
  settings (:mod:`metastore.job.settings`: Spark's, hive-site.xml, core-site.xml);
* :mod:`metastore.job.sasl_client` - Kerberos: Thrift's SASL transport with GSSAPI;
* :mod:`metastore.job.analyze` - the job from start to summary (:func:`run`).
"""
