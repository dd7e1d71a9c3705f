"""Permanent functions (FUNCS) and their resources (FUNC_RU). Every function runs inside the
caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from metastore.store import models as m
from metastore.store.owned import delete_owned


def find_function(s: Session, db_id: int, name: str) -> m.Function | None:
    return s.scalar(
        select(m.Function).where(m.Function.DB_ID == db_id, m.Function.FUNC_NAME == name)
    )


def function_names(s: Session, db_id: int) -> list[str]:
    query = select(m.Function.FUNC_NAME).where(m.Function.DB_ID == db_id)
    return list(s.scalars(query.order_by(m.Function.FUNC_NAME)))


def all_functions(s: Session) -> list[tuple[m.Function, m.Database]]:
    """Every function with its database, by database and name."""
    query = (
        select(m.Function, m.Database)
        .join(m.Database, m.Database.DB_ID == m.Function.DB_ID)
        .order_by(m.Database.NAME, m.Function.FUNC_NAME)
    )
    return [(function, db) for function, db in s.execute(query)]


def count_functions(s: Session, db_id: int) -> int:
    query = select(func.count()).select_from(m.Function).where(m.Function.DB_ID == db_id)
    return int(s.scalar(query) or 0)


def add_function(s: Session, row: m.Function) -> int:
    """Insert ROW; its FUNC_ID."""
    s.add(row)
    s.flush()
    return row.FUNC_ID


def resources(s: Session, func_id: int) -> list[m.FunctionResource]:
    query = select(m.FunctionResource).where(m.FunctionResource.FUNC_ID == func_id)
    return list(s.scalars(query.order_by(m.FunctionResource.INTEGER_IDX)))


def replace_resources(s: Session, func_id: int, uris: Sequence[tuple[int, str | None]]) -> None:
    """The resources of function FUNC_ID become URIS, (type, uri) in order."""
    s.execute(delete(m.FunctionResource).where(m.FunctionResource.FUNC_ID == func_id))
    s.add_all(
        m.FunctionResource(FUNC_ID=func_id, INTEGER_IDX=i, RESOURCE_TYPE=kind, RESOURCE_URI=uri)
        for i, (kind, uri) in enumerate(uris)
    )


def delete_function(s: Session, func_id: int) -> None:
    """The function and its resources (explicitly: an adopted database's keys do not
    cascade)."""
    delete_owned(s, "FUNCS", "FUNC_ID", [func_id])
    s.execute(delete(m.Function).where(m.Function.FUNC_ID == func_id))
