"""metastore.store.transactions on SQLite and PostgreSQL: engines set up for many short
transactions (SQLite's pragmas and BEGIN IMMEDIATE for writers; PostgreSQL's generic plans
and writer setting), one transaction per call, committed or rolled back with the work to do
after either, run again after what a new attempt fixes and only that, OutcomeUnknown when
the connection is lost during the commit, one read statement outside a transaction, and one
write statement as a transaction of its own (a connection lost while it runs: OutcomeUnknown;
one the database closed while idle: not used)."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import PG_ADMIN_URL, _postgres_or_skip
from core_builders import add_database, add_table
from sqlalchemy.orm import Session

from metastore.errors import OutcomeUnknown
from metastore.store import models as m
from metastore.store import transactions, versions
from metastore.store.transactions import Transactions


@pytest.fixture
def engine(migrated_url: str) -> Iterator[sa.Engine]:
    """A new engine per test (an engine remembers what it found about its database)."""
    created = transactions.create_engine(migrated_url, pool_size=2)
    yield created
    created.dispose()


def _setting(engine: sa.Engine, sql: str) -> Any:
    with engine.connect() as conn:
        return conn.exec_driver_sql(sql).scalar_one()


# -- engines -----------------------------------------------------------------------------------


def test_a_sqlite_engine_is_set_up_for_many_short_transactions(tmp_path: Any) -> None:
    engine = transactions.create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        assert _setting(engine, "PRAGMA foreign_keys") == 1
        assert _setting(engine, "PRAGMA journal_mode") == "wal"
        assert _setting(engine, "PRAGMA busy_timeout") == 30000
        assert _setting(engine, "PRAGMA analysis_limit") == 1000
    finally:
        engine.dispose()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_an_in_memory_sqlite_engine_is_set_up_without_wal(url: str) -> None:
    engine = transactions.create_engine(url)
    try:
        assert _setting(engine, "PRAGMA foreign_keys") == 1
        assert _setting(engine, "PRAGMA journal_mode") == "memory"
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_postgresql_engine_plans_once_compiles_nothing_and_says_it_is_colstats() -> None:
    _postgres_or_skip().dispose()
    engine = transactions.create_engine(PG_ADMIN_URL)
    url = sa.make_url(PG_ADMIN_URL).update_query_dict(
        {"options": "-c plan_cache_mode=force_custom_plan -c jit=on"}
    )
    own = transactions.create_engine(url.render_as_string(hide_password=False))
    costs = sa.make_url(PG_ADMIN_URL).update_query_dict({"options": "-c jit_above_cost=500000"})
    tuned = transactions.create_engine(costs.render_as_string(hide_password=False))
    try:
        assert _setting(engine, "SHOW plan_cache_mode") == "force_generic_plan"
        assert _setting(engine, "SHOW jit") == "off"
        assert _setting(engine, "SELECT current_setting('colstats.writer')") == "on"
        # A URL that sets the plan cache mode or JIT itself keeps them.
        assert _setting(own, "SHOW plan_cache_mode") == "force_custom_plan"
        assert _setting(own, "SHOW jit") == "on"
        # A URL that tunes JIT's costs without setting jit still has it off.
        assert _setting(tuned, "SHOW jit") == "off"
        assert _setting(tuned, "SHOW jit_above_cost") == "500000"
        assert _setting(own, "SELECT current_setting('colstats.writer')") == "on"
    finally:
        engine.dispose()
        own.dispose()
        tuned.dispose()


def test_urls_parse_and_show_no_password() -> None:
    url = "postgresql+psycopg://user:s3cr%40t@db.example:5433/meta?sslmode=require"
    parsed = transactions.parse_url(url)
    assert (parsed.get_backend_name(), parsed.get_driver_name(), parsed.database) == (
        "postgresql",
        "psycopg",
        "meta",
    )
    assert parsed.password == "s3cr@t"
    safe = transactions.safe_url(url)
    assert "s3cr" not in safe and "***" in safe and "db.example:5433/meta" in safe
    with pytest.raises(sa.exc.ArgumentError):
        transactions.parse_url("not a url")


# -- run ---------------------------------------------------------------------------------------


def _names(engine: sa.Engine) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(sa.select(m.Database.NAME).order_by(m.Database.NAME)).scalars())


def _drop(engine: sa.Engine, *names: str) -> None:
    with engine.begin() as conn:
        conn.execute(sa.delete(m.Database).where(m.Database.NAME.in_(names)))


def test_a_write_commits_and_then_runs_what_waited_for_the_commit(engine: sa.Engine) -> None:
    tx = Transactions(engine)
    done: list[str] = []

    def work(s: Session) -> int:
        table = add_table(s, add_database(s, "committed"), "t")
        versions.touch(s, table.tbl_id)
        transactions.on_commit(s, lambda: done.append(f"after {_names(engine)}"))
        transactions.on_rollback(s, lambda: done.append("undone"))
        return table.tbl_id

    try:
        tbl_id = tx.run(work, name="work", write=True)
        assert done == ["after ['committed']"]  # run after the commit, which it sees
        with engine.connect() as conn:
            version = conn.execute(
                sa.select(m.TableVersion.VERSION).where(m.TableVersion.TBL_ID == tbl_id)
            )
            assert version.scalar_one() >= 1  # the touched table got a version
    finally:
        _drop(engine, "committed")


def test_a_failed_work_is_rolled_back_and_undone_in_reverse(engine: sa.Engine) -> None:
    tx = Transactions(engine)
    done: list[str] = []

    def work(s: Session) -> None:
        add_database(s, "rolled_back")
        transactions.on_rollback(s, lambda: done.append("first"))
        transactions.on_rollback(s, lambda: done.append("second"))
        transactions.on_commit(s, lambda: done.append("committed"))
        raise KeyError("the work failed")

    with pytest.raises(KeyError, match="the work failed"):
        tx.run(work, name="work", write=True)
    assert done == ["second", "first"]
    assert "rolled_back" not in _names(engine)


def test_an_action_after_the_commit_that_fails_is_logged_not_raised(
    engine: sa.Engine, caplog: pytest.LogCaptureFixture
) -> None:
    tx = Transactions(engine)
    done: list[str] = []

    def work(s: Session) -> str:
        transactions.on_commit(s, lambda: 1 / 0)
        transactions.on_commit(s, lambda: done.append("next"))
        return "answer"

    with caplog.at_level(logging.ERROR, logger="metastore.store.transactions"):
        assert tx.run(work, name="work", write=False) == "answer"
    assert done == ["next"]
    assert [r.getMessage() for r in caplog.records] == ["an action after the commit failed"]


class _Driver(Exception):
    def __init__(self, sqlstate: str | None = None, pgcode: str | None = None) -> None:
        super().__init__(f"driver error {sqlstate or pgcode}")
        if sqlstate is not None:
            self.sqlstate = sqlstate
        if pgcode is not None:
            self.pgcode = pgcode


def _failing(errors: list[Exception]) -> tuple[Callable[[Session], str], list[int]]:
    """Work that raises ERRORS in turn, then answers; and the list of its attempts."""
    attempts: list[int] = []

    def work(s: Session) -> str:
        attempts.append(1)
        if len(attempts) <= len(errors):
            raise errors[len(attempts) - 1]
        return "done"

    return work, attempts


def _integrity() -> sa.exc.IntegrityError:
    return sa.exc.IntegrityError("INSERT", {}, _Driver("23505"))


def test_a_write_that_lost_a_race_for_a_key_runs_again(engine: sa.Engine) -> None:
    tx = Transactions(engine)
    work, attempts = _failing([_integrity(), _integrity()])
    assert tx.run(work, name="work", write=True) == "done"
    assert len(attempts) == 3
    work, attempts = _failing([_integrity()] * 3)
    with pytest.raises(sa.exc.IntegrityError):
        tx.run(work, name="work", write=True)
    assert len(attempts) == transactions.ATTEMPTS
    # A read does not run again: its IntegrityError is no race.
    work, attempts = _failing([_integrity()])
    with pytest.raises(sa.exc.IntegrityError):
        tx.run(work, name="work", write=False)
    assert len(attempts) == 1


@pytest.mark.parametrize(
    ("error", "again"),
    [
        (sa.exc.OperationalError("SELECT", {}, _Driver("40P01")), True),  # deadlock
        (sa.exc.OperationalError("SELECT", {}, _Driver(pgcode="40001")), True),  # psycopg2's
        (sa.exc.OperationalError("SELECT", {}, _Driver(), connection_invalidated=True), True),
        (sa.exc.OperationalError("SELECT", {}, _Driver("57014")), False),  # query canceled
        (sa.exc.ProgrammingError("SELECT", {}, _Driver("42P01")), False),
        (sa.exc.OperationalError("SELECT", {}, _Driver()), False),
    ],
)
def test_what_a_new_attempt_fixes_runs_again_and_nothing_else(
    engine: sa.Engine, error: sa.exc.DBAPIError, again: bool, caplog: pytest.LogCaptureFixture
) -> None:
    tx = Transactions(engine)
    work, attempts = _failing([error])
    with caplog.at_level(logging.WARNING, logger="metastore.store.transactions"):
        if again:
            assert tx.run(work, name="the call", write=False) == "done"
        else:
            with pytest.raises(type(error)):
                tx.run(work, name="the call", write=False)
    assert len(attempts) == (2 if again else 1)
    warned = [r.getMessage() for r in caplog.records]
    assert warned == ([f"the call failed ({error.orig}); running it again"] if again else [])


def test_a_caller_may_allow_more_attempts(engine: sa.Engine) -> None:
    tx = Transactions(engine)
    serialization = sa.exc.OperationalError("SELECT", {}, _Driver("40001"))
    work, attempts = _failing([serialization] * 5)
    assert tx.run(work, name="take", write=True, attempts=6) == "done"
    assert len(attempts) == 6
    work, attempts = _failing([serialization] * 5)
    with pytest.raises(sa.exc.OperationalError):
        tx.run(work, name="take", write=True)
    assert len(attempts) == transactions.ATTEMPTS


def test_sqlstate_of_either_driver() -> None:
    assert transactions.sqlstate(sa.exc.DBAPIError("x", {}, _Driver("40P01"))) == "40P01"
    assert transactions.sqlstate(sa.exc.DBAPIError("x", {}, _Driver(pgcode="40001"))) == "40001"
    assert transactions.sqlstate(sa.exc.DBAPIError("x", {}, _Driver())) is None


def test_reads_on_postgresql_are_a_transaction_per_statement(engine: sa.Engine) -> None:
    """On PostgreSQL a read runs each statement on its own (now() moves between two); a
    write, and SQLite's reads, are one transaction."""
    tx = Transactions(engine)
    sleep = "SELECT pg_sleep(0.02)" if engine.dialect.name == "postgresql" else "SELECT 1"
    now = "SELECT now()" if engine.dialect.name == "postgresql" else "SELECT 1"

    def two_clocks(s: Session) -> bool:
        first = s.execute(sa.text(now)).scalar_one()
        s.execute(sa.text(sleep))
        return bool(s.execute(sa.text(now)).scalar_one() != first)

    moved = tx.run(two_clocks, name="read", write=False)
    assert moved is (engine.dialect.name == "postgresql")
    assert tx.run(two_clocks, name="write", write=True) is False


