"""Scans: `endpoints` plans a scan of a table's files, `DoGet` reads one endpoint's files.

The files are where the metastore says (the table's location, or each partition's own),
read as the statistics job reads them (metastore.files: the layout from what the metastore
keeps of the table; Parquet, ORC, CSV and delimited text, JSON), so that DuckDB sees the
rows the statistics describe. Every batch carries every column of the table's schema, in order,
as DuckDB requires: the columns DuckDB asked for (`column_ids`) are read, the others are
NULL; partition keys are the partition's values (types.key_value).

One endpoint per partition, or per group of pieces of at most ENDPOINT_BYTES (a piece is a
file, or some row groups of a large Parquet file, as the job splits them: splits_of),
so that DuckDB reads them in parallel, one endpoint a thread.
Partitions that the filters DuckDB sends rule out (metastore.flight.filters) get none.

A ticket holds what DoGet needs (the schema, how to read the files, which files, the
partition values, the columns), signed with a key of this server process (HMAC-SHA256):
DoGet reads no database, and reads only files that an endpoints call of this process
planned from the metastore. DuckDB sends DoGet on the connection that got the endpoints
(arrow-flight-reuse-connection), so the ticket comes back to the process that signed it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgpack
import pyarrow as pa
import pyarrow.flight as flight
from sqlalchemy.orm import Session

from metastore import names
from metastore.columns import Column
from metastore.files.errors import FilesError
from metastore.files.formats import ReadSpec
from metastore.files.layout import Storage, TableLayout, layout_of
from metastore.files.listing import Split, data_files, splits_of
from metastore.files.reading import Pieces, read_split
from metastore.flight import types
from metastore.flight.catalog import TableShape
from metastore.flight.door import typed
from metastore.flight.wire import BadRequest, pack
from metastore.iceberg import parameters as iceberg
from metastore.iceberg import tables as iceberg_tables
from metastore.store import shapes

log = logging.getLogger(__name__)

REUSE_CONNECTION = "arrow-flight-reuse-connection://?"
ENDPOINT_BYTES = 8 * 1024 * 1024
"""The bytes of files an endpoint reads at most (a larger piece alone): small files are
read together, others one an endpoint, for DuckDB's threads to share."""
SPECIAL_COLUMN = 2**63
"""Column ids from here up are DuckDB's pseudo-columns (rowid, "no column")."""
_DIGEST = 32


class ScanError(Exception):
    """Files that cannot be read as the table says; the message names the file. DoGet
    answers it (and the readers' FilesError) with a Flight error typed for DuckDB."""


def layout(s: Session, shape: TableShape) -> TableLayout:
    """Where SHAPE's files are and how they are read (NotReadHere for a format the readers
    do not read)."""
    stored = shape.stored
    return layout_of(
        Storage(
            where=shape.where,
            location=stored.location,
            input_format=stored.input_format,
            serde_lib=stored.serde_lib,
            serde_parameters=shapes.serde_parameters(s, stored.serde_id),
            table_parameters=stored.parameters,
            columns=stored.columns,
            keys=stored.keys,
        )
    )


def key_texts(shape: TableShape, part_name: str) -> list[str | None]:
    """The values of partition PART_NAME (None for the default partition)."""
    values = names.partition_values(part_name, [k.name.lower() for k in shape.keys])
    return [None if v == names.DEFAULT_PARTITION_VALUE else v for v in values]


def requested_columns(shape: TableShape, column_ids: Any) -> list[int]:
    """The field indexes of DuckDB's COLUMN_IDS (pseudo-columns left out)."""
    if column_ids is None:
        return list(range(len(shape.fields)))
    if not isinstance(column_ids, list) or not all(isinstance(c, int) for c in column_ids):
        raise BadRequest("endpoints: column_ids must be a list of column indexes")
    out = []
    for column_id in column_ids:
        if column_id >= SPECIAL_COLUMN:
            continue
        if not 0 <= column_id < len(shape.fields):
            raise BadRequest(
                f"endpoints: column id {column_id} is not a column of {shape.where} "
                f"({len(shape.fields)} columns)"
            )
        out.append(column_id)
    return sorted(set(out))


