"""Puffin files (Iceberg's statistics files), written and read per the Puffin spec.

A file is the magic ``PFA1``, the blobs one after the other, then the footer: the magic
again, the footer payload (a UTF-8 JSON ``FileMetadata``: each blob's type, field ids,
snapshot id and sequence number, offset, length, compression codec when compressed,
properties; and the file's properties), the payload's size (4 bytes, little-endian), 4 bytes
of flags (bit 0 of the first: the payload is LZ4-compressed) and the magic. The JSON is
written as Iceberg's Java writer writes it: no ``compression-codec`` for an uncompressed
blob, no ``properties`` when there are none; the footer is never compressed (pyiceberg's
reader refuses a compressed one).

:func:`write` puts a file at any location PyArrow opens (a local path, ``s3a://`` with the
settings of :mod:`metastore.files.object_storage`) in one piece: a local file is written
under a temporary name and renamed, an object is created by its single upload. It returns
what an Iceberg ``StatisticsFile`` records of it. :func:`read` and :func:`parse` check the
magic, the footer's size and every blob's offset before anything is used.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import struct
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import lz4.frame
import pyarrow.fs as pafs
import zstandard

from metastore.files import locations, object_storage
from metastore.files.errors import FilesError

MAGIC = b"PFA1"
ZSTD = "zstd"
LZ4 = "lz4"
_FOOTER_TAIL = struct.Struct("<iI")  # the payload's size, the flags
_FOOTER_COMPRESSED = 1  # bit 0 of the flags' first byte
# The magic before the blobs, and the footer around an empty payload.
_MIN_SIZE = len(MAGIC) + len(MAGIC) + _FOOTER_TAIL.size + len(MAGIC)


class PuffinError(FilesError):
    """A Puffin file that cannot be written or read, in one line naming it."""


@dataclasses.dataclass(frozen=True)
class Blob:
    """A blob to write: its bytes and what the footer says of them. COMPRESSION is None or
    "zstd" (one Zstandard frame, with its content size)."""

    type: str
    fields: Sequence[int]
    snapshot_id: int
    sequence_number: int
    data: bytes
    properties: Mapping[str, str] = dataclasses.field(default_factory=dict)
    compression: str | None = None


@dataclasses.dataclass(frozen=True)
class BlobMetadata:
    """A blob as a file's footer describes it (``length``: its bytes in the file)."""

    type: str
    fields: list[int]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None
    properties: dict[str, str]

    def as_json(self) -> dict[str, Any]:
        """The footer's JSON object of this blob."""
        blob: dict[str, Any] = {
            "type": self.type,
            "fields": self.fields,
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "offset": self.offset,
            "length": self.length,
        }
        if self.compression_codec is not None:
            blob["compression-codec"] = self.compression_codec
        if self.properties:
            blob["properties"] = self.properties
        return blob


@dataclasses.dataclass(frozen=True)
class Written:
    """A file written: what an Iceberg ``StatisticsFile`` records of it."""

    path: str
    file_size: int
    footer_size: int
    """The whole footer: both magics, the payload, its size and the flags."""
    blobs: list[BlobMetadata]

    def statistics_file(self, snapshot_id: int) -> dict[str, Any]:
        """The ``statistics`` entry of a table's metadata (its JSON form) for SNAPSHOT_ID."""
        return {
            "snapshot-id": snapshot_id,
            "statistics-path": self.path,
            "file-size-in-bytes": self.file_size,
            "file-footer-size-in-bytes": self.footer_size,
            "blob-metadata": [
                {
                    "type": blob.type,
                    "snapshot-id": blob.snapshot_id,
                    "sequence-number": blob.sequence_number,
                    "fields": blob.fields,
                    **({"properties": blob.properties} if blob.properties else {}),
                }
                for blob in self.blobs
            ],
        }


