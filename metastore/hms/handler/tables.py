"""Calls on tables and views: create, get (one, several, by type, by filter, their fields),
list, drop. Alters are in metastore.hms.handler.table_alter.

As in HMS, a table without a location gets its database's location plus its name, and the
folder of a table (not a view) is created when missing; dropping a managed table with
deleteData deletes its folder once the drop is committed (see metastore.warehouse).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import name_patterns, names, spark_stats, warehouse
from metastore.errors import NotFound
from metastore.hms.call import call
from metastore.hms.handler import fast_stats
from metastore.hms.handler.base import properties, received_parameters
from metastore.hms.handler.stats_writes import StatisticsWrites
from metastore.hms.structs import tables as table_structs
from metastore.stats.writes import StatsEntry, write_statistics
from metastore.store import lookup
from metastore.store import models as m
from metastore.store.databases import databases_of
from metastore.store.params import insert_params
from metastore.store.partition_filter import PartitionFilterError, parse_filter
from metastore.store.partition_filter.table_sql import table_filter_condition
from metastore.store.storage import insert_storages
from metastore.store.tables import (
    add_table,
    find_table,
    table_names,
    table_names_by_filter,
    tables_named,
    tables_with_comments,
)


class TableCalls(StatisticsWrites):
    # -- create ---------------------------------------------------------------------------

    def create_table(self, tbl: t.Table) -> None:
        self.create_table_with_environment_context(tbl, None)

    @call(write=True)
    def create_table_with_environment_context(
        self, s: Session, tbl: t.Table, environment_context: t.EnvironmentContext | None
    ) -> None:
        if tbl is None:
            raise t.InvalidObjectException("no table given")
        database = lookup.database(s, tbl.dbName, tbl.catName)
        if table_structs.transactional(tbl.parameters):
            raise t.MetaException(
                f"cannot create {database.NAME}.{tbl.tableName}: transactional (ACID) tables "
                "are not supported; create it without transactional=true"
            )
        row = table_structs.table_row(tbl, database.DB_ID)
        if find_table(s, database.DB_ID, row.TBL_NAME) is not None:
            raise t.AlreadyExistsException(f"Table {database.NAME}.{row.TBL_NAME} already exists")
        storage = table_structs.storage_rows(tbl.sd)
        keys = table_structs.field_schemas(tbl.partitionKeys, "partition key")
        clash = {c.COLUMN_NAME for c in storage.columns} & {k.name for k in keys}
        if clash:
            raise t.InvalidObjectException(
                f"partition key(s) {', '.join(sorted(clash))} also declared as column(s)"
            )
        if row.TBL_TYPE == table_structs.VIRTUAL_VIEW:
            if not tbl.viewOriginalText and not tbl.viewExpandedText:
                raise t.InvalidObjectException(f"view {row.TBL_NAME} has no query text")
            storage.sd.LOCATION = None
        elif not storage.sd.LOCATION:
            storage.sd.LOCATION = warehouse.join(database.DB_LOCATION_URI, row.TBL_NAME)
        row.SD_ID = insert_storages(s, [storage])[0]
        add_table(s, row, [(k.name, k.type, k.comment) for k in keys])
        received = received_parameters(
            tbl.parameters, [(c.COLUMN_NAME, c.TYPE_NAME or "") for c in storage.columns], {}
        )
        params = received.parameters
        params.setdefault("transient_lastDdlTime", str(row.CREATE_TIME))
        if row.TBL_TYPE != table_structs.VIRTUAL_VIEW and not keys:
            location = storage.sd.LOCATION
            existed = (path := warehouse.local_path(location)) is not None and path.is_dir()
            fast_stats.on_create(params, location, not existed, properties(environment_context))
        insert_params(s, m.TableParam, row.TBL_ID, params)
        if received.statistics:
            s.flush()
            entry = StatsEntry(database.NAME, row.TBL_NAME, None, received.statistics)
            write_statistics(s, [entry], spark_stats.ENGINE)
        if row.TBL_TYPE != table_structs.VIRTUAL_VIEW:
            self.warehouse.make_folder(storage.sd.LOCATION)

    # -- get ------------------------------------------------------------------------------

    @call(write=False)
    def get_table(self, s: Session, dbname: str, tbl_name: str) -> t.Table:
        return self.answers.table_named(s, dbname, tbl_name)

    @call(write=False)
    def get_table_req(self, s: Session, req: t.GetTableRequest) -> t.GetTableResult:
        if req is None or not req.dbName or not req.tblName:
            raise t.MetaException("GetTableRequest needs dbName and tblName")
        table = self.answers.table_named(s, req.dbName, req.tblName, req.catName)
        return t.GetTableResult(table=table)

    def _tables_by_name(
        self, s: Session, db_name: str | None, table_names: Sequence[str] | None
    ) -> list[t.Table]:
        if table_names is None:
            raise t.InvalidOperationException("no table names given")
        try:
            database = lookup.database(s, db_name)
        except NotFound as e:
            raise t.UnknownDBException(e.message) from None
        wanted = sorted({names.identifier(n) for n in table_names if n})
        return self.answers.tables(s, database, tables_named(s, database.DB_ID, wanted))

    @call(write=False)
    def get_table_objects_by_name(
        self, s: Session, dbname: str, tbl_names: list[str] | None
    ) -> list[t.Table]:
        """The tables of TBL_NAMES that exist (the others are left out, as HMS does)."""
        return self._tables_by_name(s, dbname, tbl_names)

    @call(write=False)
    def get_table_objects_by_name_req(
        self, s: Session, req: t.GetTablesRequest
    ) -> t.GetTablesResult:
        if req is None or not req.dbName:
            raise t.MetaException("GetTablesRequest needs dbName")
        database_arg = req.dbName if not req.catName else f"@{req.catName}#{req.dbName}"
        if req.tblNames is None:
            try:
                database = lookup.database(s, database_arg)
            except NotFound as e:
                raise t.UnknownDBException(e.message) from None
            all_names = table_names(s, database.DB_ID, req.tablesPattern)
            return t.GetTablesResult(tables=self._tables_by_name(s, database_arg, all_names))
        return t.GetTablesResult(tables=self._tables_by_name(s, database_arg, req.tblNames))

    # -- list -----------------------------------------------------------------------------

    def _database_for_listing(self, s: Session, db_name: str | None) -> m.Database:
        try:
            return lookup.database(s, db_name)
        except NotFound as e:
            raise t.MetaException(e.message) from None

    @call(write=False)
    def get_tables(self, s: Session, db_name: str, pattern: str | None) -> list[str]:
        database = self._database_for_listing(s, db_name)
        return table_names(s, database.DB_ID, pattern)

    def get_all_tables(self, db_name: str) -> list[str]:
        return self.get_tables(db_name, None)

    @call(write=False)
    def get_tables_by_type(
        self, s: Session, db_name: str, pattern: str | None, tableType: str | None
    ) -> list[str]:
        database = self._database_for_listing(s, db_name)
        return table_names(s, database.DB_ID, pattern, table_type=tableType or None)

    @call(write=False)
    def get_table_names_by_filter(
        self, s: Session, dbname: str, filter: str | None, max_tables: int
    ) -> list[str]:
        """Tables whose owner, last access time or parameters match FILTER, e.g. Trino's
        `hive_filter_field_params__presto_view = "true"` (see partition_filter.table_sql)."""
        try:
            database = lookup.database(s, dbname)
        except NotFound as e:
            raise t.UnknownDBException(e.message) from None
        try:
            condition = table_filter_condition(
                parse_filter(filter or ""), s.get_bind().dialect.name
            )
        except PartitionFilterError as e:
            raise t.InvalidOperationException(str(e)) from None
        limit = max_tables if max_tables is not None and max_tables >= 0 else None
        return table_names_by_filter(s, database.DB_ID, condition, limit)

    @call(write=False)
    def get_table_meta(
        self,
        s: Session,
        db_patterns: str | None,
        tbl_patterns: str | None,
        tbl_types: list[str] | None,
    ) -> list[t.TableMeta]:
        catalog, db_pattern = names.split_catalog(db_patterns)
        databases = {d.NAME: d for d in databases_of(s, catalog)}
        wanted = set(name_patterns.filter_names(sorted(databases), db_pattern))
        by_id = {d.DB_ID: d for d in databases.values()}
        rows = tables_with_comments(s, [databases[n].DB_ID for n in wanted], tbl_types)
        matching = set(name_patterns.filter_names({r[0].TBL_NAME for r in rows}, tbl_patterns))
        return [
            t.TableMeta(
                dbName=by_id[table.DB_ID].NAME,
                tableName=table.TBL_NAME,
                tableType=table.TBL_TYPE,
                comments=comment,
                catName=catalog,
            )
            for table, comment in rows
            if table.TBL_NAME in matching
        ]

    # -- fields ---------------------------------------------------------------------------

    def _fields(
        self, s: Session, db_name: str, table_name: str, with_keys: bool
    ) -> list[t.FieldSchema]:
        try:
            # HMS accepts "table.field..." (for nested fields); the table is the first part.
            base_name = (table_name or "").split(".", 1)[0]
            database, table = lookup.table(s, db_name, base_name)
        except NotFound as e:
            if "database" in e.message:
                raise t.UnknownDBException(e.message) from None
            raise t.UnknownTableException(e.message) from None
        struct = self.answers.table(s, database, table)
        cols = list(struct.sd.cols if struct.sd is not None else [])
        return cols + list(struct.partitionKeys or []) if with_keys else cols

    @call(write=False)
    def get_fields(self, s: Session, db_name: str, table_name: str) -> list[t.FieldSchema]:
        return self._fields(s, db_name, table_name, with_keys=False)

    @call(write=False)
    def get_fields_with_environment_context(
        self,
        s: Session,
        db_name: str,
        table_name: str,
        environment_context: t.EnvironmentContext | None,
    ) -> list[t.FieldSchema]:
        return self._fields(s, db_name, table_name, with_keys=False)

    @call(write=False)
    def get_schema(self, s: Session, db_name: str, table_name: str) -> list[t.FieldSchema]:
        return self._fields(s, db_name, table_name, with_keys=True)

    @call(write=False)
    def get_schema_with_environment_context(
        self,
        s: Session,
        db_name: str,
        table_name: str,
        environment_context: t.EnvironmentContext | None,
    ) -> list[t.FieldSchema]:
        return self._fields(s, db_name, table_name, with_keys=True)

    # -- drop -----------------------------------------------------------------------------

    def drop_table(self, dbname: str, name: str, deleteData: bool) -> None:
        self.drop_table_with_environment_context(dbname, name, deleteData, None)

    @call(write=True)
    def drop_table_with_environment_context(
        self,
        s: Session,
        dbname: str,
        name: str,
        deleteData: bool,
        environment_context: t.EnvironmentContext | None,
    ) -> None:
        _, table = lookup.table(s, dbname, name)
        self._drop_table(s, table, deleteData)
