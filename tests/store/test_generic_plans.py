"""On PostgreSQL, the server's connections run a prepared statement on a plan made once
(plan_cache_mode force_generic_plan), not planned again for the values of each call, unless
the database URL's `options` choose otherwise."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import empty_database
from metadata_builders import database, fields, partition, table

from metastore.config import Settings
from metastore.hms.handler import Handler
from metastore.store import migrate, transactions

pytestmark = pytest.mark.postgres

DB = "plans"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated PostgreSQL database, through psycopg 3 (psycopg2 prepares nothing)."""
    for found in empty_database("postgresql", tmp_path_factory.mktemp("db")):
        migrate.upgrade(found)
        psycopg = sa.make_url(found).set(drivername="postgresql+psycopg")
        yield psycopg.render_as_string(hide_password=False)


def _plans(connections: Iterable[Any], like: str) -> list[tuple[int, int]]:
    """(generic plans, custom plans) of the statements prepared on each of the driver
    CONNECTIONS whose text is LIKE."""
    found = []
    for connection in connections:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                " WHERE statement LIKE %s",
                [like],
            )
            found += [(generic, custom) for generic, custom in cursor.fetchall()]
        connection.rollback()
    return found


def test_a_prepared_statement_is_planned_once(url: str, tmp_path: Path) -> None:
    engine = transactions.create_engine(url, pool_size=1)
    used: dict[int, Any] = {}
    sa.event.listen(
        engine, "checkout", lambda dbapi, _record, _proxy: used.setdefault(id(dbapi), dbapi)
    )
    try:
        handler = Handler(
            transactions.Transactions(engine), Settings(warehouse=str(tmp_path), cache_size=0)
        )
        handler.create_database(database(DB))
        handler.create_table(table(DB, "t", keys=fields(("ds", "string"), ("hr", "int"))))
        for ds in ("2024-01-01", "2024-01-02"):
            for hr in ("1", "2"):
                handler.add_partition(partition(DB, "t", [ds, hr]))
        for _ in range(24):
            assert handler.get_partition_names_ps(DB, "t", ["2024-01-02", ""], -1) == [
                "ds=2024-01-02/hr=1",
                "ds=2024-01-02/hr=2",
            ]
        # Read on the driver connections themselves: a connection checked out of the
        # pool would begin a transaction, whose rollback at its return makes psycopg
        # deallocate every prepared statement.
        plans = _plans(used.values(), 'SELECT "PARTITIONS"."PART_NAME" %PARTITION_KEY_VALS%')
        for connection in used.values():
            with connection.cursor() as cursor:
                cursor.execute("SHOW plan_cache_mode")
                assert cursor.fetchall() == [("force_generic_plan",)]
            connection.rollback()
    finally:
        engine.dispose()
    # psycopg prepares a statement at its sixth run on a connection; every run after that
    # is on the one plan (with plan_cache_mode auto, PostgreSQL would plan the first five
    # for their values, and the rest too while it estimates the one plan dearer).
    assert plans, "the statement was never prepared"
    assert all(custom == 0 for _, custom in plans), plans
    assert sum(generic for generic, _ in plans) >= 1, plans


def test_the_url_may_choose_how_statements_are_planned(url: str) -> None:
    chosen = sa.make_url(url).update_query_dict({"options": "-c plan_cache_mode=auto"})
    engine = transactions.create_engine(chosen.render_as_string(hide_password=False))
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW plan_cache_mode").scalar() == "auto"
    finally:
        engine.dispose()
