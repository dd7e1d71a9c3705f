"""Database connections and transactions: engines set up for many short transactions, one
transaction per call with its retries, and work to run after the commit or the rollback."""

from __future__ import annotations

import logging
import re
import select
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ClauseElement

from metastore.errors import OutcomeUnknown
from metastore.store import versions
from metastore.store.driver import bound, on_driver
from metastore.store.driver import cursor as driver_cursor

T = TypeVar("T")

log = logging.getLogger(__name__)

_WRITE = "colstats_write"


def create_engine(url: str, *, pool_size: int = 10) -> Engine:
    """An engine for URL, set up for many short transactions from many threads.

    On SQLite: foreign keys on (they carry the cascades), WAL so that readers never wait for
    a writer, a busy timeout, and write transactions that start with BEGIN IMMEDIATE so that
    two writers queue for the lock instead of failing with "database is locked" when both
    try to upgrade a read lock.
    """
    if url.startswith("sqlite"):
        connect_args = {"check_same_thread": False, "timeout": 30}
        if make_url(url).database in (None, "", ":memory:"):
            # A database in memory lives in its connection: one, shared (for tools and
            # tests; `metastore serve` refuses it).
            engine = sa.create_engine(url, connect_args=connect_args, poolclass=sa.StaticPool)
        else:
            engine = sa.create_engine(
                url, connect_args=connect_args, pool_size=pool_size, max_overflow=pool_size
            )
        _configure_sqlite(engine)
        return engine
    # No pre-ping: a dead connection is detected when a call uses it, and the call runs again
    # (Transactions.run), instead of a round trip before every call.
    engine = sa.create_engine(url, pool_size=pool_size, max_overflow=pool_size)
    if engine.dialect.name == "postgresql":
        _configure_postgresql(engine)
    return engine


