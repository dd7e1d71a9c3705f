"""Queries on the statistics tables (TAB_COL_STATS, PART_COL_STATS): bulk upserts, deletes, and
the one-query reads of the batch calls. Every function runs inside the caller's transaction."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ARRAY,
    CursorResult,
    Row,
    String,
    Text,
    bindparam,
    case,
    cast,
    delete,
    func,
    select,
    true,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import KeyedColumnElement

from metastore.stats.rows import (
    BIT_VECTOR,
    HISTOGRAM,
    KEPT_WHEN_UNSET,
    STATS_COLUMNS,
    StatsRow,
    as_stats_row,
)
from metastore.store import lists
from metastore.store import models as m
from metastore.store.driver import driver_execute, driver_rows

if TYPE_CHECKING:
    from metastore.store.transactions import Transactions

StatsModel = type[m.TableColumnStats] | type[m.PartitionColumnStats]


@dataclasses.dataclass(frozen=True)
class StatsLevel:
    """One level of column statistics: a table's (TAB_COL_STATS, TABLE_PARAMS, owned by a
    TBL_ID) or a partition's (PART_COL_STATS, PARTITION_PARAMS, owned by a PART_ID)."""

    name: str
    stats: StatsModel
    params: type[m.TableParam] | type[m.PartitionParam]
    owner: str
    """The owner id column of both tables, TBL_ID or PART_ID."""
    owner_names: tuple[str, ...]
    """The columns that name the owner as HMS finds it (models.ColumnStatsMixin)."""

    def stats_owner(self) -> KeyedColumnElement[int]:
        """The owner id column of the statistics table."""
        return self.stats.__table__.c[self.owner]


_TABLE_NAMES = ("CAT_NAME", "DB_NAME", "TABLE_NAME")
TABLE_LEVEL = StatsLevel("table", m.TableColumnStats, m.TableParam, "TBL_ID", _TABLE_NAMES)
PARTITION_LEVEL = StatsLevel(
    "partition",
    m.PartitionColumnStats,
    m.PartitionParam,
    "PART_ID",
    (*_TABLE_NAMES, "PARTITION_NAME"),
)


def upsert_stats(
    s: Session,
    level: StatsLevel,
    rows: Sequence[tuple[int, StatsRow]],
    owner_names: Mapping[int, Sequence[str]],
    *,
    keep_unset: bool = True,
) -> None:
    """Insert or update statistics rows (each with its owner's id) in bulk, with one upsert
    statement. OWNER_NAMES gives each owner's names (level.owner_names: catalog, database,
    table and, for a partition, its name), written into its rows as HMS keeps them.

    Rows are keyed by (owner id, COLUMN_NAME, ENGINE). On a conflict the set fields replace
    the stored ones; with KEEP_UNSET, unset (None) fields keep the stored value unless the
    kind of statistics changed, otherwise the row is replaced whole. COLUMN_TYPE is kept,
    as in HMS.

    PostgreSQL gets every row in one statement that reads one array per column
    (INSERT ... SELECT unnest(...)), each passed as its text (lists.array_text); SQLite runs
    one compiled statement over the rows with the driver's executemany (in-process, so there
    are no round trips to save). Both run on the driver (metastore.store.driver), without
    per-row or per-statement work in SQLAlchemy, which costs more than the database does,
    for the 20,000 rows of a batch as for the 10 of a per-call write.
    """
    if not rows:
        return
    owner = level.owner
    # One order for every writer, so that two calls that upsert the same rows lock them in
    # the same order and cannot deadlock.
    ordered = sorted(rows, key=lambda r: (r[0], r[1]["COLUMN_NAME"], r[1]["ENGINE"]))
    plain: list[Mapping[str, Any]] = [
        {owner: owner_id, **dict(zip(level.owner_names, owner_names[owner_id], strict=True)), **row}
        for owner_id, row in ordered
    ]
    dialect = s.get_bind().dialect.name
    if dialect == "postgresql":
        columns = [owner, *level.owner_names, *STATS_COLUMNS]
        arrays = {c: lists.array_text(row[c] for row in plain) for c in columns}
        driver_execute(s, _postgres_upsert(level, keep_unset), arrays)
    elif dialect == "sqlite":
        driver_execute(s, _sqlite_upsert(level, keep_unset), plain)
    else:
        raise NotImplementedError(f"upserts are not implemented for {dialect}")


