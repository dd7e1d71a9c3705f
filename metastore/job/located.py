"""File sources: the files the job reads, given by a folder (--path) or found in the
metastore (the table's location, storage format and partitions), and which partitions of
them to analyze.

A table registered in a metastore says where and how its data is stored: the table's
location (and each partition's own), the input format and serde, or for a table Spark
created as a data source the `spark.sql.sources.provider` parameter and the `path` serde
parameter. Formats the job reads: Parquet, ORC, delimited text (LazySimpleSerDe, with its
field.delim / serialization.format, escape.delim, serialization.null.format and the table's
skip.header.line.count), CSV (OpenCSVSerde) and JSON (a JSON serde); anything else is a
JobError that says what the table is stored as.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.job.client import MetastoreClient
from metastore.job.errors import JobError
from metastore.job.files import (
    Listing,
    ReadSpec,
    data_files,
    file_schema,
    hive_type_of,
    list_files,
)
from metastore.job.formats import hive_spec, provider_spec
from metastore.job.options import AnalyzeOptions
from metastore.job.source import Column, column_of, spark_hive_type

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Wanted = Callable[[str, Sequence[str | None]], bool]
"""Whether to analyze the partition of this name and these values."""

PAGE = 500


@dataclasses.dataclass
class FileSource:
    """Files to read and how: the data columns, the partition keys, the files by partition."""

    location: str
    spec: ReadSpec
    columns: list[Column]
    keys: list[Column]
    listing: Listing


def from_path(spark: SparkSession, options: AnalyzeOptions, wanted: Wanted) -> FileSource:
    """The files under --path, in --format (csv and json with --schema)."""
    assert options.path is not None
    listing = list_files(options.path)
    _keep(listing, wanted)
    keys = [Column(k, "string", None) for k in listing.keys]
    key_set = {k.lower() for k in listing.keys}
    if options.format in ("parquet", "orc"):
        spec = ReadSpec(options.format)
        sample = next(
            (path for files in listing.files.values() for path, size in files if size), None
        )
        if sample is None:
            sample = _first_data_file(options.path)
        schema = file_schema(sample, spec)
        columns = [
            column_of(field.name, hive_type_of(field.type))
            for field in schema
            if field.name.lower() not in key_set
        ]
    else:
        from pyspark.sql.types import StructType

        assert options.schema is not None
        try:
            schema = StructType.fromDDL(options.schema)
        except Exception as e:  # Spark's parse error, whatever its class
            raise JobError(f"cannot read the schema {options.schema!r}: {e}") from None
        assert isinstance(schema, StructType)
        fields = schema.fields
        data = [f for f in fields if f.name.lower() not in key_set]
        columns = [column_of(f.name, spark_hive_type(f)) for f in data]
        names_ = tuple(f.name for f in data)
        spec = ReadSpec(options.format, header=options.format == "csv", names=names_)
    return FileSource(options.path, spec, columns, keys, listing)


def _first_data_file(location: str) -> str:
    """A non-empty data file anywhere under LOCATION (the schema is read from it)."""
    for files in list_files(location).files.values():
        for path, size in files:
            if size:
                return path
    raise JobError(f"no data files under {location}: nothing to read the columns from")


def _keep(listing: Listing, wanted: Wanted) -> None:
    drop_partitions(listing, {n for n, values in listing.values.items() if not wanted(n, values)})


def drop_partitions(listing: Listing, dropped: set[str]) -> None:
    for name in dropped & set(listing.files):
        del listing.files[name], listing.values[name]


def describe(client: MetastoreClient, db: str, table: str) -> FileSource:
    """The table DB.TABLE as the metastore describes it; its files are listed later
    (list_partitions), once it is known which partitions to analyze."""
    try:
        found = client.call("get_table", db, table)
    except t.NoSuchObjectException:
        raise JobError(
            f"{db}.{table} is not in the metastore at {client.uri}; give --path (and "
            "--format) to register it"
        ) from None
    location, spec, columns = storage_of(found)
    keys = [Column(k.name, k.type, None) for k in found.partitionKeys or []]
    return FileSource(location, spec, columns, keys, Listing([k.name for k in keys], {}, {}))


def list_partitions(
    client: MetastoreClient, source: FileSource, db: str, table: str, wanted: Wanted
) -> None:
    """Fill SOURCE's listing with the files of the WANTED partitions, each in its own folder
    (or the table's when unpartitioned)."""
    listing = source.listing
    if not source.keys:
        listing.files[""] = data_files(source.location)
        listing.values[""] = []
        return
    stored = client.call("get_partition_names", db, table, -1)
    chosen = [
        name
        for name in stored
        if wanted(name, [_key_value(v) for _, v in names.parse_partition_name(name)])
    ]
    base = source.location.rstrip("/")
    for start in range(0, len(chosen), PAGE):
        for part in client.call("get_partitions_by_names", db, table, chosen[start : start + PAGE]):
            name = names.make_partition_name([k.lower() for k in listing.keys], part.values)
            own = part.sd.location if part.sd is not None and part.sd.location else None
            listing.files[name] = data_files(own or f"{base}/{name}")
            listing.values[name] = [_key_value(v) for v in part.values]


def _key_value(value: str) -> str | None:
    return None if value == names.DEFAULT_PARTITION_VALUE else value


def storage_of(table: t.Table) -> tuple[str, ReadSpec, list[Column]]:
    """Where TABLE's data is, how to read it, and its data columns."""
    where = f"{table.dbName}.{table.tableName}"
    sd = table.sd or t.StorageDescriptor()
    serde = sd.serdeInfo or t.SerDeInfo()
    lib = serde.serializationLib or ""
    serde_params = serde.parameters or {}
    params = table.parameters or {}
    provider = params.get("spark.sql.sources.provider", "").lower()
    columns = [column_of(c.name, c.type) for c in sd.cols or []]
    location = sd.location
    if provider:
        location = serde_params.get("path") or location
        spark_schema = _spark_schema(params)
        if spark_schema is not None:
            keys = {k.name.lower() for k in table.partitionKeys or []}
            columns = [c for c in spark_schema if c.name.lower() not in keys]
        spec = provider_spec(where, provider, serde_params, [c.name for c in columns])
    else:
        names_ = [c.name for c in columns]
        spec = hive_spec(where, sd.inputFormat or "", lib, serde_params, params, names_)
    if not location:
        raise JobError(f"{where} has no location in the metastore; give --path")
    return location, spec, columns


def _spark_schema(params: dict[str, str]) -> list[Column] | None:
    """The columns of Spark's schema JSON in the table's parameters (split in parts)."""
    from pyspark.sql.types import StructType

    parts = params.get("spark.sql.sources.schema.numParts")
    if parts is not None:
        text = "".join(params[f"spark.sql.sources.schema.part.{i}"] for i in range(int(parts)))
    else:
        text = params.get("spark.sql.sources.schema", "")
    if not text:
        return None
    schema = StructType.fromJson(json.loads(text))
    return [column_of(f.name, spark_hive_type(f)) for f in schema.fields]
