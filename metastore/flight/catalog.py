"""The catalog DuckDB attaches: every Hive database of a catalog as a schema, every table
(views have no files to scan and are left out) as a table whose columns are the table's
columns followed by its partition keys, with their Arrow types (metastore.flight.types).

A table is read in three statements whatever the number of tables (`load_tables`): the
tables with their storage descriptor and serde, their columns, partition keys and the
parameters that matter here (the comment, Spark's provider and schema, the statistics'
state). A table Spark created as a data source (`USING parquet`, ...) has its columns in
Spark's schema (table parameters), not in the metastore's column list: they are read
from there.

Each table is a FlightInfo: its descriptor is the PATH [catalog, database, "table", name],
its schema carries `can_produce_statistics` when DuckDB can take statistics for every
column, its app_metadata says where DuckDB files it. `list_schemas` sends them inline,
compressed, with each schema's SHA-256 (DuckDB caches by it), and the catalog's version
(metastore.store.versions.catalog_version), which DuckDB asks for again before each query
so that it sees tables that changed while it is attached.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight
from sqlalchemy import Select, and_, or_, select
from sqlalchemy.orm import Session

from metastore import arrow_types, names
from metastore.errors import InvalidObject, NotFound
from metastore.flight import types
from metastore.flight.wire import compressed, pack
from metastore.store import models as m
from metastore.store import versions
from metastore.vocabulary import HiveTypeError

log = logging.getLogger(__name__)

TABLE = "table"
"""The third part of a table's descriptor path."""
VIEWS = ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")
SPARK_PROVIDER = "spark.sql.sources.provider"
SPARK_SCHEMA = "spark.sql.sources.schema"
PARAMETERS = ("comment", SPARK_PROVIDER, "COLUMN_STATS_ACCURATE", "numRows")
"""The table parameters read (and those that start with SPARK_SCHEMA)."""


@dataclasses.dataclass(frozen=True)
class Column:
    """A column or partition key: its name, Hive type, comment and Arrow type."""

    name: str
    hive_type: str
    comment: str | None
    arrow: pa.DataType


