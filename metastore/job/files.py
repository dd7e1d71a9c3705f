"""File sources read by the job's tasks with PyArrow: what the files are (ReadSpec), where
they are (listing Hive-style partition folders into Splits), and reading one split in
bounded record batches.

Spark only schedules this work: the driver lists the files and hands Splits to tasks, each
task opens its files with PyArrow and never passes a row through Spark. Partition values come
from the folder names (`ds=2024-01-01`, escaped as in partition names; the folder
`__HIVE_DEFAULT_PARTITION__` or an empty value is the partition of NULL keys), as Spark reads
them with partition type inference off.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from metastore import arrow_types, names
from metastore.job import object_storage
from metastore.job.errors import JobError
from metastore.job.text import Text, read_text
from metastore.vocabulary import HiveTypeError, base_type

if TYPE_CHECKING:
    from metastore.job.source import Column

BATCH_ROWS = 131_072
"""Rows per record batch a task reads: a task's memory is bounded by this, not by files."""
SPLIT_BYTES = 128 * 1024 * 1024
"""A Parquet file larger than this is read by several tasks, one group of row groups each."""


@dataclasses.dataclass(frozen=True)
class ReadSpec:
    """How to read the files: the format and, for text, how a line splits into columns."""

    format: str
    """parquet, orc, csv (delimited text) or json (a JSON object per line)."""
    delimiter: str = ","
    quote: str | None = '"'
    escape: str | None = None
    header: bool = False
    null_text: tuple[str, ...] = ("",)
    """Texts read as NULL in every column."""
    empty_is_null: bool = True
    """An empty text is NULL in a column that is not a string (as Hive's text reader)."""
    names: tuple[str, ...] = ()
    """For csv: every column of the files, in order (a header line is skipped, not read)."""


@dataclasses.dataclass(frozen=True)
class Split:
    """A piece of work for one task: a file, or some row groups of a Parquet file."""

    path: str
    """A local path or a URI PyArrow opens (file:, hdfs:, s3:, ...)."""
    size: int
    partition: str
    """The partition name ('' when unpartitioned)."""
    row_groups: tuple[int, ...] | None = None
    counts_file: bool = True
    """Whether this split counts the file in numFiles and totalSize (the first piece)."""
    share: float = 1.0
    """The part of its partition's bytes this split reads (for the progress of partitions)."""
    index: int = 0
    """Its place in the run's list of splits (for the progress of bytes)."""


def filesystem(location: str) -> tuple[pafs.FileSystem, str]:
    """PyArrow's filesystem of a local path or URI, and the path within it."""
    parsed = urlparse(location)
    if parsed.scheme and len(parsed.scheme) > 1:  # not a Windows drive letter
        if parsed.scheme == "file":
            # Hive keeps file: locations as written (ds=b%2Fc is a folder of that name); a
            # URI made by a library encodes them (ds%3Da for ds=a).
            path = parsed.path
            if not os.path.exists(path) and os.path.exists(unquote(path)):
                path = unquote(path)
            return pafs.LocalFileSystem(), path
        if parsed.scheme.lower() in object_storage.S3_SCHEMES:
            if not parsed.netloc:
                raise JobError(f"{location} names no bucket (s3a://BUCKET/PATH)")
            # PyArrow's S3 paths start with the bucket.
            return object_storage.current().filesystem(parsed.netloc), parsed.netloc + parsed.path
        try:
            fs, inner = pafs.FileSystem.from_uri(location)
            return fs, str(inner)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            raise JobError(
                f"the job cannot read {location} itself ({object_storage.one_line(e)}); give "
                "--spark-table DB.TABLE so that Spark reads the files and the job computes "
                "the statistics"
            ) from None
    return pafs.LocalFileSystem(), os.path.abspath(location)


def hidden(name: str) -> bool:
    """Names Spark and Hive skip: _SUCCESS, _metadata, .crc files, _temporary folders (a
    partition folder such as _c=1 is not hidden)."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".")


class NotFound(JobError):
    """A location that does not exist: no such folder or file, or no such bucket."""


class NotAFolder(JobError):
    """A location that is a file where the folder of a table's files is wanted."""