# The upserts are built once per level and mode: building and compiling an INSERT ... ON
# CONFLICT of 20 columns costs more than running it for the rows of a call.


@functools.cache
def _postgres_upsert(level: StatsLevel, keep_unset: bool) -> Any:
    """INSERT ... SELECT unnest(...) ON CONFLICT ..., one array parameter per column."""
    table = level.stats.__table__
    columns = [level.owner, *level.owner_names, *STATS_COLUMNS]
    source = select(*[func.unnest(_array_param(c, table.c[c].type)) for c in columns])
    return _on_conflict(level, postgresql.insert(table).from_select(columns, source), keep_unset)


@functools.cache
def _sqlite_upsert(level: StatsLevel, keep_unset: bool) -> Any:
    """INSERT ... VALUES (one row) ON CONFLICT ..., run over the rows by executemany."""
    table = level.stats.__table__
    columns = [level.owner, *level.owner_names, *STATS_COLUMNS]
    return _on_conflict(
        level, sqlite.insert(table).values({c: bindparam(c) for c in columns}), keep_unset
    )


def _array_param(name: str, item_type: Any) -> Any:
    """A bound array of one column's values, cast to the column's type in the SQL: the
    parameter itself is untyped, so that psycopg 3 adds no cast of its own (the statement
    stays under the 4,096 characters below which psycopg parses a statement once, not on
    every call). Text arrays are TEXT[], not VARCHAR(n)[]: a cast to VARCHAR(n) would cut
    longer values short where the INSERT refuses them."""
    if isinstance(item_type, String):
        item_type = Text()
    return cast(bindparam(name), ARRAY(item_type))


def _on_conflict(level: StatsLevel, stmt: Any, keep_unset: bool) -> Any:
    """The upsert of STMT: a statistic the new row leaves unset keeps its stored value when
    KEEP_UNSET and the row is of the same kind (coalesce(new, CASE WHEN same kind THEN old
    END): the old value, or NULL for another kind)."""
    table = level.stats.__table__
    same_kind = table.c.STATS_KIND == stmt.excluded.STATS_KIND
    updates: dict[str, Any] = {
        "STATS_KIND": stmt.excluded.STATS_KIND,
        "NUM_NULLS": stmt.excluded.NUM_NULLS,
        "LAST_ANALYZED": stmt.excluded.LAST_ANALYZED,
        **{name: stmt.excluded[name] for name in level.owner_names},
    }
    for col in KEPT_WHEN_UNSET:
        new, old = stmt.excluded[col], table.c[col]
        updates[col] = func.coalesce(new, case((same_kind, old))) if keep_unset else new
    return stmt.on_conflict_do_update(
        index_elements=[level.owner, "COLUMN_NAME", "ENGINE"], set_=updates
    )


def delete_stats(
    s: Session, level: StatsLevel, owner_id: int, column_name: str | None, engine: str | None
) -> int:
    """Delete statistics of one owner: one column or all, one engine or all. Returns rows."""
    model = level.stats
    stmt = delete(model).where(level.stats_owner() == owner_id)
    if column_name is not None:
        stmt = stmt.where(model.COLUMN_NAME == column_name)
    if engine is not None:
        stmt = stmt.where(model.ENGINE == engine)
    result: CursorResult[Any] = s.connection().execute(stmt)
    return result.rowcount


def _stats_columns(model: StatsModel) -> list[Any]:
    return [model.__table__.c[name] for name in STATS_COLUMNS]