@dataclasses.dataclass(frozen=True)
class PuffinFile:
    """A file read and checked: its blobs' metadata, its properties, its bytes."""

    location: str
    blobs: list[BlobMetadata]
    properties: dict[str, str]
    content: bytes = dataclasses.field(repr=False)

    def data(self, blob: BlobMetadata) -> bytes:
        """The bytes of BLOB, uncompressed."""
        raw = self.content[blob.offset : blob.offset + blob.length]
        try:
            if blob.compression_codec == ZSTD:
                return bytes(zstandard.ZstdDecompressor().decompress(raw))
            if blob.compression_codec == LZ4:
                return bytes(lz4.frame.decompress(raw))
        except (zstandard.ZstdError, RuntimeError) as e:
            raise PuffinError(
                f"{self.location}: the {blob.compression_codec} blob at offset {blob.offset} "
                f"does not decompress ({object_storage.one_line(e)})"
            ) from None
        return raw


def _created_by() -> str:
    return f"colstats version {importlib.metadata.version('colstats')}"


def _encode(
    blobs: Sequence[Blob], properties: Mapping[str, str] | None
) -> tuple[bytes, list[BlobMetadata], int]:
    """The file's bytes, its blobs as its footer describes them, and the footer's size."""
    content = bytearray(MAGIC)
    described = []
    for blob in blobs:
        if blob.compression not in (None, ZSTD):
            raise PuffinError(f"blobs are written uncompressed or zstd, not {blob.compression}")
        data = blob.data if blob.compression is None else zstandard.compress(blob.data)
        described.append(
            BlobMetadata(
                type=blob.type,
                fields=list(blob.fields),
                snapshot_id=blob.snapshot_id,
                sequence_number=blob.sequence_number,
                offset=len(content),
                length=len(data),
                compression_codec=blob.compression,
                properties=dict(blob.properties),
            )
        )
        content += data
    metadata = {
        "blobs": [blob.as_json() for blob in described],
        "properties": {"created-by": _created_by()} if properties is None else dict(properties),
    }
    payload = json.dumps(metadata, separators=(",", ":")).encode()
    footer = MAGIC + payload + _FOOTER_TAIL.pack(len(payload), 0) + MAGIC
    return bytes(content + footer), described, len(footer)


def write(
    location: str, blobs: Sequence[Blob], properties: Mapping[str, str] | None = None
) -> Written:
    """Write a Puffin file of BLOBS at LOCATION, which must not exist yet. PROPERTIES are
    the file's (by default ``created-by``: colstats and its version)."""
    content, described, footer_size = _encode(blobs, properties)
    fs, path = locations.filesystem(location)
    try:
        if fs.get_file_info(path).type != pafs.FileType.NotFound:
            raise PuffinError(f"{location} exists already: statistics files are never replaced")
        if isinstance(fs, pafs.LocalFileSystem):
            _write_aside(fs, path, content)
        else:  # an object store: an object appears whole when its upload ends
            with fs.open_output_stream(path) as out:
                out.write(content)
    except OSError as e:
        raise PuffinError(
            f"cannot write {location}: {object_storage.explain(location, e)}"
        ) from None
    return Written(location, len(content), footer_size, described)


def _write_aside(fs: pafs.FileSystem, path: str, content: bytes) -> None:
    """Write a local file under a temporary name and rename it: a reader sees all or nothing."""
    folder, name = os.path.split(path)
    fs.create_dir(folder, recursive=True)
    temporary = os.path.join(folder, f".{name}.{uuid.uuid4().hex}.tmp")
    try:
        with fs.open_output_stream(temporary) as out:
            out.write(content)
        fs.move(temporary, path)
    except BaseException:
        if fs.get_file_info(temporary).type != pafs.FileType.NotFound:
            fs.delete_file(temporary)
        raise


