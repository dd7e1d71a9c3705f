"""A table's layout: where its files are, how they are read, its data columns and partition
keys, from what the metastore says of the table, read one way for the job and the Flight
door.

A Hive table says it with its location, input format, serde and their parameters (and
`skip.header.line.count` among the table's parameters). A table Spark created as a data
source (`CREATE TABLE ... USING parquet`) says it with Spark's properties instead: the
provider, the `path` option among the serde's parameters, and Spark's schema, which wins
over the columns of the storage descriptor (Spark registers a placeholder column there for
tables Hive cannot read).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from metastore import spark_properties
from metastore.columns import Column
from metastore.files.formats import ReadSpec, hive_spec, provider_spec


@dataclasses.dataclass(frozen=True)
class Storage:
    """What the metastore keeps of a table's storage: plain values, as the store reads them
    and as a Thrift Table carries them (metastore.job.located)."""

    where: str
    """DB.TABLE, for the messages."""
    location: str | None
    input_format: str
    serde_lib: str
    serde_parameters: Mapping[str, str]
    table_parameters: Mapping[str, str]
    columns: Sequence[Column]
    """The storage descriptor's columns."""
    keys: Sequence[Column]

    @property
    def provider(self) -> str:
        """Spark's data source provider, lower case ('' for a Hive table)."""
        return self.table_parameters.get(spark_properties.PROVIDER, "").lower()

    @property
    def has_format(self) -> bool:
        """Whether the metastore says how the files are stored (an input format, a serde or
        Spark's provider): a table an older job registered may have none."""
        return bool(self.input_format or self.serde_lib or self.provider)


@dataclasses.dataclass(frozen=True)
class TableLayout:
    """Where a table's files are and how to read them."""

    location: str | None
    """The folder of the table's files (Spark's `path` option first); None when the
    metastore has none."""
    spec: ReadSpec
    columns: list[Column]
    """The data columns, in the files' order (partition keys left out)."""
    keys: list[Column]


def data_columns(
    columns: Sequence[Column], keys: Sequence[Column], table_parameters: Mapping[str, str]
) -> list[Column]:
    """A table's data columns: those of Spark's schema (keys left out) for a table Spark
    created as a data source and that has one, else COLUMNS, its storage descriptor's."""
    if not table_parameters.get(spark_properties.PROVIDER):
        return list(columns)
    spark_columns = spark_properties.schema_columns(table_parameters)
    if spark_columns is None:
        return list(columns)
    key_names = {k.name.lower() for k in keys}
    return [c for c in spark_columns if c.name.lower() not in key_names]


def layout_of(storage: Storage) -> TableLayout:
    """STORAGE's layout; NotReadHere for a format the readers do not read."""
    columns = data_columns(storage.columns, storage.keys, storage.table_parameters)
    location = storage.location
    if storage.provider:
        location = storage.serde_parameters.get(spark_properties.PATH_OPTION) or location
        spec = provider_spec(
            storage.where, storage.provider, storage.serde_parameters, [c.name for c in columns]
        )
    else:
        spec = hive_spec(
            storage.where,
            storage.input_format,
            storage.serde_lib,
            storage.serde_parameters,
            storage.table_parameters,
            [c.name for c in columns],
        )
    return TableLayout(location or None, spec, columns, list(storage.keys))


def plain_layout(storage: Storage, fmt: str) -> TableLayout:
    """The layout of a table registered without a format, read as FMT (parquet, orc, csv
    or json) over its storage descriptor's columns."""
    columns = list(storage.columns)
    spec = ReadSpec(fmt, header=fmt == "csv", names=tuple(c.name for c in columns))
    return TableLayout(storage.location or None, spec, columns, list(storage.keys))
