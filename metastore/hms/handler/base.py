"""What every domain of the handler shares: its state (the operations runner, the answers,
the warehouse), the helpers of changing calls, and dropping a table.

The lookups of databases, tables and partitions by the names a call gives are the core's
(metastore.store.lookup); the `call` decorator is metastore.hms.call.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import spark_stats
from metastore.access import Policy, parse_group_mapping
from metastore.config import Settings
from metastore.hms.answers import Answers
from metastore.hms.call import THRIFT_DOOR
from metastore.hms.structs import now
from metastore.hms.structs.statistics import stats_entries
from metastore.hms.structs.tables import MANAGED_TABLE
from metastore.operation import Operations
from metastore.stats import accurate, writes
from metastore.stats.one_statement import OwnerColumns
from metastore.store import models as m
from metastore.store.partition_add import Targets
from metastore.store.tables import delete_table, locations
from metastore.store.transactions import Transactions, on_commit
from metastore.vocabulary import DEFAULT_ENGINE
from metastore.warehouse import Warehouse


def altered_params(params: dict[str, str] | None) -> dict[str, str]:
    """The new parameter map of an alter; transient_lastDdlTime is set to now when absent,
    as HMS does."""
    out = {k: v for k, v in (params or {}).items() if k is not None}
    out.setdefault("transient_lastDdlTime", str(now()))
    return out


def received_parameters(
    params: dict[str, str] | None, columns: Sequence[tuple[str, str]], served: Mapping[str, str]
) -> spark_stats.FromSpark:
    """What to keep of the parameters an alter (or create) sends, and the statistics to
    store from its spark.sql.statistics.* keys (Spark's ANALYZE writes them there; colstats
    keeps them as Hive-format statistics and derives the keys again on reads, so they are
    stored once). An echo of what colstats derived converts nothing. SERVED are the
    parameters colstats serves for the object now.

    Spark drops every key of its prefix when it invalidates its statistics (TRUNCATE, or an
    INSERT with spark.sql.statistics.size.autoUpdate.enabled off) and sends back the other
    parameters; other clients send back what they read. So an alter without any such key
    for an object colstats serves keys for means the statistics are no longer accurate:
    COLUMN_STATS_ACCURATE goes (nothing is derived for Spark any more, and Hive and Trino
    see the statistics as stale)."""
    received = spark_stats.hive_statistics(params or {}, columns)
    if any(k.startswith(spark_stats.PREFIX) for k in served) and not any(
        k.startswith(spark_stats.PREFIX) for k in params or {}
    ):
        received.parameters.pop(accurate.KEY, None)
    return received


def properties(context: t.EnvironmentContext | None) -> dict[str, str]:
    """The properties of an environment context (none when it is absent)."""
    return dict(context.properties or {}) if context is not None else {}


class ServiceBase:
    """The state of the handler, and what its domains share."""

    def __init__(self, tx: Transactions, settings: Settings) -> None:
        self.tx = tx
        self.settings = settings
        self.warehouse = Warehouse(settings.warehouse_root())
        self.policy = Policy(
            authentication=settings.authentication,
            writers=settings.writers,
            droppers=settings.droppers,
            admins=settings.admins,
            group_mapping=parse_group_mapping(settings.group_mapping),
        )
        self.operations = Operations(tx, self.policy, THRIFT_DOOR)
        self.answers = Answers(settings)
        self.owner_columns = OwnerColumns()
        """The columns of the tables whose statistics this server last wrote alone."""
        self.add_targets = Targets()
        """The tables this server last added partitions to in one statement."""

    def _write_statistics(
        self,
        s: Session,
        entries: Sequence[t.ColumnStatistics],
        engine: str | None,
        merge: bool = False,
    ) -> None:
        """Decode ENTRIES and write them (metastore.stats.writes.write_statistics): all of
        them, or nothing. The write is all of its call's transaction: one entry is written
        alone where it can be, in one round trip (writes.write_alone)."""
        engine = engine or DEFAULT_ENGINE
        decoded = stats_entries(entries, engine)
        alone = len(decoded) == 1 and not merge
        if alone and writes.write_alone(self.tx, self.owner_columns, decoded[0], engine):
            return
        writes.write_statistics(s, decoded, engine, merge=merge)

    def _drop_table(self, s: Session, table: m.Table, delete_data: bool) -> None:
        """Drop TABLE (its partitions, parameters and statistics go by cascade) and, for a
        managed table with DELETE_DATA, its folder and its partitions' folders once
        committed."""
        folders: list[str | None] = []
        if delete_data and table.TBL_TYPE == MANAGED_TABLE:
            folders = locations(s, table)
        delete_table(s, table)
        for folder in folders:
            on_commit(s, functools.partial(self.warehouse.delete_folder, folder))
