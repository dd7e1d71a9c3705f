"""Migrations build exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys

import sqlalchemy as sa

from metastore.store import migrate
from metastore.store.models import BYTE_ORDER_INDEX, Base


def _tables(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_builds_the_models_schema_and_downgrade_removes_it(database_url: str) -> None:
    migrate.upgrade(database_url)
    assert migrate.current_revision(database_url) == migrate.head_revision()
    differences = migrate.schema_differences(database_url)
    assert differences == [], (
        "the migrated schema differs from metastore/models.py; add a revision with "
        "`METASTORE_DB=URL alembic revision --autogenerate -m '...'` and review it: "
        f"{differences}"
    )
    assert set(Base.metadata.tables) <= _tables(database_url)
    migrate.downgrade(database_url, "base")
    assert _tables(database_url) <= {"alembic_version"}


def test_upgrade_is_idempotent(database_url: str) -> None:
    migrate.upgrade(database_url)
    migrate.upgrade(database_url)
    assert migrate.current_revision(database_url) == migrate.head_revision()


def test_cli_db_upgrade_and_current(database_url: str) -> None:
    run = [sys.executable, "-m", "metastore.cli", "db"]
    upgraded = subprocess.run(
        [*run, "upgrade", "--db", database_url], capture_output=True, text=True, check=True
    )
    assert f"revision {migrate.head_revision()}" in upgraded.stdout
    current = subprocess.run(
        [*run, "current", "--db", database_url], capture_output=True, text=True, check=True
    )
    assert "up to date" in current.stdout


def test_key_values_have_an_index_in_byte_order_on_postgresql(database_url: str) -> None:
    """Schema 0004's index, which the comparison above cannot see: on PostgreSQL, the key
    values of each key in byte order (COLLATE "C"), which filters' ranges and `like`
    prefixes use; SQLite's index of 0003 compares bytes already."""
    migrate.upgrade(database_url)
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                definition = conn.scalar(
                    sa.text("SELECT indexdef FROM pg_indexes WHERE indexname = :name"),
                    {"name": BYTE_ORDER_INDEX},
                )
                assert definition is not None
                assert definition.endswith('("INTEGER_IDX", "PART_KEY_VAL" COLLATE "C")')
                # An empty table has no statistics: without sequential scans, the plan
                # shows which index serves a range in byte order.
                conn.execute(sa.text("SET LOCAL enable_seqscan = off"))
                plan = conn.scalars(
                    sa.text(
                        'EXPLAIN SELECT "PART_ID" FROM "PARTITION_KEY_VALS" WHERE '
                        '"INTEGER_IDX" = 0 AND ("PART_KEY_VAL" COLLATE "C") >= :low '
                        'AND ("PART_KEY_VAL" COLLATE "C") < :high'
                    ).bindparams(low="2024-07", high="2024-08")
                ).all()
                assert any(BYTE_ORDER_INDEX in line for line in plan), plan
                conn.rollback()
                conn.execute(sa.text(f'DROP INDEX "{BYTE_ORDER_INDEX}"'))
                conn.commit()
                assert migrate.schema_differences(database_url) == [
                    f"index {BYTE_ORDER_INDEX} is missing"
                ]
            else:
                names = [i["name"] for i in sa.inspect(conn).get_indexes("PARTITION_KEY_VALS")]
                assert BYTE_ORDER_INDEX not in names
        migrate.downgrade(database_url, "0003")
        with engine.connect() as conn:
            names = [i["name"] for i in sa.inspect(conn).get_indexes("PARTITION_KEY_VALS")]
            assert BYTE_ORDER_INDEX not in names
    finally:
        engine.dispose()
