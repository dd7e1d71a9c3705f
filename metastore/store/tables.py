"""Queries on tables (TBLS) and their partition keys. Every function runs inside the
caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import ColumnElement, bindparam, delete, select
from sqlalchemy.orm import Session

from metastore.name_patterns import filter_names
from metastore.store import models as m
from metastore.store import versions
from metastore.store.owned import delete_owned
from metastore.store.storage import delete_storages


def find_table(s: Session, db_id: int, name: str) -> m.Table | None:
    return s.scalar(select(m.Table).where(m.Table.DB_ID == db_id, m.Table.TBL_NAME == name))


# Nearly every call looks its table up: the statement is built once (and its cache key
# computed once), which halves the lookup's Python work.
_DATABASE_TABLE = (
    select(m.Database, m.Table)
    .join(m.Table, m.Table.DB_ID == m.Database.DB_ID)
    .where(
        m.Database.CTLG_NAME == bindparam("catalog"),
        m.Database.NAME == bindparam("db_name"),
        m.Table.TBL_NAME == bindparam("table_name"),
    )
)


def find_database_table(
    s: Session, catalog: str, db_name: str, table_name: str
) -> tuple[m.Database, m.Table] | None:
    """Database DB_NAME of CATALOG and its table TABLE_NAME, in one query."""
    names = {"catalog": catalog, "db_name": db_name, "table_name": table_name}
    row = s.execute(_DATABASE_TABLE, names).first()
    return None if row is None else (row[0], row[1])


def tables_of(s: Session, db_id: int) -> list[m.Table]:
    return list(s.scalars(select(m.Table).where(m.Table.DB_ID == db_id)))


def tables_named(s: Session, db_id: int, names: Sequence[str]) -> list[m.Table]:
    """The tables of database DB_ID among NAMES that exist, by name."""
    query = select(m.Table).where(m.Table.DB_ID == db_id, m.Table.TBL_NAME.in_(names))
    return list(s.scalars(query.order_by(m.Table.TBL_NAME)))


def add_table(s: Session, row: m.Table, keys: Sequence[tuple[str, str, str | None]]) -> int:
    """Insert ROW with its partition KEYS (name, type, comment) and a first version; its
    TBL_ID."""
    s.add(row)
    s.flush()
    versions.touch(s, row.TBL_ID)
    s.add_all(
        m.PartitionKey(
            TBL_ID=row.TBL_ID, PKEY_NAME=name, PKEY_TYPE=type_, PKEY_COMMENT=comment, INTEGER_IDX=i
        )
        for i, (name, type_, comment) in enumerate(keys)
    )
    return row.TBL_ID


def table_names_by_filter(
    s: Session, db_id: int, condition: ColumnElement[bool], limit: int | None
) -> list[str]:
    """The names of the tables of database DB_ID that match CONDITION (of
    partition_filter.table_sql), at most LIMIT of them, by name."""
    query = select(m.Table.TBL_NAME).where(m.Table.DB_ID == db_id, condition)
    query = query.order_by(m.Table.TBL_NAME)
    return list(s.scalars(query if limit is None else query.limit(limit)))


def tables_with_comments(
    s: Session, db_ids: Sequence[int], table_types: Sequence[str] | None
) -> list[tuple[m.Table, str | None]]:
    """The tables of the databases DB_IDS (of TABLE_TYPES, when given) with their comment
    parameter, by name."""
    query = (
        select(m.Table, m.TableParam.PARAM_VALUE)
        .outerjoin(
            m.TableParam,
            (m.TableParam.TBL_ID == m.Table.TBL_ID) & (m.TableParam.PARAM_KEY == "comment"),
        )
        .where(m.Table.DB_ID.in_(db_ids))
        .order_by(m.Table.TBL_NAME)
    )
    if table_types:
        query = query.where(m.Table.TBL_TYPE.in_(table_types))
    return [(table, comment) for table, comment in s.execute(query)]


def table_names(
    s: Session, db_id: int, pattern: str | None = None, *, table_type: str | None = None
) -> list[str]:
    query = select(m.Table.TBL_NAME).where(m.Table.DB_ID == db_id).order_by(m.Table.TBL_NAME)
    if table_type is not None:
        query = query.where(m.Table.TBL_TYPE == table_type)
    return filter_names(s.scalars(query).all(), pattern)


def locations(s: Session, table: m.Table) -> list[str | None]:
    """The locations of TABLE and of its partitions (the folders a drop with data removes)."""
    partition_sds = select(m.Partition.SD_ID).where(m.Partition.TBL_ID == table.TBL_ID)
    rows = s.scalars(
        select(m.StorageDescriptor.LOCATION).where(
            (m.StorageDescriptor.SD_ID == table.SD_ID)
            | m.StorageDescriptor.SD_ID.in_(partition_sds)
        )
    )
    return list(rows)


def partition_keys_of(s: Session, tbl_ids: Sequence[int]) -> dict[int, list[m.PartitionKey]]:
    out: dict[int, list[m.PartitionKey]] = {}
    if tbl_ids:
        for key in s.scalars(
            select(m.PartitionKey)
            .where(m.PartitionKey.TBL_ID.in_(tbl_ids))
            .order_by(m.PartitionKey.TBL_ID, m.PartitionKey.INTEGER_IDX)
        ):
            out.setdefault(key.TBL_ID, []).append(key)
    return out


_KEY_TYPES = (
    select(m.PartitionKey.__table__.c.PKEY_NAME, m.PartitionKey.__table__.c.PKEY_TYPE)
    .where(m.PartitionKey.__table__.c.TBL_ID == bindparam("tbl_id"))
    .order_by(m.PartitionKey.__table__.c.INTEGER_IDX)
)


def partition_key_types(s: Session, tbl_id: int) -> list[tuple[str, str]]:
    """The (name, Hive type) of the partition keys of table TBL_ID, in INTEGER_IDX order
    (a statement built once, as _DATABASE_TABLE: most partition calls read the keys)."""
    rows = s.execute(_KEY_TYPES, {"tbl_id": tbl_id})
    return [(name, key_type) for name, key_type in rows]


def partition_keys(s: Session, tbl_id: int) -> list[m.PartitionKey]:
    return list(
        s.scalars(
            select(m.PartitionKey)
            .where(m.PartitionKey.TBL_ID == tbl_id)
            .order_by(m.PartitionKey.INTEGER_IDX)
        )
    )


def delete_table(s: Session, table: m.Table) -> None:
    """Delete TABLE with its partitions, parameters and statistics (metastore.store.owned)."""
    part_sd_ids = list(
        s.scalars(select(m.Partition.SD_ID).where(m.Partition.TBL_ID == table.TBL_ID))
    )
    delete_owned(s, "TBLS", "TBL_ID", [table.TBL_ID])
    s.execute(delete(m.Table).where(m.Table.TBL_ID == table.TBL_ID))
    delete_storages(s, [*part_sd_ids, table.SD_ID])


def locked_param(s: Session, tbl_id: int, key: str) -> str | None:
    """Parameter KEY of table TBL_ID as committed, with the table locked until the end of the
    transaction of S, so that a change that depends on the value (a compare-and-swap of
    Iceberg's metadata_location) cannot interleave with another. On PostgreSQL the table's
    row is locked first and the value read in a statement of its own, which sees what the
    writer it waited for committed; on SQLite the transaction holds the database's write
    lock from its start."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(select(m.Table.TBL_ID).where(m.Table.TBL_ID == tbl_id).with_for_update())
    return s.scalar(
        select(m.TableParam.PARAM_VALUE).where(
            m.TableParam.TBL_ID == tbl_id, m.TableParam.PARAM_KEY == key
        )
    )
