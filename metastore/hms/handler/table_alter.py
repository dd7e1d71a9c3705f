"""alter_table(_with_environment_context): the table changes HMS allows.

The new Table replaces the stored one: columns (added, replaced, retyped, commented), storage
(location, formats, serde, buckets, skewed values), parameters, owner, retention and view
text. Partition keys cannot change (only their comments), nor can a view become a table.

* Columns: the table gets a column list of its own when its columns change (partitions keep
  theirs, as in HMS, unless the environment context says CASCADE=true). The statistics of
  columns removed or retyped are deleted (table level; partition level too with CASCADE).
* Rename (a new tableName or dbName): statistics, partitions and their statistics follow,
  since they hang on ids. A managed table whose folder is the default one (its database's
  location plus its name) moves to the new default folder, and its partitions' locations
  under it follow, as HMS does; any other location is kept.
"""

from __future__ import annotations

import copy

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import names, spark_stats, warehouse
from metastore.errors import NotFound
from metastore.hms.call import call
from metastore.hms.handler import fast_stats
from metastore.hms.handler.base import altered_params, received_parameters
from metastore.hms.handler.stats_writes import StatisticsWrites
from metastore.hms.structs import tables as table_structs
from metastore.hms.structs import valid_name
from metastore.iceberg import parameters as iceberg
from metastore.stats import accurate as accurate_
from metastore.stats import writes as statistics
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL
from metastore.store import lookup
from metastore.store import models as m
from metastore.store.params import replace_params
from metastore.store.storage import (
    ColumnDef,
    Storage,
    columns_of,
    delete_storages,
    delete_unused_column_lists,
    insert_storages,
    load_storages,
    location,
    move_partition_locations,
    partition_column_lists,
    same_storage,
    set_column_list,
    set_location,
)
from metastore.store.tables import find_table, locked_param, partition_keys
from metastore.store.transactions import on_rollback

# The environment context's keys of a compare-and-swap (HIVE-26882): the alter is made only
# while the stored table parameter EXPECTED_KEY has the value EXPECTED_VALUE.
EXPECTED_KEY = "expected_parameter_key"
EXPECTED_VALUE = "expected_parameter_value"


class TableAlterCalls(StatisticsWrites):
    def alter_table(self, dbname: str, tbl_name: str, new_tbl: t.Table) -> None:
        self.alter_table_with_environment_context(dbname, tbl_name, new_tbl, None)

    @call(write=True)
    def alter_table_with_environment_context(
        self,
        s: Session,
        dbname: str,
        tbl_name: str,
        new_tbl: t.Table,
        environment_context: t.EnvironmentContext | None,
    ) -> None:
        properties = (environment_context.properties if environment_context else None) or {}
        self._alter_table(s, dbname, tbl_name, None, new_tbl, properties)

    @call(write=True)
    def alter_table_req(self, s: Session, req: t.AlterTableRequest) -> t.AlterTableResponse:
        if req is None:
            raise t.InvalidOperationException("no alter table request given")
        context = req.environmentContext
        properties = dict((context.properties if context else None) or {})
        if req.expectedParameterKey is not None and req.expectedParameterValue is not None:
            properties[EXPECTED_KEY] = req.expectedParameterKey
            properties[EXPECTED_VALUE] = req.expectedParameterValue
        self._alter_table(s, req.dbName, req.tableName, req.catName, req.table, properties)
        return t.AlterTableResponse()

    def _alter_table(
        self,
        s: Session,
        dbname: str,
        tbl_name: str,
        catalog: str | None,
        new_tbl: t.Table,
        properties: dict[str, str],
    ) -> None:
        if new_tbl is None:
            raise t.InvalidOperationException("no new table given")
        try:
            database, table = lookup.table(s, dbname, tbl_name, catalog)
        except NotFound as e:
            raise t.InvalidOperationException(f"cannot alter: {e.message}") from None
        expected_key = properties.get(EXPECTED_KEY)
        expected_value = properties.get(EXPECTED_VALUE)
        if expected_key is not None and expected_value is not None:
            stored = locked_param(s, table.TBL_ID, expected_key)
            if stored != expected_value:
                # HMS's words (Java Iceberg matches them to retry the commit); a parameter
                # that is not set reads "null", as Java prints it.
                shown = "null" if stored is None else stored
                raise t.MetaException(
                    "The table has been modified. The parameter value for key "
                    f"'{expected_key}' is '{shown}'. The expected was value was "
                    f"'{expected_value}'"
                )
        cascade = properties.get("CASCADE", "").lower() == "true"
        _Alter(self, s, database, table, new_tbl, cascade, properties).apply()


