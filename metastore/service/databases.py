"""Calls on databases: create, get, list, drop."""

from __future__ import annotations

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import convert, names, store
from metastore import models as m
from metastore.service.base import ServiceBase, call


class DatabaseCalls(ServiceBase):
    @call(write=True)
    def create_database(self, s: Session, database: t.Database) -> None:
        if database is None:
            raise t.InvalidObjectException("no database given")
        catalog = names.identifier(database.catalogName or names.DEFAULT_CATALOG)
        row = convert.database_row(database, catalog)
        if store.find_database(s, catalog, row.NAME) is not None:
            raise t.AlreadyExistsException(f"database {catalog}.{row.NAME} already exists")
        s.add(row)
        s.flush()
        store.insert_params(s, m.DatabaseParam, row.DB_ID, database.parameters)

    @call(write=False)
    def get_database(self, s: Session, name: str) -> t.Database:
        db = self._database(s, name)
        return convert.database_struct(db, store.params(s, m.DatabaseParam, db.DB_ID))

    @call(write=True)
    def drop_database(self, s: Session, name: str, deleteData: bool, cascade: bool) -> None:
        db = self._database(s, name)
        tables = store.table_names(s, db.DB_ID)
        if tables and not cascade:
            raise t.InvalidOperationException(
                f"database {db.NAME} is not empty ({len(tables)} tables); drop it with cascade"
            )
        store.delete_database(s, db)

    @call(write=False)
    def get_databases(self, s: Session, pattern: str | None) -> list[str]:
        catalog, db_pattern = names.split_catalog(pattern)
        return store.database_names(s, catalog, db_pattern)

    @call(write=False)
    def get_all_databases(self, s: Session) -> list[str]:
        return store.database_names(s, names.DEFAULT_CATALOG)