class Tickets:
    """Signs and checks tickets with a key of this process."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def sign(self, content: Mapping[str, Any]) -> bytes:
        body = pack(content)
        return body + hmac.new(self._key, body, hashlib.sha256).digest()

    def open(self, ticket: bytes) -> dict[str, Any]:
        body, digest = ticket[:-_DIGEST], ticket[-_DIGEST:]
        expected = hmac.new(self._key, body, hashlib.sha256).digest()
        if len(ticket) <= _DIGEST or not hmac.compare_digest(digest, expected):
            raise BadRequest(
                "DoGet: the ticket is not one this server issued (tickets come from the "
                "endpoints action of the same server process)"
            )
        content: dict[str, Any] = msgpack.unpackb(body, raw=False)
        return content


def endpoints(
    tickets: Tickets,
    shape: TableShape,
    spec: ReadSpec,
    groups: Sequence[tuple[list[str | None], list[Piece]]],
    columns: Sequence[int],
) -> list[bytes]:
    """The serialized endpoints of GROUPS ((partition values, files) each), for COLUMNS."""
    schema = shape.schema(legacy=False).serialize().to_pybytes()
    spec_fields = [
        spec.format,
        spec.delimiter,
        spec.quote,
        spec.escape,
        spec.header,
        list(spec.null_text),
        spec.empty_is_null,
        list(spec.names),
        list(spec.field_ids),
    ]
    location = flight.Location(REUSE_CONNECTION)
    out = []
    for values, files in groups:
        ticket = tickets.sign(
            {
                "table": f"{shape.catalog}.{shape.where}",
                "schema": schema,
                "spec": spec_fields,
                "hive": [c.hive_type for c in shape.columns],
                "files": [list(piece) for piece in files],
                "keys": values,
                "columns": list(columns),
            }
        )
        out.append(flight.FlightEndpoint(ticket, [location]).serialize())
    return out


Piece = tuple[str, int, list[int] | None]
"""A file to read: its path, its size, and the row groups to read of it (None: all)."""


def file_groups(
    location: str, values: list[str | None], spec: ReadSpec
) -> list[tuple[list[str | None], list[Piece]]]:
    """The pieces of the files under LOCATION in groups of at most ENDPOINT_BYTES."""
    return groups_of(data_files(location), values, spec)


def iceberg_layout(shape: TableShape) -> tuple[ReadSpec, Sequence[tuple[str, int]]]:
    """How an Iceberg table's current snapshot is read (its Parquet files by field id) and
    its data files; IcebergError when they cannot be read (delete files, ...)."""
    location = shape.params.get(iceberg.METADATA_LOCATION, "")
    return _iceberg_layout(shape.where, location, tuple(c.name for c in shape.columns))


@functools.lru_cache(maxsize=64)
def _iceberg_layout(
    where: str, location: str, names_: tuple[str, ...]
) -> tuple[ReadSpec, tuple[tuple[str, int], ...]]:
    """A metadata file never changes: the plan of its current snapshot is kept, so that a
    table is planned once for all the scans of its current snapshot."""
    table = iceberg_tables.load(where, location)
    ids = {c.column.name.lower(): c.field_id for c in iceberg_tables.columns(table)}
    spec = ReadSpec(
        "parquet",
        names=tuple(n for n in names_ if n.lower() in ids),
        field_ids=tuple(ids[n.lower()] for n in names_ if n.lower() in ids),
    )
    snapshot = table.current_snapshot()
    if snapshot is None:
        return spec, ()
    found = iceberg_tables.data_files(where, table, snapshot.snapshot_id)
    return spec, tuple((f.path, f.size) for f in found)


def groups_of(
    files: Sequence[tuple[str, int]], values: list[str | None], spec: ReadSpec
) -> list[tuple[list[str | None], list[Piece]]]:
    """The pieces of FILES (path, size) in groups of at most ENDPOINT_BYTES."""
    groups: list[tuple[list[str | None], list[Piece]]] = []
    current: list[Piece] = []
    size = 0
    total = sum(size for _, size in files) or 1
    for split in splits_of("", files, spec):
        length = round(split.share * total)  # the bytes of the piece
        if current and size + length > ENDPOINT_BYTES:
            groups.append((values, current))
            current, size = [], 0
        groups_read = list(split.row_groups) if split.row_groups is not None else None
        current.append((split.path, split.size, groups_read))
        size += length
    if current:
        groups.append((values, current))
    return groups


def stream(content: Mapping[str, Any]) -> flight.GeneratorStream:
    """The batches of a ticket's CONTENT (see the module docstring)."""
    schema = pa.ipc.read_schema(pa.py_buffer(content["schema"]))
    spec_fields = content["spec"]
    spec = ReadSpec(
        format=spec_fields[0],
        delimiter=spec_fields[1],
        quote=spec_fields[2],
        escape=spec_fields[3],
        header=spec_fields[4],
        null_text=tuple(spec_fields[5]),
        empty_is_null=spec_fields[6],
        names=tuple(spec_fields[7]),
        field_ids=tuple(spec_fields[8]),
    )
    hive_types: list[str] = content["hive"]
    data_count = len(hive_types)
    wanted = set(content["columns"])
    data = [Column(schema.field(i).name, hive_types[i]) for i in range(data_count) if i in wanted]
    counting = not data  # only keys or no column: the rows are counted with one column
    if counting and data_count:
        data = [Column(schema.field(0).name, hive_types[0])]
    keys = {
        data_count + i: types.key_value(text, schema.field(data_count + i).type)
        for i, text in enumerate(content["keys"])
    }
    files = [
        Split(str(path), int(size), "", tuple(groups) if groups is not None else None)
        for path, size, groups in content["files"]
    ]
    return flight.GeneratorStream(
        schema, _batches(schema, spec, files, data, keys, wanted, counting, content["table"])
    )


