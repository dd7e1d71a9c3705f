"""File sources: the files the job reads, given by a folder (--path) or found in the
metastore (the table's location, storage format and partitions), and which partitions of
them to analyze.

A table registered in a metastore says where and how its data is stored: the table's
location (and each partition's own), and its layout (metastore.files.layout: the format
from the input format and serde, or from Spark's data source properties). A format the
readers do not read is a JobError that says what the table is stored as.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import TYPE_CHECKING

from hive_metastore_thrift import ttypes as t
from metastore import arrow_types, names
from metastore.columns import Column
from metastore.files.errors import NotAFolder, NotFound
from metastore.files.formats import ReadSpec
from metastore.files.layout import Storage, TableLayout, layout_of, plain_layout
from metastore.files.listing import (
    Listing,
    data_files,
    list_files,
    list_partition_folders,
    sniff,
)
from metastore.files.locations import location_of
from metastore.files.reading import file_schema
from metastore.job.client import MetastoreClient
from metastore.job.ddl import parse_schema
from metastore.job.errors import JobError, OptionsError
from metastore.job.options import AnalyzeOptions

if TYPE_CHECKING:
    import pyarrow as pa

PAGE = 500


@dataclasses.dataclass
class FileSource:
    """Files to read and how: the data columns, the partition keys, the files by partition."""

    location: str
    spec: ReadSpec
    columns: list[Column]
    keys: list[Column]
    listing: Listing
    table: tuple[str, str] = ("", "")
    """The metastore's table whose partitions list_partitions reads (db, name)."""


def from_path(options: AnalyzeOptions) -> FileSource:
    """The files under --path, in --format (csv and json with --schema): listed, and the
    first data file checked to be of that format (its footer read for Parquet and ORC)."""
    assert options.path is not None
    try:
        listing = list_files(options.path)
    except NotFound as e:  # what --path names is not there
        raise OptionsError(str(e)) from None
    except NotAFolder:
        raise OptionsError(
            f"--path {options.path} is a file; give the folder that holds the table's files "
            "(and its partition folders)"
        ) from None
    fmt = options.file_format
    sample = first_data_file(listing)
    if sample is None:
        count = sum(len(files) for files in listing.files.values())
        raise OptionsError(
            f"no data under {options.path}: "
            + (
                f"its {count} file(s) are empty"
                if count
                else "no files (names starting with _ or . are skipped)"
            )
        )
    check_format(sample, fmt)
    keys = [Column(k, "string") for k in listing.keys]
    key_set = {k.lower() for k in listing.keys}
    if fmt in ("parquet", "orc"):
        spec = ReadSpec(fmt)
        columns = [
            Column(field.name, _hive_type(field, sample))
            for field in file_schema(sample, spec)
            if field.name.lower() not in key_set
        ]
    else:
        assert options.schema is not None
        data = [(n, h) for n, h in parse_schema(options.schema) if n.lower() not in key_set]
        columns = [Column(name, hive) for name, hive in data]
        spec = ReadSpec(fmt, header=fmt == "csv", names=tuple(name for name, _ in data))
    return FileSource(location_of(options.path), spec, columns, keys, listing)


def _hive_type(field: pa.Field, path: str) -> str:
    try:
        return arrow_types.hive_type(field.type)
    except ValueError:
        raise JobError(
            f"column {field.name} of {path} is of Arrow type {field.type}, which has no Hive "
            "type; the job cannot analyze these files"
        ) from None


_LOOKS_LIKE = {
    "parquet": "a Parquet file",
    "orc": "an ORC file",
    "json": "JSON lines",
    "text": "text",
    "binary": "neither text nor Parquet nor ORC",
}
_FITS = {"parquet": ("parquet",), "orc": ("orc",), "csv": ("text", "json"), "json": ("json",)}


def check_format(path: str, fmt: str) -> None:
    """An OptionsError when the first bytes of the data file PATH do not fit FMT."""
    found = sniff(path)
    if found in _FITS[fmt]:
        return
    hint = {"parquet": "parquet", "orc": "orc", "json": "json", "text": "csv"}.get(found)
    raise OptionsError(
        f"{path} is not {fmt}: it looks like {_LOOKS_LIKE[found]}"
        + (f" (give --format {hint})" if hint else "")
    )


def check_first_file(source: FileSource, table: str) -> None:
    """A JobError when the first data file of TABLE, registered as Parquet or ORC, is not
    of that format by its first bytes: the scan would fail on it once Spark runs. (Text
    formats are left to the scan: a text file of another encoding is no error.)"""
    fmt = source.spec.format
    if fmt not in ("parquet", "orc"):
        return
    sample = first_data_file(source.listing)
    if sample is None:
        return
    found = sniff(sample)
    if found != fmt:
        raise JobError(
            f"{sample} is not {fmt}, as {table} is registered: it looks like "
            f"{_LOOKS_LIKE[found]} (replace it or move it out of the table's folder)"
        )