@dataclasses.dataclass
class Listing:
    """The data files under a base folder, by partition folder."""

    keys: list[str]
    """Partition key names as the folders spell them, in order."""
    files: dict[str, list[tuple[str, int]]]
    """Partition name -> (file, bytes) in name order; '' when unpartitioned."""
    values: dict[str, list[str | None]]
    """Partition name -> its values (None for the default partition)."""
    folders: dict[str, str] = dataclasses.field(default_factory=dict)
    """Partition name -> its folder, as a location the metastore keeps (listed partitions)."""

    def add(self, name: str, values: list[str | None], path: str, size: int, folder: str) -> None:
        """The data file PATH of SIZE bytes, of the partition NAME (of VALUES) in FOLDER."""
        self.files.setdefault(name, []).append((path, size))
        self.values.setdefault(name, values)
        self.folders.setdefault(name, folder)


def list_files(location: str) -> Listing:
    """The data files under the folder LOCATION and the Hive-style partition folders they
    sit in; NotFound when it does not exist, NotAFolder when it is a file."""
    prefix, root, entries = _data_files_below(location)
    keys: list[str] | None = None
    listing = Listing([], {}, {})
    for entry in entries:
        folders = entry.path[len(root.rstrip("/")) + 1 :].split("/")[:-1]
        pairs = _key_values(folders)
        if pairs is None:
            raise JobError(
                f"{entry.path} is in a folder that is not a partition folder (key=value) "
                f"under {location}"
            )
        file_keys = [k for k, _ in pairs]
        if keys is None:
            keys = file_keys
        elif [k.lower() for k in file_keys] != [k.lower() for k in keys]:
            raise JobError(
                f"the partition folders under {location} disagree: {'/'.join(keys) or 'none'} "
                f"and {'/'.join(file_keys) or 'none'} (at {entry.path})"
            )
        values = [v for _, v in pairs]
        name = names.make_partition_name([k.lower() for k in keys], values) if keys else ""
        folder = location_of(prefix + "/".join([root.rstrip("/"), *folders]))
        listing.add(name, values, prefix + entry.path, entry.size, folder)
    listing.keys = keys or []
    return listing


def list_partition_folders(location: str, keys: Sequence[str]) -> Listing:
    """The data files under the folder LOCATION that sit in partition folders of KEYS
    (key=value, one level a key, in order), as list_files finds them. Files anywhere else
    are left out, such as those of partitions registered in folders of other names; nothing
    when LOCATION does not exist."""
    wanted = [k.lower() for k in keys]
    listing = Listing(list(keys), {}, {})
    try:
        prefix, root, entries = _data_files_below(location)
    except NotFound:
        return listing
    for entry in entries:
        folders = entry.path[len(root.rstrip("/")) + 1 :].split("/")[:-1]
        pairs = _key_values(folders)
        if pairs is None or [k.lower() for k, _ in pairs] != wanted:
            continue
        values = [v for _, v in pairs]
        folder = location_of(prefix + "/".join([root.rstrip("/"), *folders]))
        name = names.make_partition_name(wanted, values)
        listing.add(name, values, prefix + entry.path, entry.size, folder)
    return listing


def _data_files_below(location: str) -> tuple[str, str, list[pafs.FileInfo]]:
    """What to put before a listed path to open it (uri_prefix), the folder LOCATION as its
    file system names it, and the data files below it (not hidden) in path order, from one
    listing of every file below (paged, a thousand objects a page on S3), not a call per
    folder."""
    fs, root = filesystem(location)
    with listing_errors(location):
        info = fs.get_file_info(root)
        if info.type == pafs.FileType.NotFound:
            raise NotFound(f"{location} does not exist{object_storage.why_missing(fs, root)}")
        if info.type == pafs.FileType.File:
            raise NotAFolder(f"{location} is a file, not a folder")
        entries = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    data = []
    for entry in sorted(entries, key=lambda e: e.path):
        relative = entry.path[len(root.rstrip("/")) + 1 :].split("/")
        if entry.type == pafs.FileType.File and not any(hidden(part) for part in relative):
            data.append(entry)
    return uri_prefix(location), root, data


def _key_values(folders: Sequence[str]) -> list[tuple[str, str | None]] | None:
    """The partition keys and values of the nested FOLDERS (key=value each, escaped as in
    partition names), or None when one of them is not a partition folder."""
    pairs = [folder.split("=", 1) for folder in folders]
    if any(len(pair) != 2 or not pair[0] for pair in pairs):
        return None
    return [(names.unescape_path_name(k), _folder_value(v)) for k, v in pairs]