def _batches(
    schema: pa.Schema,
    spec: ReadSpec,
    files: Sequence[Split],
    data: Sequence[Column],
    keys: Mapping[int, Any],
    wanted: set[int],
    counting: bool,
    table: str,
) -> Iterator[pa.RecordBatch]:
    for split in files:
        try:
            for batch in read_split(split, spec, data, Pieces()):
                yield _conform(schema, batch, keys, wanted, counting, split.path)
        except (FilesError, ScanError) as e:
            log.warning("DoGet of %s failed: %s", table, e)
            raise typed(f"{table}: {e}") from None


def _conform(
    schema: pa.Schema,
    batch: pa.RecordBatch,
    keys: Mapping[int, Any],
    wanted: set[int],
    counting: bool,
    path: str,
) -> pa.RecordBatch:
    """BATCH (the requested data columns) as a batch of SCHEMA: every field in order."""
    rows = batch.num_rows
    read = {name: batch.column(i) for i, name in enumerate(batch.schema.names)}
    arrays = []
    for index, field in enumerate(schema):
        if index in keys:
            value = keys[index] if index in wanted else None
            arrays.append(pa.repeat(pa.scalar(value, field.type), rows))
        elif index in wanted and not counting and field.name in read:
            arrays.append(_as_type(read[field.name], field, path))
        else:
            arrays.append(pa.nulls(rows, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _as_type(array: pa.Array, field: pa.Field, path: str) -> pa.Array:
    """ARRAY as FIELD's type: the type the file holds converted where they differ (a
    timestamp's unit or zone, a narrower number, a struct's fields by name in any case)."""
    if array.type == field.type:
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), field.type)
    try:
        if pa.types.is_struct(field.type) and pa.types.is_struct(array.type):
            return _struct_as(array, field.type, path)
        if pa.types.is_timestamp(field.type) and pa.types.is_timestamp(array.type):
            return array.cast(field.type, safe=False)
        return array.cast(field.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise ScanError(
            f"{path}: column {field.name} holds {array.type}, which does not convert to the "
            f"table's type {field.type}: {e}"
        ) from None


def _struct_as(array: pa.Array, target: pa.StructType, path: str) -> pa.Array:
    by_name = {array.type.field(i).name.lower(): i for i in range(array.type.num_fields)}
    children = []
    for child in target:
        index = by_name.get(child.name.lower())
        if index is None:
            children.append(pa.nulls(len(array), child.type))
        else:
            children.append(_as_type(array.field(index), child, path))
    return pa.StructArray.from_arrays(
        children, fields=list(target), mask=array.is_null() if array.null_count else None
    )
