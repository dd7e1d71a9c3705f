"""An Iceberg table as colstats reads it: recognized by its HMS parameters (`table_type` =
ICEBERG, `metadata_location`), loaded from its metadata file with pyiceberg (on object
storage with the same S3A settings as the files: metastore.files.object_storage), its
columns with their Iceberg field ids and Hive types, and the data files of a snapshot.

The job and the Flight door read a snapshot's data files themselves, by field id
(metastore.files.formats.ReadSpec.field_ids): a column renamed since a file was written keeps
its id, a column added since reads as NULL. Row-level deletes (delete files) are not
applied by these readers: a snapshot that has any is refused in one line, rather than read
with rows that were deleted.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pyarrow as pa

from metastore.columns import Column
from metastore.files import object_storage
from metastore.files.errors import FilesError

if TYPE_CHECKING:
    from pyiceberg.table import Table


class IcebergError(FilesError):
    """An Iceberg table whose metadata or data files cannot be read as they are; the message
    is one line naming the table."""


@dataclasses.dataclass(frozen=True)
class IcebergColumn:
    """A top-level column of an Iceberg table: as the rest of colstats sees it (its Hive
    type), its field id and its Iceberg type (how theta sketches serialize its values)."""

    column: Column
    field_id: int
    iceberg_type: str
    arrow: pa.DataType
    """The Arrow type of its Iceberg type, as pyiceberg reads it (a UUID as its 16 bytes):
    what its values are hashed as for theta sketches."""


@dataclasses.dataclass(frozen=True)
class DataFileRef:
    path: str
    size: int
    records: int


def io_properties(location: str) -> dict[str, str]:
    """pyiceberg's FileIO properties for a table at LOCATION, from the S3A settings this
    process uses (those of the bucket of LOCATION first)."""
    parsed = urlparse(location)
    if parsed.scheme.lower() not in object_storage.S3_SCHEMES:
        return {}
    settings = object_storage.current()
    bucket = parsed.netloc
    out: dict[str, str] = {}
    endpoint = settings.setting(bucket, "endpoint")
    if endpoint:
        ssl = settings.setting(bucket, "connection.ssl.enabled")
        if "://" not in endpoint:
            secure = ssl is None or ssl.strip().lower() == "true"
            endpoint = f"{'https' if secure else 'http'}://{endpoint}"
        out["s3.endpoint"] = endpoint
    for key, name in (
        ("access.key", "s3.access-key-id"),
        ("secret.key", "s3.secret-access-key"),
        ("session.token", "s3.session-token"),
    ):
        value = settings.setting(bucket, key)
        if value:
            out[name] = value
    region = settings.setting(bucket, "endpoint.region") or settings.setting(bucket, "region")
    out["s3.region"] = region or "us-east-1"
    path_style = settings.setting(bucket, "path.style.access")
    if path_style is not None and path_style.strip().lower() != "true":
        out["s3.force-virtual-addressing"] = "true"
    return out


def load(where: str, metadata_location: str) -> Table:
    """The Iceberg table WHERE as its METADATA_LOCATION holds it; IcebergError when it
    cannot be read."""
    from pyiceberg.table import StaticTable

    try:
        return StaticTable.from_metadata(metadata_location, io_properties(metadata_location))
    except Exception as e:  # pyiceberg's, PyArrow's and the storage's errors alike
        raise IcebergError(
            f"cannot read the Iceberg metadata of {where} at {metadata_location}: "
            f"{object_storage.explain(metadata_location, e)}"
        ) from None


@functools.lru_cache(maxsize=256)
def current_snapshot_id(where: str, metadata_location: str) -> int | None:
    """The current snapshot of the table whose metadata is at METADATA_LOCATION (None: no
    snapshot yet). A metadata file never changes: its answer is kept."""
    snapshot = load(where, metadata_location).current_snapshot()
    return None if snapshot is None else snapshot.snapshot_id


def columns(table: Table) -> list[IcebergColumn]:
    """The top-level columns of TABLE's current schema, in order."""
    from pyiceberg.catalog.hive import SchemaToHiveConverter
    from pyiceberg.io.pyarrow import schema_to_pyarrow
    from pyiceberg.schema import visit

    converter = SchemaToHiveConverter(hive2_compatible=True)
    out = []
    for field in table.schema().fields:
        arrow = schema_to_pyarrow(field.field_type)
        if isinstance(arrow, pa.ExtensionType):
            arrow = arrow.storage_type
        hive_type = visit(field.field_type, converter)
        out.append(
            IcebergColumn(
                Column(field.name, hive_type, field.doc),
                field.field_id,
                str(field.field_type),
                arrow,
            )
        )
    return out


def data_files(where: str, table: Table, snapshot_id: int) -> list[DataFileRef]:
    """The data files of snapshot SNAPSHOT_ID of TABLE; IcebergError for delete files and
    for files not in Parquet (the readers read Iceberg's Parquet files by field id)."""
    tasks: list[Any] = list(table.scan(snapshot_id=snapshot_id).plan_files())
    deletes = sum(len(task.delete_files) for task in tasks)
    if deletes:
        raise IcebergError(
            f"{where} has {deletes} delete file(s) in snapshot {snapshot_id} (row-level "
            "deletes), which colstats does not apply yet; compact the table (rewrite its "
            "data files) and analyze it again"
        )
    out = []
    for task in tasks:
        data = task.file
        fmt = str(
            data.file_format.value if hasattr(data.file_format, "value") else data.file_format
        )
        if fmt.upper() != "PARQUET":
            raise IcebergError(
                f"{where} has data files in {fmt} ({data.file_path}); colstats reads the "
                "Parquet files of Iceberg tables"
            )
        out.append(DataFileRef(data.file_path, data.file_size_in_bytes, data.record_count))
    return sorted(out, key=lambda ref: ref.path)