@functools.cache
def _table_stats_query() -> Select[Any]:
    """Built once: constructing a SELECT costs more than running it for a 20-column read."""
    c = m.TableColumnStats
    return (
        select(*_stats_columns(c))
        .select_from(c)
        .join(m.Table, m.Table.TBL_ID == c.TBL_ID)
        .join(m.Database, m.Database.DB_ID == m.Table.DB_ID)
        .where(
            m.Database.CTLG_NAME == bindparam("catalog"),
            m.Database.NAME == bindparam("db"),
            m.Table.TBL_NAME == bindparam("table"),
            c.ENGINE == bindparam("engine"),
            c.COLUMN_NAME.in_(bindparam("columns", expanding=True)),
        )
        .order_by(c.COLUMN_NAME)
    )


def table_stats_by_name(
    s: Session, catalog: str, db: str, table: str, columns: Sequence[str], engine: str
) -> Sequence[Row[Any]]:
    """Statistics rows of some columns of a table, found by names, in one query."""
    if not columns:
        return []
    params = {"catalog": catalog, "db": db, "table": table, "engine": engine}
    return s.connection().execute(_table_stats_query(), {**params, "columns": columns}).all()


@functools.cache
def _partition_stats_query(dialect: str, with_row_counts: bool) -> Select[Any]:
    """The statement of `partition_stats_by_name` for DIALECT, run on the driver, without
    SQLAlchemy's processing of result rows (a day's read, 25 partitions x 10 columns, on
    PostgreSQL in process: 1.39-1.60 ms through it, 1.20-1.24 ms without). The lists of
    partition and column names are one parameter each (metastore.store.lists), so that its
    text is the same whatever their lengths: through psycopg 3, which prepares a statement
    run five times, PostgreSQL plans it once per connection, where one parameter per name
    made a text for every number of names, planned anew until run five times (0.34-0.41 ms
    of planning for the joins)."""
    c = m.PartitionColumnStats.__table__.c
    p, t, d = m.Partition.__table__.c, m.Table.__table__.c, m.Database.__table__.c
    query = (
        select(p.PART_NAME, *_stats_columns(m.PartitionColumnStats))
        .select_from(m.PartitionColumnStats.__table__)
        .join(m.Partition.__table__, p.PART_ID == c.PART_ID)
        .join(m.Table.__table__, t.TBL_ID == p.TBL_ID)
        .join(m.Database.__table__, d.DB_ID == t.DB_ID)
        .where(
            d.CTLG_NAME == bindparam("catalog"),
            d.NAME == bindparam("db"),
            t.TBL_NAME == bindparam("table"),
            lists.any_of(dialect, "parts", text=True)(p.PART_NAME),
            c.ENGINE == bindparam("engine"),
            lists.any_of(dialect, "columns", text=True)(c.COLUMN_NAME),
        )
        .order_by(p.PART_NAME, c.COLUMN_NAME)
    )
    return _with_row_counts(query, p) if with_row_counts else query


def _with_row_counts(query: Select[Any], p: Any) -> Select[Any]:
    """QUERY with each partition's numRows as NUM_ROWS, P the columns of PARTITIONS.

    A join, not a subquery among the selected columns, which runs once per row of the
    result (each of a partition's columns): a read of 1,000 partitions x 20 columns on
    SQLite took 49.5-49.7 ms with the subquery, 43.4-45.3 ms with the join."""
    params = m.PartitionParam.__table__.c
    return query.add_columns(params.PARAM_VALUE.label("NUM_ROWS")).outerjoin(
        m.PartitionParam.__table__,
        (params.PART_ID == p.PART_ID) & (params.PARAM_KEY == "numRows"),
    )


PARTITION_STATS_FIELDS = ("PART_NAME", *STATS_COLUMNS, "NUM_ROWS")
"""The fields of a row of `partition_stats_by_name`, in order (NUM_ROWS only with row
counts)."""


