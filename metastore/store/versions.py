"""Table versions: a number per table (TBL_VERSIONS) that every change to the table, its
columns, partitions, parameters or statistics moves, in the transaction of the change, so
that a cache of answers can tell in one statement whether what it holds is current.

How a change moves them: every table a changing transaction looks up (metastore.store.lookup)
or creates is marked (`touch`); just before the transaction commits, `bump` gives each
marked table that still exists a new version, in one statement. A failed change is rolled
back with its bump; a dropped table's version goes with it (a foreign-key cascade).

Versions are never reused, for any table id: each bump draws a value from one source for
all tables (PostgreSQL's sequence TBL_VERSION_SEQ, which takes no lock, or SQLite's
TBL_VERSION_COUNTER row; SQLite runs one writer at a time), and a table's version only
grows (the larger of its version + 1 and the drawn value). So a pair (TBL_ID, VERSION)
names one state of one table, even where SQLite gives a dropped table's id to a new one,
and of two versions of a table the larger is the newer.

Partitions (schema 0008): a change that keeps the names of a table's partitions and changes
only some of them (a write of statistics, an alter of partitions) marks those it changes
(`touch_partitions`), and its bump gives them the table's new version (PART_VERSIONS)
without moving the table's PARTS_VERSION; every other change to a table (an add, drop or
rename of partitions, a change of the table itself) sets PARTS_VERSION to the new version.
So what a partition holds (its rows, parameters, storage and statistics) read at
(PARTS_VERSION, the partition's version) is current while both are: an answer over many
partitions re-reads only the partitions whose version moved. Each bump also sets
SEEN_VERSION to the new version; a table whose VERSION differs from its SEEN_VERSION was
last changed by another writer (a server older than 0008, HMS's triggers in an adopted
database), which moves no partition versions: its partitions' versions are not used until
colstats changes it again, which then moves PARTS_VERSION too.

Two changes move their table's versions in their own statement instead of `bump`, each as
`bump` would: a per-call write of statistics on PostgreSQL (the functions of schemas 0009
and 0010, metastore.stats.one_statement), and an add of partitions on PostgreSQL
(metastore.store.partition_add, which then unmarks its table: `moved`).

Changes made with SQL outside colstats move no version: run such changes with the servers
stopped (their caches are in memory), or restart them afterwards.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from sqlalchemy import (
    BigInteger,
    CompoundSelect,
    Select,
    and_,
    bindparam,
    case,
    func,
    not_,
    select,
    union_all,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ClauseElement

from metastore.store import lists
from metastore.store import models as m
from metastore.store.driver import driver_execute, driver_rows


class Queries(Protocol):
    """What `read` runs its statement with: store.transactions.Transactions."""

    def query(self, statement: ClauseElement, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of one read STATEMENT with PARAMS, outside a transaction."""
        ...


_TOUCHED = "colstats_touched_tables"
_PARTITIONS = "colstats_touched_partitions"
_CHANGE = "colstats_change"


def begin(s: Session, *, write: bool) -> None:
    """Mark the transaction of S as a change (WRITE) or a read: lookups in a change mark
    the tables they find."""
    s.info[_CHANGE] = write


def touch(s: Session, tbl_id: int) -> None:
    """Mark table TBL_ID as changed by the transaction of S, when it is a change: any of
    its partitions may have changed (its PARTS_VERSION moves)."""
    if s.info.get(_CHANGE):
        s.info.setdefault(_TOUCHED, set()).add(tbl_id)


def touch_partitions(s: Session, tbl_id: int, part_ids: Iterable[int]) -> None:
    """Mark table TBL_ID as changed by the transaction of S, when it is a change, in
    partitions PART_IDS only, their names kept (none: in its own statistics): their
    versions move, its PARTS_VERSION does not (unless something else touches it)."""
    if s.info.get(_CHANGE):
        s.info.setdefault(_PARTITIONS, {}).setdefault(tbl_id, set()).update(part_ids)


def moved(s: Session, tbl_id: int) -> None:
    """Unmark table TBL_ID: the transaction of S gave it a new version (moving its
    PARTS_VERSION) in the statement of its change, which changes nothing of it afterwards
    (metastore.store.partition_add)."""
    s.info.get(_TOUCHED, set()).discard(tbl_id)
    s.info.get(_PARTITIONS, {}).pop(tbl_id, None)


