"""The partitions of an answer over many partitions as last read, and the one statement that
tells which of them changed since (metastore.hms.pieces, metastore.hms.aggr_pieces).

What the server holds of a request (each partition's id and version, in the answer's order,
the table's version they were current at, and the parts of the answer made of them) is kept
in the cache, and one statement reads the table's versions and the rows of its partitions
whose version is above the held one. A change to a partition that keeps its name (its
statistics, an alter) gives it a version above every version before
(metastore.store.versions), so those are the partitions changed since; any other change to
the table moves its PARTS_VERSION, and then, as when nothing is held, the partitions'
versions are read again.

A call reads its table's version first (metastore.hms.cache) and serves the whole answer
when that has not moved; when it has and something is held of the request, this statement
follows. It finds the table by name and reads its versions with the rows changed since, so
that for a request whose table moved at its last call (a planner reading while data is
loaded) the processor runs it first, as the call's one statement, in place of the read of
the version (metastore.hms.processor). It runs outside any transaction
(Transactions.query), and the answer rebuilt from it is kept under the table's versions it
read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from metastore.hms.cache import AnswerCache, Key, Versions
from metastore.stats import queries, reads
from metastore.stats.rows import COLUMN_NAME
from metastore.store.transactions import Transactions
from metastore.store.versions import TableName

STATS_AT = 6
"""Where the statistics columns begin in a row of `_since` (after the table's id and
versions, the partition's id and its version)."""


@dataclasses.dataclass(frozen=True)
class Held:
    """The partitions of an answer as read: of table TBL_ID, current at its VERSION and
    PARTS_VERSION, each (PART_NAME, PART_ID, its version) in the answer's order; and the
    PARTS of the answer made of them (the encoded entry of each partition, or the runs of
    partitions whose merge it is), of PARTS_SIZE bytes, so that the answer after a change is
    rebuilt from them and the partitions that changed, without a lookup in the cache for
    each of the others. A change to the partitions (`changes`) leaves PARTS as they were
    for the caller to replace what changed."""

    tbl_id: int
    version: int
    parts_version: int
    partitions: tuple[tuple[str, int, int], ...]
    parts: tuple[Any, ...] = ()
    parts_size: int = 0
    positions: dict[int, int] = dataclasses.field(default_factory=dict, compare=False)
    """Each partition's place in PARTITIONS, by PART_ID (the same in every Held brought
    from this one: its partitions keep their order)."""

    def __post_init__(self) -> None:
        if not self.positions:
            places = {part_id: at for at, (_, part_id, _) in enumerate(self.partitions)}
            object.__setattr__(self, "positions", places)

    def size(self) -> int:
        """About the bytes it takes in the cache."""
        return 200 + 160 * len(self.partitions) + self.parts_size


def versions(table: TableName, parts_version: int, version: int) -> Versions:
    """The versions the cache keeps a partition's part of an answer under
    (metastore.hms.partition_pieces): of a partition whose version is VERSION, of a table
    (its key TABLE) whose PARTS_VERSION is PARTS_VERSION. The second is the larger of the
    two, which names the same state as VERSION does (a part whose version is below
    PARTS_VERSION has not changed since the change that set it) and is never below a part's
    of the same table read before: so the cache does not refuse it for an older part of the
    same ids, which SQLite gives again to a table and partitions created after others were
    dropped."""
    return {table: (parts_version, max(parts_version, version))}


def shape(variant: str, target: reads.StatsTarget) -> str:
    """What, besides its partitions, tells the answers to TARGET apart: VARIANT (the
    server's settings that change answers), the engine and the columns."""
    return f"{variant}|{target.engine}|{','.join(target.columns)}"


def key(name: str, shape: str, target: reads.StatsTarget) -> Key:
    """The key of what is held of the answers to TARGET, of SHAPE (the columns, the engine
    and the server's settings that change answers), for the cache's NAME."""
    names = "\x00".join([target.catalog, target.db, target.table, *target.partitions])
    return (name, shape, names.encode())


@dataclasses.dataclass(frozen=True)
class Since:
    """What changed in the partitions of a request since they were last read (`_since`):
    HELD brought to its table's current version, with the parts of the answer as they were
    before (to be replaced for the partitions that CHANGED before it is kept in the cache
    under KEY), and the rows of the partitions that CHANGED, by PART_ID."""

    key: Key
    held: Held
    changed: dict[int, list[tuple[Any, ...]]]


Rebuilt = Callable[[], bytes]
"""An answer over many partitions rebuilt from what changed since they were last read:
encoded (and what is held of it kept) when called."""

Read = tuple[Versions, Rebuilt | None]
"""What the one statement of `changes` tells a call: its table's versions, and its answer
rebuilt when what changed can be told."""


def changes(
    tx: Transactions,
    cache: AnswerCache,
    key: Key,
    table: TableName,
    target: reads.StatsTarget,
    *,
    with_row_counts: bool,
) -> tuple[Versions, Since | None] | None:
    """The versions of TABLE (the table of TARGET, as the cache names it: those the call's
    answer is kept under) and what changed in the partitions of TARGET since they were last
    read, from what CACHE holds of them under KEY, in one statement outside a transaction:
    None when nothing is held (the call reads the versions itself); no versions when there
    is no such table, and no Since when `_since` cannot tell what changed."""
    held = cache.lookup_object(key, {})
    if not isinstance(held, Held):
        return None
    rows = queries.partition_stats_changed_since(
        tx,
        table,
        held.tbl_id,
        held.version,
        target.columns,
        target.engine,
        with_row_counts=with_row_counts,
    )
    if not rows:
        return {}, None
    tbl_id, version = rows[0][:2]
    found = _since(held, rows)
    return {table: (tbl_id, version)}, None if found is None else Since(key, *found)


def _since(
    held: Held, rows: list[tuple[Any, ...]]
) -> tuple[Held, dict[int, list[tuple[Any, ...]]]] | None:
    """HELD brought to its table's current version, and the rows of its partitions that
    changed since, from the ROWS of queries.partition_stats_changed_since (their
    statistics from STATS_AT, and NUM_ROWS when asked; a row whose COLUMN_NAME is None for
    a partition without them); None when the partitions' versions no longer tell what
    changed (the table changed otherwise than in some of its partitions, by another writer,
    or is another table)."""
    tbl_id, version, parts_version, seen = rows[0][:4]
    if (
        tbl_id != held.tbl_id
        or version is None
        or seen != version
        or (parts_version or 0) != held.parts_version
    ):
        return None
    positions = held.positions
    partitions = list(held.partitions)
    changed: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        at = positions.get(row[4])
        if at is None:  # no partition changed, or not one of the request's
            continue
        changed.setdefault(row[4], []).append(row)
        name, part_id, _ = partitions[at]
        partitions[at] = (name, part_id, row[5])
    return dataclasses.replace(held, version=version, partitions=tuple(partitions)), changed


READ_AT = 7
"""Where the statistics columns begin in a row of `read` (after PART_NAME, the partition's
id and version, the table's id and versions)."""


def read(
    s: Session, target: reads.StatsTarget, *, with_row_counts: bool
) -> tuple[Held | None, dict[int, list[tuple[Any, ...]]], list[tuple[Any, ...]]] | None:
    """The partitions of TARGET as read now, in one statement (as one read the whole answer
    before partition versions): what to hold of them (None when their versions do not tell
    what changes: the table was last changed by another writer), the rows of each (their
    statistics from READ_AT, NUM_ROWS WITH_ROW_COUNTS; a row whose COLUMN_NAME is None for
    a partition without them), and the rows of the statistics (PART_NAME, then from
    READ_AT on), in order. None when no partition of TARGET exists."""
    rows = queries.partition_stats_with_versions(
        s,
        target.catalog,
        target.db,
        target.table,
        target.partitions,
        target.columns,
        target.engine,
        with_row_counts=with_row_counts,
    )
    if not rows:
        return None
    _, _, _, tbl_id, version, parts_version, seen = rows[0][:READ_AT]
    by_part: dict[int, list[tuple[Any, ...]]] = {}
    partitions: list[tuple[str, int, int]] = []
    for row in rows:
        if row[1] not in by_part:
            partitions.append((row[0], row[1], row[2] or 0))
        by_part.setdefault(row[1], []).append(row)
    name_at = READ_AT + COLUMN_NAME
    stats = [(row[0], *row[READ_AT:]) for row in rows if row[name_at] is not None]
    if version is None or seen != version:
        return None, by_part, stats
    held = Held(tbl_id, version, parts_version or 0, tuple(partitions))
    return held, by_part, stats