def remove(location: str) -> None:
    """Delete the file at LOCATION if it is there (a statistics file a failed commit left)."""
    fs, path = locations.filesystem(location)
    try:
        fs.delete_file(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        raise PuffinError(
            f"cannot delete {location}: {object_storage.explain(location, e)}"
        ) from None


def read(location: str) -> PuffinFile:
    """Read and check the Puffin file at LOCATION (statistics files are small: whole)."""
    fs, path = locations.filesystem(location)
    try:
        with fs.open_input_file(path) as source:
            content = source.read()
    except FileNotFoundError:
        raise PuffinError(f"{location}: no such file") from None
    except OSError as e:
        raise PuffinError(
            f"cannot read {location}: {object_storage.explain(location, e)}"
        ) from None
    return parse(content, location)


def parse(content: bytes, location: str = "Puffin file") -> PuffinFile:
    """Check CONTENT as a Puffin file and read its footer (LOCATION names it in errors)."""
    size = len(content)
    if size < _MIN_SIZE:
        raise PuffinError(f"{location}: {size} bytes is too short for a Puffin file")
    if content[:4] != MAGIC or content[-4:] != MAGIC:
        raise PuffinError(f"{location}: not a Puffin file (no {MAGIC.decode()} magic at both ends)")
    payload_size, flags = _FOOTER_TAIL.unpack_from(content, size - 12)
    footer_start = size - 16 - payload_size
    if payload_size < 0 or footer_start < len(MAGIC):
        raise PuffinError(
            f"{location}: footer payload size {payload_size} does not fit in {size} bytes"
        )
    if content[footer_start : footer_start + 4] != MAGIC:
        raise PuffinError(f"{location}: no {MAGIC.decode()} magic at the footer's start")
    payload = content[footer_start + 4 : size - 12]
    try:
        if flags & _FOOTER_COMPRESSED:
            payload = lz4.frame.decompress(payload)
        metadata = json.loads(payload)
    except (RuntimeError, ValueError) as e:
        raise PuffinError(
            f"{location}: the footer is not readable JSON ({object_storage.one_line(e)})"
        ) from None
    if not isinstance(metadata, dict):
        raise PuffinError(f"{location}: the footer is not a JSON object")
    properties = metadata.get("properties", {})
    if not _is_string_map(properties):
        raise PuffinError(f"{location}: the footer's properties are not strings")
    return PuffinFile(location, _blobs(location, metadata, footer_start), properties, content)


def _blobs(location: str, metadata: dict[str, Any], blobs_end: int) -> list[BlobMetadata]:
    """The footer's blobs, each checked to lie between the first magic and BLOBS_END."""
    found = metadata.get("blobs")
    if not isinstance(found, list):
        raise PuffinError(f"{location}: the footer has no list of blobs")
    blobs = []
    for i, blob in enumerate(found):
        where = f"{location}: blob {i}"
        if not isinstance(blob, dict):
            raise PuffinError(f"{where} is not a JSON object")
        for key, kind in (("type", str), ("snapshot-id", int), ("sequence-number", int)):
            if not isinstance(blob.get(key), kind):
                raise PuffinError(f"{where} has no {key}")
        offset, length = blob.get("offset"), blob.get("length")
        if not isinstance(offset, int) or not isinstance(length, int):
            raise PuffinError(f"{where} has no offset and length")
        if offset < len(MAGIC) or length < 0 or offset + length > blobs_end:
            raise PuffinError(
                f"{where} at {offset}..{offset + length} is outside the blobs "
                f"({len(MAGIC)}..{blobs_end})"
            )
        fields = blob.get("fields")
        if not isinstance(fields, list) or not all(isinstance(f, int) for f in fields):
            raise PuffinError(f"{where} has no list of field ids")
        codec = blob.get("compression-codec")
        if codec not in (None, ZSTD, LZ4):
            raise PuffinError(f"{where} has the unknown compression codec {codec!r}")
        properties = blob.get("properties", {})
        if not _is_string_map(properties):
            raise PuffinError(f"{where} has properties that are not strings")
        blobs.append(
            BlobMetadata(
                blob["type"],
                fields,
                blob["snapshot-id"],
                blob["sequence-number"],
                offset,
                length,
                codec,
                properties,
            )
        )
    return blobs


def _is_string_map(value: object) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )
