"""The table and the partitions a statistics write names, with what the write checks and
keeps beside the rows: their ids, the types of their columns, their COLUMN_STATS_ACCURATE.

Read on the driver (metastore.store.driver) in statements built once: the table with its
partition keys (one statement), then one partition with the columns of its column list (one
statement), or several partitions by name (one, whatever their number) and the columns of
their column lists (one; the partitions of a table mostly share the table's). A per-call
statistics write (Trino's ANALYZE writes each partition in a call of its own) so costs a
fixed, small number of statements, without ORM entities.

Concurrent writers of one table's statistics on PostgreSQL take turns: the table's statement
locks its row of TBLS (FOR NO KEY UPDATE: adding partitions, whose foreign key only shares
the row, goes on), so that each writer reads COLUMN_STATS_ACCURATE and the statistics it
merges with after the writer before it committed, and none drops another's columns from the
parameter. SQLite's writers run one at a time (BEGIN IMMEDIATE).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session

from metastore import names
from metastore.stats import accurate
from metastore.store import lists, lookup, versions
from metastore.store import models as m
from metastore.store.driver import driver_rows
from metastore.store.params import param_values


class TableOwner(NamedTuple):
    """A table that statistics are written for, as stored."""

    db_name: str
    tbl_id: int
    name: str
    cd_id: int | None
    """The column list of its storage descriptor (None without one)."""
    keys: list[str]
    """Its partition keys, in order."""
    accurate: str | None
    """Its COLUMN_STATS_ACCURATE (None when it has none) as read with it: see
    `table_accurate` for the value to change."""
    catalog: str

    def where(self) -> str:
        """How messages name it."""
        return f"{self.db_name}.{self.name}"


class PartitionOwner(NamedTuple):
    """A partition that statistics are written for."""

    part_id: int
    cd_id: int | None
    accurate: str | None


def table(
    s: Session, db_arg: str | None, table_name: str | None, catalog: str | None
) -> TableOwner:
    """Table TABLE_NAME of database DB_ARG (named as for lookup.table, whose errors a missing
    one gets), marked as changed in its statistics by the transaction (versions.touch_partitions:
    `writes` marks the partitions it writes) and, on PostgreSQL, locked against other
    statistics writes until it ends."""
    cat, db_name = names.split_catalog(db_arg)
    if catalog:
        cat = names.identifier(catalog)
    params = {"catalog": cat, "db_name": names.identifier(db_name or ""), "key": accurate.KEY}
    params["table_name"] = names.identifier(table_name or "")
    rows = driver_rows(s, _table_query(), params) if db_name and table_name else []
    if not rows:
        lookup.table(s, db_arg, table_name, catalog)  # raises what is missing
        rows = driver_rows(s, _table_query(), params)  # created since the first statement
        if not rows:
            raise lookup.missing(f"table {params['db_name']}.{params['table_name']}")
    db, tbl_id, name, cd_id, stored, _ = rows[0]
    versions.touch_partitions(s, tbl_id, ())  # its statistics, and those of partitions named
    keys = [row[5] for row in rows if row[5] is not None]
    return TableOwner(db, tbl_id, name, cd_id, keys, stored, cat)


@functools.cache
def _table_query() -> Select[Any]:
    d, t, sd = m.Database.__table__.c, m.Table.__table__.c, m.StorageDescriptor.__table__.c
    params, keys = m.TableParam.__table__.c, m.PartitionKey.__table__.c
    return (
        select(d.NAME, t.TBL_ID, t.TBL_NAME, sd.CD_ID, params.PARAM_VALUE, keys.PKEY_NAME)
        .select_from(m.Table.__table__)
        .join(m.Database.__table__, d.DB_ID == t.DB_ID)
        .outerjoin(m.StorageDescriptor.__table__, sd.SD_ID == t.SD_ID)
        .outerjoin(
            m.TableParam.__table__,
            (params.TBL_ID == t.TBL_ID) & (params.PARAM_KEY == bindparam("key")),
        )
        .outerjoin(m.PartitionKey.__table__, keys.TBL_ID == t.TBL_ID)
        .where(
            d.CTLG_NAME == bindparam("catalog"),
            d.NAME == bindparam("db_name"),
            t.TBL_NAME == bindparam("table_name"),
        )
        .order_by(keys.INTEGER_IDX)
        .with_for_update(key_share=True, of=m.Table.__table__)  # nothing on SQLite
    )


def table_accurate(s: Session, table: TableOwner) -> str | None:
    """The COLUMN_STATS_ACCURATE of TABLE as committed by the writers before this one. On
    PostgreSQL, `table` may have waited for the lock of another writer, and then the rows it
    joined to the locked one are of the snapshot it began with (READ COMMITTED reads the
    locked row again, not the others): the parameter is read again, in a statement of its
    own. On SQLite the value read with the table is current."""
    if s.get_bind().dialect.name == "sqlite":
        return table.accurate
    return param_values(s, m.TableParam, [table.tbl_id], accurate.KEY).get(table.tbl_id)


def partitions(
    s: Session, tbl_id: int, part_names: Sequence[str]
) -> tuple[dict[str, PartitionOwner], dict[int, dict[str, str]]]:
    """The partitions of table TBL_ID named PART_NAMES (as stored) that exist, by name, and
    the columns of their column lists (as `column_types`).

    One partition, as a per-call write names, is read with its columns in one statement:
    on PostgreSQL that spares a round trip, and its plan, which does not depend on how
    many names there are, is planned once for every call (a list of names is planned again
    for its length at every call). Several are read in two statements, so that the
    columns a table's partitions share are read once, not once per partition."""
    if not part_names:
        return {}, {}
    dialect = s.get_bind().dialect.name
    if len(part_names) == 1:
        params = {"tbl_id": tbl_id, "name": part_names[0], "key": accurate.KEY}
        found: dict[str, PartitionOwner] = {}
        types: dict[int, dict[str, str]] = {}
        for name, part_id, cd_id, stored, column, type_name in driver_rows(
            s, _partition_query(), params
        ):
            found[name] = PartitionOwner(part_id, cd_id, stored)
            if cd_id is not None:
                columns = types.setdefault(cd_id, {})
                if column is not None:
                    columns[column] = type_name or ""
        return found, types
    params = {"tbl_id": tbl_id, "names": lists.values(dialect, part_names), "key": accurate.KEY}
    rows = driver_rows(s, _partitions_query(dialect), params)
    found = {name: PartitionOwner(part_id, cd_id, stored) for name, part_id, cd_id, stored in rows}
    return found, column_types(s, (p.cd_id for p in found.values()))


