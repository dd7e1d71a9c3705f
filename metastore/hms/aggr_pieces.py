"""Answers of get_aggr_stats_for rebuilt by the partitions that changed.

As metastore.hms.pieces does for get_partitions_statistics_req: after a write of one
partition (or an alter of it), only that partition is read again, and the merge is not made
again over every partition. The partitions of an answer (in its order, by name) are cut into
runs of RUN_LENGTH, and what is held of the request (metastore.hms.held) keeps, with the
partitions' versions, each run: the Summary of its columns (metastore.stats.summaries) and
its partitions' rows. After a write of one partition, its run is merged again from its
partitions' rows (the one read again, the others kept), and the answer from the runs'
summaries: exactly the merge of every partition's rows (tested against a server without a
cache).

Which partitions changed is told by one statement besides the table's version (alone once a
read found its table moved), outside a transaction (metastore.hms.held; `since_answer`):
the table's versions with the rows of the partitions changed since the partitions of the
request were last read. When nothing is held (or it
was evicted) or the table changed otherwise than in some of its partitions, the call goes
as any call: one statement reads every partition's rows with their versions, as the whole
read does (`answer`), and its runs are held.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.orm import Session
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ttypes as t
from metastore.hms import held as holding
from metastore.hms.cache import AnswerCache
from metastore.hms.held import Held
from metastore.stats import reads, summaries
from metastore.stats.rows import BIT_VECTOR, COLUMN_NAME, HISTOGRAM, StatsRow, as_row
from metastore.store.transactions import Transactions
from metastore.store.versions import TableName

CALL = "get_aggr_stats_for"
HELD = f"{CALL} (the partitions held)"
"""The name the cache counts what is held of its answers under."""
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


def answer(
    s: Session,
    target: reads.StatsTarget,
    cache: AnswerCache,
    variant: str,
    stats_obj: Callable[[Any], Any],
    merge_histograms: bool,
) -> bytes:
    """The encoded AggrStats of TARGET, its partitions read with their versions and held in
    CACHE with their runs, for VARIANT (the server's settings that change answers):
    `since_answer` rebuilds the next answer from these."""

    def whole() -> bytes:
        merged = reads.aggregate_statistics(s, target, merge_histograms=merge_histograms)
        return encoded(*merged, stats_obj)

    if not target.columns or not target.partitions:
        return whole()
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
    kept = _with_runs(held, fresh, asked)
    cache.store_object(
        holding.key(HELD, holding.shape(variant, target), target), {}, kept, kept.size()
    )
    return _merged(kept, target, merge_histograms, stats_obj)


def since_answer(
    tx: Transactions,
    table: TableName,
    target: reads.StatsTarget,
    cache: AnswerCache,
    variant: str,
    stats_obj: Callable[[Any], Any],
    merge_histograms: bool,
) -> holding.Read | None:
    """The versions of TABLE (TARGET's) and the answer of TARGET rebuilt from the runs
    CACHE holds of it and the rows of the partitions changed since they were last read, in
    one statement (metastore.hms.held.changes: None when nothing is held of TARGET, no
    answer when what changed cannot be told from it)."""
    if not target.columns or not target.partitions:
        return None
    key = holding.key(HELD, holding.shape(variant, target), target)
    read = holding.changes(tx, cache, key, table, target, with_row_counts=True)
    if read is None:
        return None
    found, since = read
    if since is None:
        return found, None

    def rebuilt() -> bytes:
        partitions, positions = since.held.partitions, since.held.positions
        fresh = {
            part_id: _partition_rows(partitions[positions[part_id]][0], rows, holding.STATS_AT)
            for part_id, rows in since.changed.items()
        }
        kept = _with_runs(since.held, fresh, len(target.columns))
        cache.store_object(since.key, {}, kept, kept.size())
        return _merged(kept, target, merge_histograms, stats_obj)

    return found, rebuilt


def _with_runs(held: Held, fresh: dict[int, Rows], asked: int) -> Held:
    """HELD with the runs of its partitions, each (Run, its size in bytes): those HELD keeps
    (of its partitions before the change) where none of their partitions was read again,
    the others merged again from the rows FRESH (read now) and those the run kept of its
    other partitions. Every partition's rows are in FRESH when HELD keeps no runs."""
    before: tuple[tuple[summaries.Run, int], ...] = held.parts
    partitions = held.partitions
    # The runs as HELD cut them, else runs of RUN_LENGTH (the last one shorter).
    lengths = [len(run.parts) for run, _ in before] or [
        RUN_LENGTH for _ in range(0, len(partitions), RUN_LENGTH)
    ]
    runs: list[tuple[summaries.Run, int]] = []
    start = 0
    for index, length in enumerate(lengths):
        chunk = partitions[start : start + length]
        start += length
        kept = before[index] if before else None
        if kept is not None and not any(part_id in fresh for _, part_id, _ in chunk):
            runs.append(kept)
            continue
        members = [
            fresh[part_id] if kept is None or part_id in fresh else kept[0].parts[at]
            for at, (_, part_id, _) in enumerate(chunk)
        ]
        run = summaries.run_of(members, asked)
        runs.append((run, sum(_size(rows) for rows in members) + _ROW_BYTES * len(run.columns)))
    size = sum(run_size for _, run_size in runs)
    return dataclasses.replace(held, parts=tuple(runs), parts_size=size)


def _merged(
    held: Held, target: reads.StatsTarget, merge_histograms: bool, stats_obj: Callable[[Any], Any]
) -> bytes:
    """The encoded AggrStats of TARGET from the runs HELD keeps."""
    runs = [run for run, _ in held.parts]
    merged = summaries.merge_runs(runs, len(target.partitions), target.where, merge_histograms)
    return encoded(*merged, stats_obj)


def _partition_rows(name: str, rows: Sequence[tuple[Any, ...]], at: int) -> Rows:
    """A partition's Rows, named NAME, from ROWS whose statistics columns begin at AT."""
    return tuple((name, *row[at:]) for row in rows if row[at + COLUMN_NAME] is not None)
