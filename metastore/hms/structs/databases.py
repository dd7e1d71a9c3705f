"""Database structs and DBS rows."""

from __future__ import annotations

from hive_metastore_thrift import ttypes as t
from metastore.hms.structs import now, valid_name
from metastore.store import models as m


def database_row(db: t.Database, catalog: str) -> m.Database:
    return m.Database(
        NAME=valid_name("database", db.name),
        CTLG_NAME=catalog,
        DESC=db.description,
        DB_LOCATION_URI=db.locationUri or "",
        OWNER_NAME=db.ownerName,
        OWNER_TYPE=t.PrincipalType._VALUES_TO_NAMES.get(db.ownerType) if db.ownerType else None,
        CREATE_TIME=db.createTime or now(),
        DB_MANAGED_LOCATION_URI=db.managedLocationUri,
        TYPE=t.DatabaseType._VALUES_TO_NAMES.get(db.type, "NATIVE") if db.type else "NATIVE",
        DATACONNECTOR_NAME=db.connector_name,
        REMOTE_DBNAME=db.remote_dbname,
    )


def database_struct(row: m.Database, params: dict[str, str]) -> t.Database:
    return t.Database(
        name=row.NAME,
        description=row.DESC,
        locationUri=row.DB_LOCATION_URI,
        parameters=params,
        ownerName=row.OWNER_NAME,
        ownerType=t.PrincipalType._NAMES_TO_VALUES.get(row.OWNER_TYPE) if row.OWNER_TYPE else None,
        catalogName=row.CTLG_NAME,
        createTime=row.CREATE_TIME,
        managedLocationUri=row.DB_MANAGED_LOCATION_URI,
        type=t.DatabaseType._NAMES_TO_VALUES.get(row.TYPE),
        connector_name=row.DATACONNECTOR_NAME,
        remote_dbname=row.REMOTE_DBNAME,
    )
