"""Writing and deleting column statistics, with COLUMN_STATS_ACCURATE kept beside the rows.

A write is all or nothing: the caller's transaction is rolled back by any error, such as an
entry that does not match its table's or partition's columns (metastore.stats.validate),
found as its table's group is written, after the groups before it. Entries are grouped by
table; each group costs a fixed number of statements, whatever the number of partitions
and columns. On PostgreSQL, a write of one table's or partition's statistics without merging
(a per-call write) is one statement (metastore.stats.one_statement).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from metastore import names
from metastore.errors import InvalidObject, NotFound
from metastore.stats import accurate, aggregate, one_statement, owners, queries
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL, StatsLevel
from metastore.stats.rows import StatsRow
from metastore.stats.validate import check_engine, owner_rows
from metastore.store import lookup, versions
from metastore.store import models as m
from metastore.store.params import param_values, set_param_values
from metastore.store.storage import column_types

if TYPE_CHECKING:
    from metastore.store.transactions import Transactions


@dataclasses.dataclass
class StatsEntry:
    """The statistics of one table (PARTITION None) or one of its partitions, as a request
    gives them: rows decoded by the door, with COLUMN_NAME as stored and LAST_ANALYZED set;
    ENGINE is set here."""

    db: str
    """The database, as given (it may carry a catalog prefix)."""
    table: str
    partition: str | None
    rows: list[StatsRow]
    catalog: str | None = None


def write_statistics(
    s: Session, entries: Sequence[StatsEntry], engine: str, *, merge: bool = False
) -> None:
    """Check ENTRIES and write them. With MERGE, a column whose stored statistics are marked
    accurate in COLUMN_STATS_ACCURATE is merged with them (aggregate.merge_rows); the others
    are written as given, like HMS."""
    check_engine(engine)
    if len(entries) == 1 and not merge and s.get_bind().dialect.name == "postgresql":
        entry = entries[0]
        written = one_statement.write(
            s, entry.db, entry.table, entry.partition, entry.catalog, entry.rows, engine
        )
        if written is not None:
            owner_rows(entry.rows, written.column_types, written.where, engine)
            return
    groups: dict[tuple[str | None, str, str], list[StatsEntry]] = {}
    for entry in entries:
        key = (entry.catalog, names.identifier(entry.db), names.identifier(entry.table))
        groups.setdefault(key, []).append(entry)
    # Tables in one order for every writer: each is locked until the end (owners.table).
    for catalog, db_name, table_name in sorted(groups, key=lambda k: (k[0] or "", k[1], k[2])):
        group = groups[(catalog, db_name, table_name)]
        table = owners.table(s, db_name, table_name, catalog)
        table_level = [e for e in group if e.partition is None]
        part_level = [e for e in group if e.partition is not None]
        if table_level:
            types = owners.column_types(s, [table.cd_id]).get(table.cd_id or -1, {})
            where = f"table {table.where()}"
            rows = [owner_rows(e.rows, types, where, engine) for e in table_level]
            value = owners.table_accurate(s, table)
            stored = {table.tbl_id: value} if value is not None else {}
            named = {table.tbl_id: (table.catalog, table.db_name, table.name)}
            _store_rows(s, TABLE_LEVEL, {table.tbl_id: rows}, named, stored, engine, merge)
        if part_level:
            _write_partition_statistics(s, table, part_level, engine, merge)


def write_alone(
    tx: Transactions, known: one_statement.OwnerColumns, entry: StatsEntry, engine: str
) -> bool:
    """Write ENTRY for ENGINE in one statement that is a transaction of its own, on
    PostgreSQL (metastore.stats.one_statement.write_alone; KNOWN: the owners' columns as
    last seen): for a write that is all of its caller's transaction. True when written;
    False, with nothing written, where write_statistics must write it (and says why it
    cannot)."""
    check_engine(engine)
    if tx.engine.dialect.name != "postgresql":
        return False
    return one_statement.write_alone(
        tx, known, entry.db, entry.table, entry.partition, entry.catalog, entry.rows, engine
    )


def _write_partition_statistics(
    s: Session,
    table: owners.TableOwner,
    entries: Sequence[StatsEntry],
    engine: str,
    merge: bool,
) -> None:
    if not table.keys:
        raise InvalidObject(f"table {table.where()} is not partitioned")
    stored_names = []
    for entry in entries:
        try:
            values = names.partition_values(entry.partition or "", table.keys)
        except names.InvalidNameError as e:
            raise InvalidObject(str(e)) from None
        stored_names.append(names.make_partition_name(table.keys, values))
    partitions, types = owners.partitions(s, table.tbl_id, sorted(set(stored_names)))
    by_owner: dict[int, list[list[StatsRow]]] = {}
    named: dict[int, tuple[str, ...]] = {}
    for entry, name in zip(entries, stored_names, strict=True):
        found = partitions.get(name)
        if found is None:
            raise lookup.missing(f"partition {name} of table {table.where()}")
        where = f"partition {name} of {table.where()}"
        rows = owner_rows(entry.rows, types.get(found.cd_id or -1, {}), where, engine)
        by_owner.setdefault(found.part_id, []).append(rows)
        named[found.part_id] = (table.catalog, table.db_name, table.name, name)
    stored = {p.part_id: p.accurate for p in partitions.values() if p.accurate is not None}
    versions.touch_partitions(s, table.tbl_id, by_owner)
    _store_rows(s, PARTITION_LEVEL, by_owner, named, stored, engine, merge)


def _store_rows(
    s: Session,
    level: StatsLevel,
    by_owner: dict[int, list[list[StatsRow]]],
    owner_names: Mapping[int, Sequence[str]],
    stored_accurate: Mapping[int, str | None],
    engine: str,
    merge: bool,
) -> None:
    """Upsert the rows of each owner (several entries for one owner are merged or, without
    MERGE, the later wins; OWNER_NAMES: the names of each, as level.owner_names) and mark
    their columns in COLUMN_STATS_ACCURATE (STORED_ACCURATE: its value for the owners that
    have it)."""
    owner_ids = list(by_owner)
    stored: dict[tuple[int, str], StatsRow] = {}
    if merge:
        columns = sorted(
            {r["COLUMN_NAME"] for lists in by_owner.values() for rows in lists for r in rows}
        )
        for owner, row in queries.stats_rows(s, level, owner_ids, columns, engine):
            if row["COLUMN_NAME"] in accurate.accurate_columns(stored_accurate.get(owner)):
                stored[(owner, row["COLUMN_NAME"])] = row
    final: dict[tuple[int, str], StatsRow] = {}
    for owner, lists in by_owner.items():
        for rows in lists:
            for row in rows:
                key = (owner, row["COLUMN_NAME"])
                previous = final.get(key) or stored.get(key)
                if merge and previous is not None and previous["STATS_KIND"] == row["STATS_KIND"]:
                    merged = aggregate.merge_rows([previous, row], what=row["COLUMN_NAME"])
                    row = {**merged, "COLUMN_TYPE": previous["COLUMN_TYPE"]}
                final[key] = row
    queries.upsert_stats(
        s,
        level,
        [(owner, row) for (owner, _), row in final.items()],
        owner_names,
        keep_unset=not merge,
    )
    written: dict[int, set[str]] = {owner: set() for owner in owner_ids}
    for owner, column in final:
        written[owner].add(column)
    set_param_values(
        s,
        level.params,
        {
            owner: accurate.with_columns(stored_accurate.get(owner), columns)
            for owner, columns in written.items()
        },
        accurate.KEY,
        stored=stored_accurate,
    )


def delete_statistics(
    s: Session,
    level: StatsLevel,
    owner_id: int,
    sd_id: int | None,
    column_name: str | None,
    engine: str | None,
    where: str,
) -> None:
    """Delete the statistics of one column (all when COLUMN_NAME is None) of one engine (all
    when None) of a table or partition (LEVEL, its id OWNER_ID, its storage descriptor SD_ID;
    WHERE names it in messages), and their marks in COLUMN_STATS_ACCURATE. Deleting one
    column's statistics that do not exist is NotFound (InvalidObject for a column the owner
    does not have); deleting all always succeeds."""
    column = names.identifier(column_name) if column_name else None
    deleted = queries.delete_stats(s, level, owner_id, column, engine)
    if column is not None and deleted == 0:
        if column not in column_types(s, sd_id):
            raise InvalidObject(f"{where} has no column {column!r}")
        raise NotFound(f"no statistics for column {column!r} of {where}")
    stored = param_values(s, level.params, [owner_id], accurate.KEY)
    if owner_id in stored:
        set_param_values(
            s,
            level.params,
            {
                owner_id: accurate.without_columns(
                    stored[owner_id], None if column is None else [column]
                )
            },
            accurate.KEY,
        )


def delete_statistics_of_columns(
    s: Session, level: StatsLevel, owner_ids: Sequence[int], columns: Sequence[str]
) -> None:
    """Delete the statistics of COLUMNS (every engine's) of the tables or partitions
    OWNER_IDS (LEVEL), whose columns were removed or retyped; their COLUMN_STATS_ACCURATE
    marks are the caller's to change."""
    if owner_ids and columns:
        table = level.stats.__table__
        owners_ = level.stats_owner().in_(owner_ids)
        s.execute(delete(table).where(owners_, table.c.COLUMN_NAME.in_(columns)))


def rename_table(s: Session, tbl_id: int, db_name: str, table_name: str) -> None:
    """Name table TBL_ID DB_NAME.TABLE_NAME in its statistics rows and its partitions' (the
    names HMS finds them by)."""
    for level in (TABLE_LEVEL, PARTITION_LEVEL):
        model = level.stats
        owners_of_table = (
            model.TBL_ID == tbl_id  # type: ignore[union-attr]
            if level is TABLE_LEVEL
            else model.PART_ID.in_(  # type: ignore[union-attr]
                select(m.Partition.PART_ID).where(m.Partition.TBL_ID == tbl_id)
            )
        )
        s.execute(
            update(model).where(owners_of_table).values(DB_NAME=db_name, TABLE_NAME=table_name)
        )


def rename_partition(s: Session, part_id: int, part_name: str) -> None:
    """Name partition PART_ID PART_NAME in its statistics rows."""
    s.execute(
        update(m.PartitionColumnStats)
        .where(m.PartitionColumnStats.PART_ID == part_id)
        .values(PARTITION_NAME=part_name)
    )