def partition_stats_by_name(
    s: Session,
    catalog: str,
    db: str,
    table: str,
    part_names: Sequence[str],
    columns: Sequence[str],
    engine: str,
    *,
    with_row_counts: bool = False,
) -> list[tuple[Any, ...]]:
    """Statistics rows of some columns of some partitions, found by names, in one statement
    on the driver, ordered by partition and column name: PARTITION_STATS_FIELDS, NUM_ROWS
    (the partition's numRows parameter, text or None) only when WITH_ROW_COUNTS."""
    if not columns or not part_names:
        return []
    dialect = s.get_bind().dialect.name
    params = {
        "catalog": catalog,
        "db": db,
        "table": table,
        "engine": engine,
        "parts": lists.values(dialect, part_names),
        "columns": lists.values(dialect, columns),
    }
    rows = driver_rows(s, _partition_stats_query(dialect, with_row_counts), params)
    return [_with_bytes(row, start=1) for row in rows]


def stats_rows(
    s: Session,
    level: StatsLevel,
    owner_ids: Sequence[int],
    columns: Sequence[str] | None,
    engine: str,
) -> list[tuple[int, StatsRow]]:
    """Stored rows of the owners' COLUMNS (all when None), each with its owner's id: one
    statement built once, run on the driver (it is on the path of every table read)."""
    if not owner_ids or (columns is not None and not columns):
        return []
    dialect = s.get_bind().dialect.name
    params: dict[str, Any] = {"owners": lists.values(dialect, owner_ids), "engine": engine}
    if columns is not None:
        params["columns"] = lists.values(dialect, columns)
    query = _stats_rows_query(level, dialect, columns is not None)
    return [(r[0], as_stats_row(_with_bytes(r[1:]))) for r in driver_rows(s, query, params)]


def table_stats_rows(rows: Sequence[Sequence[Any]]) -> list[StatsRow]:
    """The StatsRows of ROWS read on the driver with STATS_COLUMNS in that order
    (metastore.store.partition_rows.table_row reads them with the table)."""
    return [as_stats_row(_with_bytes(tuple(row))) for row in rows]


def _with_bytes(row: tuple[Any, ...], start: int = 0) -> tuple[Any, ...]:
    """ROW, whose STATS_COLUMNS begin at START, with its sketches as bytes: psycopg2 gives
    bytea as memoryview. ROW itself when it has none (SQLite, psycopg 3)."""
    if not isinstance(row[start + BIT_VECTOR], memoryview) and not isinstance(
        row[start + HISTOGRAM], memoryview
    ):
        return row
    out = list(row)
    for at in (start + BIT_VECTOR, start + HISTOGRAM):
        if isinstance(out[at], memoryview):
            out[at] = bytes(out[at])
    return tuple(out)


@functools.cache
def _stats_rows_query(level: StatsLevel, dialect: str, by_column: bool) -> Select[Any]:
    """The statement of `stats_rows` for LEVEL on DIALECT, with or without a list of
    columns."""
    model = level.stats
    owner = level.stats_owner()
    query = select(owner, *_stats_columns(model)).where(
        lists.among(dialect, "owners")(owner), model.ENGINE == bindparam("engine")
    )
    if by_column:
        column_name = model.__table__.c.COLUMN_NAME
        query = query.where(lists.among(dialect, "columns", text=True)(column_name))
    return query


