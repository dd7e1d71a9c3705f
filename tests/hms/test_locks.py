"""The HMS locks (lock, check_lock, unlock, heartbeat, show_locks) through the generated client
on a server on loopback, on both backends: HMS's semantics (the conflict rule, first come first
served, what covers what, timeouts by the database's clock), the errors of every bad request,
the rights and the audit, one statement per call, ids that are never reused, a retried lock
that leaves no second lock, and mutual exclusion under writers on two servers.

tests/hms/test_locks_hms.py compares the same calls with HMS 2.3.10.
"""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import RunningServer, connect
from driver_trace import DriverStatements
from thrift.Thrift import TApplicationException

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.hms import cache

Client = ThriftHiveMetastore.Client

ACQUIRED, WAITING = t.LockState.ACQUIRED, t.LockState.WAITING
SR, SW, EX, XW = (
    t.LockType.SHARED_READ,
    t.LockType.SHARED_WRITE,
    t.LockType.EXCLUSIVE,
    t.LockType.EXCL_WRITE,
)


def component(
    kind: int, db: str, table: str | None = None, partition: str | None = None
) -> t.LockComponent:
    level = t.LockLevel.PARTITION if partition else t.LockLevel.TABLE if table else t.LockLevel.DB
    return t.LockComponent(
        type=kind, level=level, dbname=db, tablename=table, partitionname=partition
    )


def request(
    *components: t.LockComponent, agent: str | None = None, user: str = "alice"
) -> t.LockRequest:
    return t.LockRequest(
        component=list(components), user=user, hostname="host-1", agentInfo=agent or "Unknown"
    )


def take(client: Client, *components: t.LockComponent, agent: str | None = None) -> Any:
    return client.lock(request(*components, agent=agent))


@pytest.fixture
def db() -> str:
    """A database name of the test's own: locks need no database that exists."""
    return f"lk_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def release(client: Client) -> Iterator[list[int]]:
    """Lock ids to unlock after the test, so that a failing test blocks no other."""
    taken: list[int] = []
    yield taken
    for lock_id in taken:
        client.unlock(t.UnlockRequest(lock_id))


def test_an_exclusive_lock_waits_for_another_and_gets_it_once_that_is_released(
    client: Client, db: str, release: list[int]
) -> None:
    first = take(client, component(EX, db, "orders"))
    second = take(client, component(EX, db, "orders"))
    release += [first.lockid, second.lockid]
    assert (first.state, second.state) == (ACQUIRED, WAITING)
    assert second.lockid > first.lockid
    assert client.check_lock(t.CheckLockRequest(second.lockid)).state == WAITING
    client.unlock(t.UnlockRequest(first.lockid))
    assert client.check_lock(t.CheckLockRequest(second.lockid)) == t.LockResponse(
        lockid=second.lockid, state=ACQUIRED
    )
    # once acquired, it stays so whatever comes after it
    third = take(client, component(EX, db, "orders"))
    release.append(third.lockid)
    assert third.state == WAITING
    assert client.check_lock(t.CheckLockRequest(second.lockid)).state == ACQUIRED


# Hive 4's rule: (held, requested) -> whether the requested lock waits, for two locks on the
# same table, and with a database lock on either side.
SAME_TABLE = {
    (SR, SR): False, (SR, SW): False, (SR, EX): True, (SR, XW): False,
    (SW, SR): False, (SW, SW): False, (SW, EX): True, (SW, XW): True,
    (EX, SR): True, (EX, SW): True, (EX, EX): True, (EX, XW): True,
    (XW, SR): False, (XW, SW): True, (XW, EX): True, (XW, XW): True,
}  # fmt: skip


@pytest.mark.parametrize(("held", "requested"), sorted(SAME_TABLE))
def test_the_conflict_rule_on_one_table(
    client: Client, db: str, release: list[int], held: int, requested: int
) -> None:
    first = take(client, component(held, db, "t"))
    second = take(client, component(requested, db, "t"))
    other_table = take(client, component(requested, db, "u"))
    release += [first.lockid, second.lockid, other_table.lockid]
    assert first.state == ACQUIRED
    assert second.state == (WAITING if SAME_TABLE[held, requested] else ACQUIRED)
    assert other_table.state == ACQUIRED