class _Alter:
    """One alter of one table (see the module docstring)."""

    def __init__(
        self,
        calls: TableAlterCalls,
        s: Session,
        database: m.Database,
        table: m.Table,
        new: t.Table,
        cascade: bool,
        context: dict[str, str],
    ) -> None:
        self.calls, self.s, self.database, self.table, self.new = calls, s, database, table, new
        self.cascade, self.context = cascade, context
        self.where = f"table {database.NAME}.{table.TBL_NAME}"
        self.current = calls.answers.table(s, database, table)

    def _refuse(self, problem: str) -> t.InvalidOperationException:
        return t.InvalidOperationException(f"cannot alter {self.where}: {problem}")

    def apply(self) -> None:
        target_db, target_name = self._target()
        if table_structs.transactional(self.new.parameters):
            raise self._refuse("transactional (ACID) tables are not supported")
        kind = (
            table_structs.table_type(self.new)
            if self.new.tableType
            else self.table.TBL_TYPE or table_structs.MANAGED_TABLE
        )
        if (kind == table_structs.VIRTUAL_VIEW) != (
            self.table.TBL_TYPE == table_structs.VIRTUAL_VIEW
        ):
            raise self._refuse(f"a {self.table.TBL_TYPE} cannot become a {kind}")
        self._check_partition_keys()
        renamed = (target_db.DB_ID, target_name) != (self.database.DB_ID, self.table.TBL_NAME)
        dropped_columns = self._replace_storage(kind, target_db, target_name, renamed)
        row = self.table
        row.DB_ID, row.TBL_NAME, row.TBL_TYPE = target_db.DB_ID, target_name, kind
        if renamed:
            statistics.rename_table(self.s, row.TBL_ID, target_db.NAME, target_name)
        if self.new.owner is not None:
            row.OWNER = self.new.owner
        if self.new.ownerType is not None:
            row.OWNER_TYPE = t.PrincipalType._VALUES_TO_NAMES.get(self.new.ownerType)
        if self.new.retention is not None:
            row.RETENTION = self.new.retention
        if self.new.lastAccessTime:
            row.LAST_ACCESS_TIME = self.new.lastAccessTime
        if kind == table_structs.VIRTUAL_VIEW:
            row.VIEW_ORIGINAL_TEXT = self.new.viewOriginalText
            row.VIEW_EXPANDED_TEXT = self.new.viewExpandedText
        if self.new.rewriteEnabled is not None:
            row.IS_REWRITE_ENABLED = bool(self.new.rewriteEnabled)
        columns = self.new.sd.cols if self.new.sd is not None else self.current.sd.cols
        received = received_parameters(
            self.new.parameters,
            [(c.name, c.type) for c in columns or []],
            self.current.parameters or {},
        )
        params = altered_params(received.parameters)
        if dropped_columns and accurate_.KEY in params:
            value = accurate_.without_columns(params[accurate_.KEY], dropped_columns)
            if value is None:
                del params[accurate_.KEY]
            else:
                params[accurate_.KEY] = value
        if iceberg.swapped_without_statistics(self.current.parameters or {}, params, self.context):
            # A new snapshot (or schema): the statistics describe an older one.
            params.pop(accurate_.KEY, None)
        if kind != table_structs.VIRTUAL_VIEW and not self.current.partitionKeys and not renamed:
            # HMS counts an unpartitioned table's files on every alter but a rename
            # (service.fast_stats).
            context = self.context
            if received.basic:  # Spark's ANALYZE measured them: kept as given, not counted
                context = {**context, fast_stats.DO_NOT_UPDATE_STATS: "true"}
            if not fast_stats.skipped(params, context):  # the folder is read only then
                self.s.flush()
                fast_stats.on_alter(params, None, location(self.s, row.SD_ID), context)
        replace_params(self.s, m.TableParam, row.TBL_ID, params)
        if received.statistics:  # Spark's ANALYZE ... FOR COLUMNS, kept in Hive's format
            self.s.flush()
            entry = statistics.StatsEntry(target_db.NAME, target_name, None, received.statistics)
            statistics.write_statistics(self.s, [entry], spark_stats.ENGINE)

    def _target(self) -> tuple[m.Database, str]:
        """The database and name the table has after the alter."""
        name = valid_name("table", self.new.tableName or self.table.TBL_NAME)
        new_db = names.split_catalog(self.new.dbName)[1] if self.new.dbName else None
        if not new_db or names.identifier(new_db) == self.database.NAME:
            target = self.database
        else:
            try:
                target = lookup.database(self.s, new_db, self.database.CTLG_NAME)
            except NotFound as e:
                raise self._refuse(e.message) from None
        if (target.DB_ID, name) != (self.database.DB_ID, self.table.TBL_NAME) and (
            find_table(self.s, target.DB_ID, name) is not None
        ):
            raise self._refuse(f"new table {target.NAME}.{name} already exists")
        return target, name

    def _check_partition_keys(self) -> None:
        if self.new.partitionKeys is None:
            return
        stored = [(k.name, (k.type or "").lower()) for k in self.current.partitionKeys or []]
        given = [
            (names.identifier(k.name or ""), (k.type or "").lower()) for k in self.new.partitionKeys
        ]
        if given != stored:
            raise self._refuse(f"partition keys cannot be changed (stored {stored}, given {given})")
        if not given:  # an unpartitioned table: no comment to change
            return
        for key, new_key in zip(
            partition_keys(self.s, self.table.TBL_ID), self.new.partitionKeys, strict=True
        ):
            key.PKEY_COMMENT = new_key.comment

    def _replace_storage(
        self, kind: str, target_db: m.Database, target_name: str, renamed: bool
    ) -> list[str]:
        """Store the new storage descriptor (and move the folder of a renamed table); returns
        the columns whose statistics are deleted (removed or retyped)."""
        if self.new.sd is None:
            if renamed:
                self._move(target_db, target_name, None)
            return []
        if not renamed and _given_back(self.new.sd, self.current.sd):
            return []
        storage = table_structs.storage_rows(self.new.sd)
        old_sd = self.table.SD_ID
        old = load_storages(self.s, [old_sd]).get(old_sd or -1)
        old_columns = (
            {c.COLUMN_NAME: (c.TYPE_NAME or "").lower() for c in old.columns} if old else {}
        )
        new_columns = {c.COLUMN_NAME: (c.TYPE_NAME or "").lower() for c in storage.columns}
        dropped = sorted(c for c, ty in old_columns.items() if new_columns.get(c) != ty)
        if kind == table_structs.VIRTUAL_VIEW:
            storage.sd.LOCATION = None
        elif not storage.sd.LOCATION:
            storage.sd.LOCATION = old.sd.LOCATION if old else None
        if renamed:
            self._move(target_db, target_name, storage)
        if old is not None and same_storage(old, storage):
            return []
        reuse = old.sd.CD_ID if old is not None else None
        (new_sd,) = insert_storages(self.s, [storage], reuse_cd_ids=[reuse])
        self.table.SD_ID = new_sd
        self.s.flush()
        if self.cascade and storage.sd.CD_ID != reuse:
            self._cascade_columns(storage.sd.CD_ID, new_columns)
        delete_storages(self.s, [old_sd])
        if dropped:
            self._delete_statistics(dropped)
        return dropped

    def _move(self, target_db: m.Database, target_name: str, storage: Storage | None) -> None:
        """Re-point (and move) the default folder of a renamed managed table."""
        if self.table.TBL_TYPE != table_structs.MANAGED_TABLE:
            return
        old_location = self.current.sd.location if self.current.sd else None
        given = storage.sd.LOCATION if storage is not None else old_location
        default = warehouse.join(self.database.DB_LOCATION_URI, self.table.TBL_NAME)
        if not old_location or old_location.rstrip("/") != default or given != old_location:
            return  # a location of the user's: it stays
        new_location = warehouse.join(target_db.DB_LOCATION_URI, target_name)
        try:
            moved = self.calls.warehouse.move_folder(old_location, new_location)
        except warehouse.WarehouseError as e:
            raise self._refuse(str(e)) from None
        if not moved:  # not a local folder: keep pointing at the data
            return
        on_rollback(self.s, lambda: self.calls.warehouse.move_folder(new_location, old_location))
        if storage is not None:
            storage.sd.LOCATION = new_location
        else:
            set_location(self.s, self.table.SD_ID, new_location)
        move_partition_locations(
            self.s,
            self.table.TBL_ID,
            f"{old_location.rstrip('/')}/",
            f"{new_location.rstrip('/')}/",
        )

    def _cascade_columns(self, cd_id: int | None, columns: dict[str, str]) -> None:
        """CASCADE: the partitions take the table's new column list (COLUMNS, name -> type);
        each loses the statistics of the columns that this removes or retypes for it."""
        partition_rows = partition_column_lists(self.s, self.table.TBL_ID)
        old_cds = {cd for _, _, cd in partition_rows}
        for old_cd in old_cds:
            old_columns = _types(columns_of(self.s, old_cd))
            changed = sorted(c for c, ty in old_columns.items() if columns.get(c) != ty)
            parts = [part for part, _, cd in partition_rows if cd == old_cd]
            statistics.delete_statistics_of_columns(self.s, PARTITION_LEVEL, parts, changed)
        set_column_list(self.s, [sd for _, sd, _ in partition_rows], cd_id)
        delete_unused_column_lists(self.s, old_cds)

    def _delete_statistics(self, columns: list[str]) -> None:
        statistics.delete_statistics_of_columns(self.s, TABLE_LEVEL, [self.table.TBL_ID], columns)


def _types(columns: list[ColumnDef]) -> dict[str, str]:
    return {c.COLUMN_NAME: (c.TYPE_NAME or "").lower() for c in columns}


def _given_back(given: t.StorageDescriptor, current: t.StorageDescriptor | None) -> bool:
    """Whether GIVEN is CURRENT, the table's descriptor as answered (its location may be left
    out: the stored one is kept then), as a client that read the table and changed something
    else gives it back (an Iceberg commit): the stored one is kept, unread. Anything else is
    compared with it as stored (storage.same_storage)."""
    if current is None:
        return False
    if not given.location:
        given = copy.copy(given)
        given.location = current.location
    return bool(given == current)