def partition_stats_changed_since(
    tx: Transactions,
    table: tuple[str, str, str],
    tbl_id: int,
    since: int,
    columns: Sequence[str],
    engine: str,
    *,
    with_row_counts: bool = False,
) -> list[tuple[Any, ...]]:
    """The versions of TABLE (catalog, database, name, as stored) and what changed in its
    partitions (their statistics, or an alter) since its version SINCE when it is the
    table TBL_ID, in one statement outside a transaction (Transactions.query): the table's
    TBL_ID, VERSION, PARTS_VERSION and SEEN_VERSION (metastore.store.versions; None for a
    table without versions), then the PART_ID and version of a partition whose version is
    above SINCE, its STATS_COLUMNS of COLUMNS for ENGINE and, with WITH_ROW_COUNTS, its
    numRows parameter; ordered by partition id and column name. A changed partition without
    such rows has one row whose COLUMN_NAME is None; the table's versions alone (the rest
    None) when no partition changed or the table is no longer TBL_ID; no row when there is
    no such table.

    The table is found by name, as the call's read of its version finds it
    (metastore.store.versions.read), so that this one statement is that read too: a read
    after a write takes no other."""
    catalog, db, name = table
    dialect = tx.engine.dialect.name
    params = {
        "catalog": catalog,
        "db": db,
        "table": name,
        "tbl": tbl_id,
        "since": since,
        "engine": engine,
        "columns": lists.values(dialect, columns),
    }
    query = _changed_since_query(dialect, with_row_counts)
    return [_with_bytes(row, start=6) for row in tx.query(query, params)]


@functools.cache
def _changed_since_query(dialect: str, with_row_counts: bool) -> Select[Any]:
    """The statement of `partition_stats_changed_since` for DIALECT. On PostgreSQL the
    statistics and row counts are joined LATERAL to the changed partitions, each subquery
    kept apart by OFFSET 0 (which the planner does not flatten into one join): a plan made
    once for every call (metastore.store.transactions) cannot tell that few partitions
    changed, and hashed every statistics row of the database instead of finding those of
    the changed partitions by index (4 ms for a table of 200 partitions x 20 columns). The
    partitions are not looked at when the table's version is not above SINCE or the table
    is not TBL_ID (on PostgreSQL a one-time filter of the subquery; SQLite reads the
    changed partitions of TBL_ID, and joins them to the table found by name only when it
    is TBL_ID)."""
    stats, p = m.PartitionColumnStats.__table__, m.Partition.__table__
    c, params = stats.c, m.PartitionParam.__table__.c
    pv, tv = m.PartitionVersion.__table__, m.TableVersion.__table__
    t, d = m.Table.__table__, m.Database.__table__
    of_columns = lists.any_of(dialect, "columns", text=True)(c.COLUMN_NAME)
    by_name = (
        d.c.CTLG_NAME == bindparam("catalog"),
        d.c.NAME == bindparam("db"),
        t.c.TBL_NAME == bindparam("table"),
    )
    versions = (t.c.TBL_ID, tv.c.VERSION, tv.c.PARTS_VERSION, tv.c.SEEN_VERSION)
    table = (
        select(*versions)
        .select_from(t)
        .join(d, d.c.DB_ID == t.c.DB_ID)
        .outerjoin(tv, tv.c.TBL_ID == t.c.TBL_ID)
    )
    if dialect == "postgresql":
        changed: Any = (
            select(p.c.PART_ID, pv.c.VERSION.label("PART_VERSION"))
            .join(pv, pv.c.PART_ID == p.c.PART_ID)
            .where(
                tv.c.VERSION > bindparam("since"),
                t.c.TBL_ID == bindparam("tbl"),
                p.c.TBL_ID == t.c.TBL_ID,
                pv.c.VERSION > bindparam("since"),
            )
            .offset(0)
            .lateral("changed")
        )
        rows: Any = (
            select(*_stats_columns(m.PartitionColumnStats))
            .where(
                c.PART_ID == changed.c.PART_ID,
                c.ENGINE == bindparam("engine"),
                of_columns,
            )
            .offset(0)
            .lateral("rows")
        )
        counts: Any = (
            select(params.PARAM_VALUE.label("NUM_ROWS"))
            .where(params.PART_ID == changed.c.PART_ID, params.PARAM_KEY == "numRows")
            .offset(0)
            .lateral("counts")
        )
        query = (
            table.add_columns(changed.c.PART_ID, changed.c.PART_VERSION, *rows.c)
            .outerjoin(changed, true())
            .outerjoin(rows, true())
            .where(*by_name)
            .order_by(changed.c.PART_ID, rows.c.COLUMN_NAME)
        )
        return (
            query.add_columns(counts.c.NUM_ROWS).outerjoin(counts, true())
            if (with_row_counts)
            else query
        )
    moved = tv.alias("moved")
    changed = (
        select(
            p.c.PART_ID,
            pv.c.VERSION.label("PART_VERSION"),
            *_stats_columns(m.PartitionColumnStats),
        )
        .select_from(moved)
        .join(p, (p.c.TBL_ID == moved.c.TBL_ID) & (moved.c.VERSION > bindparam("since")))
        .join(pv, (pv.c.PART_ID == p.c.PART_ID) & (pv.c.VERSION > bindparam("since")))
        .outerjoin(
            stats, (c.PART_ID == p.c.PART_ID) & (c.ENGINE == bindparam("engine")) & of_columns
        )
        .where(moved.c.TBL_ID == bindparam("tbl"))
    )
    if with_row_counts:
        changed = _with_row_counts(changed, p.c)
    found = changed.subquery("changed")
    return (
        table.add_columns(*found.c)
        .outerjoin(found, t.c.TBL_ID == bindparam("tbl"))
        .where(*by_name)
        .order_by(found.c.PART_ID, found.c.COLUMN_NAME)
    )


