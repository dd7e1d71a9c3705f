"""Reading a piece of a table's files (a Split) into Arrow record batches of the columns
wanted, at most BATCH_ROWS rows each: Parquet and ORC with PyArrow's readers, csv and json
with metastore.files.text. A column the file lacks is all NULL.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from metastore.columns import Column
from metastore.files.errors import FilesError
from metastore.files.formats import BATCH_ROWS, ReadSpec
from metastore.files.listing import Split
from metastore.files.locations import filesystem
from metastore.files.text import Text, arrow_type_or_null, read_text


def file_schema(path: str, spec: ReadSpec) -> pa.Schema:
    """The Arrow schema of a Parquet or ORC file (its footer only)."""
    fs, inner = filesystem(path)
    with unreadable(path, spec), fs.open_input_file(inner) as f:
        if spec.format == "parquet":
            import pyarrow.parquet as pq

            return pq.ParquetFile(f, coerce_int96_timestamp_unit="us").schema_arrow
        import pyarrow.orc as orc

        return orc.ORCFile(f).schema


@contextlib.contextmanager
def unreadable(path: str, spec: ReadSpec) -> Iterator[None]:
    """PyArrow's error reading PATH as a FilesError that names the file and the format."""
    try:
        yield
    except (pa.ArrowException, OSError) as e:
        raise FilesError(
            f"cannot read {path} as {spec.format}: {e} (a damaged file, or one of another "
            "format: replace it or move it out of the table's folder)"
        ) from e


@dataclasses.dataclass
class Pieces:
    """What reading a split gives besides its batches: the uncompressed size of the rows;
    for text, the values that did not parse as their column's type (see metastore.files.text)."""

    raw_bytes: int = 0
    unparsed: int = 0
    examples: list[str] = dataclasses.field(default_factory=list)
    fraction: float = 0.0
    """How much of the split has been read so far, from 0 to 1 (for the progress)."""


def read_split(
    split: Split, spec: ReadSpec, columns: Sequence[Column], pieces: Pieces, strict: bool = False
) -> Iterator[pa.RecordBatch]:
    """The rows of SPLIT as record batches of COLUMNS (by name, case-insensitively; a column
    the file lacks is all NULL), at most BATCH_ROWS rows each. PIECES.raw_bytes grows by the
    data's uncompressed size: Parquet's own figure for the row groups read, the text of
    csv and json files, the in-memory size of every column of ORC rows. STRICT: a csv or
    json value that does not parse as its column's type is an error, not a NULL."""
    fs, inner = filesystem(split.path)
    if split.size == 0 and spec.format in ("parquet", "orc"):
        return
    with unreadable(split.path, spec), fs.open_input_file(inner) as f:
        if spec.format == "parquet":
            yield from _parquet(f, split, spec, columns, pieces)
        elif spec.format == "orc":
            yield from _orc(f, columns, pieces)
        else:
            pieces.raw_bytes += split.size
            found = Text(split.path, strict)
            for batch in read_text(f, spec, columns, found):
                pieces.fraction = min(f.tell() / split.size, 1.0) if split.size else 1.0
                yield _select(batch, columns)
            pieces.unparsed += found.unparsed
            pieces.examples.extend(found.examples)


def _select(batch: pa.RecordBatch | pa.Table, columns: Sequence[Column]) -> pa.RecordBatch:
    """BATCH's COLUMNS in order, under the plan's names, NULL where the file has none."""
    by_lower = {name.lower(): i for i, name in enumerate(batch.schema.names)}
    arrays = []
    for column in columns:
        index = by_lower.get(column.name.lower())
        if index is None:
            arrays.append(pa.nulls(batch.num_rows, arrow_type_or_null(column.hive_type)))
        else:
            arrays.append(_plain(batch.column(index)))
    return pa.RecordBatch.from_arrays(arrays, names=[c.name for c in columns])


def _plain(array: Any) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array


def _parquet(
    f: Any, split: Split, spec: ReadSpec, columns: Sequence[Column], pieces: Pieces
) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(f, coerce_int96_timestamp_unit="us")
    meta = parquet.metadata
    groups = list(split.row_groups) if split.row_groups is not None else None
    for index in groups if groups is not None else range(meta.num_row_groups):
        pieces.raw_bytes += meta.row_group(index).total_byte_size
    in_file = _names_in_file(parquet.schema_arrow, spec, columns)
    wanted = list(in_file.values())
    renamed = {file_name: name for name, file_name in in_file.items()}
    if meta.num_rows == 0:
        return
    # One thread: Spark runs a task per core already.
    batches = parquet.iter_batches(
        batch_size=BATCH_ROWS, row_groups=groups, columns=wanted, use_threads=False
    )
    total = sum(meta.row_group(g).num_rows for g in groups) if groups else meta.num_rows
    done = 0
    for batch in batches:
        done += batch.num_rows
        pieces.fraction = done / total if total else 1.0
        if spec.field_ids:
            names = [renamed[name] for name in batch.schema.names]
            batch = pa.RecordBatch.from_arrays(batch.columns, names=names)
        yield _select(batch, columns)


FIELD_ID = b"PARQUET:field_id"


def _names_in_file(schema: pa.Schema, spec: ReadSpec, columns: Sequence[Column]) -> dict[str, str]:
    """The name each of COLUMNS has in a Parquet file of SCHEMA (columns the file lacks
    left out): by name, case-insensitively, or by field id (ReadSpec.field_ids)."""
    if not spec.field_ids:
        present = {name.lower(): name for name in schema.names}
        return {c.name: present[c.name.lower()] for c in columns if c.name.lower() in present}
    ids = dict(zip((name.lower() for name in spec.names), spec.field_ids, strict=True))
    by_id = {
        int(field.metadata[FIELD_ID]): field.name
        for field in schema
        if field.metadata and FIELD_ID in field.metadata
    }
    return {c.name: by_id[ids[c.name.lower()]] for c in columns if ids.get(c.name.lower()) in by_id}


def _orc(f: Any, columns: Sequence[Column], pieces: Pieces) -> Iterator[pa.RecordBatch]:
    import pyarrow.orc as orc

    reader = orc.ORCFile(f)
    for stripe in range(reader.nstripes):
        table = reader.read_stripe(stripe)
        pieces.fraction = (stripe + 1) / reader.nstripes
        pieces.raw_bytes += table.nbytes
        for batch in pa.Table.from_batches([table]).to_batches(max_chunksize=BATCH_ROWS):
            yield _select(batch, columns)