@dataclasses.dataclass(frozen=True)
class TableShape:
    """A table as the Flight door serves it."""

    catalog: str
    db: str
    name: str
    tbl_id: int
    columns: tuple[Column, ...]
    keys: tuple[Column, ...]
    location: str | None
    input_format: str
    serde_lib: str
    serde_id: int | None
    params: Mapping[str, str]

    @property
    def where(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def fields(self) -> tuple[Column, ...]:
        """The columns, then the partition keys: the fields of the schema, in order."""
        return self.columns + self.keys

    @property
    def provider(self) -> str:
        return self.params.get(SPARK_PROVIDER, "")

    def descriptor(self) -> flight.FlightDescriptor:
        return flight.FlightDescriptor.for_path(self.catalog, self.db, TABLE, self.name)

    def covered(self, *, legacy: bool) -> bool:
        """Whether DuckDB takes statistics for every column (types.statistics_covered)."""
        return all(types.statistics_covered(c.arrow, legacy=legacy) for c in self.fields)

    def schema(self, *, legacy: bool) -> pa.Schema:
        fields = [
            pa.field(c.name, c.arrow, metadata={"comment": c.comment} if c.comment else None)
            for c in self.fields
        ]
        metadata = {"can_produce_statistics": "1"} if self.covered(legacy=legacy) else None
        return pa.schema(fields, metadata=metadata)

    def flight_info(self, *, legacy: bool) -> flight.FlightInfo:
        app_metadata = {
            "type": "table",
            "schema": self.db,
            "catalog": self.catalog,
            "name": self.name,
            "comment": self.params.get("comment"),
            "input_schema": None,
            "action_name": None,
            "description": None,
            "extra_data": None,
        }
        return flight.FlightInfo(
            self.schema(legacy=legacy),
            self.descriptor(),
            [],
            -1,
            -1,
            app_metadata=pack(app_metadata),
        )

    def field_index(self, name: str) -> int:
        """The index of field NAME; InvalidObject when the table has none of that name."""
        for index, column in enumerate(self.fields):
            if column.name == name:
                return index
        lowered = name.lower()
        for index, column in enumerate(self.fields):
            if column.name.lower() == lowered:
                return index
        raise InvalidObject(
            f"table {self.catalog}.{self.where} has no column {name!r}; its columns are "
            + ", ".join(c.name for c in self.fields)
        )


def table_path(descriptor: flight.FlightDescriptor) -> tuple[str, str, str]:
    """The (catalog, database, table) a table's descriptor names; InvalidObject for a
    descriptor that is not one of ours."""
    path = descriptor.path if descriptor.descriptor_type == flight.DescriptorType.PATH else None
    if not path or len(path) != 4 or path[2] != TABLE.encode():
        raise InvalidObject(
            "the descriptor does not name a table of this service (PATH [catalog, "
            "database, 'table', name])"
        )
    try:
        catalog, db, _, table = (part.decode() for part in path)
    except UnicodeDecodeError:
        raise InvalidObject("the descriptor's path is not UTF-8 text") from None
    return catalog, db, table


def _tables_query(catalog: str, db: str | None, table: str | None) -> Select[Any]:
    t, d = m.Table.__table__.c, m.Database.__table__.c
    sd, serde = m.StorageDescriptor.__table__.c, m.SerDe.__table__.c
    query = (
        select(
            d.NAME,
            t.TBL_NAME,
            t.TBL_ID,
            sd.CD_ID,
            sd.LOCATION,
            sd.INPUT_FORMAT,
            sd.SERDE_ID,
            serde.SLIB,
        )
        .join_from(m.Table.__table__, m.Database.__table__, d.DB_ID == t.DB_ID)
        .outerjoin_from(m.Table.__table__, m.StorageDescriptor.__table__, sd.SD_ID == t.SD_ID)
        .outerjoin_from(
            m.StorageDescriptor.__table__, m.SerDe.__table__, serde.SERDE_ID == sd.SERDE_ID
        )
        .where(d.CTLG_NAME == catalog, or_(t.TBL_TYPE.is_(None), t.TBL_TYPE.not_in(VIEWS)))
        .order_by(d.NAME, t.TBL_NAME)
    )
    if db is not None:
        query = query.where(d.NAME == db)
    if table is not None:
        query = query.where(t.TBL_NAME == table)
    return query


def load_tables(
    s: Session, catalog: str, db: str | None = None, table: str | None = None
) -> list[TableShape]:
    """The tables of CATALOG (of database DB, the table TABLE, when given), in three
    statements besides the first."""
    rows = s.execute(_tables_query(catalog, db, table)).all()
    if not rows:
        return []
    tbl_ids = [row.TBL_ID for row in rows]
    cd_ids = sorted({row.CD_ID for row in rows if row.CD_ID is not None})
    c, k, p = m.Column.__table__.c, m.PartitionKey.__table__.c, m.TableParam.__table__.c
    columns: dict[int, list[tuple[str, str, str | None]]] = {}
    for cd_id, name, hive_type, comment in s.execute(
        select(c.CD_ID, c.COLUMN_NAME, c.TYPE_NAME, c.COMMENT)
        .where(c.CD_ID.in_(cd_ids))
        .order_by(c.CD_ID, c.INTEGER_IDX)
    ):
        columns.setdefault(cd_id, []).append((name, hive_type or "", comment))
    keys: dict[int, list[tuple[str, str, str | None]]] = {}
    for tbl_id, name, hive_type, comment in s.execute(
        select(k.TBL_ID, k.PKEY_NAME, k.PKEY_TYPE, k.PKEY_COMMENT)
        .where(k.TBL_ID.in_(tbl_ids))
        .order_by(k.TBL_ID, k.INTEGER_IDX)
    ):
        keys.setdefault(tbl_id, []).append((name, hive_type, comment))
    params: dict[int, dict[str, str]] = {}
    for tbl_id, key, value in s.execute(
        select(p.TBL_ID, p.PARAM_KEY, p.PARAM_VALUE).where(
            p.TBL_ID.in_(tbl_ids),
            or_(p.PARAM_KEY.in_(PARAMETERS), p.PARAM_KEY.startswith(SPARK_SCHEMA)),
        )
    ):
        params.setdefault(tbl_id, {})[key] = value or ""
    return [
        _shape(
            catalog,
            row,
            columns.get(row.CD_ID, []),
            keys.get(row.TBL_ID, []),
            params.get(row.TBL_ID, {}),
        )
        for row in rows
    ]


def _shape(
    catalog: str,
    row: Any,
    columns: Sequence[tuple[str, str, str | None]],
    keys: Sequence[tuple[str, str, str | None]],
    params: dict[str, str],
) -> TableShape:
    where = f"{row.NAME}.{row.TBL_NAME}"
    key_names = {name.lower() for name, _, _ in keys}
    if params.get(SPARK_PROVIDER):
        spark = spark_columns(params)
        if spark is not None:
            columns = [c for c in spark if c[0].lower() not in key_names]
    return TableShape(
        catalog=catalog,
        db=row.NAME,
        name=row.TBL_NAME,
        tbl_id=row.TBL_ID,
        columns=tuple(_column(where, *c) for c in columns),
        keys=tuple(_column(where, *c) for c in keys),
        location=row.LOCATION,
        input_format=row.INPUT_FORMAT or "",
        serde_lib=row.SLIB or "",
        serde_id=row.SERDE_ID,
        params=params,
    )


def _column(where: str, name: str, hive_type: str, comment: str | None) -> Column:
    try:
        arrow = arrow_types.arrow_type(hive_type)
    except HiveTypeError as e:
        log.warning("%s: column %s reads as NULL: %s", where, name, e)
        arrow = pa.null()
    return Column(name, hive_type, comment, arrow)


def describe(s: Session, catalog: str, db: str, table: str) -> TableShape:
    """Table DB.TABLE of CATALOG; NotFound naming what does not exist."""
    found = load_tables(s, catalog, names.identifier(db), names.identifier(table))
    if found:
        return found[0]
    database_names(s, catalog)  # NotFound for an unknown catalog
    if (
        s.scalar(
            select(m.Database.DB_ID).where(
                and_(m.Database.CTLG_NAME == catalog, m.Database.NAME == names.identifier(db))
            )
        )
        is None
    ):
        raise NotFound(f"schema {catalog}.{db} does not exist")
    raise NotFound(f"table {catalog}.{db}.{table} does not exist")


def database_names(s: Session, catalog: str) -> list[str]:
    """The databases of CATALOG; NotFound for a catalog without any (an unknown one)."""
    found = list(
        s.scalars(
            select(m.Database.NAME).where(m.Database.CTLG_NAME == catalog).order_by(m.Database.NAME)
        )
    )
    if not found:
        known = sorted(set(s.scalars(select(m.Database.CTLG_NAME))))
        raise NotFound(
            f"catalog {catalog} does not exist; ATTACH one of: {', '.join(known) or 'none'}"
        )
    return found


def list_schemas(s: Session, catalog: str, *, legacy: bool) -> bytes:
    """The answer to list_schemas for CATALOG: compressed content of the catalog root."""
    databases = database_names(s, catalog)
    by_db: dict[str, list[TableShape]] = {db: [] for db in databases}
    for shape in load_tables(s, catalog):
        by_db.setdefault(shape.db, []).append(shape)
    schemas = []
    for db, shapes in by_db.items():
        infos = [shape.flight_info(legacy=legacy).serialize() for shape in shapes]
        blob = compressed(pack(infos))
        schemas.append(
            {
                "name": db,
                "description": "",
                "tags": {},
                "contents": {
                    "sha256": hashlib.sha256(blob).hexdigest(),
                    "url": None,
                    "serialized": blob,
                },
                "is_default": None,
            }
        )
    root = {
        "contents": {"sha256": "", "url": None, "serialized": None},
        "schemas": schemas,
        "version_info": version_info(s, catalog),
    }
    return compressed(pack(root))


def version_info(s: Session, catalog: str) -> dict[str, Any]:
    return {"catalog_version": versions.catalog_version(s, catalog), "is_fixed": False}


# -- Spark's schema of a data source table --------------------------------------------------

_SPARK_NAMES = {
    "integer": "int",
    "long": "bigint",
    "short": "smallint",
    "byte": "tinyint",
    "timestamp_ntz": "timestamp",
    "null": "void",
}


def spark_columns(params: Mapping[str, str]) -> list[tuple[str, str, str | None]] | None:
    """The (name, Hive type, comment) of the fields of Spark's schema JSON in a table's
    parameters (kept in parts), or None when there is none that reads."""
    parts = params.get(f"{SPARK_SCHEMA}.numParts")
    try:
        if parts is not None:
            text = "".join(params[f"{SPARK_SCHEMA}.part.{i}"] for i in range(int(parts)))
        else:
            text = params.get(SPARK_SCHEMA, "")
        schema = json.loads(text) if text else None
        if not isinstance(schema, dict):
            return None
        return [
            (f["name"], _spark_field_type(f), (f.get("metadata") or {}).get("comment"))
            for f in schema["fields"]
        ]
    except (KeyError, ValueError, TypeError):
        return None


def _spark_field_type(field: Mapping[str, Any]) -> str:
    declared = (field.get("metadata") or {}).get("__CHAR_VARCHAR_TYPE_STRING")
    return str(declared) if declared else _spark_type(field["type"])


def _spark_type(spark: Any) -> str:
    """The Hive type text of a Spark type as its JSON gives it."""
    if isinstance(spark, str):
        return _SPARK_NAMES.get(spark, spark)
    kind = spark["type"]
    if kind == "array":
        return f"array<{_spark_type(spark['elementType'])}>"
    if kind == "map":
        return f"map<{_spark_type(spark['keyType'])},{_spark_type(spark['valueType'])}>"
    if kind == "struct":
        fields = ",".join(f"{f['name']}:{_spark_field_type(f)}" for f in spark["fields"])
        return f"struct<{fields}>"
    if kind == "udt":
        return _spark_type(spark["sqlType"])
    raise ValueError(f"unknown Spark type {kind}")