def first_data_file(listing: Listing) -> str | None:
    """The first file of LISTING that is not empty."""
    return next((path for files in listing.files.values() for path, size in files if size), None)


def guess_format(location: str) -> str:
    """The format of the files at LOCATION, for a table registered without one: Parquet and
    ORC are known by their first bytes; whether text is csv or json only the user can say."""
    listing = list_files(location)
    sample = first_data_file(listing)
    if sample is None:
        raise OptionsError(
            f"the table has no storage format in the metastore and no data at {location} to "
            "tell it from; give --format parquet, orc, csv or json"
        )
    found = sniff(sample)
    if found in ("parquet", "orc"):
        return found
    raise OptionsError(
        f"the table has no storage format in the metastore, and {sample} looks like "
        f"{_LOOKS_LIKE[found]}; give --format csv or json to read it and register its format"
    )


def describe(table: t.Table, fmt: str | None) -> tuple[FileSource, str | None]:
    """TABLE as the metastore describes it, and the format to register for it when it has
    none (a table of an older run of the job): FMT, or else what its files look like. Its
    files are listed later (list_partitions), once the partitions to analyze are known."""
    where = f"{table.dbName}.{table.tableName}"
    storage = storage_of(table)
    repair = None
    if not storage.has_format:
        if not storage.location:
            raise OptionsError(f"{where} has no location in the metastore; give --path")
        repair = fmt or guess_format(storage.location)
        layout = plain_layout(storage, repair)
    else:
        layout = layout_of(storage)
        if fmt is not None and fmt != layout.spec.format:
            raise OptionsError(f"{where} is registered as {layout.spec.format}, not {fmt}")
    location = _location(layout, where)
    listing = Listing([k.name for k in layout.keys], {}, {})
    where_at = (table.dbName, table.tableName)
    source = FileSource(location, layout.spec, layout.columns, layout.keys, listing, where_at)
    return source, repair


def list_partitions(client: MetastoreClient, source: FileSource, chosen: list[str]) -> None:
    """Fill SOURCE's listing with the files of the CHOSEN stored partitions, each in its
    own folder (or the table's when unpartitioned)."""
    listing = source.listing
    if not source.keys:
        listing.files[""] = data_files(source.location)
        listing.values[""] = []
        return
    base = source.location.rstrip("/")
    db, table = source.table
    for start in range(0, len(chosen), PAGE):
        for part in client.call("get_partitions_by_names", db, table, chosen[start : start + PAGE]):
            name = names.make_partition_name([k.lower() for k in listing.keys], part.values)
            own = part.sd.location if part.sd is not None and part.sd.location else None
            listing.files[name] = data_files(own or f"{base}/{name}")
            listing.values[name] = [key_value(v) for v in part.values]


def new_partitions(source: FileSource, registered: Collection[str]) -> Listing:
    """The partition folders under the table's location that hold data files and are not
    among the REGISTERED partition names, with their files: those --incremental registers.
    Folders of other names (a registered partition's own, say) are left out."""
    found = list_partition_folders(source.location, [k.name for k in source.keys])
    drop_partitions(found, set(registered))
    return found


def add_partitions(listing: Listing, added: Listing) -> None:
    """Put the partitions of ADDED (their files, values and folders) into LISTING."""
    listing.files.update(added.files)
    listing.values.update(added.values)
    listing.folders.update(added.folders)


def drop_partitions(listing: Listing, dropped: set[str]) -> None:
    for name in dropped & set(listing.files):
        del listing.files[name], listing.values[name]
        listing.folders.pop(name, None)


def key_value(value: str) -> str | None:
    """A stored partition value as the folder's: None for the default partition."""
    return None if value == names.DEFAULT_PARTITION_VALUE else value


def storage_of(table: t.Table) -> Storage:
    """What TABLE says of its storage, as metastore.files.layout reads it."""
    sd = table.sd or t.StorageDescriptor()
    serde = sd.serdeInfo or t.SerDeInfo()
    return Storage(
        where=f"{table.dbName}.{table.tableName}",
        location=sd.location,
        input_format=sd.inputFormat or "",
        serde_lib=serde.serializationLib or "",
        serde_parameters=serde.parameters or {},
        table_parameters=table.parameters or {},
        columns=[Column(c.name, c.type, c.comment) for c in sd.cols or []],
        keys=[Column(k.name, k.type, k.comment) for k in table.partitionKeys or []],
    )


def _location(layout: TableLayout, where: str) -> str:
    if not layout.location:
        raise OptionsError(f"{where} has no location in the metastore; give --path")
    return layout.location