@pytest.mark.parametrize(
    ("held", "requested", "waits"),
    [
        # a database lock covers its tables, a table lock its partitions, and the reverse
        (component(EX, "{db}"), component(SR, "{db}", "t"), True),
        (component(EX, "{db}", "t"), component(EX, "{db}"), True),
        (component(EX, "{db}", "t"), component(SR, "{db}", "t", "ds=1"), True),
        (component(EX, "{db}", "t", "ds=1"), component(SR, "{db}", "t"), True),
        (component(EX, "{db}", "t", "ds=1"), component(EX, "{db}", "t", "ds=1"), True),
        (component(EX, "{db}", "t", "ds=1"), component(EX, "{db}", "t", "ds=2"), False),
        (component(EX, "{db}", "t"), component(EX, "{db}_other", "t"), False),
        # a database's SHARED_READ (taken so that it is not dropped) and a table's EXCLUSIVE
        # under it do not conflict
        (component(SR, "{db}"), component(EX, "{db}", "t"), False),
        (component(EX, "{db}", "t"), component(SR, "{db}"), False),
        (component(EX, "{db}", "t", "ds=1"), component(SR, "{db}"), False),
    ],
)
def test_what_a_lock_covers(
    client: Client,
    db: str,
    release: list[int],
    held: t.LockComponent,
    requested: t.LockComponent,
    waits: bool,
) -> None:
    for c in (held, requested):
        c.dbname = c.dbname.format(db=db)
    first, second = take(client, held), take(client, requested)
    release += [first.lockid, second.lockid]
    assert (first.state, second.state) == (ACQUIRED, WAITING if waits else ACQUIRED)


def test_first_come_first_served_over_waiting_locks(
    client: Client, db: str, release: list[int]
) -> None:
    reader = take(client, component(SR, db, "t"))
    writer = take(client, component(EX, db, "t"))
    late_reader = take(client, component(SR, db, "t"))
    release += [reader.lockid, writer.lockid, late_reader.lockid]
    # The late reader is compatible with the reader, but the writer came first.
    assert (reader.state, writer.state, late_reader.state) == (ACQUIRED, WAITING, WAITING)
    client.unlock(t.UnlockRequest(reader.lockid))
    assert client.check_lock(t.CheckLockRequest(late_reader.lockid)).state == WAITING
    assert client.check_lock(t.CheckLockRequest(writer.lockid)).state == ACQUIRED
    client.unlock(t.UnlockRequest(writer.lockid))
    assert client.check_lock(t.CheckLockRequest(late_reader.lockid)).state == ACQUIRED


def test_a_lock_of_several_components_is_taken_all_or_nothing(
    client: Client, db: str, release: list[int]
) -> None:
    held = take(client, component(EX, db, "b"))
    both = take(client, component(SR, db, "a"), component(SR, db, "b"))
    release += [held.lockid, both.lockid]
    assert both.state == WAITING
    shown = client.show_locks(t.ShowLocksRequest(dbname=db)).locks
    mine = [(e.tablename, e.state, e.lockIdInternal) for e in shown if e.lockid == both.lockid]
    assert mine == [("a", WAITING, 1), ("b", WAITING, 2)]
    blocked = {e.tablename: (e.blockedByExtId, e.blockedByIntId) for e in shown}
    assert blocked["a"] == (None, None)  # its own component is free
    assert blocked["b"] == (held.lockid, 1)
    client.unlock(t.UnlockRequest(held.lockid))
    assert client.check_lock(t.CheckLockRequest(both.lockid)).state == ACQUIRED


def test_show_locks_says_who_holds_what_since_when(client: Client, db: str) -> None:
    before = int(time.time() * 1000)
    held = client.lock(
        t.LockRequest(
            component=[component(EX, db, "t")],
            user="etl",
            hostname="worker-7",
            agentInfo="Iceberg-1234",
        )
    )
    waiting = take(client, component(SR, db, "t", "ds=1"))
    try:
        everything = client.show_locks(t.ShowLocksRequest()).locks
        assert {held.lockid, waiting.lockid} <= {e.lockid for e in everything}
        shown = client.show_locks(t.ShowLocksRequest(dbname=db.upper(), tablename="T")).locks
        assert [e.lockid for e in shown] == [held.lockid, waiting.lockid]
        first, second = shown
        after = int(time.time() * 1000)
        assert (first.dbname, first.tablename, first.partname) == (db, "t", None)
        assert (first.state, first.type, first.txnid) == (ACQUIRED, EX, 0)
        assert (first.user, first.hostname, first.agentInfo) == ("etl", "worker-7", "Iceberg-1234")
        assert before - 1000 <= first.lastheartbeat <= after + 1000  # the database's clock
        assert first.acquiredat is not None and before - 1000 <= first.acquiredat <= after + 1000
        assert (second.partname, second.state, second.type, second.acquiredat) == (
            "ds=1",
            WAITING,
            SR,
            None,
        )
        assert (second.blockedByExtId, second.agentInfo) == (held.lockid, "Unknown")
        partition = client.show_locks(t.ShowLocksRequest(dbname=db, partname="ds=1")).locks
        assert [e.lockid for e in partition] == [waiting.lockid]
        assert client.show_locks(t.ShowLocksRequest(dbname=db, txnid=7)).locks == []
    finally:
        client.unlock(t.UnlockRequest(held.lockid))
        client.unlock(t.UnlockRequest(waiting.lockid))
    assert client.show_locks(t.ShowLocksRequest(dbname=db)).locks == []


