"""The ThriftHiveMetastore handler, by domain: one module per group of calls, composed into
the one object the Thrift processor calls (as mlflow composes its SQL store).

* :mod:`metastore.service.base` - the `call` decorator and the lookups every domain uses;
* :mod:`metastore.service.databases`, :mod:`~metastore.service.tables`,
  :mod:`~metastore.service.partitions` - the metadata calls;
* :mod:`metastore.service.stats_writes`, :mod:`~metastore.service.stats_reads` - the column
  statistics calls.
"""

from metastore.service.databases import DatabaseCalls
from metastore.service.partitions import PartitionCalls
from metastore.service.stats_reads import StatisticsReads
from metastore.service.stats_writes import StatisticsWrites
from metastore.service.tables import TableCalls


class Handler(DatabaseCalls, TableCalls, PartitionCalls, StatisticsWrites, StatisticsReads):
    """Implements the calls of thrift/hive_metastore.thrift over the HMS schema."""


__all__ = ["Handler"]
