"""Reading column statistics: one column of a table or a partition, many columns of a table
or of many partitions (one SQL query each), and the merge of many partitions' statistics
into one row per column (get_aggr_stats_for).

Unknown columns and partitions are absent from the answers, as in HMS; an unknown table is
NotFound. The rows are those of metastore.stats.queries, with the statistics columns in the
order of STATS_COLUMNS (metastore.stats.rows; a partition's are tuples that begin with
PART_NAME), which a door encodes.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy import Row
from sqlalchemy.orm import Session

from metastore import names
from metastore.errors import InvalidInput, InvalidObject, NotFound
from metastore.stats import aggregate, queries
from metastore.stats.queries import StatsLevel
from metastore.stats.rows import StatsRow
from metastore.store import lookup
from metastore.store.storage import column_types
from metastore.vocabulary import DEFAULT_ENGINE

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class StatsTarget:
    """What a read of many columns asks for: columns of one table (and of some of its
    partitions), for one engine; names as stored (lower case, partition names escaped)."""

    catalog: str
    db: str
    table: str
    columns: list[str]
    partitions: list[str]
    engine: str

    @property
    def where(self) -> str:
        return f"{self.db}.{self.table}"


def target(
    db_name: str | None,
    table_name: str | None,
    column_names: Sequence[str | None] | None,
    partition_names: Sequence[str] | None,
    *,
    catalog: str | None,
    engine: str | None,
    with_partitions: bool,
) -> StatsTarget:
    """The StatsTarget of a request; InvalidInput when a name it needs is missing. A
    partition name that cannot exist is left out (it is absent from the answer)."""
    if (
        not db_name
        or not table_name
        or column_names is None
        or (with_partitions and partition_names is None)
    ):
        needed = "dbName, tblName, colNames" + (" and partNames" if with_partitions else "")
        raise InvalidInput(f"the request needs {needed}")
    cat, db = names.split_catalog(db_name)
    if catalog:
        cat = names.identifier(catalog)
    columns = sorted({names.identifier(c) for c in column_names if c})
    parts: list[str] = []
    for name in partition_names or [] if with_partitions else []:
        try:
            parts.append(names.normalize_partition_name(name))
        except names.InvalidNameError:
            continue  # a name that cannot exist is simply absent from the answer
    return StatsTarget(
        catalog=cat,
        db=names.identifier(db or ""),
        table=names.identifier(table_name),
        columns=columns,
        partitions=sorted(set(parts)),
        engine=engine or DEFAULT_ENGINE,
    )


def column_statistics(
    s: Session,
    level: StatsLevel,
    owner_id: int,
    sd_id: int | None,
    column_name: str | None,
    where: str,
) -> StatsRow:
    """The statistics (engine hive) of one column of a table or partition (LEVEL, its id
    OWNER_ID, its storage descriptor SD_ID); WHERE names it in messages."""
    if not column_name:
        raise InvalidInput("no column name given")
    column = names.identifier(column_name)
    rows = queries.stats_rows(s, level, [owner_id], [column], DEFAULT_ENGINE)
    if rows:
        return rows[0][1]
    if column not in column_types(s, sd_id):
        raise InvalidObject(f"{where} has no column {column!r}")
    raise NotFound(f"no statistics for column {column!r} of {where}")


def table_statistics(s: Session, target: StatsTarget) -> Sequence[Row[Any]]:
    """The rows of the target's columns of its table, in one query."""
    rows = queries.table_stats_by_name(
        s, target.catalog, target.db, target.table, target.columns, target.engine
    )
    if not rows:
        lookup.table(s, target.db, target.table, target.catalog)  # NotFound for no table
    return rows


def partition_statistics(s: Session, target: StatsTarget) -> list[tuple[Any, ...]]:
    """The rows of the target's columns of its partitions, in one query: PART_NAME, then
    the statistics columns."""
    rows = queries.partition_stats_by_name(
        s,
        target.catalog,
        target.db,
        target.table,
        target.partitions,
        target.columns,
        target.engine,
    )
    if not rows:
        lookup.table(s, target.db, target.table, target.catalog)
    return rows


def aggregate_statistics(
    s: Session, target: StatsTarget, *, merge_histograms: bool
) -> tuple[list[StatsRow], int]:
    """One row per column merging the target's partitions (metastore.stats.aggregate), and
    how many of them have statistics for every column (HMS's partsFound). Without
    MERGE_HISTOGRAMS the rows have no histogram (for answers that will not carry it)."""
    if not target.columns or not target.partitions:
        return [], 0
    rows = queries.partition_stats_by_name(
        s,
        target.catalog,
        target.db,
        target.table,
        target.partitions,
        target.columns,
        target.engine,
        with_row_counts=True,
    )
    if not rows:
        lookup.table(s, target.db, target.table, target.catalog)
        return [], 0
    return aggregate_rows(
        rows, len(target.columns), len(target.partitions), target.where, merge_histograms
    )


def aggregate_rows(
    rows: Sequence[Sequence[Any]], asked: int, requested: int, where: str, merge_histograms: bool
) -> tuple[list[StatsRow], int]:
    """aggregate_statistics of ROWS (queries.partition_stats_by_name's, with row counts), of
    ASKED columns and REQUESTED partitions of table WHERE."""
    keys = queries.PARTITION_STATS_FIELDS
    name_at = keys.index("COLUMN_NAME")
    by_column: dict[str, list[Any]] = {}
    for row in rows:
        by_column.setdefault(row[name_at], []).append(row)
    # One row per (partition, column): a partition with as many rows as there are columns
    # has statistics for all of them.
    found = sum(1 for n in Counter(map(itemgetter(0), rows)).values() if n == asked)
    merged = [
        aggregate_column(
            dict(zip(keys, zip(*column_rows, strict=True), strict=True)),
            requested,
            f"{where}.{column}",
            merge_histograms,
        )
        for column, column_rows in by_column.items()
    ]
    return merged, found


def aggregate_column(
    fields: dict[str, tuple[Any, ...]], requested: int, what: str, merge_histograms: bool
) -> StatsRow:
    """One column's statistics over many partitions, given field by field (see
    metastore.stats.aggregate)."""
    kinds = fields["STATS_KIND"]
    if len(set(kinds)) > 1:
        analyzed = fields["LAST_ANALYZED"]
        newest_kind = kinds[max(range(len(kinds)), key=lambda i: analyzed[i] or 0)]
        keep = [i for i, kind in enumerate(kinds) if kind == newest_kind]
        log.warning(
            "%s: %d partitions hold statistics of another kind than %s; they are left out",
            what,
            len(kinds) - len(keep),
            newest_kind,
        )
        fields = {key: tuple(values[i] for i in keep) for key, values in fields.items()}
    row_counts = {text: int_or_none(text) for text in set(fields["NUM_ROWS"])}
    counts = [row_counts[text] for text in fields["NUM_ROWS"]]
    merged = aggregate.merge_columns(fields, counts, what=what, merge_histograms=merge_histograms)
    aggregate.scale_sums(merged, requested, len(counts))
    return merged


def int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
