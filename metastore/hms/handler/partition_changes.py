"""Calls that change or drop existing partitions: alter (one, several, the 4.x request), rename,
drop (by values, by name, several by names).

An alter replaces a partition's storage descriptor and parameters, as HMS does; the
statistics of columns it removes or retypes are deleted. A rename moves the partition's
statistics with it (they hang on its id) and, for a managed table whose partition folder is
the default one (the table's location plus the partition name), moves the folder. Dropping
a partition of a managed table with deleteData deletes its folder once committed.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import names as naming
from metastore import spark_stats, warehouse
from metastore.errors import NotFound
from metastore.hms.call import call
from metastore.hms.handler import fast_stats
from metastore.hms.handler.base import altered_params, properties, received_parameters
from metastore.hms.handler.stats_writes import StatisticsWrites
from metastore.hms.structs import tables as table_structs
from metastore.stats import writes as statistics
from metastore.stats.queries import PARTITION_LEVEL
from metastore.store import lookup, versions
from metastore.store import models as m
from metastore.store.databases import database_by_id
from metastore.store.params import params as get_params
from metastore.store.params import replace_params
from metastore.store.partitions import (
    delete_partition,
    find_partition,
    find_partitions,
    replace_key_values,
)
from metastore.store.storage import (
    Storage,
    column_types,
    delete_storages,
    insert_storages,
    load_storages,
    location,
    same_storage,
    set_location,
    storage_descriptor,
)
from metastore.store.transactions import on_commit, on_rollback


class PartitionChangeCalls(StatisticsWrites):
    # -- alter ----------------------------------------------------------------------------

    def _alterable(
        self, s: Session, db_name: str, tbl_name: str, *, renames: bool
    ) -> tuple[m.Database, m.Table]:
        """The table whose partitions an alter changes; marked as changed in any of its
        partitions when it RENAMES one (the others mark the partitions they alter)."""
        try:
            return lookup.table(s, db_name, tbl_name, mark=renames)
        except NotFound as e:
            raise t.InvalidOperationException(f"cannot alter partitions: {e.message}") from None

    def _alter_partitions(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        new_parts: Sequence[t.Partition] | None,
        context: t.EnvironmentContext | None = None,
    ) -> None:
        """Replace the storage and parameters of partitions found by their values: all of
        them or, when one does not exist, none."""
        database, table = self._alterable(s, db_name, tbl_name, renames=False)
        keys = lookup.partition_keys(s, table)
        by_name: dict[str, t.Partition] = {}
        for part in new_parts or []:
            by_name[self._name_of(database, table, keys, part)] = part
        found = {p.PART_NAME: p for p in find_partitions(s, table.TBL_ID, list(by_name))}
        if found:  # their names stay: their versions tell what changed (store.versions)
            versions.touch_partitions(s, table.TBL_ID, [p.PART_ID for p in found.values()])
        for name, part in by_name.items():
            partition = found.get(name)
            if partition is None:
                raise t.InvalidOperationException(
                    f"cannot alter: partition {name} of {database.NAME}.{table.TBL_NAME} "
                    "does not exist"
                )
            self._replace_partition(s, table, partition, part, properties(context))

    def _name_of(
        self, database: m.Database, table: m.Table, keys: list[str], part: t.Partition | None
    ) -> str:
        if part is None or not keys or len(part.values or []) != len(keys):
            raise t.InvalidOperationException(
                f"cannot alter a partition of {database.NAME}.{table.TBL_NAME}: values "
                f"{None if part is None else part.values} do not match the keys {keys}"
            )
        return naming.make_partition_name(keys, part.values)

    def _replace_partition(
        self,
        s: Session,
        table: m.Table,
        partition: m.Partition,
        part: t.Partition,
        context: Mapping[str, str],
    ) -> None:
        if part.sd is not None:
            self._replace_storage(s, table, partition, part.sd)
        if part.lastAccessTime:
            partition.LAST_ACCESS_TIME = part.lastAccessTime
        columns = column_types(s, partition.SD_ID)
        stored = get_params(s, m.PartitionParam, partition.PART_ID)
        served = spark_stats.with_spark_statistics(stored, [], [])
        received = received_parameters(part.parameters, list(columns.items()), served)
        params = altered_params(received.parameters)
        folder = location(s, partition.SD_ID)
        if received.basic:  # Spark's ANALYZE measured them: kept as given, not counted
            context = {**context, fast_stats.DO_NOT_UPDATE_STATS: "true"}
        fast_stats.on_alter(params, stored, folder, context)
        replace_params(s, m.PartitionParam, partition.PART_ID, params)
        if received.statistics:  # column statistics in Spark's keys (Spark writes none)
            s.flush()
            database = database_by_id(s, table.DB_ID)
            entry = statistics.StatsEntry(
                database.NAME, table.TBL_NAME, partition.PART_NAME, received.statistics
            )
            statistics.write_statistics(s, [entry], spark_stats.ENGINE)

    def _replace_storage(
        self, s: Session, table: m.Table, partition: m.Partition, sd: t.StorageDescriptor
    ) -> None:
        """Give PARTITION the descriptor SD (with its location kept when SD gives none); the
        statistics of the columns it removes or retypes are deleted. A descriptor given back
        unchanged is kept as it is stored (storage.same_storage)."""
        old = load_storages(s, [partition.SD_ID]).get(partition.SD_ID or -1)
        storage = table_structs.storage_rows(sd)
        if not storage.sd.LOCATION and old is not None:
            storage.sd.LOCATION = old.sd.LOCATION
        if old is not None and same_storage(old, storage):
            return
        table_cd = storage_descriptor(s, table.SD_ID)
        candidates = [old.sd.CD_ID if old else None, table_cd.CD_ID if table_cd else None]
        (new_sd,) = insert_storages(s, [storage], reuse_cd_ids=candidates)
        old_sd, partition.SD_ID = partition.SD_ID, new_sd
        s.flush()
        delete_storages(s, [old_sd])
        if old is not None:
            self._delete_changed_statistics(s, partition, old, storage)

    @staticmethod
    def _delete_changed_statistics(
        s: Session, partition: m.Partition, old: Storage, new: Storage
    ) -> None:
        kept = {c.COLUMN_NAME: (c.TYPE_NAME or "").lower() for c in new.columns}
        changed = [
            c.COLUMN_NAME
            for c in old.columns
            if kept.get(c.COLUMN_NAME) != (c.TYPE_NAME or "").lower()
        ]
        statistics.delete_statistics_of_columns(s, PARTITION_LEVEL, [partition.PART_ID], changed)

    def alter_partition(self, db_name: str, tbl_name: str, new_part: t.Partition) -> None:
        self.alter_partitions(db_name, tbl_name, [new_part])

    @call(write=True)
    def alter_partition_with_environment_context(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        new_part: t.Partition,
        environment_context: t.EnvironmentContext | None,
    ) -> None:
        self._alter_partitions(s, db_name, tbl_name, [new_part], environment_context)

    @call(write=True)
    def alter_partitions(
        self, s: Session, db_name: str, tbl_name: str, new_parts: list[t.Partition] | None
    ) -> None:
        self._alter_partitions(s, db_name, tbl_name, new_parts)

    @call(write=True)
    def alter_partitions_with_environment_context(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        new_parts: list[t.Partition] | None,
        environment_context: t.EnvironmentContext | None,
    ) -> None:
        self._alter_partitions(s, db_name, tbl_name, new_parts, environment_context)

    @call(write=True)
    def alter_partitions_req(
        self, s: Session, req: t.AlterPartitionsRequest
    ) -> t.AlterPartitionsResponse:
        if req is None or not req.dbName or not req.tableName:
            raise t.InvalidOperationException("AlterPartitionsRequest needs dbName and tableName")
        database = req.dbName if not req.catName else f"@{req.catName}#{req.dbName}"
        self._alter_partitions(s, database, req.tableName, req.partitions, req.environmentContext)
        return t.AlterPartitionsResponse()

    # -- rename ---------------------------------------------------------------------------

    @call(write=True)
    def rename_partition(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str] | None,
        new_part: t.Partition,
    ) -> None:
        """Give the partition of PART_VALS the values of NEW_PART (and its storage and
        parameters). Without PART_VALS it is an alter of NEW_PART, as in HMS."""
        if not part_vals:
            self._alter_partitions(s, db_name, tbl_name, [new_part])
            return
        database, table = self._alterable(s, db_name, tbl_name, renames=True)
        keys = lookup.partition_keys(s, table)
        where = f"{database.NAME}.{table.TBL_NAME}"
        old_name = self._name_of(database, table, keys, t.Partition(values=part_vals))
        new_name = self._name_of(database, table, keys, new_part)
        if any(v is None or v == "" for v in new_part.values):
            raise t.InvalidOperationException(f"cannot rename to {new_name}: a value is empty")
        partition = find_partition(s, table.TBL_ID, old_name)
        if partition is None:
            raise t.InvalidOperationException(f"partition {old_name} of {where} does not exist")
        if new_name != old_name and find_partition(s, table.TBL_ID, new_name) is not None:
            raise t.InvalidOperationException(
                f"cannot rename {old_name} of {where}: partition {new_name} already exists"
            )
        moved_to = self._renamed_location(s, table, partition, old_name, new_name, new_part)
        partition.PART_NAME = new_name
        statistics.rename_partition(s, partition.PART_ID, new_name)
        replace_key_values(s, partition.PART_ID, new_part.values)
        self._replace_partition(s, table, partition, new_part, {})
        if moved_to is not None:
            set_location(s, partition.SD_ID, moved_to)

    def _renamed_location(
        self,
        s: Session,
        table: m.Table,
        partition: m.Partition,
        old_name: str,
        new_name: str,
        new_part: t.Partition,
    ) -> str | None:
        """The new location of a renamed partition whose folder colstats moved, else None."""
        if table.TBL_TYPE != table_structs.MANAGED_TABLE:
            return None
        table_sd = storage_descriptor(s, table.SD_ID)
        part_sd = storage_descriptor(s, partition.SD_ID)
        if table_sd is None or part_sd is None or not table_sd.LOCATION or not part_sd.LOCATION:
            return None
        default = warehouse.join(table_sd.LOCATION, old_name)
        given = new_part.sd.location if new_part.sd is not None else part_sd.LOCATION
        if part_sd.LOCATION.rstrip("/") != default or given not in (None, part_sd.LOCATION):
            return None
        target = warehouse.join(table_sd.LOCATION, new_name)
        try:
            moved = self.warehouse.move_folder(part_sd.LOCATION, target)
        except warehouse.WarehouseError as e:
            raise t.InvalidOperationException(f"cannot rename {old_name}: {e}") from None
        if not moved:
            return None
        source = part_sd.LOCATION
        on_rollback(s, lambda: self.warehouse.move_folder(target, source))
        return target

    # -- drop -----------------------------------------------------------------------------

    def _drop(
        self, s: Session, table: m.Table, partitions: Sequence[m.Partition], data: bool
    ) -> None:
        folders: list[str | None] = []
        if data and table.TBL_TYPE == table_structs.MANAGED_TABLE:
            sds = [p.SD_ID for p in partitions if p.SD_ID is not None]
            folders = [st.sd.LOCATION for st in load_storages(s, sds).values()]
        for partition in partitions:
            delete_partition(s, partition)
        for folder in folders:
            on_commit(s, functools.partial(self.warehouse.delete_folder, folder))

    def _partition_by_values(
        self, s: Session, db_name: str, tbl_name: str, part_vals: list[str] | None
    ) -> tuple[m.Table, m.Partition]:
        database, table = lookup.table(s, db_name, tbl_name)
        keys = lookup.partition_keys(s, table)
        if not keys or len(part_vals or []) != len(keys):
            raise NotFound(
                f"partition values {part_vals} do not match the keys of "
                f"{database.NAME}.{table.TBL_NAME}"
            )
        assert part_vals is not None
        return table, lookup.partition(s, table, naming.make_partition_name(keys, part_vals))

    @call(write=True)
    def drop_partition(
        self, s: Session, db_name: str, tbl_name: str, part_vals: list[str], deleteData: bool
    ) -> bool:
        table, partition = self._partition_by_values(s, db_name, tbl_name, part_vals)
        self._drop(s, table, [partition], deleteData)
        return True

    @call(write=True)
    def drop_partition_with_environment_context(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str],
        deleteData: bool,
        environment_context: t.EnvironmentContext | None,
    ) -> bool:
        table, partition = self._partition_by_values(s, db_name, tbl_name, part_vals)
        self._drop(s, table, [partition], deleteData)
        return True

    @call(write=True)
    def drop_partition_by_name(
        self, s: Session, db_name: str, tbl_name: str, part_name: str, deleteData: bool
    ) -> bool:
        _, table = lookup.table(s, db_name, tbl_name)
        self._drop(s, table, [lookup.partition(s, table, part_name)], deleteData)
        return True

    @call(write=True)
    def drop_partition_by_name_with_environment_context(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_name: str,
        deleteData: bool,
        environment_context: t.EnvironmentContext | None,
    ) -> bool:
        _, table = lookup.table(s, db_name, tbl_name)
        self._drop(s, table, [lookup.partition(s, table, part_name)], deleteData)
        return True

    @call(write=True)
    def drop_partitions_req(
        self, s: Session, req: t.DropPartitionsRequest
    ) -> t.DropPartitionsResult:
        """Drop partitions named in the request: all or, when one is missing and ifExists is
        false, none. Hive's serialized expressions (parts.exprs) are not understood."""
        if req is None or not req.dbName or not req.tblName or req.parts is None:
            raise t.MetaException("DropPartitionsRequest needs dbName, tblName and parts")
        if req.parts.exprs is not None:
            raise t.MetaException(
                "drop_partitions_req with expressions (Hive's serialized filters) is not "
                "supported; name the partitions (parts.names)"
            )
        database_arg = req.dbName if not req.catName else f"@{req.catName}#{req.dbName}"
        database, table = lookup.table(s, database_arg, req.tblName)
        stored = []
        for name in req.parts.names or []:
            try:
                stored.append(lookup.partition_name(s, table, name))
            except naming.InvalidNameError as e:
                raise t.MetaException(str(e)) from None
        found = find_partitions(s, table.TBL_ID, stored)
        if req.ifExists is False and len(found) < len(set(stored)):
            absent = sorted(set(stored) - {p.PART_NAME for p in found})
            raise lookup.missing(f"partition {absent[0]} of {database.NAME}.{table.TBL_NAME}")
        result = (
            self.answers.partitions_by_ids(s, database, table, [p.PART_ID for p in found])
            if req.needResult
            else None
        )
        self._drop(s, table, found, bool(req.deleteData))
        return t.DropPartitionsResult(partitions=result)
