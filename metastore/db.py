"""Database connections, transactions and schema migrations."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import TypeVar

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session

T = TypeVar("T")

_WRITE = "colstats_write"


def create_engine(url: str, *, pool_size: int = 10) -> Engine:
    """An engine for URL, set up for many short transactions from many threads.

    On SQLite: foreign keys on (they carry the cascades), WAL so that readers never wait for
    a writer, a busy timeout, and write transactions that start with BEGIN IMMEDIATE so that
    two writers queue for the lock instead of failing with "database is locked" when both
    try to upgrade a read lock.
    """
    if url.startswith("sqlite"):
        engine = sa.create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=pool_size,
            max_overflow=pool_size,
        )
        _configure_sqlite(engine)
        return engine
    # No pre-ping: a dead connection is detected when a call uses it, and the call runs again
    # (metastore.service), instead of a round trip before every call.
    return sa.create_engine(url, pool_size=pool_size, max_overflow=pool_size)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        if engine.url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        write = conn.get_execution_options().get(_WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


class CommitOutcomeUnknown(Exception):
    """The connection to the database was lost during COMMIT: the transaction may or may not
    have been committed, so the call must not simply be run again."""


class Transactions:
    """Owns the engine and hands out one transaction per call."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._write_engine = engine.execution_options(**{_WRITE: True})
        # PostgreSQL runs a lone SELECT as a transaction of its own; sparing BEGIN and COMMIT
        # saves two round trips. (SQLite's transactions cost no round trip.)
        self._one_query_engine = (
            engine.execution_options(isolation_level="AUTOCOMMIT")
            if engine.dialect.name == "postgresql"
            else engine
        )

    def run(self, work: Callable[[Session], T], *, write: bool, one_query: bool = False) -> T:
        """WORK(session) in one transaction: committed if it returns, rolled back if it raises.

        ONE_QUERY: WORK is a read that makes one query (see metastore.service._call).

        Not a generator-based context manager on purpose: contextlib assigns __traceback__
        to the exception it re-raises, which the immutable Thrift exceptions refuse.
        """
        if write:
            bind = self._write_engine
        elif one_query:
            bind = self._one_query_engine
        else:
            bind = self.engine
        with Session(bind=bind, expire_on_commit=False, autoflush=False) as session:
            session.begin()
            try:
                result = work(session)
            except BaseException:
                session.rollback()
                raise
            try:
                session.commit()
            except sa.exc.DBAPIError as e:
                if e.connection_invalidated:
                    raise CommitOutcomeUnknown(
                        f"the database connection was lost while committing ({e.orig}); the "
                        "change may or may not have been made"
                    ) from e
                raise
            return result


# ------------------------------------------------------------------------------------------
# Migrations


def alembic_config(url: str) -> Config:
    """An Alembic configuration that runs the migrations shipped inside the package."""
    config = Config()
    script_location = resources.files("metastore.migrations")
    config.set_main_option("script_location", str(script_location))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def current_revision(url: str) -> str | None:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