def bump(s: Session) -> None:
    """Give every table the transaction of S touched and that still exists a new version,
    and the partitions it touched theirs (see the module docstring); nothing when it touched
    none. On the driver (metastore.store.driver): it ends every change."""
    broad: set[int] = s.info.pop(_TOUCHED, set())
    narrow: dict[int, set[int]] = s.info.pop(_PARTITIONS, {})
    touched = sorted(broad | narrow.keys())
    if not touched:
        return
    parts = sorted(p for tbl_id, ids in narrow.items() if tbl_id not in broad for p in ids)
    dialect = s.get_bind().dialect.name
    params: dict[str, Any] = {
        "ids": lists.values(dialect, touched),
        "broad": lists.values(dialect, broad),
    }
    if dialect != "postgresql":
        params["drawn"] = _draw_sqlite(s)
        driver_execute(s, _bump_statement(dialect), params)
        if parts:
            params["parts"] = lists.values(dialect, parts)
            driver_execute(s, _partitions_statement(dialect), params)
        return
    if parts:
        params["parts"] = lists.values(dialect, parts)
        driver_execute(s, _bump_with_partitions_statement(), params)
    else:
        driver_execute(s, _bump_statement(dialect), params)


def _table_upsert(dialect: str) -> Any:
    """The upsert of a table's versions for DIALECT: the tables of parameter `ids` that exist
    get the larger of their version + 1 and the drawn value (PostgreSQL's sequence; on
    SQLite, parameter `drawn`), in id order, so that two transactions lock the version rows
    in one order; SEEN_VERSION becomes that version, and so does PARTS_VERSION for the
    tables of parameter `broad`, for a table first given a version, and for one whose
    version another writer moved (VERSION is not SEEN_VERSION)."""
    tables, versions = m.Table.__table__, m.TableVersion.__table__
    insert: Any = (
        postgresql.insert(versions) if dialect == "postgresql" else sqlite.insert(versions)
    )
    if dialect == "postgresql":
        drawn: Any = m.VERSION_SEQUENCE.next_value()
        larger: Any = func.greatest
    else:
        drawn, larger = bindparam("drawn", type_=BigInteger), func.max
    source = (
        select(tables.c.TBL_ID, drawn, drawn, drawn)
        .where(lists.among(dialect, "ids")(tables.c.TBL_ID))
        .order_by(tables.c.TBL_ID)
    )
    insert = insert.from_select(["TBL_ID", "VERSION", "PARTS_VERSION", "SEEN_VERSION"], source)
    new_version = larger(versions.c.VERSION + 1, insert.excluded.VERSION)
    v = versions.c
    keep_parts = and_(
        not_(lists.among(dialect, "broad")(v.TBL_ID)),
        v.SEEN_VERSION.is_not(None),
        v.SEEN_VERSION == v.VERSION,
    )
    return insert.on_conflict_do_update(
        index_elements=["TBL_ID"],
        set_={
            "VERSION": new_version,
            "PARTS_VERSION": case((keep_parts, v.PARTS_VERSION), else_=new_version),
            "SEEN_VERSION": new_version,
        },
    )


@functools.cache
def _bump_statement(dialect: str) -> Any:
    """The statement of `bump` for DIALECT when it moves no partition's version (on SQLite,
    always: `_partitions_statement` follows it)."""
    return _table_upsert(dialect)


@functools.cache
def _partitions_statement(dialect: str) -> Any:
    """SQLite's upsert of the versions of the partitions of parameter `parts` that exist:
    their table's version, just given."""
    p, tv, pv = m.Partition.__table__, m.TableVersion.__table__, m.PartitionVersion.__table__
    insert: Any = sqlite.insert(pv)
    source = (
        select(p.c.PART_ID, tv.c.VERSION)
        .join(tv, tv.c.TBL_ID == p.c.TBL_ID)
        .where(lists.among(dialect, "parts")(p.c.PART_ID))
        .order_by(p.c.PART_ID)
    )
    insert = insert.from_select(["PART_ID", "VERSION"], source)
    return insert.on_conflict_do_update(
        index_elements=["PART_ID"], set_={"VERSION": insert.excluded.VERSION}
    )


@functools.cache
def _bump_with_partitions_statement() -> Any:
    """PostgreSQL's `bump` that moves the versions of partitions too, in one statement: the
    tables' upsert, and the partitions' from the versions it returns."""
    p, pv = m.Partition.__table__, m.PartitionVersion.__table__
    tables = (
        _table_upsert("postgresql")
        .returning(m.TableVersion.__table__.c.TBL_ID, m.TableVersion.__table__.c.VERSION)
        .cte("bumped")
    )
    insert: Any = postgresql.insert(pv)
    source = (
        select(p.c.PART_ID, tables.c.VERSION)
        .join(tables, tables.c.TBL_ID == p.c.TBL_ID)
        .where(lists.among("postgresql", "parts")(p.c.PART_ID))
        .order_by(p.c.PART_ID)
    )
    insert = insert.from_select(["PART_ID", "VERSION"], source)
    return insert.on_conflict_do_update(
        index_elements=["PART_ID"], set_={"VERSION": insert.excluded.VERSION}
    ).add_cte(tables)