def location_of(path: str) -> str:
    """PATH as a location the metastore keeps: a URI, local paths as HMS writes them
    ('file:/data/t/ds=a b', not percent-encoded)."""
    parsed = urlparse(path)
    if parsed.scheme and len(parsed.scheme) > 1:
        return path
    return "file:" + os.path.abspath(path)


def sniff(path: str) -> str:
    """What a data file looks like from its first bytes: 'parquet', 'orc', 'json' (text
    whose first non-blank character is '{'), 'text' or 'binary' (anything else that is
    not UTF-8 text)."""
    fs, inner = filesystem(path)
    try:
        with fs.open_input_stream(inner) as f:
            head = f.read(SNIFF_BYTES)
    except OSError as e:
        raise JobError(f"cannot read {path}: {object_storage.explain(path, e)}") from None
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ORC"):
        return "orc"
    if b"\x00" in head:
        return "binary"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not only a character cut at the end of the head
            return "binary"
        text = head[: e.start].decode("utf-8")
    return "json" if text.lstrip().startswith("{") else "text"


SNIFF_BYTES = 4096


def _folder_value(text: str) -> str | None:
    value = names.unescape_path_name(text)
    return None if value in ("", names.DEFAULT_PARTITION_VALUE) else value


def data_files(location: str) -> list[tuple[str, int]]:
    """The data files in the folder LOCATION and its sub-folders (none when it is gone)."""
    fs, root = filesystem(location)
    with listing_errors(location):
        info = fs.get_file_info(root)
        if info.type == pafs.FileType.NotFound:
            return []
        prefix = uri_prefix(location)
        if info.type == pafs.FileType.File:
            return [(prefix + root, info.size)]
        entries = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    out = []
    for entry in sorted(entries, key=lambda e: e.path):
        relative = entry.path[len(root.rstrip("/")) + 1 :].split("/")
        if entry.type == pafs.FileType.File and not any(hidden(p) for p in relative):
            out.append((prefix + entry.path, entry.size))
    return out


def uri_prefix(location: str) -> str:
    """What to put before a path of the listing to open it again ('' for local files;
    the scheme alone for object storage, whose paths start with the bucket)."""
    parsed = urlparse(location)
    if not parsed.scheme or len(parsed.scheme) == 1 or parsed.scheme == "file":
        return ""
    if parsed.scheme.lower() in object_storage.S3_SCHEMES:
        return f"{parsed.scheme}://"
    return f"{parsed.scheme}://{parsed.netloc}"


@contextlib.contextmanager
def listing_errors(location: str) -> Iterator[None]:
    """A failure to list LOCATION (credentials refused, no such bucket, an endpoint that does
    not answer) as a JobError of one line that says what to check."""
    try:
        yield
    except OSError as e:
        raise JobError(f"cannot list {location}: {object_storage.explain(location, e)}") from None


def splits_of(partition: str, files: Sequence[tuple[str, int]], spec: ReadSpec) -> Iterator[Split]:
    """The pieces of work of one partition's files: a split per file, several for a large
    Parquet file (its footer is read here to group its row groups)."""
    total = sum(size for _, size in files) or 1
    for path, size in files:
        groups = _row_group_pieces(path) if spec.format == "parquet" and size > SPLIT_BYTES else []
        if len(groups) <= 1:
            yield Split(path, size, partition, share=max(size, 1) / total if files else 1.0)
            continue
        for n, (piece, piece_bytes) in enumerate(groups):
            yield Split(
                path,
                size,
                partition,
                row_groups=piece,
                counts_file=n == 0,
                share=piece_bytes / total,
            )


def _row_group_pieces(path: str) -> list[tuple[tuple[int, ...], int]]:
    import pyarrow.parquet as pq

    fs, inner = filesystem(path)
    meta = pq.ParquetFile(fs.open_input_file(inner)).metadata
    pieces: list[tuple[tuple[int, ...], int]] = []
    current: list[int] = []
    current_bytes = 0
    for index in range(meta.num_row_groups):
        size = meta.row_group(index).total_compressed_size or meta.row_group(index).total_byte_size
        if current and current_bytes + size > SPLIT_BYTES:
            pieces.append((tuple(current), current_bytes))
            current, current_bytes = [], 0
        current.append(index)
        current_bytes += size
    if current:
        pieces.append((tuple(current), current_bytes))
    return pieces


