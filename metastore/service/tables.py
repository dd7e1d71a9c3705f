"""Calls on tables: create, get, list, alter, drop."""

from __future__ import annotations

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import convert, names, store
from metastore import models as m
from metastore.service.base import ServiceBase, alter_location, altered_params, call


class TableCalls(ServiceBase):
    def create_table(self, tbl: t.Table) -> None:
        self.create_table_with_environment_context(tbl, None)

    @call(write=True)
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
        store.insert_params(s, m.TableParam, row.TBL_ID, params)

    @call(write=False)
    def get_table(self, s: Session, dbname: str, tbl_name: str) -> t.Table:
        db, table = self._table(s, dbname, tbl_name)
        return self._table_struct(s, db, table)

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
        alter_location(s, table.SD_ID, new_tbl.sd)
        store.replace_params(s, m.TableParam, table.TBL_ID, altered_params(new_tbl.parameters))

    @call(write=False)
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

    @call(write=True)
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
