"""Answers of get_partitions_statistics_req rebuilt by the partitions that changed.

The answer cache (metastore.hms.cache) keeps a whole answer by its table's version, which
any write to the table moves: after a write of one partition's statistics, an answer over
200 partitions was read, built and encoded again whole. Here each partition's part of the
answer (its name and the encoded list of its ColumnStatisticsObj) is kept in the same cache,
under the versions that tell when it changes (metastore.store.versions: the partition's
version, moved by every write of its statistics, and its table's PARTS_VERSION, moved by
every other change to the table), so that an answer re-reads and re-encodes only the
partitions whose versions moved, and copies the others' bytes.

After a write, a read takes one statement besides the table's version (as a read of the
whole answer did before partition versions): the partitions of the request as last read are
held, and one statement reads the rows of those changed since (metastore.hms.held).
Otherwise (nothing held, the table changed otherwise than in its partitions' statistics, or
a part evicted) it takes two: the versions of the partitions named (which also gives their
order in the answer), then the statistics of those whose part is not kept, with the versions
they were read at. Should those versions differ from the first statement's (a
change committed between the two), the answer is read whole as without this module. Parts
are kept under the versions read with their rows, so never under versions newer than their
data; each part served was current at the first statement, which ran after the call began.

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
from metastore.hms.cache import AnswerCache, Key
from metastore.hms.held import Held
from metastore.hms.stats_wire import StatsEncoder, partition_entry, partitions_map
from metastore.stats import queries, reads
from metastore.stats.rows import COLUMN_NAME
from metastore.store import versions

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
    """The encoded PartitionsStatsResult of TARGET, from the parts CACHE keeps for VARIANT
    (the server's settings that change answers) and the statistics of the partitions whose
    part it does not; the parts read are kept."""
    if not target.columns or not target.partitions:
        return whole(s, target, encoder)
    shape = f"{variant}|{target.engine}|{','.join(target.columns)}"

    def key(part_id: int) -> Key:
        return _key(shape, part_id)

    held_key = holding.key(HELD, shape, target)
    held = cache.lookup_object(held_key, {})
    if isinstance(held, Held):
        since = holding.since(s, target, held, with_row_counts=False)
        if since is not None:
            body = _since(since[0], since[1], cache, shape, encoder)
            if body is not None:
                cache.store_object(held_key, {}, since[0], since[0].size())
                return body
    found = versions.partition_versions(
        s, target.catalog, target.db, target.table, target.partitions
    )
    if found is None or not found.usable:
        return whole(s, target, encoder)
    table_key = ("", shape, str(found.tbl_id))

    kept: dict[int, bytes] = {}
    missing: list[int] = []
    for _, part_id, part_version in found.partitions:
        versions_ = holding.versions(table_key, found.parts_version or 0, part_version)
        body = cache.lookup(key(part_id), versions_)
        if body is None:
            missing.append(part_id)
        else:
            kept[part_id] = body
    if missing:
        rows = queries.partition_stats_by_ids(s, missing, target.columns, target.engine)
        expected = {part_id: version for _, part_id, version in found.partitions}
        by_part: dict[int, list[Any]] = {}
        for row in rows:
            part_id, part_version, version, parts_version, seen = row[:5]
            if (version, parts_version, seen) != (
                found.version,
                found.parts_version,
                found.version,
            ) or (part_version or 0) != expected[
                part_id
            ]:  # changed since the first statement: read the answer whole
                return whole(s, target, encoder)
            objs = by_part.setdefault(part_id, [])
            if row[5 + COLUMN_NAME] is not None:
                objs.append(encoder.obj(row[5:]))
        if len(by_part) != len(missing):  # a partition dropped since the first statement
            return whole(s, target, encoder)
        names = {part_id: name for name, part_id, _ in found.partitions}
        for part_id, objs in by_part.items():
            body = partition_entry(names[part_id], objs) if objs else b""
            kept[part_id] = body
            versions_ = holding.versions(table_key, found.parts_version or 0, expected[part_id])
            cache.store(key(part_id), versions_, body)
    held = Held(found.tbl_id, found.version or 0, found.parts_version or 0, tuple(found.partitions))
    cache.store_object(held_key, {}, held, held.size())
    return partitions_map([kept[part_id] for _, part_id, _ in found.partitions])


def _key(shape: str, part_id: int) -> Key:
    return (PIECE, shape, str(part_id).encode())


def _since(
    held: Held,
    changed: dict[int, list[tuple[Any, ...]]],
    cache: AnswerCache,
    shape: str,
    encoder: StatsEncoder,
) -> bytes | None:
    """The answer of the partitions HELD, from the parts CACHE keeps and the rows CHANGED
    (metastore.hms.held.since; their parts kept here); None when a part is neither kept nor
    changed (evicted)."""
    table_key = ("", shape, str(held.tbl_id))
    bodies = []
    for name, part_id, version in held.partitions:
        versions_ = holding.versions(table_key, held.parts_version, version)
        rows = changed.get(part_id)
        if rows is None:
            body = cache.lookup(_key(shape, part_id), versions_)
            if body is None:
                return None
        else:
            at = holding.STATS_AT
            objs = [encoder.obj(row[at:]) for row in rows if row[at + COLUMN_NAME] is not None]
            body = partition_entry(name, objs) if objs else b""
            cache.store(_key(shape, part_id), versions_, body)
        bodies.append(body)
    return partitions_map(bodies)
