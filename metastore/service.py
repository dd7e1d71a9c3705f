"""The ThriftHiveMetastore handler: one method per Thrift call, one transaction per call.

Every error a caller can cause is answered with an exception the method declares, with a
message that names the object at fault. Anything unexpected is logged with its traceback
and answered with MetaException, never with the INTERNAL_ERROR that Java HMS gives.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import accurate as accurate_
from metastore import aggregate, convert, names, store
from metastore import models as m
from metastore.config import Settings
from metastore.db import CommitOutcomeUnknown, Transactions

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_DECLARED = (
    t.MetaException,
    t.NoSuchObjectException,
    t.InvalidObjectException,
    t.InvalidInputException,
    t.AlreadyExistsException,
    t.InvalidOperationException,
)


def _call(write: bool, one_query: bool = False) -> Callable[[F], F]:
    """Run a handler method in one transaction, with logging and error translation.

    ONE_QUERY marks a read whose answer comes from one SELECT (one per 5,000 partition
    names; other queries only choose the exception of a failed call): each SELECT is a
    transaction of its own, and on PostgreSQL it runs without BEGIN and COMMIT, two round
    trips of three.
    """

    def decorate(method: F) -> F:
        @functools.wraps(method)
        def wrapper(self: Handler, *args: Any) -> Any:
            started = time.perf_counter()

            try:
                result = _run_with_retry(
                    lambda: self.tx.run(
                        lambda s: method(self, s, *args), write=write, one_query=one_query
                    ),
                    method.__name__,
                    write,
                )
            except _DECLARED as e:
                log.warning("%s failed: %s: %s", method.__name__, type(e).__name__, e.message)
                raise
            except names.InvalidNameError as e:
                log.warning("%s failed: %s", method.__name__, e)
                raise t.MetaException(str(e)) from None
            except CommitOutcomeUnknown as e:
                log.error("%s: %s", method.__name__, e)
                raise t.MetaException(f"{method.__name__}: {e}") from None
            except Exception as e:
                log.exception("%s failed unexpectedly", method.__name__)
                raise t.MetaException(
                    f"internal error in {method.__name__}: {type(e).__name__}: {e}"
                ) from None
            log.debug("%s ok in %.1f ms", method.__name__, (time.perf_counter() - started) * 1e3)
            return result

        return wrapper  # type: ignore[return-value]

    return decorate


# PostgreSQL's deadlock_detected and serialization_failure: the transaction was rolled back
# and running it again is the remedy PostgreSQL documents.
_RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})
_ATTEMPTS = 3


def _run_with_retry(run: Callable[[], Any], name: str, write: bool) -> Any:
    """RUN (one transaction), and again after a failure that a new attempt fixes.

    * A write that lost a race for a unique key to a concurrent call: run again, it now
      sees the other call's row.
    * A deadlock or serialization failure: the database rolled the transaction back.
    * A database connection that turned out to be dead before the commit (the database
      restarted, or a proxy dropped it): SQLAlchemy has discarded the pool's old
      connections; run again on a new one. This replaces a liveness check before every
      call, a round trip each time. (A connection lost during the commit itself is not
      retried: the commit may have happened; see db.CommitOutcomeUnknown.)
    """
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            return run()
        except IntegrityError:
            if not write or attempt == _ATTEMPTS:
                raise
            log.info("%s collided with a concurrent write; running it again", name)
        except DBAPIError as e:
            sqlstate = getattr(e.orig, "sqlstate", None)
            if attempt == _ATTEMPTS or not (
                e.connection_invalidated or sqlstate in _RETRYABLE_SQLSTATES
            ):
                raise
            log.warning("%s failed (%s); running it again", name, str(e.orig).strip())
    raise AssertionError("unreachable")


def _missing(what: str) -> t.NoSuchObjectException:
    return t.NoSuchObjectException(f"{what} does not exist")


class Handler:
    """Implements the calls of thrift/hive_metastore.thrift over the HMS schema."""

    def __init__(self, tx: Transactions, settings: Settings) -> None:
        self.tx = tx
        self.settings = settings

    # -- lookups shared by the calls ------------------------------------------------------

    def _database(self, s: Session, db_arg: str | None, catalog: str | None = None) -> m.Database:
        cat, db_name = names.split_catalog(db_arg)
        if catalog:
            cat = names.identifier(catalog)
        if not db_name:
            raise t.NoSuchObjectException("no database name given")
        db = store.find_database(s, cat, names.identifier(db_name))
        if db is None:
            raise _missing(f"database {cat}.{names.identifier(db_name)}")
        return db

    def _table(
        self, s: Session, db_arg: str | None, table_name: str | None, catalog: str | None = None
    ) -> tuple[m.Database, m.Table]:
        db = self._database(s, db_arg, catalog)
        if not table_name:
            raise t.NoSuchObjectException("no table name given")
        table = store.find_table(s, db.DB_ID, names.identifier(table_name))
        if table is None:
            raise _missing(f"table {db.NAME}.{names.identifier(table_name)}")
        return db, table

    def _partition_name(self, s: Session, table: m.Table, part_name: str) -> str:
        """PART_NAME as stored: parsed, checked against the table's keys and re-escaped."""
        keys = [k.PKEY_NAME for k in store.partition_keys(s, table.TBL_ID)]
        if not keys:
            raise t.NoSuchObjectException(f"table {table.TBL_NAME} is not partitioned")
        return names.make_partition_name(keys, names.partition_values(part_name, keys))

    def _partition(self, s: Session, table: m.Table, part_name: str | None) -> m.Partition:
        if not part_name:
            raise t.NoSuchObjectException("no partition name given")
        try:
            stored_name = self._partition_name(s, table, part_name)
        except names.InvalidNameError as e:
            raise t.NoSuchObjectException(str(e)) from None
        partition = store.find_partition(s, table.TBL_ID, stored_name)
        if partition is None:
            raise _missing(f"partition {stored_name} of table {table.TBL_NAME}")
        return partition

    def _table_struct(self, s: Session, db: m.Database, table: m.Table) -> t.Table:
        storages = store.load_storages(s, [table.SD_ID])
        return convert.table_struct(
            table,
            db,
            storages.get(table.SD_ID) if table.SD_ID else None,
            store.partition_keys(s, table.TBL_ID),
            store.params(s, m.TableParam, "TBL_ID", table.TBL_ID),
        )

    def _partition_structs(
        self, s: Session, db: m.Database, table: m.Table, partitions: Sequence[m.Partition]
    ) -> list[t.Partition]:
        ids = [p.PART_ID for p in partitions]
        values = store.partition_values(s, ids)
        params = store.partition_params(s, ids)
        storages = store.load_storages(s, [p.SD_ID for p in partitions])
        return [
            convert.partition_struct(
                p,
                db,
                table,
                values.get(p.PART_ID, []),
                storages.get(p.SD_ID) if p.SD_ID else None,
                params.get(p.PART_ID, {}),
            )
            for p in partitions
        ]

    # -- databases ------------------------------------------------------------------------

    @_call(write=True)
    def create_database(self, s: Session, database: t.Database) -> None:
        if database is None:
            raise t.InvalidObjectException("no database given")
        catalog = names.identifier(database.catalogName or names.DEFAULT_CATALOG)
        row = convert.database_row(database, catalog)
        if store.find_database(s, catalog, row.NAME) is not None:
            raise t.AlreadyExistsException(f"database {catalog}.{row.NAME} already exists")
        s.add(row)
        s.flush()
        store.insert_params(s, m.DatabaseParam, "DB_ID", row.DB_ID, database.parameters)

    @_call(write=False)
    def get_database(self, s: Session, name: str) -> t.Database:
        db = self._database(s, name)
        return convert.database_struct(db, store.params(s, m.DatabaseParam, "DB_ID", db.DB_ID))

    @_call(write=True)
    def drop_database(self, s: Session, name: str, deleteData: bool, cascade: bool) -> None:
        db = self._database(s, name)
        tables = store.table_names(s, db.DB_ID)
        if tables and not cascade:
            raise t.InvalidOperationException(
                f"database {db.NAME} is not empty ({len(tables)} tables); drop it with cascade"
            )
        store.delete_database(s, db)

    @_call(write=False)
    def get_databases(self, s: Session, pattern: str | None) -> list[str]:
        catalog, db_pattern = names.split_catalog(pattern)
        return store.database_names(s, catalog, db_pattern)

    @_call(write=False)
    def get_all_databases(self, s: Session) -> list[str]:
        return store.database_names(s, names.DEFAULT_CATALOG)

    # -- tables ---------------------------------------------------------------------------

    def create_table(self, tbl: t.Table) -> None:
        self.create_table_with_environment_context(tbl, None)

    @_call(write=True)
    def create_table_with_environment_context(
        self, s: Session, tbl: t.Table, environment_context: t.EnvironmentContext | None
    ) -> None:
        if tbl is None:
            raise t.InvalidObjectException("no table given")
        db = self._database(s, tbl.dbName, tbl.catName)
        row = convert.table_row(tbl, db.DB_ID)
        if store.find_table(s, db.DB_ID, row.TBL_NAME) is not None:
            raise t.AlreadyExistsException(f"table {db.NAME}.{row.TBL_NAME} already exists")
        storage = convert.storage_rows(tbl.sd)
        keys = convert.field_schemas(tbl.partitionKeys, "partition key")
        clash = {c.COLUMN_NAME for c in storage.columns} & {k.name for k in keys}
        if clash:
            raise t.InvalidObjectException(
                f"partition key(s) {', '.join(sorted(clash))} also declared as column(s)"
            )
        row.SD_ID = store.insert_storages(s, [storage])[0]
        s.add(row)
        s.flush()
        s.add_all(
            m.PartitionKey(
                TBL_ID=row.TBL_ID,
                PKEY_NAME=k.name,
                PKEY_TYPE=k.type,
                PKEY_COMMENT=k.comment,
                INTEGER_IDX=i,
            )
            for i, k in enumerate(keys)
        )
        params = dict(tbl.parameters or {})
        params.setdefault("transient_lastDdlTime", str(row.CREATE_TIME))
        store.insert_params(s, m.TableParam, "TBL_ID", row.TBL_ID, params)

    @_call(write=False)
    def get_table(self, s: Session, dbname: str, tbl_name: str) -> t.Table:
        db, table = self._table(s, dbname, tbl_name)
        return self._table_struct(s, db, table)

    def alter_table(self, dbname: str, tbl_name: str, new_tbl: t.Table) -> None:
        self.alter_table_with_environment_context(dbname, tbl_name, new_tbl, None)

    @_call(write=True)
    def alter_table_with_environment_context(
        self,
        s: Session,
        dbname: str,
        tbl_name: str,
        new_tbl: t.Table,
        environment_context: t.EnvironmentContext | None,
    ) -> None:
        """Replace a table's parameters, owner and location (how Trino and Hive write basic
        statistics such as numRows). Renames and changes of columns or partition keys are
        refused; the other storage fields keep their stored values."""
        if new_tbl is None:
            raise t.InvalidOperationException("no new table given")
        try:
            db, table = self._table(s, dbname, tbl_name)
        except t.NoSuchObjectException as e:
            raise t.InvalidOperationException(f"cannot alter: {e.message}") from None
        where = f"table {db.NAME}.{table.TBL_NAME}"
        new_db = names.split_catalog(new_tbl.dbName or db.NAME)[1] or db.NAME
        renamed = (
            names.identifier(new_tbl.tableName or table.TBL_NAME) != table.TBL_NAME
            or names.identifier(new_db) != db.NAME
        )
        if renamed:
            raise t.InvalidOperationException(f"cannot alter {where}: renaming is not supported")
        current = self._table_struct(s, db, table)
        if new_tbl.sd is not None:
            _check_same_fields(where, "columns", current.sd.cols, new_tbl.sd.cols)
        _check_same_fields(where, "partition keys", current.partitionKeys, new_tbl.partitionKeys)
        table.OWNER = new_tbl.owner if new_tbl.owner is not None else table.OWNER
        self._alter_location(s, table.SD_ID, new_tbl.sd)
        store.replace_params(
            s, m.TableParam, "TBL_ID", table.TBL_ID, _altered_params(new_tbl.parameters)
        )

    def _alter_location(
        self, s: Session, sd_id: int | None, sd: t.StorageDescriptor | None
    ) -> None:
        if sd is not None and sd.location is not None and sd_id is not None:
            storage = s.get(m.StorageDescriptor, sd_id)
            if storage is not None:
                storage.LOCATION = sd.location

    @_call(write=False)
    def get_tables(self, s: Session, db_name: str, pattern: str | None) -> list[str]:
        try:
            db = self._database(s, db_name)
        except t.NoSuchObjectException as e:
            raise t.MetaException(e.message) from None
        return store.table_names(s, db.DB_ID, pattern)

    def get_all_tables(self, db_name: str) -> list[str]:
        return self.get_tables(db_name, None)

    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:
        self.drop_table_with_environment_context(dbname, name, deleteData, None)

    @_call(write=True)
    def drop_table_with_environment_context(
        self,
        s: Session,
        dbname: str,
        name: str,
        deleteData: bool,
        environment_context: t.EnvironmentContext | None,
    ) -> None:
        _, table = self._table(s, dbname, name)
        store.delete_table(s, table)

    # -- partitions -----------------------------------------------------------------------

    def _add_partitions(
        self,
        s: Session,
        parts: Sequence[t.Partition],
        if_not_exists: bool,
        db_arg: str | None = None,
        table_name: str | None = None,
        catalog: str | None = None,
    ) -> list[t.Partition]:
        """Add PARTS (all of one table); returns the partitions added, as stored."""
        if not parts:
            return []
        first = parts[0]
        db_arg = db_arg or first.dbName
        table_name = table_name or first.tableName
        try:
            db, table = self._table(s, db_arg, table_name, catalog or first.catName)
        except t.NoSuchObjectException as e:
            raise t.InvalidObjectException(e.message) from None
        keys = [k.PKEY_NAME for k in store.partition_keys(s, table.TBL_ID)]
        if not keys:
            raise t.InvalidObjectException(f"table {db.NAME}.{table.TBL_NAME} is not partitioned")
        table_storage = store.load_storages(s, [table.SD_ID]).get(table.SD_ID or -1)
        wanted: dict[str, tuple[t.Partition, list[str]]] = {}
        for part in parts:
            if (
                names.identifier(part.dbName or db.NAME) != db.NAME
                or names.identifier(part.tableName or table.TBL_NAME) != table.TBL_NAME
            ):
                raise t.MetaException(
                    f"partitions of {part.dbName}.{part.tableName} in a request for "
                    f"{db.NAME}.{table.TBL_NAME}"
                )
            values = list(part.values or [])
            if len(values) != len(keys) or any(v is None or v == "" for v in values):
                raise t.InvalidObjectException(
                    f"partition values {values} do not match the keys ({', '.join(keys)}) of "
                    f"{db.NAME}.{table.TBL_NAME}: one non-empty value per key is needed"
                )
            part_name = names.make_partition_name(keys, values)
            if part_name in wanted and not if_not_exists:
                raise t.AlreadyExistsException(f"partition {part_name} is given twice")
            wanted.setdefault(part_name, (part, values))
        existing = {p.PART_NAME for p in store.find_partitions(s, table.TBL_ID, list(wanted))}
        if existing and not if_not_exists:
            raise t.AlreadyExistsException(
                f"partition {sorted(existing)[0]} of {db.NAME}.{table.TBL_NAME} already exists"
            )
        new = [
            (name, part, values) for name, (part, values) in wanted.items() if name not in existing
        ]
        storages = []
        for name, part, _ in new:
            storage = convert.storage_rows(part.sd or convert.storage_struct(table_storage))
            if part.sd is None or not part.sd.location:
                base = table_storage.sd.LOCATION if table_storage else None
                storage.sd.LOCATION = f"{base}/{name}" if base else None
            storages.append(storage)
        sd_ids = store.insert_storages(
            s, storages, reuse_cd_id=table_storage.sd.CD_ID if table_storage else None
        )
        added = [
            m.Partition(
                TBL_ID=table.TBL_ID,
                PART_NAME=name,
                CREATE_TIME=part.createTime or convert.now(),
                LAST_ACCESS_TIME=part.lastAccessTime or 0,
                SD_ID=sd_id,
            )
            for (name, part, _), sd_id in zip(new, sd_ids, strict=True)
        ]
        s.add_all(added)
        s.flush()
        for row, (_, part, values) in zip(added, new, strict=True):
            s.add_all(
                m.PartitionKeyValue(PART_ID=row.PART_ID, INTEGER_IDX=i, PART_KEY_VAL=v)
                for i, v in enumerate(values)
            )
            params = dict(part.parameters or {})
            params.setdefault("transient_lastDdlTime", str(row.CREATE_TIME))
            store.insert_params(s, m.PartitionParam, "PART_ID", row.PART_ID, params)
        s.flush()
        return self._partition_structs(s, db, table, added)

    @_call(write=True)
    def add_partition(self, s: Session, new_part: t.Partition) -> t.Partition:
        if new_part is None:
            raise t.InvalidObjectException("no partition given")
        return self._add_partitions(s, [new_part], if_not_exists=False)[0]

    @_call(write=True)
    def add_partitions(self, s: Session, new_parts: list[t.Partition] | None) -> int:
        if new_parts is None:
            raise t.MetaException("no partition list given")
        tables = (
            {(p.dbName or "").lower() for p in new_parts},
            {(p.tableName or "").lower() for p in new_parts},
        )
        if len(tables[0]) > 1 or len(tables[1]) > 1:
            raise t.MetaException("add_partitions takes partitions of one table only")
        return len(self._add_partitions(s, new_parts, if_not_exists=False))

    @_call(write=True)
    def add_partitions_req(
        self, s: Session, request: t.AddPartitionsRequest
    ) -> t.AddPartitionsResult:
        if request is None or not request.dbName or not request.tblName or request.parts is None:
            raise t.InvalidObjectException("AddPartitionsRequest needs dbName, tblName and parts")
        added = self._add_partitions(
            s,
            request.parts,
            bool(request.ifNotExists),
            request.dbName,
            request.tblName,
            request.catName,
        )
        return t.AddPartitionsResult(partitions=added if request.needResult is not False else None)

    @_call(write=False)
    def get_partition(
        self, s: Session, db_name: str, tbl_name: str, part_vals: list[str]
    ) -> t.Partition:
        db, table = self._table(s, db_name, tbl_name)
        keys = [k.PKEY_NAME for k in store.partition_keys(s, table.TBL_ID)]
        if len(part_vals or []) != len(keys) or not keys:
            raise t.NoSuchObjectException(
                f"partition values {part_vals} do not match the keys of {db.NAME}.{tbl_name}"
            )
        name = names.make_partition_name(keys, part_vals)
        return self._partition_structs(s, db, table, [self._partition(s, table, name)])[0]

    @_call(write=False)
    def get_partition_by_name(
        self, s: Session, db_name: str, tbl_name: str, part_name: str
    ) -> t.Partition:
        db, table = self._table(s, db_name, tbl_name)
        return self._partition_structs(s, db, table, [self._partition(s, table, part_name)])[0]

    @_call(write=False)
    def get_partitions(
        self, s: Session, db_name: str, tbl_name: str, max_parts: int
    ) -> list[t.Partition]:
        db, table = self._table(s, db_name, tbl_name)
        return self._partition_structs(
            s, db, table, store.list_partitions(s, table.TBL_ID, max_parts)
        )

    @_call(write=False)
    def get_partitions_by_names(
        self, s: Session, db_name: str, tbl_name: str, names_: list[str] | None
    ) -> list[t.Partition]:
        db, table = self._table(s, db_name, tbl_name)
        stored = []
        for name in names_ or []:
            try:
                stored.append(self._partition_name(s, table, name))
            except names.InvalidNameError:
                continue  # HMS leaves out names it cannot find
        return self._partition_structs(s, db, table, store.find_partitions(s, table.TBL_ID, stored))

    @_call(write=False)
    def get_partition_names(
        self, s: Session, db_name: str, tbl_name: str, max_parts: int
    ) -> list[str]:
        _, table = self._table(s, db_name, tbl_name)
        return store.partition_names(s, table.TBL_ID, max_parts)

    def alter_partition(self, db_name: str, tbl_name: str, new_part: t.Partition) -> None:
        self.alter_partitions(db_name, tbl_name, [new_part])

    @_call(write=True)
    def alter_partitions(
        self, s: Session, db_name: str, tbl_name: str, new_parts: list[t.Partition] | None
    ) -> None:
        """Replace the parameters (and location) of partitions found by their values: all
        of them or, when one does not exist, none."""
        try:
            db, table = self._table(s, db_name, tbl_name)
        except t.NoSuchObjectException as e:
            raise t.InvalidOperationException(f"cannot alter partitions: {e.message}") from None
        keys = [k.PKEY_NAME for k in store.partition_keys(s, table.TBL_ID)]
        by_name: dict[str, t.Partition] = {}
        for part in new_parts or []:
            if part is None or len(part.values or []) != len(keys) or not keys:
                raise t.InvalidOperationException(
                    f"cannot alter a partition of {db.NAME}.{table.TBL_NAME}: values "
                    f"{None if part is None else part.values} do not match the keys {keys}"
                )
            by_name[names.make_partition_name(keys, part.values)] = part
        found = {p.PART_NAME: p for p in store.find_partitions(s, table.TBL_ID, list(by_name))}
        for name, part in by_name.items():
            partition = found.get(name)
            if partition is None:
                raise t.InvalidOperationException(
                    f"cannot alter: partition {name} of {db.NAME}.{table.TBL_NAME} does not exist"
                )
            self._alter_location(s, partition.SD_ID, part.sd)
            store.replace_params(
                s,
                m.PartitionParam,
                "PART_ID",
                partition.PART_ID,
                _altered_params(part.parameters),
            )

    @_call(write=True)
    def drop_partition(
        self, s: Session, db_name: str, tbl_name: str, part_vals: list[str], deleteData: bool
    ) -> bool:
        db, table = self._table(s, db_name, tbl_name)
        keys = [k.PKEY_NAME for k in store.partition_keys(s, table.TBL_ID)]
        if len(part_vals or []) != len(keys) or not keys:
            raise t.NoSuchObjectException(
                f"partition values {part_vals} do not match the keys of {db.NAME}.{tbl_name}"
            )
        store.delete_partition(
            s, self._partition(s, table, names.make_partition_name(keys, part_vals))
        )
        return True

    @_call(write=True)
    def drop_partition_by_name(
        self, s: Session, db_name: str, tbl_name: str, part_name: str, deleteData: bool
    ) -> bool:
        _, table = self._table(s, db_name, tbl_name)
        store.delete_partition(s, self._partition(s, table, part_name))
        return True

    # -- column statistics: writes -------------------------------------------------------

    def _write_statistics(
        self,
        s: Session,
        entries: Sequence[t.ColumnStatistics],
        engine: str | None,
        merge: bool = False,
    ) -> None:
        """Validate ENTRIES and write them: all of them, or nothing (the caller's transaction
        is rolled back by any exception).

        Entries are grouped by table; each group costs a fixed number of statements,
        whatever the number of partitions and columns. With MERGE, a column whose stored
        statistics are marked accurate in COLUMN_STATS_ACCURATE is merged with them
        (aggregate.merge_rows); the others are written as given, like HMS.
        """
        engine = engine or convert.DEFAULT_ENGINE
        if len(engine) > convert.MAX_ENGINE_LENGTH:
            raise t.InvalidInputException(
                f"engine is {len(engine)} characters long; at most "
                f"{convert.MAX_ENGINE_LENGTH} are kept"
            )
        groups: dict[tuple[str | None, str, str], list[t.ColumnStatistics]] = {}
        for entry in entries:
            desc = self._desc(entry)
            if entry.statsObj is None:
                raise t.InvalidInputException("ColumnStatistics.statsObj is required")
            if not desc.isTblLevel and not desc.partName:
                raise t.InvalidInputException(
                    "ColumnStatisticsDesc.partName is required for partition statistics"
                )
            key = (desc.catName, names.identifier(desc.dbName), names.identifier(desc.tableName))
            groups.setdefault(key, []).append(entry)
        for (catalog, db_name, table_name), group in groups.items():
            db, table = self._table(s, db_name, table_name, catalog)
            where = f"{db.NAME}.{table.TBL_NAME}"
            table_level = [e for e in group if e.statsDesc.isTblLevel]
            part_level = [e for e in group if not e.statsDesc.isTblLevel]
            if table_level:
                types = store.column_types(s, table.SD_ID)
                rows = [self._owner_rows(e, types, f"table {where}", engine) for e in table_level]
                self._store_rows(
                    s,
                    m.TableColumnStats,
                    m.TableParam,
                    "TBL_ID",
                    {table.TBL_ID: rows},
                    engine,
                    merge,
                )
            if part_level:
                self._write_partition_statistics(s, db, table, part_level, engine, merge)

    def _write_partition_statistics(
        self,
        s: Session,
        db: m.Database,
        table: m.Table,
        entries: Sequence[t.ColumnStatistics],
        engine: str,
        merge: bool,
    ) -> None:
        keys = [k.PKEY_NAME for k in store.partition_keys(s, table.TBL_ID)]
        if not keys:
            raise t.InvalidObjectException(f"table {db.NAME}.{table.TBL_NAME} is not partitioned")
        stored_names = []
        for entry in entries:
            try:
                values = names.partition_values(entry.statsDesc.partName, keys)
            except names.InvalidNameError as e:
                raise t.InvalidObjectException(str(e)) from None
            stored_names.append(names.make_partition_name(keys, values))
        partitions = {
            p.PART_NAME: p
            for p in store.find_partitions(s, table.TBL_ID, sorted(set(stored_names)))
        }
        types = store.column_types_by_storage(s, (p.SD_ID for p in partitions.values()))
        by_owner: dict[int, list[list[dict[str, Any]]]] = {}
        for entry, name in zip(entries, stored_names, strict=True):
            partition = partitions.get(name)
            if partition is None:
                raise _missing(f"partition {name} of table {db.NAME}.{table.TBL_NAME}")
            where = f"partition {name} of {db.NAME}.{table.TBL_NAME}"
            rows = self._owner_rows(entry, types.get(partition.SD_ID or -1, {}), where, engine)
            by_owner.setdefault(partition.PART_ID, []).append(rows)
        self._store_rows(
            s, m.PartitionColumnStats, m.PartitionParam, "PART_ID", by_owner, engine, merge
        )

    def _owner_rows(
        self, entry: t.ColumnStatistics, column_types: dict[str, str], where: str, engine: str
    ) -> list[dict[str, Any]]:
        """Validated rows for every ColumnStatisticsObj of one ColumnStatistics."""
        analyzed = entry.statsDesc.lastAnalyzed or convert.now()
        rows = []
        seen: set[str] = set()
        for obj in entry.statsObj:
            if obj is None or not obj.colName:
                raise t.InvalidInputException("a ColumnStatisticsObj has no colName")
            column = names.identifier(obj.colName)
            if column in seen:
                raise t.InvalidInputException(f"column {column!r} appears twice in one request")
            seen.add(column)
            if column not in column_types:
                raise t.InvalidObjectException(f"{where} has no column {column!r}")
            row = convert.stats_row(obj, column_types[column])
            row.update(ENGINE=engine, LAST_ANALYZED=analyzed)
            rows.append(row)
        return rows

    def _store_rows(
        self,
        s: Session,
        model: store.StatsModel,
        params_model: type[Any],
        owner_column: str,
        by_owner: dict[int, list[list[dict[str, Any]]]],
        engine: str,
        merge: bool,
    ) -> None:
        """Upsert the rows of each owner (several entries for one owner are merged or, without
        MERGE, the later wins) and mark their columns in COLUMN_STATS_ACCURATE."""
        owners = list(by_owner)
        accurate = store.param_values(s, params_model, owner_column, owners, accurate_.KEY)
        stored: dict[tuple[int, str], dict[str, Any]] = {}
        if merge:
            columns = sorted(
                {r["COLUMN_NAME"] for lists in by_owner.values() for rows in lists for r in rows}
            )
            for row in store.stats_rows(s, model, owners, columns, engine):
                owner = row.pop(owner_column)
                if row["COLUMN_NAME"] in accurate_.accurate_columns(accurate.get(owner)):
                    stored[(owner, row["COLUMN_NAME"])] = row
        final: dict[tuple[int, str], dict[str, Any]] = {}
        for owner, lists in by_owner.items():
            for rows in lists:
                for row in rows:
                    key = (owner, row["COLUMN_NAME"])
                    previous = final.get(key) or stored.get(key)
                    if (
                        merge
                        and previous is not None
                        and previous["STATS_KIND"] == row["STATS_KIND"]
                    ):
                        row = aggregate.merge_rows([previous, row], what=f"{row['COLUMN_NAME']}")
                        row["COLUMN_TYPE"] = previous["COLUMN_TYPE"]
                    final[key] = {**row, owner_column: owner}
        store.upsert_stats(s, model, list(final.values()), keep_unset=not merge)
        written: dict[int, set[str]] = {owner: set() for owner in owners}
        for owner, column in final:
            written[owner].add(column)
        store.set_param_values(
            s,
            params_model,
            owner_column,
            {
                owner: accurate_.with_columns(accurate.get(owner), columns)
                for owner, columns in written.items()
            },
            accurate_.KEY,
            stored=accurate,
        )

    @staticmethod
    def _desc(stats: t.ColumnStatistics | None) -> t.ColumnStatisticsDesc:
        if stats is None or stats.statsDesc is None:
            raise t.InvalidInputException("ColumnStatistics.statsDesc is required")
        desc = stats.statsDesc
        if not desc.dbName or not desc.tableName:
            raise t.InvalidInputException("ColumnStatisticsDesc needs dbName and tableName")
        return desc

    def _update(self, s: Session, stats: t.ColumnStatistics, table_level: bool) -> bool:
        desc = self._desc(stats)
        if not table_level and not desc.partName:
            raise t.InvalidInputException(
                "ColumnStatisticsDesc.partName is required for partition statistics"
            )
        # The call, not the flag, decides the level (the Hive 2.3 client leaves it unset).
        desc.isTblLevel = table_level
        self._write_statistics(s, [stats], stats.engine)
        return True

    @_call(write=True)
    def update_table_column_statistics(self, s: Session, stats_obj: t.ColumnStatistics) -> bool:
        return self._update(s, stats_obj, table_level=True)

    @_call(write=True)
    def update_partition_column_statistics(self, s: Session, stats_obj: t.ColumnStatistics) -> bool:
        return self._update(s, stats_obj, table_level=False)

    def _update_req(
        self, s: Session, req: t.SetPartitionsStatsRequest, table_level: bool
    ) -> t.SetPartitionsStatsResponse:
        if req is None or req.colStats is None or len(req.colStats) != 1:
            raise t.InvalidInputException("the request needs exactly one ColumnStatistics")
        if req.needMerge:
            raise t.InvalidInputException("needMerge is not supported here; use set_aggr_stats_for")
        stats = req.colStats[0]
        self._desc(stats).isTblLevel = table_level
        if not table_level and not stats.statsDesc.partName:
            raise t.InvalidInputException(
                "ColumnStatisticsDesc.partName is required for partition statistics"
            )
        self._write_statistics(s, [stats], req.engine or stats.engine)
        return t.SetPartitionsStatsResponse(result=True)

    @_call(write=True)
    def update_table_column_statistics_req(
        self, s: Session, req: t.SetPartitionsStatsRequest
    ) -> t.SetPartitionsStatsResponse:
        return self._update_req(s, req, table_level=True)

    @_call(write=True)
    def update_partition_column_statistics_req(
        self, s: Session, req: t.SetPartitionsStatsRequest
    ) -> t.SetPartitionsStatsResponse:
        return self._update_req(s, req, table_level=False)

    @_call(write=True)
    def set_aggr_stats_for(self, s: Session, request: t.SetPartitionsStatsRequest) -> bool:
        if request is None or request.colStats is None:
            raise t.InvalidInputException("SetPartitionsStatsRequest.colStats is required")
        self._write_statistics(s, request.colStats, request.engine, merge=bool(request.needMerge))
        return True

    # -- column statistics: reads --------------------------------------------------------

    def _obj(self, row: Any) -> t.ColumnStatisticsObj:
        return convert.stats_obj(
            row,
            fetch_bitvector=self.settings.fetch_bitvector,
            fetch_histogram=self.settings.fetch_histogram,
        )

    def _one_column_stats(
        self,
        s: Session,
        model: store.StatsModel,
        owner_id: int,
        sd_id: int | None,
        col_name: str | None,
        where: str,
    ) -> dict[str, Any]:
        if not col_name:
            raise t.InvalidInputException("no column name given")
        column = names.identifier(col_name)
        rows = store.stats_rows(s, model, [owner_id], [column], convert.DEFAULT_ENGINE)
        if rows:
            return rows[0]
        if column not in store.column_types(s, sd_id):
            raise t.InvalidObjectException(f"{where} has no column {column!r}")
        raise t.NoSuchObjectException(f"no statistics for column {column!r} of {where}")

    def _stats_struct(
        self, desc: t.ColumnStatisticsDesc, row: dict[str, Any]
    ) -> t.ColumnStatistics:
        desc.lastAnalyzed = row["LAST_ANALYZED"]
        return t.ColumnStatistics(
            statsDesc=desc, statsObj=[self._obj(convert.as_row(row))], engine=row["ENGINE"]
        )

    @_call(write=False)
    def get_table_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, col_name: str
    ) -> t.ColumnStatistics:
        db, table = self._table(s, db_name, tbl_name)
        row = self._one_column_stats(
            s,
            m.TableColumnStats,
            table.TBL_ID,
            table.SD_ID,
            col_name,
            f"table {db.NAME}.{table.TBL_NAME}",
        )
        desc = t.ColumnStatisticsDesc(
            isTblLevel=True, dbName=db.NAME, tableName=table.TBL_NAME, catName=db.CTLG_NAME
        )
        return self._stats_struct(desc, row)

    @_call(write=False)
    def get_partition_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, part_name: str, col_name: str
    ) -> t.ColumnStatistics:
        db, table = self._table(s, db_name, tbl_name)
        partition = self._partition(s, table, part_name)
        row = self._one_column_stats(
            s,
            m.PartitionColumnStats,
            partition.PART_ID,
            partition.SD_ID,
            col_name,
            f"partition {partition.PART_NAME} of {db.NAME}.{table.TBL_NAME}",
        )
        desc = t.ColumnStatisticsDesc(
            isTblLevel=False,
            dbName=db.NAME,
            tableName=table.TBL_NAME,
            partName=partition.PART_NAME,
            catName=db.CTLG_NAME,
        )
        return self._stats_struct(desc, row)

    @staticmethod
    def _request_target(
        request: Any, with_parts: bool
    ) -> tuple[str, str, str, list[str], list[str], str]:
        """(catalog, db, table, columns, partition names, engine) of a stats read request."""
        if (
            request is None
            or not request.dbName
            or not request.tblName
            or request.colNames is None
            or (with_parts and request.partNames is None)
        ):
            needed = "dbName, tblName, colNames" + (" and partNames" if with_parts else "")
            raise t.MetaException(f"the request needs {needed}")
        catalog, db_name = names.split_catalog(request.dbName)
        if request.catName:
            catalog = names.identifier(request.catName)
        columns = sorted({names.identifier(c) for c in request.colNames if c})
        part_names: list[str] = []
        for name in request.partNames if with_parts else []:
            try:
                part_names.append(names.normalize_partition_name(name))
            except names.InvalidNameError:
                continue  # a name that cannot exist is simply absent from the answer
        return (
            catalog,
            names.identifier(db_name or ""),
            names.identifier(request.tblName),
            columns,
            sorted(set(part_names)),
            request.engine or convert.DEFAULT_ENGINE,
        )

    @_call(write=False, one_query=True)
    def get_table_statistics_req(
        self, s: Session, request: t.TableStatsRequest
    ) -> t.TableStatsResult:
        catalog, db, table, columns, _, engine = self._request_target(request, with_parts=False)
        rows = store.table_stats_by_name(s, catalog, db, table, columns, engine)
        if not rows:
            self._table(s, db, table, catalog)  # NoSuchObject for an unknown table
        return t.TableStatsResult(tableStats=[self._obj(r) for r in rows])

    @_call(write=False, one_query=True)
    def get_partitions_statistics_req(
        self, s: Session, request: t.PartitionsStatsRequest
    ) -> t.PartitionsStatsResult:
        catalog, db, table, columns, parts, engine = self._request_target(request, with_parts=True)
        rows = store.partition_stats_by_name(s, catalog, db, table, parts, columns, engine)
        if not rows:
            self._table(s, db, table, catalog)
        result: dict[str, list[t.ColumnStatisticsObj]] = {}
        for row in rows:
            result.setdefault(row[0], []).append(self._obj(row[1:]))
        return t.PartitionsStatsResult(partStats=result)

    @_call(write=False)
    def get_aggr_stats_for(self, s: Session, request: t.PartitionsStatsRequest) -> t.AggrStats:
        catalog, db, table, columns, parts, engine = self._request_target(request, with_parts=True)
        if not columns or not parts:
            return t.AggrStats(colStats=[], partsFound=0)
        rows = store.partition_stats_by_name(
            s, catalog, db, table, parts, columns, engine, with_row_counts=True
        )
        if not rows:
            self._table(s, db, table, catalog)
            return t.AggrStats(colStats=[], partsFound=0)
        keys = list(rows[0]._fields)
        name_at = keys.index("COLUMN_NAME")
        by_column: dict[str, list[Any]] = {}
        for row in rows:
            by_column.setdefault(row[name_at], []).append(row)
        # One row per (partition, column): a partition with as many rows as there are
        # columns has statistics for all of them.
        found = sum(1 for n in Counter(map(itemgetter(0), rows)).values() if n == len(columns))
        objs = []
        for column, column_rows in by_column.items():
            fields = dict(zip(keys, zip(*column_rows, strict=True), strict=True))
            merged = self._aggregate_column(fields, len(parts), f"{db}.{table}.{column}")
            objs.append(self._obj(convert.as_row(merged)))
        return t.AggrStats(colStats=objs, partsFound=found)

    def _aggregate_column(
        self, fields: dict[str, tuple[Any, ...]], requested: int, what: str
    ) -> dict[str, Any]:
        """One column's statistics over many partitions, given field by field (see
        metastore.aggregate)."""
        kinds = fields["STATS_KIND"]
        if len(set(kinds)) > 1:
            analyzed = fields["LAST_ANALYZED"]
            newest_kind = kinds[max(range(len(kinds)), key=lambda i: analyzed[i] or 0)]
            keep = [i for i, kind in enumerate(kinds) if kind == newest_kind]
            log.warning(
                "%s: %d partitions hold statistics of another kind than %s; they are left out",
                what,
                len(kinds) - len(keep),
                newest_kind,
            )
            fields = {key: tuple(values[i] for i in keep) for key, values in fields.items()}
        row_counts = {text: _int_or_none(text) for text in set(fields["NUM_ROWS"])}
        counts = [row_counts[text] for text in fields["NUM_ROWS"]]
        merged = aggregate.merge_columns(
            fields, counts, what=what, merge_histograms=self.settings.fetch_histogram
        )
        aggregate.scale_sums(merged, requested, len(counts))
        return merged

    # -- column statistics: deletes ------------------------------------------------------

    def _delete_stats(
        self,
        s: Session,
        model: store.StatsModel,
        params_model: type[Any],
        owner_column: str,
        owner_id: int,
        sd_id: int | None,
        col_name: str | None,
        engine: str | None,
        where: str,
    ) -> bool:
        column = names.identifier(col_name) if col_name else None
        deleted = store.delete_stats(s, model, owner_id, column, engine)
        if column is not None and deleted == 0:
            if column not in store.column_types(s, sd_id):
                raise t.InvalidObjectException(f"{where} has no column {column!r}")
            raise t.NoSuchObjectException(f"no statistics for column {column!r} of {where}")
        accurate = store.param_values(s, params_model, owner_column, [owner_id], accurate_.KEY)
        if owner_id in accurate:
            store.set_param_values(
                s,
                params_model,
                owner_column,
                {
                    owner_id: (
                        accurate_.without_columns(
                            accurate[owner_id], None if column is None else [column]
                        )
                    )
                },
                accurate_.KEY,
            )
        return True

    @_call(write=True)
    def delete_table_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, col_name: str | None, engine: str | None
    ) -> bool:
        db, table = self._table(s, db_name, tbl_name)
        return self._delete_stats(
            s,
            m.TableColumnStats,
            m.TableParam,
            "TBL_ID",
            table.TBL_ID,
            table.SD_ID,
            col_name,
            engine,
            f"table {db.NAME}.{table.TBL_NAME}",
        )

    @_call(write=True)
    def delete_partition_column_statistics(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_name: str,
        col_name: str | None,
        engine: str | None,
    ) -> bool:
        db, table = self._table(s, db_name, tbl_name)
        partition = self._partition(s, table, part_name)
        return self._delete_stats(
            s,
            m.PartitionColumnStats,
            m.PartitionParam,
            "PART_ID",
            partition.PART_ID,
            partition.SD_ID,
            col_name,
            engine,
            f"partition {partition.PART_NAME} of {db.NAME}.{table.TBL_NAME}",
        )


def _check_same_fields(
    where: str, what: str, stored: list[t.FieldSchema] | None, new: list[t.FieldSchema] | None
) -> None:
    def signature(fields: list[t.FieldSchema] | None) -> list[tuple[str, str, str | None]]:
        return [
            ((f.name or "").lower(), (f.type or "").lower(), f.comment or None)
            for f in fields or []
        ]

    if new is not None and signature(new) != signature(stored):
        raise t.InvalidOperationException(
            f"cannot alter {where}: changing its {what} is not supported "
            f"(stored {signature(stored)}, given {signature(new)})"
        )


def _altered_params(params: dict[str, str] | None) -> dict[str, str]:
    """The new parameter map; transient_lastDdlTime is set to now when absent, as HMS does."""
    out = {k: v for k, v in (params or {}).items() if k is not None}
    out.setdefault("transient_lastDdlTime", str(convert.now()))
    return out


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
