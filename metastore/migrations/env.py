"""Alembic environment: runs the colstats migrations against the URL in the configuration.

The URL comes from the configuration's sqlalchemy.url (set by `metastore db upgrade --db URL`)
or, for plain `alembic upgrade head` in a checkout, from the METASTORE_DB environment variable.
"""

from __future__ import annotations

import os
import time

import sqlalchemy as sa
from alembic import context
from alembic.util import CommandError

from metastore.store.models import Base

# An arbitrary constant: the PostgreSQL advisory lock that serializes concurrent migrations.
MIGRATION_LOCK_ID = 0x636F6C73
LOCK_WAIT_SECONDS = 60
"""How long a server waits for another one's migrations."""

config = context.config
_url = config.get_main_option("sqlalchemy.url") or os.environ.get("METASTORE_DB")
if not _url:
    raise SystemExit("no database URL: set METASTORE_DB or pass --db to `metastore db upgrade`")
url: str = _url


def run_migrations() -> None:
    engine = sa.create_engine(url)
    try:
        _migrate(engine)
    finally:  # a failed migration (an unknown revision, a lock timeout) too
        engine.dispose()


def _migrate(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        if conn.dialect.name == "sqlite":
            # Batch migrations copy tables; cascades must not fire while they do.
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
        if conn.dialect.name == "postgresql":
            # Fail instead of hanging behind a stuck session.
            conn.exec_driver_sql("SET lock_timeout = '60s'")
            conn.commit()
            _wait_for_migration_lock(conn)
        conn.commit()
        try:
            context.configure(
                connection=conn,
                target_metadata=Base.metadata,
                render_as_batch=conn.dialect.name == "sqlite",
                compare_type=True,
                compare_server_default=True,
            )
            with context.begin_transaction():
                context.run_migrations()
        finally:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK_ID})")
                conn.commit()


def _wait_for_migration_lock(conn: sa.Connection) -> None:
    """Take the advisory lock of migrations on CONN's session, waiting for another migrating
    server. It is tried, not waited for in a statement: a session waiting in a statement
    holds a snapshot, and a migration that builds an index CONCURRENTLY (0004) waits for
    every snapshot older than its own, so two servers started at once on a new database
    deadlocked (one waiting for the lock, the other for its snapshot)."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        taken = conn.exec_driver_sql(f"SELECT pg_try_advisory_lock({MIGRATION_LOCK_ID})").scalar()
        conn.commit()
        if taken:
            return
        if time.monotonic() > deadline:
            raise CommandError(
                f"another server has been migrating this database for {LOCK_WAIT_SECONDS} s: "
                "wait for it to finish, or stop the session that holds advisory lock "
                f"{MIGRATION_LOCK_ID} (see pg_locks), then start again"
            )
        time.sleep(0.1)


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported")
run_migrations()