def test_unlock_of_a_waiting_or_unknown_lock_succeeds(client: Client, db: str) -> None:
    held = take(client, component(EX, db, "t"))
    waiting = take(client, component(EX, db, "t"))
    client.unlock(t.UnlockRequest(waiting.lockid))
    client.unlock(t.UnlockRequest(waiting.lockid))  # again: gone already
    client.unlock(t.UnlockRequest(10**15))
    client.unlock(t.UnlockRequest(held.lockid))
    assert client.show_locks(t.ShowLocksRequest(dbname=db)).locks == []


def test_check_lock_and_heartbeat_of_a_lock_that_is_gone_raise(client: Client, db: str) -> None:
    held = take(client, component(EX, db, "t"))
    client.heartbeat(t.HeartbeatRequest(lockid=held.lockid))
    client.unlock(t.UnlockRequest(held.lockid))
    for gone in (held.lockid, 10**15):
        with pytest.raises(t.NoSuchLockException, match=f"No such lock lockid:{gone}: "):
            client.check_lock(t.CheckLockRequest(gone))
        with pytest.raises(t.NoSuchLockException, match=f"No such lock lockid:{gone}: "):
            client.heartbeat(t.HeartbeatRequest(lockid=gone))


def test_lock_ids_increase_and_are_never_reused(
    server: RunningServer, client: Client, db: str
) -> None:
    ids = []
    for _ in range(3):
        lock_id = take(client, component(EX, db, "t")).lockid
        client.unlock(t.UnlockRequest(lock_id))
        ids.append(lock_id)
    again = RunningServer(server.url, server.settings)  # another server, as after a restart
    try:
        other, transport = connect(again.port)
        lock_id = take(other, component(EX, db, "t")).lockid
        other.unlock(t.UnlockRequest(lock_id))
        transport.close()
    finally:
        again.stop()
    ids.append(lock_id)
    assert ids == sorted(set(ids))


def test_field_seven_and_an_unset_operation_type_are_accepted(client: Client, db: str) -> None:
    """LockComponent's field 7 is HMS 2.3's isAcid and Hive 4's isTransactional: one id on
    the wire, read alike (tests/interop/test_java_client.py sends it from Hive 2.3's own
    client); pyiceberg sends it true, with operationType UNSET."""
    for transactional in (True, False, None):
        lc = component(EX, db, "t")
        lc.isTransactional = transactional
        lc.operationType = t.DataOperationType.UNSET
        response = take(client, lc)
        assert response.state == ACQUIRED
        client.unlock(t.UnlockRequest(response.lockid))


def test_calls_of_hive_transactions_are_refused(client: Client, db: str) -> None:
    txn = "transaction 42 does not exist: colstats keeps no Hive ACID transactions"
    with pytest.raises(t.NoSuchTxnException, match=txn):
        client.lock(
            t.LockRequest(component=[component(EX, db, "t")], user="a", hostname="h", txnid=42)
        )
    with pytest.raises(t.NoSuchTxnException, match=txn):
        client.heartbeat(t.HeartbeatRequest(txnid=42))
    held = take(client, component(EX, db, "t"))
    with pytest.raises(t.NoSuchTxnException, match=txn):
        client.check_lock(t.CheckLockRequest(held.lockid, txnid=42))
    client.unlock(t.UnlockRequest(held.lockid))
    # txnid 0 is no transaction
    zero = client.lock(
        t.LockRequest(component=[component(EX, db, "t")], user="a", hostname="h", txnid=0)
    )
    assert zero.state == ACQUIRED
    client.unlock(t.UnlockRequest(zero.lockid))


def raw(kind: int, level: int, db: str, table: str | None = None) -> t.LockRequest:
    """A request of one component as given, whether it makes sense or not."""
    return request(t.LockComponent(type=kind, level=level, dbname=db, tablename=table))


