"""The Flight door: Arrow Flight for DuckDB's Airport extension (`metastore serve
--flight-port`). DuckDB attaches a Hive catalog, lists its databases and tables, plans
with the metastore's column statistics and scans the tables' files.

* :mod:`metastore.flight.server` - the service: each call a read of the core;
* :mod:`metastore.flight.door` - the core's errors as Flight errors;
* :mod:`metastore.flight.wire` - the msgpack of requests and replies;
* :mod:`metastore.flight.security` - TLS and the bearer token, the caller's headers;
* :mod:`metastore.flight.catalog` - schemas, tables and their Arrow schemas;
* :mod:`metastore.flight.types` - Hive's types as Arrow's (and DuckDB's);
* :mod:`metastore.flight.statistics` - column_statistics, in both encodings;
* :mod:`metastore.flight.scans` - endpoints and DoGet, with the job's readers;
* :mod:`metastore.flight.filters` - partition pruning with DuckDB's filters.

It imports nothing of the Thrift door (metastore.hms) nor of the IDL's generated code.
"""
