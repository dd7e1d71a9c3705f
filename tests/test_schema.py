"""Migrations build exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from metastore import db
from metastore.models import Base


def _differences(url: str) -> list[object]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": True}
            )
            return list(compare_metadata(context, Base.metadata))
    finally:
        engine.dispose()


def _tables(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_builds_the_models_schema_and_downgrade_removes_it(database_url: str) -> None:
    db.upgrade(database_url)
    assert db.current_revision(database_url) == db.head_revision()
    differences = _differences(database_url)
    assert differences == [], (
        "the migrated schema differs from metastore/models.py; add a revision with "
        "`METASTORE_DB=URL alembic revision --autogenerate -m '...'` and review it: "
        f"{differences}"
    )
    assert set(Base.metadata.tables) <= _tables(database_url)
    db.downgrade(database_url, "base")
    assert _tables(database_url) <= {"alembic_version"}


def test_upgrade_is_idempotent(database_url: str) -> None:
    db.upgrade(database_url)
    db.upgrade(database_url)
    assert db.current_revision(database_url) == db.head_revision()


def test_cli_db_upgrade_and_current(database_url: str) -> None:
    run = [sys.executable, "-m", "metastore.cli", "db"]
    upgraded = subprocess.run(
        [*run, "upgrade", "--db", database_url], capture_output=True, text=True, check=True
    )
    assert f"revision {db.head_revision()}" in upgraded.stdout
    current = subprocess.run(
        [*run, "current", "--db", database_url], capture_output=True, text=True, check=True
    )
    assert "up to date" in current.stdout
