"""Answers of the calls that list a table's partitions, rebuilt by the partitions that changed.

The answer cache (metastore.hms.cache) keeps a whole answer by its table's version, which
any write to the table moves: after a write of one partition's statistics (which changes
that partition's COLUMN_STATS_ACCURATE), get_partitions_by_filter over 200 partitions read
the rows below every partition, built 200 Partition structs and encoded them again. Here
each partition's encoded Partition struct is kept in the same cache, under the versions
that tell when it changes (metastore.store.versions: the partition's version, and its
table's PARTS_VERSION, moved by every change to the table that may change a partition
without moving the partition's version), so that an answer reads the rows below, builds
and encodes only the partitions whose versions moved, and copies the others' bytes.

The versions are read with the partitions' rows, in the statement that selects them (as
the whole answer selected them), so an answer costs no statement more. A read runs outside a
transaction, each statement seeing what was committed when it began: the rows below the
partitions built are read with the table's VERSION, and their parts are kept only when it
is the one read with their rows (no change to the table committed between the two), so that
no part mixes the rows of two states or is kept under versions older than its data. When
the table was last changed by another writer (a server older than schema 0008, HMS's
triggers), which moves no partition's version, nothing is kept or served from the parts.

A part is the binary protocol's encoding of the struct, which the generated code writes
(the only protocol the server speaks); it depends on the partition only: every call that
lists partitions (CALLS) shares them.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ttypes as t
from metastore.hms import held as holding
from metastore.hms.cache import AnswerCache, Key, Versions
from metastore.store import partition_rows as pr
from metastore.store.versions import TableName

CALLS = frozenset(
    {
        "get_partitions",
        "get_partitions_by_names",
        "get_partitions_ps",
        "get_partitions_ps_with_auth",
        "get_partitions_by_filter",
    }
)
"""The calls answered with a list of partitions from these parts (through the cache)."""

PIECE = "Partition (a partition)"
"""The name the cache counts the parts under."""

SUCCESS = struct.pack(">bh", TType.LIST, 0)
"""The start of a result struct's success field (field 0, a list)."""

try:
    from thrift.protocol import fastbinary
except ImportError:  # thrift installed without its C extension
    fastbinary = None
_SPEC = [t.Partition, t.Partition.thrift_spec]  # type: ignore[attr-defined]  # generated


def encoded(
    rows: Sequence[Any],
    table: TableName,
    tbl_id: int,
    cache: AnswerCache,
    build: Callable[[Sequence[Any]], tuple[list[t.Partition], pr.Below]],
) -> bytes:
    """The encoded list of the Partition structs of the partitions of ROWS (rows of
    partition_rows read with their versions) of TABLE (its id TBL_ID), in their order:
    the parts CACHE keeps, and the structs BUILD makes of the other rows (with the rows below
    them, read with the table's VERSION), encoded and kept when the table did not change in
    between."""
    if not rows:
        return empty()
    first = rows[0]
    version, parts_version = first[pr.TABLE_VERSION], first[pr.PARTS_VERSION] or 0
    if version is None or first[pr.SEEN_VERSION] != version:  # not told by partition versions
        return _list([_encode(part) for part in build(rows)[0]])
    table_key = ("", PIECE, str(tbl_id))
    names = "\x00".join(table)
    bodies: list[bytes | None] = []
    missing: list[int] = []
    for i, row in enumerate(rows):
        body = cache.lookup(_key(names, row), _versions(table_key, parts_version, row))
        if body is None:
            missing.append(i)
        bodies.append(body)
    if missing:
        built, below = build([rows[i] for i in missing])
        unchanged = below.version == version
        for i, part in zip(missing, built, strict=True):
            body = bodies[i] = _encode(part)
            if unchanged:
                row = rows[i]
                cache.store(_key(names, row), _versions(table_key, parts_version, row), body)
    return _list([body for body in bodies if body is not None])


def empty() -> bytes:
    """The encoded empty list of partitions."""
    return _list([])


def _key(names: str, row: Any) -> Key:
    return (PIECE, "", f"{names}\x00{row[pr.PART_ID]}".encode())


def _versions(table_key: TableName, parts_version: int, row: Any) -> Versions:
    return holding.versions(table_key, parts_version, row[pr.PART_VERSION] or 0)


def _encode(part: t.Partition) -> bytes:
    """PART's bytes as the generated code writes them: with thrift's C extension when it
    was built, called directly (a protocol and a buffer per partition cost more than its
    encoding), else through the protocol."""
    if fastbinary is not None:
        value: bytes = fastbinary.encode_binary(part, _SPEC)
        return value
    buffer = TMemoryBuffer()
    part.write(TBinaryProtocol(buffer))
    value = buffer.getvalue()
    return value


def _list(bodies: Sequence[bytes]) -> bytes:
    return struct.pack(">bi", TType.STRUCT, len(bodies)) + b"".join(bodies)
