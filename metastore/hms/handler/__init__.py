"""The ThriftHiveMetastore handler, by domain: one module per group of calls, composed into
the one object the Thrift processor calls (as mlflow composes its SQL store).

* :mod:`metastore.hms.handler.base` - the `call` decorator and the lookups every domain uses;
* :mod:`metastore.hms.handler.databases`, :mod:`~metastore.hms.handler.tables`,
  :mod:`~metastore.hms.handler.table_alter`, :mod:`~metastore.hms.handler.partitions`,
  :mod:`~metastore.hms.handler.partition_changes`, :mod:`~metastore.hms.handler.functions` - the
  metadata calls;
* :mod:`metastore.hms.handler.stats_writes`, :mod:`~metastore.hms.handler.stats_reads` - the column
  statistics calls;
* :mod:`metastore.hms.handler.locks` - the HMS locks (Iceberg's Hive catalog).
"""

from metastore.hms.handler.databases import DatabaseCalls
from metastore.hms.handler.functions import FunctionCalls
from metastore.hms.handler.locks import LockCalls
from metastore.hms.handler.partition_changes import PartitionChangeCalls
from metastore.hms.handler.partitions import PartitionCalls
from metastore.hms.handler.stats_reads import StatisticsReads
from metastore.hms.handler.stats_writes import StatisticsWrites
from metastore.hms.handler.table_alter import TableAlterCalls
from metastore.hms.handler.tables import TableCalls


class Handler(
    DatabaseCalls,
    TableCalls,
    TableAlterCalls,
    PartitionCalls,
    PartitionChangeCalls,
    FunctionCalls,
    StatisticsWrites,
    StatisticsReads,
    LockCalls,
):
    """Implements the calls of thrift/hive_metastore.thrift over the HMS schema."""

    def shutdown(self) -> None:
        """fb303's shutdown, which Hive 2.3 clients send (oneway) before they reconnect: it
        asks HMS to release the connection's resources; colstats holds none per connection."""


__all__ = ["Handler"]
