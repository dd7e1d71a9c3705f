"""metastore.store.locks, called directly on SQLite and PostgreSQL: locks taken all or
nothing, acquired or waiting by Hive 4's rule of conflicts over what covers what, checked,
heartbeated, released, listed with who blocks them; timed out by the database's clock;
the same request's live lock answered again; every bad request refused with its reason; and
on PostgreSQL one statement per call."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TypeVar

import pytest
import sqlalchemy as sa
from core_builders import raises, statement_count
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.errors import InvalidInput
from metastore.store import locks
from metastore.store.locks import (
    Component,
    LockOfTransaction,
    LockState,
    LockType,
    NoSuchLock,
    Requester,
)
from metastore.store.transactions import Transactions

T = TypeVar("T")
MINUTE = 60_000
ALICE = Requester("alice", "host-1")
R, W, E, X = LockType.SHARED_READ, LockType.SHARED_WRITE, LockType.EXCLUSIVE, LockType.EXCL_WRITE
ACQUIRED, WAITING = LockState.ACQUIRED, LockState.WAITING


@pytest.fixture
def tx(store: sa.Engine) -> Transactions:
    return Transactions(store)


@pytest.fixture
def db() -> str:
    """A database name no other test locks."""
    return f"db_{uuid.uuid4().hex[:10]}"


def call(tx: Transactions, work: Callable[[Session], T]) -> T:
    """WORK in a transaction of its own, as the server runs each lock call."""
    return tx.run(work, name="lock call", write=True, attempts=locks.TAKE_ATTEMPTS)


def take(
    tx: Transactions,
    *components: Component,
    requester: Requester = ALICE,
    timeout: int = MINUTE,
) -> tuple[int, LockState]:
    return call(tx, lambda s: locks.take(s, components, requester, timeout))


def release(tx: Transactions, *lock_ids: int) -> None:
    for lock_id in lock_ids:
        call(tx, lambda s, i=lock_id: locks.release(s, i))  # type: ignore[misc]


# -- bad requests ------------------------------------------------------------------------------


def test_a_lock_needs_a_component(tx: Transactions) -> None:
    with raises(InvalidInput, "a lock needs at least one component"):
        take(tx)


LONG_DB, LONG_TABLE, LONG_PARTITION = "d" * 129, "t" * 257, "p=" + "v" * 766


@pytest.mark.parametrize(
    ("component", "requester", "message"),
    [
        (
            Component(E, LONG_DB),
            ALICE,
            f"a lock's database name is longer than 128 characters: {LONG_DB!r}",
        ),
        (
            Component(E, "d", LONG_TABLE),
            ALICE,
            f"a lock's table name is longer than 256 characters: {LONG_TABLE!r}",
        ),
        (
            Component(E, "d", "t", LONG_PARTITION),
            ALICE,
            f"a lock's partition name is longer than 767 characters: {LONG_PARTITION!r}",
        ),
        (
            Component(E, "d"),
            Requester("u" * 129, "h"),
            "a lock's user name is longer than 128 characters",
        ),
        (
            Component(E, "d"),
            Requester("u", "h" * 129),
            "a lock's host name is longer than 128 characters",
        ),
    ],
    ids=["database", "table", "partition", "user", "host"],
)
def test_names_wider_than_the_lock_table_are_refused_with_the_width(
    tx: Transactions, component: Component, requester: Requester, message: str
) -> None:
    with raises(InvalidInput, message):
        take(tx, component, requester=requester)


def test_names_as_wide_as_the_lock_table_and_a_long_agent_are_kept(tx: Transactions) -> None:
    component = Component(E, "d" * 128, "t" * 256, "p=" + "v" * 765)
    requester = Requester("u" * 128, "h" * 128, "Iceberg-" + "a" * 200)
    lock_id, state = take(tx, component, requester=requester)
    try:
        assert state is ACQUIRED
        (listed,) = call(tx, lambda s: locks.listed(s, MINUTE, db="d" * 128))
        assert (listed.table, listed.partition, listed.user) == (
            component.table,
            component.partition,
            requester.user,
        )
        assert listed.agent_info == requester.agent_info[:128]  # cut to the column's width
    finally:
        release(tx, lock_id)


def test_a_lock_that_is_not_held_cannot_be_checked_or_heartbeated(tx: Transactions) -> None:
    message = "lock 987654321 is not held (never taken, released or timed out)"
    with raises(NoSuchLock, message):
        call(tx, lambda s: locks.check(s, 987654321, MINUTE))
    with raises(NoSuchLock, message):
        call(tx, lambda s: locks.heartbeat(s, 987654321, MINUTE))
    assert call(tx, lambda s: locks.release(s, 987654321)) is False


# -- taking, waiting, releasing ----------------------------------------------------------------


def test_a_lock_waits_for_a_conflicting_one_and_gets_it_once_released(
    tx: Transactions, db: str
) -> None:
    first, state = take(tx, Component(E, db, "t"))
    assert state is ACQUIRED
    second, state = take(tx, Component(E, db, "t"), requester=Requester("bob", "host-2"))
    assert state is WAITING and second > first
    assert call(tx, lambda s: locks.check(s, second, MINUTE)) is WAITING
    listed = call(tx, lambda s: locks.listed(s, MINUTE, db=db))
    assert [(lk.lock_id, lk.component_id, lk.state, lk.blocked_by) for lk in listed] == [
        (first, 1, ACQUIRED, None),
        (second, 1, WAITING, (first, 1)),
    ]
    holder, waiter = listed
    assert (holder.user, holder.host, holder.txn_id, holder.type) == ("alice", "host-1", 0, E)
    assert holder.acquired_at is not None and holder.acquired_at >= holder.last_heartbeat - MINUTE
    assert waiter.acquired_at is None and waiter.user == "bob"
    assert call(tx, lambda s: locks.release(s, first)) is True
    assert call(tx, lambda s: locks.release(s, first)) is False
    assert call(tx, lambda s: locks.check(s, second, MINUTE)) is ACQUIRED
    (now_held,) = call(tx, lambda s: locks.listed(s, MINUTE, db=db))
    assert (now_held.state, now_held.blocked_by, now_held.acquired_at is not None) == (
        ACQUIRED,
        None,
        True,
    )
    call(tx, lambda s: locks.heartbeat(s, second, MINUTE))
    release(tx, second)
    assert call(tx, lambda s: locks.listed(s, MINUTE, db=db)) == []


def test_a_lock_of_several_components_is_all_or_nothing(tx: Transactions, db: str) -> None:
    held, _ = take(tx, Component(E, db, "b"))
    both, state = take(tx, Component(R, db, "a"), Component(R, db, "b"))
    assert state is WAITING
    listed = call(tx, lambda s: locks.listed(s, MINUTE, db=db))
    assert [(lk.lock_id, lk.table, lk.state) for lk in listed] == [
        (held, "b", ACQUIRED),
        (both, "a", WAITING),  # waits, though "a" is free: all or nothing
        (both, "b", WAITING),
    ]
    # A third lock of "a" alone is not held up by the waiting one: reads share.
    reader, state = take(tx, Component(R, db, "a"))
    assert state is ACQUIRED
    release(tx, held)
    assert call(tx, lambda s: locks.check(s, both, MINUTE)) is ACQUIRED
    release(tx, both, reader)


def test_first_come_first_served_behind_a_waiting_lock(tx: Transactions, db: str) -> None:
    reader, _ = take(tx, Component(R, db, "t"))
    writer, state = take(tx, Component(E, db, "t"))
    assert state is WAITING
    # A later reader waits behind the waiting writer (HMS 2.3 let it pass).
    late, state = take(tx, Component(R, db, "t"))
    assert state is WAITING
    (blocked,) = call(tx, lambda s: locks.listed(s, MINUTE, db=db, table="t"))[2:]
    assert blocked.blocked_by == (writer, 1)  # the nearest waiting one
    release(tx, reader)
    assert call(tx, lambda s: locks.check(s, late, MINUTE)) is WAITING
    assert call(tx, lambda s: locks.check(s, writer, MINUTE)) is ACQUIRED
    release(tx, writer)
    assert call(tx, lambda s: locks.check(s, late, MINUTE)) is ACQUIRED
    release(tx, late)


# Hive 4's rule on one object: does a requested type wait for a held one?
CONFLICTS = {
    (E, E): True, (E, R): True, (E, W): True, (E, X): True,
    (R, E): True, (R, R): False, (R, W): False, (R, X): False,
    (W, E): True, (W, R): False, (W, W): False, (W, X): True,
    (X, E): True, (X, R): False, (X, W): True, (X, X): True,
}  # fmt: skip


@pytest.mark.parametrize(("requested", "held"), list(CONFLICTS), ids=lambda t: t.name)
def test_the_rule_of_conflicts_on_one_table(
    tx: Transactions, db: str, requested: LockType, held: LockType
) -> None:
    first, _ = take(tx, Component(held, db, "t"))
    second, state = take(tx, Component(requested, db, "t"))
    release(tx, first, second)
    assert state is (WAITING if CONFLICTS[(requested, held)] else ACQUIRED)


@pytest.mark.parametrize(
    ("held", "requested", "waits"),
    [
        (
            Component(E, "{db}", "t"),
            Component(E, "{db}", "t", "ds=1"),
            True,
        ),  # a table covers its partitions
        (Component(E, "{db}", "t", "ds=1"), Component(E, "{db}", "t"), True),
        (Component(E, "{db}", "t", "ds=1"), Component(E, "{db}", "t", "ds=2"), False),
        (Component(E, "{db}", "t"), Component(E, "{db}", "u"), False),
        (Component(E, "{db}"), Component(R, "{db}", "t"), True),  # a database covers its tables
        (Component(E, "{db}", "t"), Component(E, "{db}_other", "t"), False),
        # The two exceptions between a database's SHARED_READ and a table's EXCLUSIVE.
        (Component(R, "{db}"), Component(E, "{db}", "t"), False),
        (Component(E, "{db}", "t"), Component(R, "{db}"), False),
        (Component(E, "{db}", "t"), Component(E, "{db}"), True),
    ],
)
def test_what_a_lock_covers(
    tx: Transactions, db: str, held: Component, requested: Component, waits: bool
) -> None:
    def named(c: Component) -> Component:
        return Component(c.type, c.db.format(db=db), c.table, c.partition)

    first, _ = take(tx, named(held))
    second, state = take(tx, named(requested))
    release(tx, first, second)
    assert state is (WAITING if waits else ACQUIRED)


# -- the same request again --------------------------------------------------------------------


def test_a_request_with_an_agent_of_its_own_is_answered_with_its_live_lock(
    tx: Transactions, db: str
) -> None:
    iceberg = Requester("alice", "host-1", "Iceberg-1234")
    components = (Component(E, db, "t"), Component(R, db, "u"))
    lock_id, state = take(tx, *components, requester=iceberg)
    assert take(tx, *components, requester=iceberg) == (lock_id, state)
    # Anything else differs: another lock.
    others = [
        take(tx, *components, requester=Requester("bob", "host-1", "Iceberg-1234"))[0],
        take(tx, *components, requester=Requester("alice", "host-1", "Iceberg-5678"))[0],
        take(tx, components[0], requester=iceberg)[0],
        take(tx, Component(E, db, "t"), Component(W, db, "u"), requester=iceberg)[0],
    ]
    assert lock_id not in others and len(set(others)) == 4
    release(tx, lock_id, *others)


def test_requests_of_the_default_agent_always_take_a_new_lock(tx: Transactions, db: str) -> None:
    first, _ = take(tx, Component(R, db, "t"))
    second, _ = take(tx, Component(R, db, "t"))
    assert second != first
    release(tx, first, second)


# -- time --------------------------------------------------------------------------------------


def test_a_lock_not_heartbeated_within_the_timeout_is_gone(tx: Transactions, db: str) -> None:
    short = 200  # ms
    old, _ = take(tx, Component(E, db, "t"))
    waiting, state = take(tx, Component(E, db, "t"))
    assert state is WAITING  # within a minute, the old lock is live
    release(tx, waiting)
    time.sleep(0.3)
    # Within SHORT it counts as gone: it blocks nothing, and the next take deletes it.
    new, state = take(tx, Component(E, db, "t"), timeout=short)
    assert state is ACQUIRED
    assert [lk.lock_id for lk in call(tx, lambda s: locks.listed(s, MINUTE, db=db))] == [new]
    with raises(NoSuchLock, f"lock {old} is not held (never taken, released or timed out)"):
        call(tx, lambda s: locks.heartbeat(s, old, MINUTE))
    time.sleep(0.05)
    with raises(NoSuchLock, f"lock {new} is not held (never taken, released or timed out)"):
        call(tx, lambda s: locks.check(s, new, 10))


def test_a_lock_of_a_hive_transaction_lives_and_is_not_unlocked(
    tx: Transactions, store: sa.Engine, db: str
) -> None:
    """A lock HMS took for a Hive transaction (HL_TXNID), as HMS writes it, with the next
    lock id."""
    with store.begin() as conn:
        lock_id = conn.execute(
            sa.text('UPDATE "NEXT_LOCK_ID" SET "NL_NEXT" = "NL_NEXT" + 1 RETURNING "NL_NEXT" - 1')
        ).scalar_one()
        conn.execute(
            sa.text(
                'INSERT INTO "HIVE_LOCKS" ("HL_LOCK_EXT_ID", "HL_LOCK_INT_ID", "HL_TXNID", '
                '"HL_DB", "HL_TABLE", "HL_LOCK_STATE", "HL_LOCK_TYPE", "HL_LAST_HEARTBEAT", '
                "\"HL_USER\", \"HL_HOST\") VALUES (:id, 1, 77, :db, 't', 'a', 'w', 0, "
                "'hive', 'h')"
            ),
            {"id": lock_id, "db": db},
        )
    try:
        # Heartbeated never, yet live: HMS keeps a transaction's heartbeats elsewhere.
        (listed,) = call(tx, lambda s: locks.listed(s, 10, db=db))
        assert (listed.lock_id, listed.txn_id, listed.type) == (lock_id, 77, W)
        assert [lk.lock_id for lk in call(tx, lambda s: locks.listed(s, 10, txn_id=77))] == [
            lock_id
        ]
        assert call(tx, lambda s: locks.listed(s, 10, db=db, txn_id=0)) == []
        waiting, state = take(tx, Component(X, db, "t"), timeout=10)
        assert state is WAITING
        release(tx, waiting)
        ends = "it ends with the transaction, not with unlock"
        with raises(LockOfTransaction, f"lock {lock_id} belongs to Hive transaction 77: {ends}"):
            call(tx, lambda s: locks.release(s, lock_id))
    finally:
        with store.begin() as conn:
            conn.execute(sa.text('DELETE FROM "HIVE_LOCKS" WHERE "HL_DB" = :db'), {"db": db})


def test_listed_filters_by_database_table_and_partition(tx: Transactions, db: str) -> None:
    ids = [
        take(tx, Component(R, db))[0],
        take(tx, Component(R, db, "t"))[0],
        take(tx, Component(R, db, "t", "ds=1"))[0],
        take(tx, Component(R, db, "u", "ds=1"))[0],
    ]
    try:

        def listed(**given: str) -> list[int]:
            return [lk.lock_id for lk in call(tx, lambda s: locks.listed(s, MINUTE, **given))]  # type: ignore[arg-type]

        assert listed(db=db) == ids
        assert listed(db=db, table="t") == ids[1:3]
        assert listed(db=db, table="t", partition="ds=1") == ids[2:3]
        assert listed(db=db, partition="ds=1") == ids[2:]
        assert listed(db=f"{db}_none") == []
        assert set(ids) <= set(listed())
    finally:
        release(tx, *ids)


# -- statements --------------------------------------------------------------------------------


def test_each_call_is_one_statement_on_postgresql(store: sa.Engine, db: str) -> None:
    if store.dialect.name != "postgresql":
        pytest.skip("on SQLite, where one writer runs at a time, a take is a few statements")
    tx = Transactions(store)
    call(tx, lambda s: locks.listed(s, MINUTE))  # what the engine finds once, found
    with DriverStatements(store) as trace:
        counts = {}
        calls: dict[str, Callable[[Session], object]] = {
            "take": lambda s: locks.take(
                s, [Component(E, db, "t"), Component(R, db, "u")], ALICE, MINUTE
            ),
            "check": lambda s: locks.check(s, lock_id, MINUTE),
            "heartbeat": lambda s: locks.heartbeat(s, lock_id, MINUTE),
            "listed": lambda s: locks.listed(s, MINUTE, db=db),
            "release": lambda s: locks.release(s, lock_id),
        }
        lock_id = 0
        for name, work in calls.items():
            before = statement_count(trace)
            found = call(tx, work)
            counts[name] = statement_count(trace) - before
            if name == "take":
                assert isinstance(found, tuple)
                lock_id = found[0]
    assert counts == dict.fromkeys(calls, 1)
