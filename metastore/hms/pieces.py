"""Answers of get_partitions_statistics_req rebuilt by the partitions that changed.

The answer cache (metastore.hms.cache) keeps a whole answer by its table's version, which
any write to the table moves: after a write of one partition's statistics, an answer over
200 partitions was read, built and encoded again whole. Here what is held of a request
(metastore.hms.held: each partition's id and version, and the table's versions they were
current at) keeps each partition's part of the answer too (its name and the encoded list of
its ColumnStatisticsObj), so that an answer re-reads and re-encodes only the partitions
whose versions moved (metastore.store.versions: a partition's version moves with every
write of its statistics and alter of it), and copies the others' bytes.

After a write, a read takes one statement besides the table's version, outside a
transaction: the table's versions again with the rows of the partitions of the request
changed since they were last read (metastore.hms.held; `since_answer`), as a read of the
whole answer took one; once a read found its table moved, the next reads of the request
take that statement alone. When nothing is held (or it was evicted) or the table changed otherwise
than in some of its partitions (its PARTS_VERSION moved), the call goes as any call: one
statement reads every partition's rows with their versions, as the whole read does, and
their parts are held (`answer`). Parts are held with the versions read with their rows, in
the same statement, so never with versions newer than their data.

The bytes are the binary protocol's (the only one the server speaks), encoded from the rows
(metastore.hms.stats_wire), identical to what the generated code writes for the same struct
(tested against it).
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

from sqlalchemy.orm import Session
from thrift.Thrift import TType

from metastore.hms import held as holding
from metastore.hms.cache import AnswerCache
from metastore.hms.held import Held
from metastore.hms.stats_wire import StatsEncoder, partition_entry, partitions_map
from metastore.stats import reads
from metastore.stats.rows import COLUMN_NAME
from metastore.store.transactions import Transactions
from metastore.store.versions import TableName

CALL = "get_partitions_statistics_req"
HELD = f"{CALL} (the partitions held)"
"""The name the cache counts what is held of its answers under."""

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
    and held in CACHE with their parts, for VARIANT (the server's settings that change
    answers): `since_answer` rebuilds the next answer from these."""
    if not target.columns or not target.partitions:
        return whole(s, target, encoder)
    shape = holding.shape(variant, target)
    read = holding.read(s, target, with_row_counts=False)
    if read is None:  # no such partition: what the whole read answers (or NotFound)
        return whole(s, target, encoder)
    held, by_part, rows = read
    if held is None:
        return encoder.partitions_result(rows)
    body, kept = _assembled(held, by_part, holding.READ_AT, encoder)
    cache.store_object(holding.key(HELD, shape, target), {}, kept, kept.size())
    return body


def since_answer(
    tx: Transactions,
    table: TableName,
    target: reads.StatsTarget,
    cache: AnswerCache,
    variant: str,
    encoder: StatsEncoder,
) -> holding.Read | None:
    """The versions of TABLE (TARGET's) and the answer of TARGET rebuilt from the parts
    CACHE holds of it and the rows of the partitions changed since they were last read, in
    one statement (metastore.hms.held.changes: None when nothing is held of TARGET, no
    answer when what changed cannot be told from it)."""
    if not target.columns or not target.partitions:
        return None
    shape = holding.shape(variant, target)
    read = holding.changes(
        tx, cache, holding.key(HELD, shape, target), table, target, with_row_counts=False
    )
    if read is None:
        return None
    found, since = read
    if since is None:
        return found, None

    def rebuilt() -> bytes:
        body, kept = _assembled(since.held, since.changed, holding.STATS_AT, encoder)
        cache.store_object(since.key, {}, kept, kept.size())
        return body

    return found, rebuilt


def _assembled(
    held: Held, changed: dict[int, list[tuple[Any, ...]]], start: int, encoder: StatsEncoder
) -> tuple[bytes, Held]:
    """The answer of the partitions HELD, and HELD with its entries: those HELD keeps (of
    its partitions before the change), but for the partitions whose rows CHANGED (read now,
    their statistics from START). Every partition's rows are in CHANGED when HELD keeps no
    entries."""
    entries: list[bytes] = list(held.parts) or [b""] * len(held.partitions)
    size = held.parts_size
    name_at = start + COLUMN_NAME
    for part_id, rows in changed.items():
        at = held.positions[part_id]
        objs = [encoder.obj(row[start:]) for row in rows if row[name_at] is not None]
        entry = partition_entry(held.partitions[at][0], objs) if objs else b""
        size += len(entry) - len(entries[at])
        entries[at] = entry
    kept = tuple(entries)
    return partitions_map(kept), dataclasses.replace(held, parts=kept, parts_size=size)