def _configure_postgresql(engine: Engine) -> None:
    """Prepared statements on a plan made once per connection (plan_cache_mode
    force_generic_plan, which overrides the database's and the role's settings), unless the
    URL's `options` set plan_cache_mode themselves. psycopg2 prepares no statement: with it
    the setting changes nothing.

    psycopg 3 prepares a statement on the server at its sixth run on a connection. Left to
    choose (plan_cache_mode auto), PostgreSQL then plans each call for its values unless the
    generic plan is estimated to cost no more, and on a large metastore its estimates kept it
    planning, at every call, statements whose plan never changes: lookups by name, id or key
    value through the schema's indexes. In process, on a table of 10,000 partitions, with
    auto against with this setting (p50 of 30 calls, three runs each): a day's partition
    names by value 0.36 against 0.20 ms, a day's partitions by filter 1.58 against 1.25,
    a partition by name 0.84 against 0.73, partitions of a month by `like` 15.2 against
    14.4; a filter of three hours, 1,200 partitions, 25.1 against 26.6 ms.

    JIT compilation off (jit = off), unless the URL's `options` set jit: the metastore's
    statements are short lookups, and PostgreSQL compiles a plan whose estimated cost is
    above jit_above_cost at every run. A generic plan's estimates, made without the values,
    can be that high: the statement that reads a table's versions with what changed in its
    partitions (metastore.hms.held), which runs in 0.2 ms, took 400 ms with JIT on, 366 of
    them compiling."""
    options = str(engine.url.query.get("options", "")).lower()
    generic_plans = "plan_cache_mode" not in options
    compiled = re.search(r"\bjit\s*=", options) is not None

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record) -> None:  # type: ignore[no-untyped-def]
        cursor = dbapi_connection.cursor()
        # In a database adopted from HMS, HMS's changes move table versions by triggers
        # (metastore.store.adopt); colstats moves those of its own changes itself.
        cursor.execute("SET colstats.writer = 'on'")
        if generic_plans and dbapi_connection.info.server_version >= 120000:  # from PG 12
            cursor.execute("SET plan_cache_mode = force_generic_plan")
        if not compiled and dbapi_connection.info.server_version >= 110000:  # from PG 11
            cursor.execute("SET jit = off")
        cursor.close()
        dbapi_connection.commit()  # a setting made in a transaction ends with it


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
        # ANALYZE samples this many rows per index (store.refresh_partition_statistics).
        cursor.execute("PRAGMA analysis_limit=1000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        write = conn.get_execution_options().get(_WRITE, False)
        on_driver(conn, "BEGIN IMMEDIATE" if write else "BEGIN", (), fetch=False)


_ON_COMMIT = "colstats_on_commit"
_ON_ROLLBACK = "colstats_on_rollback"


def on_commit(session: Session, action: Callable[[], object]) -> None:
    """Run ACTION once the transaction of SESSION has committed (a file operation that must
    not happen when the change is rolled back, such as deleting a dropped table's data)."""
    session.info.setdefault(_ON_COMMIT, []).append(action)


def on_rollback(session: Session, undo: Callable[[], object]) -> None:
    """Run UNDO if the transaction of SESSION is rolled back (to undo a file operation made
    inside it, such as moving a renamed table's folder)."""
    session.info.setdefault(_ON_ROLLBACK, []).append(undo)


def parse_url(url: str) -> sa.URL:
    """URL's parts (backend, driver, database, ...); ArgumentError when it does not parse."""
    return make_url(url)


def safe_url(url: str) -> str:
    """URL without its password, for logs and messages."""
    return make_url(url).render_as_string(hide_password=True)


# PostgreSQL's deadlock_detected and serialization_failure: the transaction was rolled back
# and running it again is the remedy PostgreSQL documents.
_SERIALIZATION_FAILURE = "40001"
_RETRYABLE_SQLSTATES = frozenset({"40P01", _SERIALIZATION_FAILURE})
ATTEMPTS = 3


def sqlstate(error: DBAPIError) -> str | None:
    """The SQLSTATE of a PostgreSQL error: psycopg 3 calls it sqlstate, psycopg2 pgcode."""
    orig = error.orig
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return str(code) if code else None


_POOLED_CONNECTIONS_AT_MOST = 64
"""More than a pool holds (create_engine's pool_size and overflow): after that many closed
ones, the next connection is a new one."""


def _idle_and_open(driver: Any) -> bool:
    """Whether the socket of DRIVER (a PostgreSQL driver's connection, idle) has nothing to
    read: the database has sent no closing message nor closed it (either makes it readable,
    or hung up). Polled without waiting, nothing read (2 µs, against 9 for a look through a
    duplicate of the socket)."""
    try:
        fileno = driver.fileno()
    except Exception:  # closed on this side
        return False
    poller = select.poll()
    poller.register(fileno, select.POLLIN)
    return not poller.poll(0)


class Transactions:
    """Owns the engine and hands out one transaction per call."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._write_engine = engine.execution_options(**{_WRITE: True})
        # Reads on PostgreSQL run each statement as a transaction of its own: at READ
        # COMMITTED every statement of a transaction sees its own snapshot anyway, so sparing
        # BEGIN and COMMIT changes no answer and saves two round trips per call. (SQLite's
        # transactions cost no round trip, and there a read sees one snapshot.)
        self._read_engine = (
            engine.execution_options(isolation_level="AUTOCOMMIT")
            if engine.dialect.name == "postgresql"
            else engine
        )
        # For `query`: SQLite's connections run outside a transaction unless BEGIN is sent
        # (_configure_sqlite); PostgreSQL's drivers begin one unless told not to.
        self._driver_autocommit = engine.dialect.name == "postgresql"

    def query(self, statement: ClauseElement, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of one read STATEMENT (built once, as for `driver_rows`) with PARAMS, run
        on a pooled connection's driver outside a transaction (as its own snapshot), without
        SQLAlchemy's statement machinery: for the one statement on the path of every call
        served through the cache of answers, where that machinery costs several times the
        statement (measured on one statement by primary key: 347 µs against 45 µs on SQLite,
        527 µs against 213 µs on PostgreSQL, where BEGIN and ROLLBACK are two more round
        trips). A connection that fails is discarded, so a dead one is not handed out again.
        """
        sql, values = bound(statement, self.engine.dialect, params)
        pooled = self.engine.raw_connection()
        try:
            driver = pooled.driver_connection
            autocommit = self._driver_autocommit
            if autocommit:
                driver.autocommit = True  # type: ignore[union-attr]
            cursor = driver_cursor(driver, self.engine.dialect)
            cursor.execute(sql, values)
            rows = [tuple(row) for row in cursor.fetchall()]
            cursor.close()
            if autocommit:
                driver.autocommit = False  # type: ignore[union-attr]
        except BaseException:
            pooled.invalidate()
            raise
        finally:
            pooled.close()
        return rows

    def alone(self, statement: ClauseElement, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """The rows of one write STATEMENT (built once, as for `driver_rows`) with PARAMS, run
        on PostgreSQL as a transaction of its own (the driver's autocommit), on a pooled
        connection's driver: for a change that is all of one statement, checked before it or
        by it (metastore.stats.one_statement, metastore.store.partition_add), which then
        costs one round trip, without those of BEGIN and COMMIT.

        The statement is its own commit, so a connection lost while it ran leaves the change
        made or not: OutcomeUnknown, not tried again (as a commit's in `run`). A connection
        the database closed while it was idle in the pool (it restarted) is told by its
        socket before anything is sent, and another taken. Other errors are raised as
        SQLAlchemy's, so that `run` tries the work again after a deadlock or a lost race:
        such a statement changed nothing."""
        dialect = self.engine.dialect
        sql, values = bound(statement, dialect, params)
        pooled = self._open_connection()
        driver: Any = pooled.driver_connection
        lost = False
        try:
            driver.autocommit = True
            cursor = driver_cursor(driver, dialect)
            try:
                cursor.execute(sql, values)
                return [tuple(row) for row in cursor.fetchall()]
            finally:
                cursor.close()
        except dialect.loaded_dbapi.Error as e:
            lost = dialect.is_disconnect(e, driver, None)
            if lost:
                raise OutcomeUnknown(
                    f"the database connection was lost while writing ({e}); the change may "
                    "or may not have been made"
                ) from e
            raise DBAPIError.instance(sql, values, e, dialect.loaded_dbapi.Error) from e
        except BaseException:
            lost = True  # interrupted in the middle: the connection's state is not known
            raise
        finally:
            if lost:
                pooled.invalidate()
            else:
                driver.autocommit = False
            pooled.close()

    def _open_connection(self) -> Any:
        """A pooled connection whose socket says the database has not closed it: an idle
        connection has nothing to read, and one the database closed (as when it restarts)
        has its last message or the end of the stream. Those found closed are discarded."""
        for _ in range(_POOLED_CONNECTIONS_AT_MOST):
            pooled = self.engine.raw_connection()
            if _idle_and_open(pooled.driver_connection):
                return pooled
            pooled.invalidate()
            pooled.close()
        return self.engine.raw_connection()

    def run(
        self, work: Callable[[Session], T], *, name: str, write: bool, attempts: int = ATTEMPTS
    ) -> T:
        """WORK(session) in one transaction (for a read on PostgreSQL, one per statement: see
        __init__), again after a failure that a new attempt fixes. NAME names the work in log
        lines; WRITE marks a change.

        Run again (at most ATTEMPTS times in all, or as the caller says: a transaction at
        REPEATABLE READ that races others, as metastore.store.locks.take does, expects to lose
        such races):

        * a write that lost a race for a unique key to a concurrent call: it now sees the
          other call's row;
        * a deadlock or serialization failure: the database rolled the transaction back;
        * a database connection that turned out to be dead before the commit (the database
          restarted, or a proxy dropped it): SQLAlchemy has discarded the pool's old
          connections and the next attempt takes a new one. This replaces a liveness check
          before every call, a round trip each time. A connection lost during the commit
          itself is not retried: the commit may have happened (metastore.errors.OutcomeUnknown).
        """
        for attempt in range(1, attempts + 1):
            try:
                return self._once(work, write=write)
            except IntegrityError:
                if not write or attempt == attempts:
                    raise
                log.info("%s collided with a concurrent write; running it again", name)
            except DBAPIError as e:
                state = sqlstate(e)
                if attempt == attempts or not (
                    e.connection_invalidated or state in _RETRYABLE_SQLSTATES
                ):
                    raise
                if state == _SERIALIZATION_FAILURE and attempts > ATTEMPTS:
                    log.debug("%s lost a race (%s); running it again", name, state)
                    continue
                log.warning("%s failed (%s); running it again", name, str(e.orig).strip())
        raise AssertionError("unreachable")

    def _once(self, work: Callable[[Session], T], *, write: bool) -> T:
        """WORK(session) in one transaction: committed if it returns, rolled back if it raises.

        Not a generator-based context manager on purpose: contextlib assigns __traceback__
        to the exception it re-raises, which the immutable Thrift exceptions refuse.
        """
        bind = self._write_engine if write else self._read_engine
        with Session(bind=bind, expire_on_commit=False, autoflush=False) as session:
            # The transaction begins with the work's first statement: work that runs none
            # (a write made alone, Transactions.alone) commits nothing and saves the
            # session's commit.
            versions.begin(session, write=write)
            try:
                result = work(session)
                if write and session.in_transaction():
                    session.flush()
                    versions.bump(session)
            except BaseException:
                session.rollback()
                for undo in reversed(session.info.get(_ON_ROLLBACK, [])):
                    undo()
                raise
            try:
                if session.in_transaction():
                    session.commit()
            except DBAPIError as e:
                if e.connection_invalidated:
                    raise OutcomeUnknown(
                        f"the database connection was lost while committing ({e.orig}); the "
                        "change may or may not have been made"
                    ) from e
                for undo in reversed(session.info.get(_ON_ROLLBACK, [])):
                    undo()
                raise
            for then in session.info.get(_ON_COMMIT, []):
                try:
                    then()
                except Exception:  # the change is committed: report, do not fail the call
                    log.exception("an action after the commit failed")
            return result