@pytest.mark.parametrize(
    ("lock_request", "message"),
    [
        (t.LockRequest(component=[], user="a", hostname="h"), "at least one component"),
        (raw(9, t.LockLevel.TABLE, "d", "t"), "unknown lock type 9"),
        (raw(EX, 7, "d"), "unknown lock level 7"),
        (raw(EX, t.LockLevel.TABLE, ""), "needs a dbname"),
        (raw(EX, t.LockLevel.DB, "d", "t"), "a DB lock of d names a table"),
        (raw(EX, t.LockLevel.TABLE, "d"), "a TABLE lock in d needs a tablename"),
        (raw(EX, t.LockLevel.PARTITION, "d", "t"), "needs a tablename and a partitionname"),
        (request(component(EX, "d", "t" * 257)), "table name is longer than 256 characters"),
        (
            t.LockRequest(component=[component(EX, "d")], user="u" * 129, hostname="h"),
            "user name is longer than 128",
        ),
    ],
)
def test_a_bad_lock_request_is_refused_with_its_reason(
    client: Client, lock_request: t.LockRequest, message: str
) -> None:
    """lock declares no MetaException: HMS answers such requests with TApplicationException,
    and so does colstats, with the reason (HMS 2.3 says "Internal error processing lock")."""
    with pytest.raises(TApplicationException, match=message):
        client.lock(lock_request)


def test_a_lock_sent_again_with_its_agent_info_is_the_same_lock(
    client: Client, db: str, release: list[int]
) -> None:
    """A lock call whose answer was lost and that the client sends again (Java Iceberg's
    client pool reconnects and retries; its agentInfo is Iceberg-<uuid> per commit) finds its
    lock instead of queueing a second one behind it."""
    wanted = [component(EX, db, "t"), component(SR, db, "u")]
    first = take(client, *wanted, agent="Iceberg-7f3c")
    again = take(client, *wanted, agent="Iceberg-7f3c")
    release.append(first.lockid)
    assert again == first and first.state == ACQUIRED
    assert len(client.show_locks(t.ShowLocksRequest(dbname=db)).locks) == 2
    # another request of that agent (other components) or another agent is another lock
    other = take(client, component(EX, db, "v"), agent="Iceberg-7f3c")
    stranger = take(client, *wanted, agent="Iceberg-9999")
    release += [other.lockid, stranger.lockid]
    assert other.lockid > first.lockid and other.state == ACQUIRED
    assert stranger.lockid > other.lockid and stranger.state == WAITING


def test_requests_without_an_agent_info_of_their_own_are_never_merged(
    client: Client, db: str, release: list[int]
) -> None:
    """Two writers on one host as one user, as pyiceberg sends them (agentInfo "Unknown"):
    the second must wait, or both would commit over each other."""
    first = take(client, component(EX, db, "t"))
    second = take(client, component(EX, db, "t"))
    release += [first.lockid, second.lockid]
    assert (first.state, second.state) == (ACQUIRED, WAITING)


def test_no_lock_answer_is_cached() -> None:
    lock_calls = {"lock", "check_lock", "unlock", "heartbeat", "show_locks"}
    assert not lock_calls & set(cache.CACHED)


def test_each_lock_call_is_one_statement_and_its_commit(
    server: RunningServer, client: Client, db: str
) -> None:
    calls: dict[str, Callable[[], Any]] = {
        "lock": lambda: take(client, component(EX, db, "t")),
        "check_lock": lambda: client.check_lock(t.CheckLockRequest(held.lockid)),
        "heartbeat": lambda: client.heartbeat(t.HeartbeatRequest(lockid=held.lockid)),
        "show_locks": lambda: client.show_locks(t.ShowLocksRequest(dbname=db)),
        "unlock": lambda: client.unlock(t.UnlockRequest(held.lockid)),
    }
    held: Any = None
    for name, run in calls.items():
        with DriverStatements(server.engine) as statements:
            result = run()
            held = result if name == "lock" else held
            sent = statements.sent()
        if server.engine.dialect.name != "postgresql":
            continue
        control = [s for s in sent if '"BEGIN' in s or '"COMMIT"' in s]
        work = [s for s in sent if s not in control]
        assert len(work) == 1, (name, sent)
        assert len(control) == (0 if name == "show_locks" else 2), (name, sent)


@pytest.fixture(scope="module")
def short_timeout(server: RunningServer) -> Iterator[Client]:
    """A client of a second server on the same database whose locks time out after 1.5 s."""
    running = RunningServer(server.url, Settings(lock_timeout=1.5))
    client, transport = connect(running.port)
    yield client
    transport.close()
    running.stop()


