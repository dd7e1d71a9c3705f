"""HMS locks, kept in HIVE_LOCKS as HMS keeps them: the locks Iceberg's Hive catalog (and
Trino, and Hive's own clients) take around a commit.

A lock is one or more components (a database, a table or a partition, and a type), taken all
or nothing. Every server on a database shares them: nothing about a lock lives in a server's
memory, and the clock that times them out is the database's.

* `take` gives a lock the next id of NEXT_LOCK_ID and writes its components; it is ACQUIRED
  at once when no component conflicts with a lock of a lower id (ACQUIRED or WAITING: first
  come, first served), else WAITING.
* `check` heartbeats a lock and tries again; `heartbeat` only heartbeats; `release` removes
  a lock, held or waiting; `listed` shows them.
* A lock whose last heartbeat is older than the timeout (HMS's hive.txn.timeout) counts as
  gone: it blocks nothing, cannot be checked or heartbeated, and is deleted by the next
  `take` or `check`. So a client that dies holding a lock blocks its table for the timeout
  at most.

Which locks conflict is Hive 4's rule (its CheckLockFunction), for a requested component and
a lower lock on an object that covers it or that it covers (a database covers its tables, a
table its partitions): EXCLUSIVE conflicts with everything but a database's SHARED_READ under
a table's lock; SHARED_READ with EXCLUSIVE (but a table's EXCLUSIVE under a database's
SHARED_READ); SHARED_WRITE with EXCLUSIVE and EXCL_WRITE; EXCL_WRITE with all but
SHARED_READ. HMS 2.3, which has no EXCL_WRITE, differs twice: it made SHARED_WRITE wait for
SHARED_WRITE, and it let a SHARED_READ pass an earlier EXCLUSIVE that was itself waiting, so
that readers coming in turn could starve a writer (tests/hms/test_locks_hms.py).

A `lock` call sent again after its answer was lost must not leave a second lock behind the
first: when the request carries an agentInfo of its own (Java Iceberg sends
"Iceberg-<uuid>" per commit), a live lock of the same user, host, agentInfo and components is
answered instead of a new one. Requests with the default agentInfo ("Unknown", as pyiceberg
sends) cannot be told apart from another writer's, so they always take a new lock.

Statements. On PostgreSQL each call is one statement. `take` runs at REPEATABLE READ: two
`take`s both move NEXT_LOCK_ID's row, so the later one fails with a serialization failure
instead of deciding on a snapshot that misses the earlier lock, and runs again
(`TAKE_ATTEMPTS`); at READ COMMITTED it would wait for the row and then check the locks as
they were before the wait. On SQLite, where one writer runs at a time, `take` is a few
statements in one transaction.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import re
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy import TextClause, text
from sqlalchemy.orm import Session

from metastore.errors import InvalidInput, NotFound
from metastore.store import lists
from metastore.store.driver import driver_rows

TAKE_ATTEMPTS = 50
"""How often a `take` runs again after losing the race for NEXT_LOCK_ID on PostgreSQL: each
round, one of the takes at once wins, so this many writers may lock in the same instant."""

DEFAULT_AGENT = "Unknown"
"""The agentInfo of a request that sets none (the IDL's default)."""


class LockType(enum.Enum):
    """A component's type, as HIVE_LOCKS spells it."""

    SHARED_READ = "r"
    SHARED_WRITE = "w"
    EXCLUSIVE = "e"
    EXCL_WRITE = "x"


class LockState(enum.Enum):
    ACQUIRED = "a"
    WAITING = "w"


class NoSuchLock(NotFound):
    """A lock id that is not held: never taken, released, or timed out."""


class LockOfTransaction(InvalidInput):
    """A lock of a Hive transaction (in a database HMS shares), which unlock cannot remove."""


@dataclasses.dataclass(frozen=True)
class Component:
    """What one component locks: database DB, its table TABLE (None: the whole database) and
    the table's partition PARTITION (None: the whole table)."""

    type: LockType
    db: str
    table: str | None = None
    partition: str | None = None


@dataclasses.dataclass(frozen=True)
class Requester:
    """Who asks for a lock, as `show_locks` shows it."""

    user: str
    host: str
    agent_info: str = DEFAULT_AGENT


@dataclasses.dataclass(frozen=True)
class Lock:
    """One component of a lock, as `listed` gives it; times in milliseconds since the epoch
    by the database's clock."""

    lock_id: int
    component_id: int
    db: str
    table: str | None
    partition: str | None
    state: LockState
    type: LockType
    txn_id: int
    last_heartbeat: int
    acquired_at: int | None
    user: str
    host: str
    heartbeat_count: int
    agent_info: str | None
    blocked_by: tuple[int, int] | None
    """The (lock id, component id) of the lock this component waits for."""


# The text columns of HIVE_LOCKS whose widths a lock's names are checked against before it
# is written, so that a name too long is refused with its name, not with the database's
# error. The widths are the database's own: HL_TABLE is 256 wide in colstats's schema and
# Hive 4's, 128 in the HMS 2.3 and 3.1 databases colstats adopts.
_WIDTH_COLUMNS = {
    "database": "HL_DB",
    "table": "HL_TABLE",
    "partition": "HL_PARTITION",
    "user": "HL_USER",
    "host": "HL_HOST",
}
_AGENT_WIDTH = 128


def take(
    s: Session, components: Sequence[Component], requester: Requester, timeout_ms: int
) -> tuple[int, LockState]:
    """Lock COMPONENTS for REQUESTER: the new lock's id and state (or those of the same
    request's live lock, see the module docstring). On PostgreSQL the transaction of S must
    not have run a statement yet (it is set to REPEATABLE READ), and a serialization failure
    means: run it again."""
    if not components:
        raise InvalidInput("a lock needs at least one component")
    dialect = s.get_bind().dialect.name
    if dialect == "postgresql":
        s.connection(execution_options={"isolation_level": "REPEATABLE READ"})
    _check_widths(_tables(s).widths, components, requester)
    agent = requester.agent_info[:_AGENT_WIDTH] if requester.agent_info else None
    key = agent if agent and agent != DEFAULT_AGENT else None
    params: dict[str, Any] = {
        "user": requester.user,
        "host": requester.host,
        "agent": agent,
        "agent_key": key,
        "timeout": timeout_ms,
        "count": len(components),
    }
    if dialect == "postgresql":
        params.update(
            types=lists.array_text(c.type.value for c in components),
            dbs=lists.array_text(c.db for c in components),
            tables=lists.array_text(c.table for c in components),
            parts=lists.array_text(c.partition for c in components),
        )
        rows = driver_rows(s, _sql(s, _take_postgresql), params)
        if not rows:
            raise RuntimeError("NEXT_LOCK_ID has no row: the schema's migration did not run")
        lock_id, state = rows[0]
        return int(lock_id), LockState(state)
    driver_rows(s, _sql(s, _sweep, dialect), {"timeout": timeout_ms})
    wanted = [(i, c.type.value, c.db, c.table, c.partition) for i, c in enumerate(components, 1)]
    if key is not None:
        found = driver_rows(s, _sql(s, _same_sqlite), {**params, "wanted": _wanted_json(wanted)})
        if found:
            return int(found[0][0]), LockState(found[0][1])
    taken = driver_rows(s, _sql(s, _next_id), {})
    if not taken:
        raise RuntimeError("NEXT_LOCK_ID has no row: the schema's migration did not run")
    lock_id = int(taken[0][0])
    for int_id, type_, db, table, partition in wanted:
        driver_rows(
            s,
            _sql(s, _insert_waiting, dialect),
            {
                "id": lock_id,
                "int_id": int_id,
                "db": db,
                "tbl": table,
                "part": partition,
                "type": type_,
                "user": requester.user,
                "host": requester.host,
                "agent": agent,
            },
        )
    states = driver_rows(s, _sql(s, _check, dialect), {"id": lock_id, "timeout": timeout_ms})
    return lock_id, _state_of(states)


def check(s: Session, lock_id: int, timeout_ms: int) -> LockState:
    """Heartbeat lock LOCK_ID and try to acquire it (when it waits): its state now.
    NoSuchLock when it is not held."""
    dialect = s.get_bind().dialect.name
    if dialect != "postgresql":
        driver_rows(s, _sql(s, _sweep, dialect), {"timeout": timeout_ms})
    rows = driver_rows(s, _sql(s, _check, dialect), {"id": lock_id, "timeout": timeout_ms})
    if not rows:
        raise NoSuchLock(f"lock {lock_id} is not held (never taken, released or timed out)")
    return _state_of(rows)


def heartbeat(s: Session, lock_id: int, timeout_ms: int) -> None:
    """Tell that lock LOCK_ID's holder is alive. NoSuchLock when it is not held."""
    dialect = s.get_bind().dialect.name
    if not driver_rows(s, _sql(s, _heartbeat, dialect), {"id": lock_id, "timeout": timeout_ms}):
        raise NoSuchLock(f"lock {lock_id} is not held (never taken, released or timed out)")


def release(s: Session, lock_id: int) -> bool:
    """Remove lock LOCK_ID, acquired or waiting; whether there was one. A lock of a Hive
    transaction (in a database HMS shares) is not removed: LockOfTransaction."""
    if driver_rows(s, _sql(s, _release), {"id": lock_id}):
        return True
    txns = driver_rows(s, _sql(s, _txn_of), {"id": lock_id})
    if txns:
        raise LockOfTransaction(
            f"lock {lock_id} belongs to Hive transaction {txns[0][0]}: it ends with the "
            "transaction, not with unlock"
        )
    return False


def listed(
    s: Session,
    timeout_ms: int,
    *,
    db: str | None = None,
    table: str | None = None,
    partition: str | None = None,
    txn_id: int | None = None,
) -> list[Lock]:
    """The live locks, by lock id and component, of database DB, table TABLE, partition
    PARTITION and transaction TXN_ID (each when given)."""
    dialect = s.get_bind().dialect.name
    params = {
        "timeout": timeout_ms,
        "db": db,
        "tbl": table,
        "part": partition,
        "txn": txn_id,
    }
    return [
        Lock(
            lock_id=int(row[0]),
            component_id=int(row[1]),
            txn_id=int(row[2]),
            db=row[3],
            table=row[4],
            partition=row[5],
            state=LockState(row[6]),
            type=LockType(row[7]),
            last_heartbeat=int(row[8]),
            acquired_at=None if row[9] is None else int(row[9]),
            user=row[10],
            host=row[11],
            heartbeat_count=int(row[12] or 0),
            agent_info=row[13],
            blocked_by=None if row[14] is None else (int(row[14]), int(row[15] or 0)),
        )
        for row in driver_rows(s, _sql(s, _listed, dialect), params)
    ]


def _check_widths(
    widths: dict[str, int], components: Sequence[Component], requester: Requester
) -> None:
    for what, value in (("user", requester.user), ("host", requester.host)):
        if len(value) > widths[what]:
            raise InvalidInput(f"a lock's {what} name is longer than {widths[what]} characters")
    for c in components:
        for what, name in (("database", c.db), ("table", c.table), ("partition", c.partition)):
            if name is not None and len(name) > widths[what]:
                raise InvalidInput(
                    f"a lock's {what} name is longer than {widths[what]} characters: {name!r}"
                )


def _state_of(rows: Sequence[Sequence[Any]]) -> LockState:
    """The state of a lock from its components' states: all or nothing, so any waiting
    component means the lock waits."""
    return LockState.WAITING if any(r[0] == "w" for r in rows) else LockState.ACQUIRED


def _wanted_json(wanted: Sequence[tuple[int, str, str, str | None, str | None]]) -> str:
    return json.dumps([list(w) for w in wanted])


# -- SQL ------------------------------------------------------------------------------------
# HMS 2.3's and 3.1's scripts for PostgreSQL make the lock tables without quoting their names,
# so that PostgreSQL keeps them in lower case (hive_locks); colstats's schema and Hive 4's
# quote them (HIVE_LOCKS). In a database adopted from HMS colstats uses HMS's own, so that the
# two servers share the locks (metastore.store.adopt): the statements below are written for
# the quoted names, and rewritten for the others.

_QUOTED = re.compile(r'"(HIVE_LOCKS|NEXT_LOCK_ID|HL_[A-Z_]+|NL_[A-Z_]+)"')


@dataclasses.dataclass(frozen=True)
class _LockTables:
    """The lock tables of one database: whether their names are in lower case, and the
    widths of HIVE_LOCKS' text columns (by _WIDTH_COLUMNS' names)."""

    lower: bool
    widths: dict[str, int]


_FOUND: weakref.WeakKeyDictionary[sa.Engine, _LockTables] = weakref.WeakKeyDictionary()


def _tables(s: Session) -> _LockTables:
    """The lock tables of the database of S (found once per engine)."""
    engine = s.get_bind()
    assert isinstance(engine, sa.Engine)
    found = _FOUND.get(engine)
    if found is None:
        inspector = sa.inspect(s.connection())
        names = set(inspector.get_table_names())
        lower = "HIVE_LOCKS" not in names and "hive_locks" in names
        types = {
            c["name"].upper(): c["type"]
            for c in inspector.get_columns("hive_locks" if lower else "HIVE_LOCKS")
        }
        widths = {}
        for what, column in _WIDTH_COLUMNS.items():
            type_ = types[column]
            assert isinstance(type_, sa.String) and type_.length is not None, (column, type_)
            widths[what] = type_.length
        found = _FOUND[engine] = _LockTables(lower, widths)
    return found


def _sql(s: Session, build: Callable[..., str], *args: str) -> TextClause:
    """The statement BUILD(*ARGS) for the lock tables of the database of S."""
    return _styled(build, args, _tables(s).lower)


@functools.cache
def _styled(build: Callable[..., str], args: tuple[str, ...], lower: bool) -> TextClause:
    sql = build(*args)
    if lower:
        sql = _QUOTED.sub(lambda found: found.group(1).lower(), sql)
    return text(sql)


# Written as text: the statements are shaped by what one database can do in one statement
# (data-modifying CTEs on PostgreSQL), and the rule of conflicts is one fragment shared by
# every statement that decides.

_COLUMNS = (
    '"HL_LOCK_EXT_ID", "HL_LOCK_INT_ID", "HL_TXNID", "HL_DB", "HL_TABLE", "HL_PARTITION", '
    '"HL_LOCK_STATE", "HL_LOCK_TYPE", "HL_LAST_HEARTBEAT", "HL_ACQUIRED_AT", "HL_USER", '
    '"HL_HOST", "HL_HEARTBEAT_COUNT", "HL_AGENT_INFO", "HL_BLOCKEDBY_EXT_ID", '
    '"HL_BLOCKEDBY_INT_ID"'
)


def _now(dialect: str) -> str:
    """The database's clock in milliseconds since the epoch (PostgreSQL: as of the
    transaction's start)."""
    if dialect == "postgresql":
        return "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)"
    return "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"


def _alive(lock: str, dialect: str) -> str:
    """LOCK (an alias of HIVE_LOCKS) is live: heartbeated within :timeout ms, or part of a
    Hive transaction (whose heartbeats HMS keeps elsewhere)."""
    return f'({lock}."HL_TXNID" <> 0 OR {lock}."HL_LAST_HEARTBEAT" >= {_now(dialect)} - :timeout)'


def _conflicts(type_: str, db: str, tbl: str, part: str, held: str) -> str:
    """A requested component (the SQL expressions TYPE_, DB, TBL, PART) conflicts with lock
    HELD (an alias of HIVE_LOCKS): their objects overlap and Hive 4's rule says so (see the
    module docstring)."""
    return f"""(
        {held}."HL_DB" = {db}
        AND ({held}."HL_TABLE" IS NULL OR {tbl} IS NULL OR ({held}."HL_TABLE" = {tbl}
             AND ({held}."HL_PARTITION" IS NULL OR {part} IS NULL
                  OR {held}."HL_PARTITION" = {part})))
        AND (({type_} = 'r' AND {held}."HL_LOCK_TYPE" = 'e'
              AND NOT ({held}."HL_TABLE" IS NOT NULL AND {tbl} IS NULL))
          OR ({type_} = 'e'
              AND NOT ({held}."HL_TABLE" IS NULL AND {held}."HL_LOCK_TYPE" = 'r'
                       AND {tbl} IS NOT NULL))
          OR ({type_} = 'w' AND {held}."HL_LOCK_TYPE" IN ('x', 'e'))
          OR ({type_} = 'x' AND {held}."HL_LOCK_TYPE" <> 'r'))
    )"""


# Which of the locks a component waits for show_locks names, as HMS 2.3 does: the nearest
# waiting one (the one it queues behind), else the newest holder.
_NEAREST = (
    "CASE WHEN h.\"HL_LOCK_STATE\" = 'w' THEN 0 ELSE 1 END, "
    'h."HL_LOCK_EXT_ID" DESC, h."HL_LOCK_INT_ID"'
)


def _blocker(column: str, lock: str, dialect: str) -> str:
    """COLUMN of the lower live lock that component LOCK (an alias) waits for (_NEAREST)."""
    conflict = _conflicts(
        f'{lock}."HL_LOCK_TYPE"', f'{lock}."HL_DB"', f'{lock}."HL_TABLE"',
        f'{lock}."HL_PARTITION"', "h",
    )  # fmt: skip
    return f"""(SELECT h."{column}" FROM "HIVE_LOCKS" h
        WHERE h."HL_LOCK_EXT_ID" < {lock}."HL_LOCK_EXT_ID" AND {_alive("h", dialect)}
          AND {conflict}
        ORDER BY {_NEAREST} LIMIT 1)"""


@functools.cache
def _take_postgresql() -> str:
    """`take` on PostgreSQL in one statement: the request's components (four arrays),
    the same request's live lock when it has an agentInfo of its own, the timed-out locks
    deleted, the next id taken (unless the lock exists), its components written ACQUIRED
    when no component has a blocker, else WAITING with their blockers."""
    now = _now("postgresql")
    conflict = _conflicts("w.type", "w.db", "w.tbl", "w.part", "h")
    return f"""
WITH wanted AS (
  SELECT c.n AS int_id, c.type, c.db, c.tbl, c.part
  FROM unnest(CAST(:types AS TEXT[]), CAST(:dbs AS TEXT[]), CAST(:tables AS TEXT[]),
              CAST(:parts AS TEXT[])) WITH ORDINALITY AS c(type, db, tbl, part, n)
),
same AS (
  SELECT l."HL_LOCK_EXT_ID" AS id, max(l."HL_LOCK_STATE") AS state
  FROM "HIVE_LOCKS" l
  WHERE CAST(:agent_key AS VARCHAR) IS NOT NULL AND l."HL_AGENT_INFO" = :agent_key
    AND l."HL_USER" = :user AND l."HL_HOST" = :host AND l."HL_TXNID" = 0
    AND {_alive("l", "postgresql")}
  GROUP BY l."HL_LOCK_EXT_ID"
  HAVING count(*) = :count AND count(*) = (
    SELECT count(*) FROM wanted w JOIN "HIVE_LOCKS" x
      ON x."HL_LOCK_EXT_ID" = l."HL_LOCK_EXT_ID" AND x."HL_LOCK_TYPE" = w.type
     AND x."HL_DB" = w.db AND x."HL_TABLE" IS NOT DISTINCT FROM w.tbl
     AND x."HL_PARTITION" IS NOT DISTINCT FROM w.part)
  ORDER BY 1 DESC LIMIT 1
),
expired AS (
  DELETE FROM "HIVE_LOCKS" h WHERE h."HL_TXNID" = 0 AND h."HL_LAST_HEARTBEAT" < {now} - :timeout
),
taken AS (
  UPDATE "NEXT_LOCK_ID" SET "NL_NEXT" = "NL_NEXT" + 1 WHERE NOT EXISTS (SELECT 1 FROM same)
  RETURNING "NL_NEXT" - 1 AS id
),
blockers AS (
  SELECT w.int_id, b.ext, b.int FROM wanted w LEFT JOIN LATERAL (
    SELECT h."HL_LOCK_EXT_ID" AS ext, h."HL_LOCK_INT_ID" AS int FROM "HIVE_LOCKS" h
    WHERE {_alive("h", "postgresql")} AND {conflict}
    ORDER BY {_NEAREST} LIMIT 1) b ON true
),
inserted AS (
  INSERT INTO "HIVE_LOCKS" ({_COLUMNS})
  SELECT t.id, w.int_id, 0, w.db, w.tbl, w.part,
         CASE WHEN blocked.yes THEN 'w' ELSE 'a' END, w.type, {now},
         CASE WHEN blocked.yes THEN NULL ELSE {now} END,
         :user, :host, 0, :agent, b.ext, b.int
  FROM taken t CROSS JOIN wanted w JOIN blockers b ON b.int_id = w.int_id
  CROSS JOIN (SELECT bool_or(ext IS NOT NULL) AS yes FROM blockers) blocked
  RETURNING "HL_LOCK_EXT_ID", "HL_LOCK_STATE"
)
SELECT "HL_LOCK_EXT_ID", max("HL_LOCK_STATE") FROM inserted GROUP BY 1
UNION ALL SELECT id, state FROM same
"""


@functools.cache
def _same_sqlite() -> str:
    """The same request's live lock on SQLite (see `_take_postgresql`'s `same`); :wanted is
    the components as JSON rows [int_id, type, db, table, partition]."""
    return f"""
SELECT l."HL_LOCK_EXT_ID", max(l."HL_LOCK_STATE") FROM "HIVE_LOCKS" l
WHERE l."HL_AGENT_INFO" = :agent_key AND l."HL_USER" = :user AND l."HL_HOST" = :host
  AND l."HL_TXNID" = 0 AND {_alive("l", "sqlite")}
GROUP BY l."HL_LOCK_EXT_ID"
HAVING count(*) = :count AND count(*) = (
  SELECT count(*) FROM json_each(:wanted) w JOIN "HIVE_LOCKS" x
    ON x."HL_LOCK_EXT_ID" = l."HL_LOCK_EXT_ID"
   AND x."HL_LOCK_TYPE" = json_extract(w.value, '$[1]')
   AND x."HL_DB" = json_extract(w.value, '$[2]')
   AND x."HL_TABLE" IS json_extract(w.value, '$[3]')
   AND x."HL_PARTITION" IS json_extract(w.value, '$[4]'))
ORDER BY 1 DESC LIMIT 1
"""


@functools.cache
def _sweep(dialect: str) -> str:
    """Delete the locks not heartbeated within :timeout ms (SQLite; PostgreSQL's `take` does
    it in its statement)."""
    return (
        f'DELETE FROM "HIVE_LOCKS" WHERE "HL_TXNID" = 0 '
        f'AND "HL_LAST_HEARTBEAT" < {_now(dialect)} - :timeout RETURNING "HL_LOCK_EXT_ID"'
    )


@functools.cache
def _next_id() -> str:
    return 'UPDATE "NEXT_LOCK_ID" SET "NL_NEXT" = "NL_NEXT" + 1 RETURNING "NL_NEXT" - 1'


@functools.cache
def _insert_waiting(dialect: str) -> str:
    now = _now(dialect)
    return f"""
INSERT INTO "HIVE_LOCKS" ({_COLUMNS})
VALUES (:id, :int_id, 0, :db, :tbl, :part, 'w', :type, {now}, NULL, :user, :host, 0, :agent,
        NULL, NULL)
RETURNING "HL_LOCK_INT_ID"
"""


@functools.cache
def _check(dialect: str) -> str:
    """Heartbeat lock :id and acquire it when none of its
    components has a blocker; the states of its components (none when it is not held).
    On PostgreSQL the timed-out locks are deleted in the same statement."""
    now = _now(dialect)
    conflict = _conflicts('r."HL_LOCK_TYPE"', 'r."HL_DB"', 'r."HL_TABLE"', 'r."HL_PARTITION"', "h")
    blocked = f"""EXISTS (SELECT 1 FROM "HIVE_LOCKS" r JOIN "HIVE_LOCKS" h
        ON h."HL_LOCK_EXT_ID" < r."HL_LOCK_EXT_ID" AND {_alive("h", dialect)} AND {conflict}
        WHERE r."HL_LOCK_EXT_ID" = :id)"""
    keep = f"""(l."HL_LOCK_STATE" = 'a' OR NOT {blocked})"""
    sweep = ""
    if dialect == "postgresql":
        sweep = f"""WITH expired AS (
  DELETE FROM "HIVE_LOCKS" x WHERE x."HL_TXNID" = 0 AND x."HL_LAST_HEARTBEAT" < {now} - :timeout
)
"""
    return f"""{sweep}UPDATE "HIVE_LOCKS" AS l SET
  "HL_LAST_HEARTBEAT" = {now},
  "HL_LOCK_STATE" = CASE WHEN {keep} THEN 'a' ELSE 'w' END,
  "HL_ACQUIRED_AT" = CASE WHEN l."HL_LOCK_STATE" = 'a' THEN l."HL_ACQUIRED_AT"
                          WHEN {keep} THEN {now} END,
  "HL_BLOCKEDBY_EXT_ID" = CASE WHEN {keep} THEN NULL
                               ELSE {_blocker("HL_LOCK_EXT_ID", "l", dialect)} END,
  "HL_BLOCKEDBY_INT_ID" = CASE WHEN {keep} THEN NULL
                               ELSE {_blocker("HL_LOCK_INT_ID", "l", dialect)} END
WHERE l."HL_LOCK_EXT_ID" = :id AND {_alive("l", dialect)}
RETURNING "HL_LOCK_STATE"
"""


@functools.cache
def _heartbeat(dialect: str) -> str:
    return f"""
UPDATE "HIVE_LOCKS" AS l SET "HL_LAST_HEARTBEAT" = {_now(dialect)}
WHERE l."HL_LOCK_EXT_ID" = :id AND {_alive("l", dialect)}
RETURNING "HL_LOCK_INT_ID"
"""


@functools.cache
def _release() -> str:
    return (
        'DELETE FROM "HIVE_LOCKS" WHERE "HL_LOCK_EXT_ID" = :id AND "HL_TXNID" = 0 '
        'RETURNING "HL_LOCK_INT_ID"'
    )


@functools.cache
def _txn_of() -> str:
    return 'SELECT "HL_TXNID" FROM "HIVE_LOCKS" WHERE "HL_LOCK_EXT_ID" = :id LIMIT 1'


@functools.cache
def _listed(dialect: str) -> str:
    return f"""
SELECT {_COLUMNS} FROM "HIVE_LOCKS" l
WHERE {_alive("l", dialect)}
  AND (CAST(:db AS VARCHAR) IS NULL OR l."HL_DB" = :db)
  AND (CAST(:tbl AS VARCHAR) IS NULL OR l."HL_TABLE" = :tbl)
  AND (CAST(:part AS VARCHAR) IS NULL OR l."HL_PARTITION" = :part)
  AND (CAST(:txn AS BIGINT) IS NULL OR l."HL_TXNID" = :txn)
ORDER BY l."HL_LOCK_EXT_ID", l."HL_LOCK_INT_ID"
"""