_DRAW = (
    update(m.VersionCounter.__table__)
    .values(NEXT_VERSION=m.VersionCounter.__table__.c.NEXT_VERSION + 1)
    .returning(m.VersionCounter.__table__.c.NEXT_VERSION - 1)
)


def _draw_sqlite(s: Session) -> int:
    """The next value of SQLite's version counter, taken."""
    rows = driver_rows(s, _DRAW, {})
    if not rows:  # the row is missing (removed by hand): start above every version
        drawn = (s.scalar(select(func.max(m.TableVersion.VERSION))) or 0) + 1
        s.execute(m.VersionCounter.__table__.insert(), {"ID": 1, "NEXT_VERSION": drawn + 1})
        return int(drawn)
    return int(rows[0][0])


TableName = tuple[str, str, str]
"""(catalog, database, table), as stored (lower case)."""


def read(tx: Queries, tables: Iterable[TableName]) -> dict[TableName, tuple[int, int | None]]:
    """The (TBL_ID, VERSION) of each of TABLES that exists, in one statement outside a
    transaction; VERSION is None for a table without one (created by a server older than
    schema 0005: it gets one at its next change)."""
    by_database: dict[tuple[str, str], list[str]] = {}
    for catalog, db_name, table_name in sorted(set(tables)):
        by_database.setdefault((catalog, db_name), []).append(table_name)
    if not by_database:
        return {}
    shape = tuple(len(names) for names in by_database.values())
    params: dict[str, str] = {}
    for i, ((catalog, db_name), names) in enumerate(by_database.items()):
        params[f"catalog{i}"], params[f"db{i}"] = catalog, db_name
        params.update({f"table{i}_{j}": name for j, name in enumerate(names)})
    rows = tx.query(read_statement(shape), params)
    return {(cat, db, name): (tbl_id, version) for cat, db, name, tbl_id, version in rows}


@functools.lru_cache(maxsize=64)
def read_statement(shape: tuple[int, ...]) -> Select[Any] | CompoundSelect[Any]:
    """The statement of `read` for tables of len(SHAPE) databases, SHAPE[i] of the i-th
    (parameters catalogI, dbI and tableI_J): a SELECT per database, each finding its tables
    through the unique indexes of DBS and TBLS (a row-value IN of several (catalog,
    database, table) triples makes SQLite scan TBLS). Built once per shape."""
    d, t, v = m.Database.__table__.c, m.Table.__table__.c, m.TableVersion.__table__.c
    selects = [
        select(d.CTLG_NAME, d.NAME, t.TBL_NAME, t.TBL_ID, v.VERSION)
        .select_from(m.Table.__table__)
        .join(m.Database.__table__, d.DB_ID == t.DB_ID)
        .outerjoin(m.TableVersion.__table__, v.TBL_ID == t.TBL_ID)
        .where(
            d.CTLG_NAME == bindparam(f"catalog{i}"),
            d.NAME == bindparam(f"db{i}"),
            t.TBL_NAME.in_([bindparam(f"table{i}_{j}") for j in range(count)]),
        )
        for i, count in enumerate(shape)
    ]
    return selects[0] if len(selects) == 1 else union_all(*selects)


def catalog_version(s: Session, catalog: str) -> int:
    """A number that tells one state of the databases and tables of CATALOG from another,
    in one statement: a digest (below 2**63) of, for each database, its name, its number
    of tables, their largest version and how many of them have one.

    Why these suffice: a change to a table draws a version larger than every version drawn
    before, so it raises its database's largest version above anything seen; a drop lowers
    its database's number of tables; a database created or dropped changes the list of
    names. Two states with the same inputs hold the same tables at the same versions (a
    table created and dropped again leaves the catalog as it was, and its number). A
    digest, not a counter: DuckDB only compares the catalog's version with the one it
    holds."""
    d, t, v = m.Database.__table__.c, m.Table.__table__.c, m.TableVersion.__table__.c
    rows = s.connection().execute(
        select(d.NAME, func.count(t.TBL_ID), func.max(v.VERSION), func.count(v.VERSION))
        .select_from(m.Database.__table__)
        .outerjoin(m.Table.__table__, t.DB_ID == d.DB_ID)
        .outerjoin(m.TableVersion.__table__, v.TBL_ID == t.TBL_ID)
        .where(d.CTLG_NAME == catalog)
        .group_by(d.NAME)
        .order_by(d.NAME)
    )
    state = repr([tuple(row) for row in rows]).encode()
    return int.from_bytes(hashlib.blake2b(state, digest_size=8).digest(), "big") >> 1
