"""Calls on databases: create, get, list, alter, drop.

As HMS does: `default` exists from the first start (ensure_default_database) and cannot be
dropped; a database created without a location lives in the warehouse folder, which is
created when missing; a drop with cascade removes the tables and functions too, and with
deleteData the folders of the managed tables and of the database, once committed.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.access import current_connection
from metastore.hms.call import call
from metastore.hms.handler.base import ServiceBase
from metastore.hms.structs import databases as db_structs
from metastore.hms.structs import now
from metastore.store import lookup
from metastore.store import models as m
from metastore.store.databases import (
    add_database,
    database_names,
    delete_database,
    find_database,
)
from metastore.store.functions import count_functions
from metastore.store.params import insert_params, replace_params
from metastore.store.params import params as get_params
from metastore.store.tables import tables_of
from metastore.store.transactions import on_commit

DEFAULT_DATABASE = "default"


class DatabaseCalls(ServiceBase):
    def ensure_default_database(self) -> None:
        """Create `default` if it is missing, as HMS does when it starts."""
        self.tx.run(self._ensure_default, name="ensure_default_database", write=True)

    def _ensure_default(self, s: Session) -> None:
        if find_database(s, names.DEFAULT_CATALOG, DEFAULT_DATABASE) is None:
            location = self.warehouse.database_location(DEFAULT_DATABASE)
            add_database(
                s,
                m.Database(
                    NAME=DEFAULT_DATABASE,
                    CTLG_NAME=names.DEFAULT_CATALOG,
                    DESC="Default Hive database",
                    DB_LOCATION_URI=location,
                    OWNER_NAME="public",
                    OWNER_TYPE="ROLE",
                    CREATE_TIME=now(),
                    TYPE="NATIVE",
                ),
            )
            on_commit(s, lambda: self.warehouse.make_folder(location))

    @call(write=True)
    def create_database(self, s: Session, database: t.Database) -> None:
        if database is None:
            raise t.InvalidObjectException("no database given")
        catalog = names.identifier(database.catalogName or names.DEFAULT_CATALOG)
        row = db_structs.database_row(database, catalog)
        if find_database(s, catalog, row.NAME) is not None:
            raise t.AlreadyExistsException(f"Database {row.NAME} already exists")
        if not row.DB_LOCATION_URI:
            row.DB_LOCATION_URI = self.warehouse.database_location(row.NAME)
        insert_params(s, m.DatabaseParam, add_database(s, row), database.parameters)
        location = row.DB_LOCATION_URI
        on_commit(s, lambda: self.warehouse.make_folder(location))

    @call(write=False)
    def get_database(self, s: Session, name: str) -> t.Database:
        database = lookup.database(s, name)
        return db_structs.database_struct(database, get_params(s, m.DatabaseParam, database.DB_ID))

    @call(write=True)
    def alter_database(self, s: Session, dbname: str, db: t.Database) -> None:
        """Replace a database's description, location, parameters and owner (as HMS 4 does;
        HMS 2.3 ignored a new location). The folder is not moved: tables keep their
        locations, new tables go to the new one. A rename is refused."""
        if db is None:
            raise t.MetaException("no database given")
        database = lookup.database(s, dbname)
        new_name = names.split_catalog(db.name)[1] if db.name else None
        if new_name and names.identifier(new_name) != database.NAME:
            raise t.MetaException(f"cannot rename database {database.NAME}: not supported")
        if db.description is not None:
            database.DESC = db.description
        if db.locationUri:
            database.DB_LOCATION_URI = db.locationUri
        if db.managedLocationUri is not None:
            database.DB_MANAGED_LOCATION_URI = db.managedLocationUri or None
        if db.ownerName is not None:
            database.OWNER_NAME = db.ownerName
            database.OWNER_TYPE = t.PrincipalType._VALUES_TO_NAMES.get(
                db.ownerType or t.PrincipalType.USER
            )
        if db.parameters is not None:
            replace_params(s, m.DatabaseParam, database.DB_ID, db.parameters)

    @call(write=True)
    def drop_database(self, s: Session, name: str, deleteData: bool, cascade: bool) -> None:
        database = lookup.database(s, name)
        if database.NAME == DEFAULT_DATABASE:
            raise t.MetaException("Can not drop default database")
        tables = tables_of(s, database.DB_ID)
        functions = count_functions(s, database.DB_ID)
        if not cascade and tables:
            raise t.InvalidOperationException(
                f"Database {database.NAME} is not empty. One or more tables exist."
            )
        if not cascade and functions:
            raise t.InvalidOperationException(
                f"Database {database.NAME} is not empty. One or more functions exist."
            )
        for table in tables:
            self._drop_table(s, table, deleteData)
        delete_database(s, database)
        if deleteData:
            location = database.DB_LOCATION_URI
            on_commit(s, lambda: self.warehouse.delete_folder(location))

    @call(write=False)
    def get_databases(self, s: Session, pattern: str | None) -> list[str]:
        catalog, db_pattern = names.split_catalog(pattern)
        return database_names(s, catalog, db_pattern)

    @call(write=False)
    def get_all_databases(self, s: Session) -> list[str]:
        return database_names(s, names.DEFAULT_CATALOG)

    def set_ugi(self, user_name: str, group_names: list[str] | None) -> list[str]:
        """Hive 2.3 clients (Spark) name their user first when SASL is off; HMS answers with
        the groups. The claim names the caller for rights and the audit only while
        authentication is off (see metastore.access)."""
        groups = list(group_names or [])
        connection = current_connection()
        if user_name and connection is not None:
            connection.claim(user_name, groups)
        return groups
