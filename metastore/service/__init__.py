"""The ThriftHiveMetastore handler, by domain: one module per group of calls, composed into
the one object the Thrift processor calls (as mlflow composes its SQL store).

* :mod:`metastore.service.base` - the `call` decorator and the lookups every domain uses;
* :mod:`metastore.service.databases`, :mod:`~metastore.service.tables`,
  :mod:`~metastore.service.table_alter`, :mod:`~metastore.service.partitions`,
  :mod:`~metastore.service.partition_changes`, :mod:`~metastore.service.functions` - the
  metadata calls;
* :mod:`metastore.service.stats_writes`, :mod:`~metastore.service.stats_reads` - the column
  statistics calls.
"""

from metastore.service.databases import DatabaseCalls
from metastore.service.functions import FunctionCalls
from metastore.service.partition_changes import PartitionChangeCalls
from metastore.service.partitions import PartitionCalls
from metastore.service.stats_reads import StatisticsReads
from metastore.service.stats_writes import StatisticsWrites
from metastore.service.table_alter import TableAlterCalls
from metastore.service.tables import TableCalls


class Handler(
    DatabaseCalls,
    TableCalls,
    TableAlterCalls,
    PartitionCalls,
    PartitionChangeCalls,
    FunctionCalls,
    StatisticsWrites,
    StatisticsReads,
):
    """Implements the calls of thrift/hive_metastore.thrift over the HMS schema."""

    def shutdown(self) -> None:
        """fb303's shutdown, which Hive 2.3 clients send (oneway) before they reconnect: it
        asks HMS to release the connection's resources; colstats holds none per connection."""


__all__ = ["Handler"]
