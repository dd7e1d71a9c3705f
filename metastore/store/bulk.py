"""Batched inserts with SQLAlchemy Core: one statement for many rows (executemany, or
insertmanyvalues with RETURNING), without the ORM's work per row."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, insert
from sqlalchemy.orm import Session


def insert_rows(s: Session, table: Table, rows: list[dict[str, Any]]) -> list[int]:
    """Insert ROWS into TABLE in one batched statement; their new ids, in the rows' order."""
    if not rows:
        return []
    (key,) = table.primary_key.columns
    result = s.execute(insert(table).returning(key, sort_by_parameter_order=True), rows)
    return list(result.scalars())


def insert_all(s: Session, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert ROWS into TABLE in one batched statement."""
    if rows:
        s.execute(insert(table), rows)
