"""Queries on databases (DBS). Every function runs inside the caller's transaction."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from metastore.name_patterns import filter_names
from metastore.store import models as m
from metastore.store.owned import delete_owned
from metastore.store.tables import delete_table


def find_database(s: Session, catalog: str, name: str) -> m.Database | None:
    return s.scalar(
        select(m.Database).where(m.Database.CTLG_NAME == catalog, m.Database.NAME == name)
    )


def database_by_id(s: Session, db_id: int) -> m.Database:
    found = s.get(m.Database, db_id)
    assert found is not None, db_id  # a table's database: its key holds it
    return found


def databases_of(s: Session, catalog: str) -> list[m.Database]:
    return list(s.scalars(select(m.Database).where(m.Database.CTLG_NAME == catalog)))


def database_names(s: Session, catalog: str, pattern: str | None = None) -> list[str]:
    names = s.scalars(
        select(m.Database.NAME).where(m.Database.CTLG_NAME == catalog).order_by(m.Database.NAME)
    ).all()
    return filter_names(names, pattern)


def add_database(s: Session, row: m.Database) -> int:
    """Insert ROW; its DB_ID."""
    s.add(row)
    s.flush()
    return row.DB_ID


def delete_database(s: Session, db: m.Database) -> None:
    for table in s.scalars(select(m.Table).where(m.Table.DB_ID == db.DB_ID)):
        delete_table(s, table)
    delete_owned(s, "DBS", "DB_ID", [db.DB_ID])
    s.delete(db)