def test_sqlite_writers_hold_the_write_lock_from_their_start(migrated_url: str) -> None:
    if not migrated_url.startswith("sqlite"):
        pytest.skip("PostgreSQL's writers lock rows, not the database")
    engine = transactions.create_engine(migrated_url)
    tx = Transactions(engine)
    path = sa.make_url(migrated_url).database
    assert path is not None

    def other_writer_may_begin(s: Session) -> bool:
        s.execute(sa.text("SELECT 1"))  # the transaction has begun
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
            return True
        except sqlite3.OperationalError as e:
            assert "locked" in str(e)
            return False
        finally:
            other.close()

    try:
        assert tx.run(other_writer_may_begin, name="write", write=True) is False
        assert tx.run(other_writer_may_begin, name="read", write=False) is True
    finally:
        engine.dispose()


# -- query and lost connections ----------------------------------------------------------------


def test_one_read_statement_outside_a_transaction(engine: sa.Engine) -> None:
    tx = Transactions(engine)
    statement = sa.select(m.Database.NAME).where(m.Database.NAME == sa.bindparam("name"))
    tx.run(lambda s: add_database(s, "queried"), name="add", write=True)
    try:
        assert tx.query(statement, {"name": "queried"}) == [("queried",)]
        assert tx.query(statement, {"name": "missing"}) == []
        broken: sa.Select[Any] = sa.select(sa.column("x")).select_from(sa.table("NO_SUCH_TABLE"))
        with pytest.raises(Exception, match="NO_SUCH_TABLE"):
            tx.query(broken, {})
        # The connection that failed was discarded: the next is fine.
        assert tx.query(statement, {"name": "queried"}) == [("queried",)]
        assert (
            tx.run(lambda s: s.execute(sa.text("SELECT 1")).scalar_one(), name="r", write=False)
            == 1
        )
    finally:
        _drop(engine, "queried")