def test_a_lock_not_heartbeated_times_out_and_the_next_one_gets_the_table(
    short_timeout: Client, db: str
) -> None:
    client = short_timeout
    dead = take(client, component(EX, db, "t"))  # a writer that died holding it
    waiting = take(client, component(EX, db, "t"))
    alive = take(client, component(EX, db, "u"))
    assert (dead.state, waiting.state, alive.state) == (ACQUIRED, WAITING, ACQUIRED)
    behind_alive = take(client, component(EX, db, "u"))
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        client.heartbeat(t.HeartbeatRequest(lockid=alive.lockid))
        # the waiting ones heartbeat as they check
        client.check_lock(t.CheckLockRequest(behind_alive.lockid))
        state = client.check_lock(t.CheckLockRequest(waiting.lockid)).state
        if state == ACQUIRED:
            break
        time.sleep(0.25)
    assert state == ACQUIRED
    elapsed = 3.0 - (deadline - time.monotonic())
    assert elapsed >= 1.0  # not before the timeout (1.5 s, with the clocks' rounding)
    with pytest.raises(t.NoSuchLockException, match=r"timed out after 1\.5 s"):
        client.check_lock(t.CheckLockRequest(dead.lockid))
    assert client.check_lock(t.CheckLockRequest(behind_alive.lockid)).state == WAITING
    for lock_id in (waiting.lockid, alive.lockid, behind_alive.lockid):
        client.unlock(t.UnlockRequest(lock_id))


@pytest.fixture(scope="module")
def guarded(migrated_url: str) -> Iterator[RunningServer]:
    """A server where only alice may write."""
    running = RunningServer(migrated_url, Settings(writers=("alice",)))
    yield running
    running.stop()


def test_the_lock_calls_need_the_write_right_and_are_audited(
    guarded: RunningServer, db: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "metastore.audit")
    client, transport = connect(guarded.port)
    try:
        lock = request(component(EX, db, "t"), agent="Iceberg-1")
        with pytest.raises(TApplicationException, match="anonymous lacks the write right that"):
            client.lock(lock)
        assert client.show_locks(t.ShowLocksRequest(dbname=db)).locks == []  # reads are open
        client.set_ugi("alice", [])
        held = client.lock(lock)
        client.check_lock(t.CheckLockRequest(held.lockid))
        client.heartbeat(t.HeartbeatRequest(lockid=held.lockid))
        client.unlock(t.UnlockRequest(held.lockid))
    finally:
        transport.close()
    lines = [r.message for r in caplog.records if r.name == "metastore.audit"]
    target = f"db={db} tbl=t type=EXCLUSIVE agent=Iceberg-1"
    assert lines == [
        f"ugi=anonymous ip=127.0.0.1 cmd=lock {target} outcome=refused",
        f"ugi=alice claimed=true ip=127.0.0.1 cmd=lock {target} lockid={held.lockid} "
        "state=ACQUIRED outcome=ok",
        f"ugi=alice claimed=true ip=127.0.0.1 cmd=check_lock lockid={held.lockid} "
        "state=ACQUIRED outcome=ok",
        f"ugi=alice claimed=true ip=127.0.0.1 cmd=heartbeat lockid={held.lockid} outcome=ok",
        f"ugi=alice claimed=true ip=127.0.0.1 cmd=unlock lockid={held.lockid} outcome=ok",
    ]


@pytest.fixture
def two_servers(server: RunningServer) -> Iterator[list[int]]:
    """The ports of the module's server and of a second one on the same database."""
    second = RunningServer(server.url, server.settings)
    yield [server.port, second.port]
    second.stop()


def test_writers_on_two_servers_hold_an_exclusive_lock_one_at_a_time(
    two_servers: list[int], db: str
) -> None:
    """Eight writers, each on its own connection to one of two servers, lock one table again
    and again (waiting by polling check_lock, as the clients do); inside the lock each checks
    that it is alone. On PostgreSQL their lock calls race for NEXT_LOCK_ID."""
    inside: list[int] = []
    guard = threading.Lock()
    failures: list[BaseException] = []
    rounds = 6

    def writer(index: int) -> None:
        client, transport = connect(two_servers[index % 2])
        rng = random.Random(index)
        try:
            for _ in range(rounds):
                response = take(client, component(EX, db, "t"))
                while response.state != ACQUIRED:
                    time.sleep(rng.uniform(0.001, 0.01))
                    response = client.check_lock(t.CheckLockRequest(response.lockid))
                with guard:
                    inside.append(index)
                    assert len(inside) == 1, f"{inside} hold the lock at once"
                time.sleep(rng.uniform(0, 0.003))
                with guard:
                    inside.remove(index)
                client.unlock(t.UnlockRequest(response.lockid))
        except BaseException as e:  # reported by the test's thread
            failures.append(e)
        finally:
            transport.close()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert not any(thread.is_alive() for thread in threads)