def partition_stats_with_versions(
    s: Session,
    catalog: str,
    db: str,
    table: str,
    part_names: Sequence[str],
    columns: Sequence[str],
    engine: str,
    *,
    with_row_counts: bool = False,
) -> list[tuple[Any, ...]]:
    """The statistics of some columns of some partitions, found by names, with the versions
    they were read at, in one statement on the driver, ordered by partition and column name:
    PART_NAME, PART_ID, the partition's version (None for none), TBL_ID, the table's
    VERSION, PARTS_VERSION and SEEN_VERSION (metastore.store.versions), the STATS_COLUMNS
    and, with WITH_ROW_COUNTS, the partition's numRows parameter. A partition without such
    statistics has one row whose COLUMN_NAME is None; no row when none of the partitions
    exists."""
    dialect = s.get_bind().dialect.name
    params = {
        "catalog": catalog,
        "db": db,
        "table": table,
        "engine": engine,
        "parts": lists.values(dialect, part_names),
        "columns": lists.values(dialect, columns),
    }
    query = _with_versions_query(dialect, with_row_counts)
    return [_with_bytes(row, start=7) for row in driver_rows(s, query, params)]


@functools.cache
def _with_versions_query(dialect: str, with_row_counts: bool) -> Select[Any]:
    stats = m.PartitionColumnStats.__table__
    c, p = stats.c, m.Partition.__table__.c
    t, d = m.Table.__table__.c, m.Database.__table__.c
    pv, tv = m.PartitionVersion.__table__, m.TableVersion.__table__
    query = (
        select(
            p.PART_NAME,
            p.PART_ID,
            pv.c.VERSION,
            t.TBL_ID,
            tv.c.VERSION,
            tv.c.PARTS_VERSION,
            tv.c.SEEN_VERSION,
            *_stats_columns(m.PartitionColumnStats),
        )
        .select_from(m.Partition.__table__)
        .join(m.Table.__table__, t.TBL_ID == p.TBL_ID)
        .join(m.Database.__table__, d.DB_ID == t.DB_ID)
        .outerjoin(tv, tv.c.TBL_ID == t.TBL_ID)
        .outerjoin(pv, pv.c.PART_ID == p.PART_ID)
        .outerjoin(
            stats,
            (c.PART_ID == p.PART_ID)
            & (c.ENGINE == bindparam("engine"))
            & lists.any_of(dialect, "columns", text=True)(c.COLUMN_NAME),
        )
        .where(
            d.CTLG_NAME == bindparam("catalog"),
            d.NAME == bindparam("db"),
            t.TBL_NAME == bindparam("table"),
            lists.any_of(dialect, "parts", text=True)(p.PART_NAME),
        )
        .order_by(p.PART_NAME, c.COLUMN_NAME)
    )
    return _with_row_counts(query, p) if with_row_counts else query
