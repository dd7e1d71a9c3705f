"""What every domain of the handler shares: the `call` decorator (authorization, audit, one
transaction per call, logging, translation to declared exceptions) and the lookups of
databases, tables and partitions by the names a call gives.

Every error a caller can cause is answered with an exception the method declares, with a
message that names the object at fault. Anything unexpected is logged with its traceback
and answered with MetaException, never with the INTERNAL_ERROR that Java HMS gives.
"""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import accurate as accurate_
from metastore import audit, convert, names, partition_read, spark_stats, stats_store, store
from metastore import models as m
from metastore.access import Policy, current_connection, parse_group_mapping, required_right
from metastore.config import Settings
from metastore.db import CommitOutcomeUnknown, Transactions, on_commit
from metastore.vocabulary import DEFAULT_ENGINE
from metastore.warehouse import Warehouse

log = logging.getLogger("metastore.service")

# The exceptions of the IDL: each reaches the client as declared by the call (a call that
# raises one its IDL entry does not declare makes the processor answer INTERNAL_ERROR).
DECLARED = (
    t.MetaException,
    t.NoSuchObjectException,
    t.InvalidObjectException,
    t.InvalidInputException,
    t.AlreadyExistsException,
    t.InvalidOperationException,
    t.UnknownDBException,
    t.UnknownTableException,
    t.UnknownPartitionException,
    t.InvalidPartitionException,
)

S = TypeVar("S", bound="ServiceBase")
P = ParamSpec("P")
R = TypeVar("R")

CHANGING_CALLS: set[str] = set()
"""The names of the `call(write=True)` methods; each must have its right in access.RIGHTS."""


def call(
    *, write: bool, one_query: bool = False
) -> Callable[[Callable[Concatenate[S, Session, P], R]], Callable[Concatenate[S, P], R]]:
    """Make a handler method a Thrift call: METHOD(self, session, *args) becomes
    CALL(self, *args), run in one transaction (Transactions.run: retried where a new attempt
    fixes the failure), logged, with every error translated to a declared exception.

    Before the transaction, the caller of the current connection (metastore.access) must hold
    the call's right, else MetaException names the missing right. A WRITE call is a change:
    it needs the right access.RIGHTS gives it (admin when missing from the table) and leaves
    an audit line (metastore.audit) whatever its outcome.

    ONE_QUERY marks a read whose answer comes from one SELECT (one per 5,000 partition
    names; other queries only choose the exception of a failed call): on PostgreSQL it runs
    without BEGIN and COMMIT, one round trip instead of three.
    """

    def decorate(method: Callable[Concatenate[S, Session, P], R]) -> Callable[Concatenate[S, P], R]:
        name = method.__name__
        right = required_right(name, write)
        signature = inspect.signature(method)
        if write:
            CHANGING_CALLS.add(name)

        @functools.wraps(method)
        def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            started = time.perf_counter()
            connection = current_connection()
            policy = self.policy
            target = ""
            if write:
                bound = signature.bind_partial(self, None, *args, **kwargs).arguments
                target = audit.target({k: v for k, v in list(bound.items())[2:]})
            if connection is not None and not policy.allows(connection, right):
                message = policy.refusal(connection, right, name)
                log.warning("%s refused: %s", name, message)
                if write:
                    audit.record(connection, policy.authentication, name, target, "refused")
                raise t.MetaException(message)
            outcome = "ok"
            try:
                result = self.tx.run(
                    lambda s: method(self, s, *args, **kwargs),
                    name=name,
                    write=write,
                    one_query=one_query,
                )
            except DECLARED as e:
                outcome = f"failed:{type(e).__name__}"
                log.warning("%s failed: %s: %s", name, type(e).__name__, e.message)
                raise
            except names.InvalidNameError as e:
                outcome = "failed:MetaException"
                log.warning("%s failed: %s", name, e)
                raise t.MetaException(str(e)) from None
            except CommitOutcomeUnknown as e:
                outcome = "unknown:MetaException"
                log.error("%s: %s", name, e)
                raise t.MetaException(f"{name}: {e}") from None
            except Exception as e:
                outcome = "failed:MetaException"
                log.exception("%s failed unexpectedly", name)
                raise t.MetaException(
                    f"internal error in {name}: {type(e).__name__}: {e}"
                ) from None
            finally:
                if write:
                    audit.record(connection, policy.authentication, name, target, outcome)
            log.debug("%s ok in %.1f ms", name, (time.perf_counter() - started) * 1e3)
            return result

        return wrapper

    return decorate


def altered_params(params: dict[str, str] | None) -> dict[str, str]:
    """The new parameter map of an alter; transient_lastDdlTime is set to now when absent,
    as HMS does."""
    out = {k: v for k, v in (params or {}).items() if k is not None}
    out.setdefault("transient_lastDdlTime", str(convert.now()))
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
        received.parameters.pop(accurate_.KEY, None)
    return received


def properties(context: t.EnvironmentContext | None) -> dict[str, str]:
    """The properties of an environment context (none when it is absent)."""
    return dict(context.properties or {}) if context is not None else {}


def missing(what: str) -> t.NoSuchObjectException:
    """NoSuchObjectException for WHAT, in the words clients match ("does not exist")."""
    return t.NoSuchObjectException(f"{what} does not exist")