@pytest.mark.postgres
def test_a_connection_lost_during_the_commit_leaves_the_outcome_unknown(engine: sa.Engine) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("SQLite's connections are in process")
    admin = _postgres_or_skip()
    tx = Transactions(engine)
    undone: list[str] = []

    def work(s: Session) -> None:
        add_database(s, "unknown")
        transactions.on_rollback(s, lambda: undone.append("undone"))
        pid = s.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
        with admin.connect() as conn:  # the server ends the connection before the commit
            conn.exec_driver_sql(f"SELECT pg_terminate_backend({pid})")

    try:
        with pytest.raises(OutcomeUnknown, match="lost while committing") as raised:
            tx.run(work, name="work", write=True)
        assert "may or may not have been made" in raised.value.message
        assert undone == []  # nothing is undone when it may have been made
        # Here it was not; the next call gets a new connection.
        assert "unknown" not in _names(engine)
    finally:
        admin.dispose()


_PID = sa.text("SELECT pg_backend_pid()")
_ADD = sa.text(
    """INSERT INTO "DBS" ("DB_ID", "NAME", "CTLG_NAME", "DB_LOCATION_URI")
    SELECT coalesce(max("DB_ID"), 0) + 1, :name, 'hive', 'file:/x' FROM "DBS"
    RETURNING "NAME"
    """
)
_KILL_ITSELF = sa.text("SELECT pg_terminate_backend(pg_backend_pid())")


