"""Transactions.run runs a transaction again after PostgreSQL's deadlock and serialization
failures, whichever driver reports them: psycopg 3 (sqlstate) or psycopg2 (pgcode)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from conftest import PG_ADMIN_URL, _postgres_or_skip
from sqlalchemy.orm import Session

from metastore.store import transactions

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("driver", ["psycopg", "psycopg2"])
@pytest.mark.parametrize("sqlstate", ["40P01", "40001"])
def test_a_deadlock_or_serialization_failure_is_run_again(driver: str, sqlstate: str) -> None:
    _postgres_or_skip().dispose()
    url = sa.make_url(PG_ADMIN_URL).set(drivername=f"postgresql+{driver}")
    engine = transactions.create_engine(url.render_as_string(hide_password=False), pool_size=1)
    attempts: list[int] = []

    def work(session: Session) -> int:
        attempts.append(1)
        if len(attempts) == 1:  # PostgreSQL itself raises the error, with its SQLSTATE
            session.execute(
                sa.text(
                    "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = :code; END $$".replace(
                        ":code", f"'{sqlstate}'"
                    )
                )
            )
        return int(session.execute(sa.text("SELECT 41 + 1")).scalar_one())

    try:
        assert transactions.Transactions(engine).run(work, name="work", write=True) == 42
    finally:
        engine.dispose()
    assert len(attempts) == 2


@pytest.mark.parametrize("driver", ["psycopg", "psycopg2"])
def test_other_errors_are_not_run_again(driver: str) -> None:
    _postgres_or_skip().dispose()
    url = sa.make_url(PG_ADMIN_URL).set(drivername=f"postgresql+{driver}")
    engine = transactions.create_engine(url.render_as_string(hide_password=False), pool_size=1)
    attempts: list[int] = []

    def work(session: Session) -> None:
        attempts.append(1)
        session.execute(sa.text("SELECT 1 / 0"))

    try:
        with pytest.raises(sa.exc.DataError) as raised:
            transactions.Transactions(engine).run(work, name="work", write=True)
    finally:
        engine.dispose()
    assert len(attempts) == 1
    assert transactions.sqlstate(raised.value) == "22012"
