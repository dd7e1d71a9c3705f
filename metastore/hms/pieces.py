"""Answers of get_partitions_statistics_req rebuilt by the partitions that changed.

The answer cache (metastore.hms.cache) keeps a whole answer by its table's version, which
any write to the table moves: after a write of one partition's statistics, an answer over
200 partitions was read, built and encoded again whole. Here each partition's part of the
answer (its name and the encoded list of its ColumnStatisticsObj) is kept in the same cache,
under the versions that tell when it changes (metastore.store.versions: the partition's
version, moved by every write of its statistics and alter of it, and its table's
PARTS_VERSION, moved by every other change to the table), so that an answer re-reads and
re-encodes only the partitions whose versions moved, and copies the others' bytes.

After a write, a read takes one statement besides the table's version, as the read of the
whole answer took one before partition versions: the partitions of the request as last read
are held, and one statement, outside a transaction, reads the rows of those changed since
(metastore.hms.held; `since_answer`). When nothing is held, the table changed otherwise
than in some of its partitions, or a part was evicted, the call goes as any call: one
statement reads every partition's rows with their versions, as the whole read does, and
their parts are kept (`answer`). Parts are kept under the versions read with their rows, in
the same statement, so never under versions newer than their data.

The bytes are the binary protocol's (the only one the server speaks), encoded from the rows
(metastore.hms.stats_wire), identical to what the generated code writes for the same struct
(tested against it).
"""

from __future__ import annotations

import struct
from typing import Any

from sqlalchemy.orm import Session
from thrift.Thrift import TType

from metastore.hms import held as holding
from metastore.hms.cache import AnswerCache, Key, Versions
from metastore.hms.held import Held
from metastore.hms.stats_wire import StatsEncoder, partition_entry, partitions_map
from metastore.stats import reads
from metastore.stats.rows import COLUMN_NAME
from metastore.store.transactions import Transactions

CALL = "get_partitions_statistics_req"
PIECE = f"{CALL} (a partition)"
HELD = f"{CALL} (the partitions held)"
"""The names the cache counts the parts of its answers under."""

SUCCESS = struct.pack(">bh", TType.STRUCT, 0)
"""The start of a result struct's success field (field 0, a struct)."""
STOP = b"\x00"
"""The end of a struct."""


def whole(s: Session, target: reads.StatsTarget, encoder: StatsEncoder) -> bytes:
    """The encoded answer of TARGET read whole (metastore.stats.reads.partition_statistics)."""
    return encoder.partitions_result(reads.partition_statistics(s, target))


def answer(
    s: Session,
    target: reads.StatsTarget,
    cache: AnswerCache,
    variant: str,
    encoder: StatsEncoder,
) -> bytes:
    """The encoded PartitionsStatsResult of TARGET, its partitions read with their versions
    and their parts kept in CACHE for VARIANT (the server's settings that change answers),
    with what is held of them (`since_answer` rebuilds the next answer from these)."""
    if not target.columns or not target.partitions:
        return whole(s, target, encoder)
    shape = holding.shape(variant, target)
    read = holding.read(s, target, with_row_counts=False)
    if read is None:  # no such partition: what the whole read answers (or NotFound)
        return whole(s, target, encoder)
    held, by_part, rows = read
    if held is None:
        return encoder.partitions_result(rows)
    body = _assembled(held, by_part, holding.READ_AT, cache, shape, encoder)
    assert body is not None  # every partition's rows were read
    cache.store_object(holding.key(HELD, shape, target), {}, held, held.size())
    return body


def since_answer(
    tx: Transactions,
    target: reads.StatsTarget,
    cache: AnswerCache,
    variant: str,
    encoder: StatsEncoder,
) -> holding.Answer | None:
    """The answer of TARGET rebuilt from the parts CACHE keeps and the rows of the
    partitions changed since they were last read, in one statement (metastore.hms.held);
    None when nothing is held of TARGET or what changed cannot be told from it."""
    if not target.columns or not target.partitions:
        return None
    shape = holding.shape(variant, target)
    since = holding.changes(
        tx, cache, holding.key(HELD, shape, target), target, with_row_counts=False
    )
    if since is None:
        return None

    def rebuilt() -> bytes | None:
        body = _assembled(since.held, since.changed, holding.STATS_AT, cache, shape, encoder)
        if body is not None:
            cache.store_object(since.key, {}, since.held, since.held.size())
        return body

    return holding.Answer(since.held.tbl_id, since.held.version, rebuilt)


def _key(shape: str, part_id: int) -> Key:
    return (PIECE, shape, str(part_id).encode())


def _assembled(
    held: Held,
    changed: dict[int, list[tuple[Any, ...]]],
    at: int,
    cache: AnswerCache,
    shape: str,
    encoder: StatsEncoder,
) -> bytes | None:
    """The answer of the partitions HELD, from the parts CACHE keeps and the rows CHANGED
    (read now, their statistics from AT; their parts kept here); None when a part is
    neither kept nor read (evicted)."""
    table_key = ("", shape, str(held.tbl_id))
    bodies: list[bytes | None] = []
    unchanged: list[tuple[Key, Versions]] = []
    for name, part_id, version in held.partitions:
        key = _key(shape, part_id)
        versions_ = holding.versions(table_key, held.parts_version, version)
        rows = changed.get(part_id)
        if rows is None:
            unchanged.append((key, versions_))
            bodies.append(None)
            continue
        objs = [encoder.obj(row[at:]) for row in rows if row[at + COLUMN_NAME] is not None]
        body = partition_entry(name, objs) if objs else b""
        cache.store(key, versions_, body)
        bodies.append(body)
    kept = iter(cache.lookup_many(unchanged))
    entries: list[bytes] = []
    for built in bodies:
        entry = built if built is not None else next(kept)
        if entry is None:
            return None
        entries.append(entry)
    return partitions_map(entries)