class ServiceBase:
    """The state of the handler and the lookups its domains share."""

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

    def _database(self, s: Session, db_arg: str | None, catalog: str | None = None) -> m.Database:
        cat, db_name = names.split_catalog(db_arg)
        if catalog:
            cat = names.identifier(catalog)
        if not db_name:
            raise t.NoSuchObjectException("no database name given")
        db = store.find_database(s, cat, names.identifier(db_name))
        if db is None:
            raise missing(f"database {cat}.{names.identifier(db_name)}")
        return db

    def _table(
        self, s: Session, db_arg: str | None, table_name: str | None, catalog: str | None = None
    ) -> tuple[m.Database, m.Table]:
        cat, db_name = names.split_catalog(db_arg)
        if catalog:
            cat = names.identifier(catalog)
        if db_name and table_name:
            # Most calls name a table that exists: one query finds it with its database.
            found = store.find_database_table(
                s, cat, names.identifier(db_name), names.identifier(table_name)
            )
            if found is not None:
                return found
        db = self._database(s, db_arg, catalog)
        if not table_name:
            raise t.NoSuchObjectException("no table name given")
        raise missing(f"table {db.NAME}.{names.identifier(table_name)}")

    def _partition_keys(self, s: Session, table: m.Table) -> list[str]:
        return [name for name, _ in store.partition_key_types(s, table.TBL_ID)]

    def _partition_name(
        self, s: Session, table: m.Table, part_name: str, keys: list[str] | None = None
    ) -> str:
        """PART_NAME as stored: parsed, checked against the table's KEYS (read when not
        given) and re-escaped."""
        if keys is None:
            keys = self._partition_keys(s, table)
        if not keys:
            raise t.NoSuchObjectException(f"table {table.TBL_NAME} is not partitioned")
        return names.make_partition_name(keys, names.partition_values(part_name, keys))

    def _existing_name(
        self, s: Session, table: m.Table, part_name: str | None, keys: list[str] | None = None
    ) -> str:
        """The stored name of partition PART_NAME, NoSuchObjectException when it is no
        partition name of TABLE."""
        if not part_name:
            raise t.NoSuchObjectException("no partition name given")
        try:
            return self._partition_name(s, table, part_name, keys)
        except names.InvalidNameError as e:
            raise t.NoSuchObjectException(str(e)) from None

    def _partition(self, s: Session, table: m.Table, part_name: str | None) -> m.Partition:
        stored_name = self._existing_name(s, table, part_name)
        partition = store.find_partition(s, table.TBL_ID, stored_name)
        if partition is None:
            raise missing(f"partition {stored_name} of table {table.TBL_NAME}")
        return partition

    def _partition_struct(
        self,
        s: Session,
        db: m.Database,
        table: m.Table,
        part_name: str | None,
        keys: list[str] | None = None,
    ) -> t.Partition:
        """The Partition struct of partition PART_NAME of TABLE, as `_partition` finds it."""
        stored_name = self._existing_name(s, table, part_name, keys)
        selection = partition_read.of_table(table.TBL_ID).where(
            partition_read.PARTITIONS.c.PART_NAME == stored_name
        )
        found = partition_read.partition_structs(s, db, table, selection)
        if not found:
            raise missing(f"partition {stored_name} of table {table.TBL_NAME}")
        return found[0]

    def _table_struct(self, s: Session, db: m.Database, table: m.Table) -> t.Table:
        return self._table_structs(s, db, [table])[0]

    def _table_structs(
        self, s: Session, db: m.Database, tables: Sequence[m.Table]
    ) -> list[t.Table]:
        """The Table structs of TABLES (of database DB), in a fixed number of queries, with
        the spark.sql.statistics.* parameters Spark's optimizer reads derived from their
        Hive-format statistics (metastore.spark_stats)."""
        ids = [table.TBL_ID for table in tables]
        storages = store.load_storages(s, [table.SD_ID for table in tables])
        keys = store.partition_keys_of(s, ids)
        params = store.table_params(s, ids)
        described = [
            i for i in ids if accurate_.accurate_columns(params.get(i, {}).get(accurate_.KEY))
        ]
        rows: dict[int, list[dict[str, Any]]] = {}
        for row in stats_store.stats_rows(s, m.TABLE_LEVEL, described, None, DEFAULT_ENGINE):
            rows.setdefault(row["TBL_ID"], []).append(row)
        structs = []
        for table in tables:
            storage = storages.get(table.SD_ID) if table.SD_ID else None
            table_params = params.get(table.TBL_ID, {})
            columns = storage.columns if storage is not None else []
            spark_names = spark_stats.spark_column_names(table_params)
            named = [
                (spark_names.get(c.COLUMN_NAME, c.COLUMN_NAME), c.TYPE_NAME or "") for c in columns
            ]
            served = spark_stats.with_spark_statistics(
                table_params, named, rows.get(table.TBL_ID, [])
            )
            structs.append(
                convert.table_struct(table, db, storage, keys.get(table.TBL_ID, []), served)
            )
        return structs

    def _partition_structs(
        self, s: Session, db: m.Database, table: m.Table, partitions: Sequence[m.Partition]
    ) -> list[t.Partition]:
        """The Partition structs of PARTITIONS (ORM rows a change has just written or is
        about to delete), in name order."""
        if not partitions:
            return []
        selection = partition_read.of_table(table.TBL_ID).where(
            partition_read.PARTITIONS.c.PART_ID.in_([p.PART_ID for p in partitions])
        )
        return partition_read.partition_structs(s, db, table, selection)

    def _drop_table(self, s: Session, table: m.Table, delete_data: bool) -> None:
        """Drop TABLE (its partitions, parameters and statistics go by cascade) and, for a
        managed table with DELETE_DATA, its folder and its partitions' folders once
        committed."""
        folders: list[str | None] = []
        if delete_data and table.TBL_TYPE == convert.MANAGED_TABLE:
            folders = store.locations(s, table)
        store.delete_table(s, table)
        for folder in folders:
            on_commit(s, functools.partial(self.warehouse.delete_folder, folder))
