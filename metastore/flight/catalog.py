"""The catalog DuckDB attaches: every Hive database of a catalog as a schema, every table
(views have no files to scan and are left out) as a table whose columns are the table's
columns followed by its partition keys, with their Arrow types (metastore.flight.types).

The store reads the tables in a fixed number of statements whatever their number
(metastore.store.shapes); a table Spark created as a data source (`USING parquet`, ...)
has its columns in Spark's schema (table parameters), not in the metastore's column list:
they are taken from there (metastore.files.layout.data_columns).

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
import logging
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight
from sqlalchemy.orm import Session

from metastore import names
from metastore.columns import Column
from metastore.errors import InvalidObject, NotFound
from metastore.files.layout import data_columns
from metastore.flight import types
from metastore.flight.wire import compressed, pack
from metastore.store import shapes, versions

log = logging.getLogger(__name__)

TABLE = "table"
"""The third part of a table's descriptor path."""


@dataclasses.dataclass(frozen=True)
class TableShape:
    """A table as the Flight door serves it: its data columns and partition keys (the
    fields of its schema), and what the store keeps of it."""

    stored: shapes.StoredShape
    columns: tuple[Column, ...]

    @classmethod
    def of(cls, stored: shapes.StoredShape) -> TableShape:
        columns = data_columns(stored.columns, stored.keys, stored.parameters)
        shape = cls(stored, tuple(columns))
        for column in shape.fields:
            if pa.types.is_null(column.arrow) and column.hive_type.lower() != "void":
                log.warning(
                    "%s: column %s of type %s reads as NULL (not a Hive type)",
                    shape.where,
                    column.name,
                    column.hive_type,
                )
        return shape

    @property
    def catalog(self) -> str:
        return self.stored.catalog

    @property
    def db(self) -> str:
        return self.stored.db

    @property
    def name(self) -> str:
        return self.stored.name

    @property
    def keys(self) -> tuple[Column, ...]:
        return self.stored.keys

    @property
    def params(self) -> Mapping[str, str]:
        return self.stored.parameters

    @property
    def where(self) -> str:
        return f"{self.db}.{self.name}"

    @property
    def fields(self) -> tuple[Column, ...]:
        """The columns, then the partition keys: the fields of the schema, in order."""
        return self.columns + self.keys

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


def load_tables(
    s: Session, catalog: str, db: str | None = None, table: str | None = None
) -> list[TableShape]:
    """The tables of CATALOG (of database DB, the table TABLE, when given)."""
    return [TableShape.of(stored) for stored in shapes.load_shapes(s, catalog, db, table)]


def describe(s: Session, catalog: str, db: str, table: str) -> TableShape:
    """Table DB.TABLE of CATALOG; NotFound naming what does not exist."""
    found = load_tables(s, catalog, names.identifier(db), names.identifier(table))
    if found:
        return found[0]
    shapes.database_names(s, catalog)  # NotFound for an unknown catalog
    if not shapes.database_exists(s, catalog, names.identifier(db)):
        raise NotFound(f"schema {catalog}.{db} does not exist")
    raise NotFound(f"table {catalog}.{db}.{table} does not exist")


def list_schemas(s: Session, catalog: str, *, legacy: bool) -> bytes:
    """The answer to list_schemas for CATALOG: compressed content of the catalog root."""
    databases = shapes.database_names(s, catalog)
    by_db: dict[str, list[TableShape]] = {db: [] for db in databases}
    for shape in load_tables(s, catalog):
        by_db.setdefault(shape.db, []).append(shape)
    schemas = []
    for db, tables in by_db.items():
        infos = [shape.flight_info(legacy=legacy).serialize() for shape in tables]
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