def _accurate_of(p: Any) -> Any:
    """The COLUMN_STATS_ACCURATE of partition P (a subquery by primary key)."""
    params = m.PartitionParam.__table__.c
    return (
        select(params.PARAM_VALUE)
        .where(params.PART_ID == p.PART_ID, params.PARAM_KEY == bindparam("key"))
        .scalar_subquery()
    )


@functools.cache
def _partition_query() -> Select[Any]:
    """Partition `name` of table `tbl_id`, found through the index of (TBL_ID, PART_NAME),
    with a row for each column of its column list (one with no column when it has none)."""
    partitions, sds = m.Partition.__table__, m.StorageDescriptor.__table__
    columns = m.Column.__table__
    p, sd, c = partitions.c, sds.c, columns.c
    return (
        select(p.PART_NAME, p.PART_ID, sd.CD_ID, _accurate_of(p), c.COLUMN_NAME, c.TYPE_NAME)
        .select_from(partitions)
        .outerjoin(sds, sd.SD_ID == p.SD_ID)
        .outerjoin(columns, c.CD_ID == sd.CD_ID)
        .where(p.TBL_ID == bindparam("tbl_id"), p.PART_NAME == bindparam("name"))
    )


@functools.cache
def _partitions_query(dialect: str) -> Select[Any]:
    """Found through the index of (TBL_ID, PART_NAME); the column list and the parameter
    are subqueries by primary key, one each per partition, so that no join method chosen
    from a table's estimates (wrong before it is first analyzed) can scan a table per
    partition."""
    p, sd = m.Partition.__table__.c, m.StorageDescriptor.__table__.c
    cd_id = select(sd.CD_ID).where(sd.SD_ID == p.SD_ID).scalar_subquery()
    return select(p.PART_NAME, p.PART_ID, cd_id, _accurate_of(p)).where(
        p.TBL_ID == bindparam("tbl_id"), lists.any_of(dialect, "names", text=True)(p.PART_NAME)
    )


def column_types(s: Session, cd_ids: Iterable[int | None]) -> dict[int, dict[str, str]]:
    """CD_ID -> (column name -> Hive type) of the column lists CD_IDS."""
    ids = sorted({i for i in cd_ids if i is not None})
    out: dict[int, dict[str, str]] = {i: {} for i in ids}
    if not ids:
        return out
    dialect = s.get_bind().dialect.name
    for cd_id, name, type_name in driver_rows(
        s, _columns_query(dialect), {"cds": lists.values(dialect, ids)}
    ):
        out[cd_id][name] = type_name or ""
    return out


@functools.cache
def _columns_query(dialect: str) -> Select[Any]:
    c = m.Column.__table__.c
    return select(c.CD_ID, c.COLUMN_NAME, c.TYPE_NAME).where(lists.any_of(dialect, "cds")(c.CD_ID))
