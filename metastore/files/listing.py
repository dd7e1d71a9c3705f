"""Listing a table's files: the data files under a folder and the Hive-style partition
folders they sit in (`ds=2024-01-01`, escaped as in partition names; the folder
`__HIVE_DEFAULT_PARTITION__` or an empty value is the partition of NULL keys, as Spark reads
them with partition type inference off), and the pieces of work they make (Splits: a
file, or some row groups of a large Parquet file). Names starting with `_` or `.` are
skipped (`_SUCCESS`, `.crc`, `_temporary`), as Spark and Hive skip them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

import pyarrow.fs as pafs

from metastore import names
from metastore.files import object_storage
from metastore.files.errors import FilesError, NotAFolder, NotFound
from metastore.files.formats import ReadSpec
from metastore.files.locations import filesystem, listing_errors, location_of, uri_prefix

SPLIT_BYTES = 128 * 1024 * 1024
"""A Parquet file larger than this is read by several tasks, one group of row groups each."""


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


def hidden(name: str) -> bool:
    """Names Spark and Hive skip: _SUCCESS, _metadata, .crc files, _temporary folders (a
    partition folder such as _c=1 is not hidden)."""
    return (name.startswith("_") and "=" not in name) or name.startswith(".")


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
            raise FilesError(
                f"{entry.path} is in a folder that is not a partition folder (key=value) "
                f"under {location}"
            )
        file_keys = [k for k, _ in pairs]
        if keys is None:
            keys = file_keys
        elif [k.lower() for k in file_keys] != [k.lower() for k in keys]:
            raise FilesError(
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


def sniff(path: str) -> str:
    """What a data file looks like from its first bytes: 'parquet', 'orc', 'json' (text
    whose first non-blank character is '{'), 'text' or 'binary' (anything else that is
    not UTF-8 text)."""
    fs, inner = filesystem(path)
    try:
        with fs.open_input_stream(inner) as f:
            head = f.read(SNIFF_BYTES)
    except OSError as e:
        raise FilesError(f"cannot read {path}: {object_storage.explain(path, e)}") from None
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
