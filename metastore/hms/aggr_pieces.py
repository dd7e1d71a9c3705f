"""Answers of get_aggr_stats_for rebuilt by the partitions that changed.

As metastore.hms.pieces does for get_partitions_statistics_req: each partition's rows are
kept in the answer cache under the versions that tell when they change (its version and its
table's PARTS_VERSION, metastore.store.versions), so that after a write of one partition
only that partition is read again. The merge is kept too, so that it is not made again over
every partition: the partitions of an answer (in its order, by name) are cut into runs of
RUN_LENGTH, and the Summary of each run's columns (metastore.stats.summaries) is kept under
the run's partitions (in the key) and the largest of their versions (a write of any of them
gives it a version larger than every version before, so the largest moves). After a write
of one partition, its run is merged again from its partitions' rows, and the answer from
the runs' summaries: exactly the merge of every partition's rows (tested against a server
without a cache).

A read takes two statements, as pieces' does: the partitions' versions, then the rows of
those whose rows are not kept, with the versions they were read at (the answer is read whole
when these differ: a change committed between the two).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.orm import Session
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ttypes as t
from metastore.hms.cache import AnswerCache, Versions
from metastore.stats import queries, reads, summaries
from metastore.stats.rows import BIT_VECTOR, COLUMN_NAME, HISTOGRAM, StatsRow, as_row
from metastore.store import versions

CALL = "get_aggr_stats_for"
PIECE = f"{CALL} (a partition)"
RUN = f"{CALL} (a run of partitions)"
"""The names the cache counts the parts of its answers under."""
RUN_LENGTH = 16
"""Partitions in a run: about the square root of the 200 of a large answer, so that after a
write the merge of a run and that of the runs cost about the same."""

_ROW_BYTES = 200
"""Bytes a row costs in the cache besides its sketches (its tuple and values)."""


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
    """The encoded AggrStats of TARGET, from the runs and partitions CACHE keeps for VARIANT
    (the server's settings that change answers) and the rows of the partitions it does not
    keep; what is read and merged is kept."""

    def whole() -> bytes:
        merged = reads.aggregate_statistics(s, target, merge_histograms=merge_histograms)
        return encoded(*merged, stats_obj)

    if not target.columns or not target.partitions:
        return whole()
    found = versions.partition_versions(
        s, target.catalog, target.db, target.table, target.partitions
    )
    if found is None or not found.usable:
        return whole()
    shape = f"{variant}|{target.engine}|{','.join(target.columns)}"
    table_key = ("", shape, str(found.tbl_id))
    parts_version = found.parts_version or 0
    chunks = [
        found.partitions[start : start + RUN_LENGTH]
        for start in range(0, len(found.partitions), RUN_LENGTH)
    ]

    def run_key(chunk: Sequence[tuple[str, int, int]]) -> tuple[str, str, bytes]:
        return (RUN, shape, ",".join(str(part_id) for _, part_id, _ in chunk).encode())

    def run_versions(chunk: Sequence[tuple[str, int, int]]) -> Versions:
        return {table_key: (parts_version, max(version for _, _, version in chunk))}

    def piece_key(part_id: int) -> tuple[str, str, bytes]:
        return (PIECE, shape, str(part_id).encode())

    runs: list[summaries.Run | None] = []
    for chunk in chunks:
        kept = cache.lookup_object(run_key(chunk), run_versions(chunk))
        runs.append(kept if isinstance(kept, summaries.Run) else None)
    rows: dict[int, tuple[Any, ...]] = {}
    missing: list[int] = []
    for chunk, run in zip(chunks, runs, strict=True):
        if run is not None:
            continue
        for _, part_id, version in chunk:
            kept = cache.lookup_object(piece_key(part_id), {table_key: (parts_version, version)})
            if isinstance(kept, tuple):
                rows[part_id] = kept
            else:
                missing.append(part_id)
    if missing:
        read = _read(s, target, found, missing)
        if read is None:  # changed since the first statement: read the answer whole
            return whole()
        expected = {part_id: version for _, part_id, version in found.partitions}
        for part_id, part_rows in read.items():
            versions_: Versions = {table_key: (parts_version, expected[part_id])}
            cache.store_object(piece_key(part_id), versions_, part_rows, _size(part_rows))
        rows.update(read)
    asked = len(target.columns)
    for i, chunk in enumerate(chunks):
        if runs[i] is not None:
            continue
        parts = [rows[part_id] for _, part_id, _ in chunk]
        run = summaries.run_of(parts, asked)
        size = sum(_size(part) for part in parts) + _ROW_BYTES * len(run.columns)
        cache.store_object(run_key(chunk), run_versions(chunk), run, size)
        runs[i] = run
    merged, parts_found = summaries.merge_runs(
        [run for run in runs if run is not None],
        len(target.partitions),
        target.where,
        merge_histograms,
    )
    return encoded(merged, parts_found, stats_obj)


def _read(
    s: Session,
    target: reads.StatsTarget,
    found: versions.PartitionVersions,
    part_ids: Sequence[int],
) -> dict[int, tuple[Any, ...]] | None:
    """The rows of the partitions PART_IDS (as partition_stats_by_name's with row counts:
    PART_NAME, the statistics, NUM_ROWS), by id; None when they were not read at the
    versions FOUND (changed since, or dropped)."""
    rows = queries.partition_stats_by_ids(
        s, part_ids, target.columns, target.engine, with_row_counts=True
    )
    expected = {part_id: version for _, part_id, version in found.partitions}
    names = {part_id: name for name, part_id, _ in found.partitions}
    tables = (found.version, found.parts_version, found.version)
    by_part: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        part_id, part_version, version, parts_version, seen = row[:5]
        if (version, parts_version, seen) != tables or (part_version or 0) != expected[part_id]:
            return None
        part_rows = by_part.setdefault(part_id, [])
        if row[5 + COLUMN_NAME] is not None:
            part_rows.append((names[part_id], *row[5:]))
    if len(by_part) != len(part_ids):
        return None
    return {part_id: tuple(part_rows) for part_id, part_rows in by_part.items()}
