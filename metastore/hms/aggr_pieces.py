"""Answers of get_aggr_stats_for rebuilt by the partitions that changed.

As metastore.hms.pieces does for get_partitions_statistics_req: each partition's rows are
kept in the answer cache under the versions that tell when they change (its version and its
table's PARTS_VERSION, metastore.store.versions), so that after a write of one partition (or
an alter of it) only that partition is read again. The merge is kept too, so that it is not
made again over every partition: the partitions of an answer (in its order, by name) are cut
into runs of RUN_LENGTH, and the Summary of each run's columns (metastore.stats.summaries)
is kept under the run's partitions (in the key) and the largest of their versions (a write
of any of them gives it a version larger than every version before, so the largest moves).
After a write of one partition, its run is merged again from its partitions' rows, and the
answer from the runs' summaries: exactly the merge of every partition's rows (tested against
a server without a cache).

Which partitions changed is told by one statement besides the table's version, outside a
transaction, as the read of the whole answer took one before partition versions
(metastore.hms.held; `since_answer`): the rows of the partitions changed since the
partitions of the request as last read. When nothing is held, the table changed otherwise
than in some of its partitions, or parts were evicted, the call goes as any call: one
statement reads every partition's rows with their versions, as the whole read does
(`answer`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.orm import Session
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ttypes as t
from metastore.hms import held as holding
from metastore.hms.cache import AnswerCache, Key, Versions
from metastore.hms.held import Held
from metastore.stats import reads, summaries
from metastore.stats.rows import BIT_VECTOR, COLUMN_NAME, HISTOGRAM, StatsRow, as_row
from metastore.store.transactions import Transactions

CALL = "get_aggr_stats_for"
PIECE = f"{CALL} (a partition)"
RUN = f"{CALL} (a run of partitions)"
HELD = f"{CALL} (the partitions held)"
"""The names the cache counts the parts of its answers under."""
RUN_LENGTH = 16
"""Partitions in a run: about the square root of the 200 of a large answer, so that after a
write the merge of a run and that of the runs cost about the same."""

_ROW_BYTES = 200
"""Bytes a row costs in the cache besides its sketches (its tuple and values)."""

Rows = tuple[tuple[Any, ...], ...]
"""A partition's rows, as partition_stats_by_name's with row counts: PART_NAME, the
statistics columns, NUM_ROWS."""


def encoded(merged: Sequence[StatsRow], found: int, stats_obj: Callable[[Any], Any]) -> bytes:
    """The encoded AggrStats of the merged rows MERGED over FOUND partitions."""
    buffer = TMemoryBuffer()
    answer = t.AggrStats(colStats=[stats_obj(as_row(row)) for row in merged], partsFound=found)
    answer.write(TBinaryProtocolAccelerated(buffer))
    value: bytes = buffer.getvalue()
    return value


def _size(rows: Sequence[Sequence[Any]]) -> int:
    at = 1 + BIT_VECTOR, 1 + HISTOGRAM
    return sum(_ROW_BYTES + len(row[at[0]] or b"") + len(row[at[1]] or b"") for row in rows)


class _Parts:
    """The keys of the parts of the answers of one shape (the columns, the engine and the
    server's settings that change answers) in CACHE."""

    def __init__(self, cache: AnswerCache, shape: str) -> None:
        self.cache = cache
        self.shape = shape

    def table(self, held: Held) -> tuple[str, str, str]:
        return ("", self.shape, str(held.tbl_id))

    def piece(self, part_id: int) -> Key:
        return (PIECE, self.shape, str(part_id).encode())

    def run(self, chunk: Sequence[tuple[str, int, int]]) -> Key:
        return (RUN, self.shape, ",".join(str(part_id) for _, part_id, _ in chunk).encode())

    def piece_versions(self, held: Held, version: int) -> Versions:
        return holding.versions(self.table(held), held.parts_version, version)

    def run_versions(self, held: Held, chunk: Sequence[tuple[str, int, int]]) -> Versions:
        return self.piece_versions(held, max(version for _, _, version in chunk))


def answer(
    s: Session,
    target: reads.StatsTarget,
    cache: AnswerCache,
    variant: str,
    stats_obj: Callable[[Any], Any],
    merge_histograms: bool,
) -> bytes:
    """The encoded AggrStats of TARGET, its partitions read with their versions and their
    rows and runs kept in CACHE for VARIANT (the server's settings that change answers),
    with what is held of them (`since_answer` rebuilds the next answer from these)."""

    def whole() -> bytes:
        merged = reads.aggregate_statistics(s, target, merge_histograms=merge_histograms)
        return encoded(*merged, stats_obj)

    if not target.columns or not target.partitions:
        return whole()
    parts = _Parts(cache, holding.shape(variant, target))
    read = holding.read(s, target, with_row_counts=True)
    if read is None:  # no such partition: what the whole read answers (or NotFound)
        return whole()
    held, by_part, rows = read
    asked = len(target.columns)
    if held is None:
        merged = reads.aggregate_rows(
            rows, asked, len(target.partitions), target.where, merge_histograms
        )
        return encoded(*merged, stats_obj)
    names = {part_id: name for name, part_id, _ in held.partitions}
    fresh = {
        part_id: _partition_rows(names[part_id], part_rows, holding.READ_AT)
        for part_id, part_rows in by_part.items()
    }
    runs = _runs(held, fresh, parts, asked)
    assert runs is not None  # every partition's rows were read
    cache.store_object(holding.key(HELD, parts.shape, target), {}, held, held.size())
    merged = summaries.merge_runs(runs, len(target.partitions), target.where, merge_histograms)
    return encoded(*merged, stats_obj)


def since_answer(
    tx: Transactions,
    target: reads.StatsTarget,
    cache: AnswerCache,
    variant: str,
    stats_obj: Callable[[Any], Any],
    merge_histograms: bool,
) -> holding.Answer | None:
    """The answer of TARGET rebuilt from the runs and partitions CACHE keeps and the rows
    of the partitions changed since they were last read, in one statement
    (metastore.hms.held); None when nothing is held of TARGET or what changed cannot be
    told from it."""
    if not target.columns or not target.partitions:
        return None
    parts = _Parts(cache, holding.shape(variant, target))
    since = holding.changes(
        tx, cache, holding.key(HELD, parts.shape, target), target, with_row_counts=True
    )
    if since is None:
        return None

    def rebuilt() -> bytes | None:
        names = {part_id: name for name, part_id, _ in since.held.partitions}
        fresh = {
            part_id: _partition_rows(names[part_id], rows, holding.STATS_AT)
            for part_id, rows in since.changed.items()
        }
        runs = _runs(since.held, fresh, parts, len(target.columns))
        if runs is None:  # parts evicted
            return None
        cache.store_object(since.key, {}, since.held, since.held.size())
        merged = summaries.merge_runs(runs, len(target.partitions), target.where, merge_histograms)
        return encoded(*merged, stats_obj)

    return holding.Answer(since.held.tbl_id, since.held.version, rebuilt)


def _chunks(held: Held) -> list[tuple[tuple[str, int, int], ...]]:
    """The runs of the partitions HELD."""
    partitions = held.partitions
    return [partitions[i : i + RUN_LENGTH] for i in range(0, len(partitions), RUN_LENGTH)]


def _kept_rows(held: Held, parts: _Parts, part_id: int, version: int) -> Rows | None:
    kept = parts.cache.lookup_object(parts.piece(part_id), parts.piece_versions(held, version))
    return kept if isinstance(kept, tuple) else None


def _runs(
    held: Held, fresh: dict[int, Rows], parts: _Parts, asked: int
) -> list[summaries.Run] | None:
    """The Runs of the partitions HELD, from those PARTS keeps and the rows FRESH (read now,
    kept here); None when the rows of a partition are needed and neither kept nor fresh."""
    cache = parts.cache
    if fresh:
        of = {part_id: version for _, part_id, version in held.partitions}
        for part_id, read in fresh.items():
            versions_ = parts.piece_versions(held, of[part_id])
            cache.store_object(parts.piece(part_id), versions_, read, _size(read))
    runs: list[summaries.Run] = []
    for chunk in _chunks(held):
        run = cache.lookup_object(parts.run(chunk), parts.run_versions(held, chunk))
        if isinstance(run, summaries.Run):
            runs.append(run)
            continue
        members = []
        for _, part_id, version in chunk:
            rows = fresh.get(part_id)
            if rows is None:
                rows = _kept_rows(held, parts, part_id, version)
            if rows is None:
                return None
            members.append(rows)
        run = summaries.run_of(members, asked)
        size = sum(_size(rows) for rows in members) + _ROW_BYTES * len(run.columns)
        cache.store_object(parts.run(chunk), parts.run_versions(held, chunk), run, size)
        runs.append(run)
    return runs


def _partition_rows(name: str, rows: Sequence[tuple[Any, ...]], at: int) -> Rows:
    """A partition's Rows, named NAME, from ROWS whose statistics columns begin at AT."""
    return tuple((name, *row[at:]) for row in rows if row[at + COLUMN_NAME] is not None)