# ------------------------------------------------------------------------------------------
# Types


# The types the job reads from text files (csv, json, delimited text).
_TEXT_TYPES = frozenset(
    {
        *("boolean", "tinyint", "smallint", "int", "bigint", "float", "double"),
        *("decimal", "string", "varchar", "char", "binary", "date", "timestamp"),
    }
)


def arrow_type(hive_type: str) -> pa.DataType:
    """The Arrow type a column of HIVE_TYPE is read as from text files (a primitive type)."""
    if base_type(hive_type) not in _TEXT_TYPES:
        raise JobError(f"the job cannot read columns of type {hive_type} from text files")
    try:
        return arrow_types.arrow_type(hive_type)
    except HiveTypeError as e:
        raise JobError(f"the job cannot read columns of type {hive_type}: {e}") from None


def hive_type_of(arrow: pa.DataType) -> str:
    """The Hive type of a column the files hold as ARROW (as Spark names it)."""
    if pa.types.is_dictionary(arrow):
        return hive_type_of(arrow.value_type)
    simple = {
        pa.bool_(): "boolean",
        pa.int8(): "tinyint",
        pa.int16(): "smallint",
        pa.int32(): "int",
        pa.int64(): "bigint",
        pa.uint8(): "smallint",
        pa.uint16(): "int",
        pa.uint32(): "bigint",
        pa.uint64(): "decimal(20,0)",
        pa.float16(): "float",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.date32(): "date",
        pa.date64(): "date",
        pa.null(): "void",
    }
    if arrow in simple:
        return simple[arrow]
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow):
        return "binary"
    if pa.types.is_fixed_size_binary(arrow):
        return "binary"
    if pa.types.is_timestamp(arrow):
        return "timestamp"
    if pa.types.is_decimal(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return f"array<{hive_type_of(arrow.value_type)}>"
    if pa.types.is_map(arrow):
        return f"map<{hive_type_of(arrow.key_type)},{hive_type_of(arrow.item_type)}>"
    if pa.types.is_struct(arrow):
        fields = ",".join(f"{f.name}:{hive_type_of(f.type)}" for f in arrow)
        return f"struct<{fields}>"
    raise JobError(f"the job does not know a Hive type for Arrow type {arrow}")


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
    """PyArrow's error reading PATH as a JobError that names the file and the format."""
    try:
        yield
    except (pa.ArrowException, OSError) as e:
        raise JobError(
            f"cannot read {path} as {spec.format}: {e} (a damaged file, or one of another "
            "format: replace it or move it out of the table's folder)"
        ) from e


# ------------------------------------------------------------------------------------------
# Reading


@dataclasses.dataclass
class Pieces:
    """What reading a split gives besides its batches: the uncompressed size of the rows;
    for text, the values that did not parse as their column's type (see metastore.job.text)."""

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
            yield from _parquet(f, split, columns, pieces)
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


def arrow_type_or_null(hive_type: str) -> pa.DataType:
    try:
        return arrow_type(hive_type)
    except JobError:
        return pa.null()


def _plain(array: Any) -> pa.Array:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array


def _parquet(
    f: Any, split: Split, columns: Sequence[Column], pieces: Pieces
) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    parquet = pq.ParquetFile(f, coerce_int96_timestamp_unit="us")
    meta = parquet.metadata
    groups = list(split.row_groups) if split.row_groups is not None else None
    for index in groups if groups is not None else range(meta.num_row_groups):
        pieces.raw_bytes += meta.row_group(index).total_byte_size
    present = {name.lower(): name for name in parquet.schema_arrow.names}
    wanted = [present[c.name.lower()] for c in columns if c.name.lower() in present]
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
        yield _select(batch, columns)


def _orc(f: Any, columns: Sequence[Column], pieces: Pieces) -> Iterator[pa.RecordBatch]:
    import pyarrow.orc as orc

    reader = orc.ORCFile(f)
    for stripe in range(reader.nstripes):
        table = reader.read_stripe(stripe)
        pieces.fraction = (stripe + 1) / reader.nstripes
        pieces.raw_bytes += table.nbytes
        for batch in pa.Table.from_batches([table]).to_batches(max_chunksize=BATCH_ROWS):
            yield _select(batch, columns)