@pytest.mark.postgres
def test_a_statement_alone_commits_itself_and_a_connection_lost_in_it_is_unknown(
    engine: sa.Engine,
) -> None:
    if engine.dialect.name != "postgresql":
        pytest.skip("a statement alone is PostgreSQL's")
    tx = Transactions(engine)
    try:
        assert tx.alone(_ADD, {"name": "alone"}) == [("alone",)]
        assert "alone" in _names(engine)  # committed: seen from another connection
        with pytest.raises(OutcomeUnknown, match="lost while writing") as raised:
            tx.alone(_KILL_ITSELF, {})
        assert "may or may not have been made" in raised.value.message
        (pid,) = tx.alone(_PID, {})[0]  # the lost connection was discarded
        assert isinstance(pid, int)
    finally:
        _drop(engine, "alone")


@pytest.mark.postgres
def test_a_connection_the_database_closed_while_idle_is_not_used_alone(engine: sa.Engine) -> None:
    """As when the database restarts: the pooled connection is told closed by its socket
    before anything is sent on it, and the statement runs on another."""
    if engine.dialect.name != "postgresql":
        pytest.skip("a statement alone is PostgreSQL's")
    admin = _postgres_or_skip()
    tx = Transactions(engine)
    try:
        (pid,) = tx.alone(_PID, {})[0]
        with admin.connect() as conn:
            conn.exec_driver_sql(f"SELECT pg_terminate_backend({pid}, 5000)")
        (other,) = tx.alone(_PID, {})[0]
        assert other != pid
    finally:
        admin.dispose()
