"""The lock calls against the real Hive Metastore 2.3.10 (the session's oracle,
tests/hms_oracle.py): the same scenarios run on HMS and on colstats (both backends), and their
transcripts (each lock's state after each call, what show_locks shows, the exceptions) must be
equal. Lock ids differ between the two, so a transcript names locks by the scenario's names.

Where Hive 4's rule, which colstats follows, differs from HMS 2.3's, a test shows both:
SHARED_WRITE no longer waits for SHARED_WRITE (Hive 3 and 4 keep ACID tables' writers apart by
their write sets), and a lock waits for every earlier lock it conflicts with, waiting or not
(HMS 2.3 let readers pass a waiting writer).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from conftest import RunningServer, connect
from hms_oracle import LOCK_TIMEOUT_S
from hms_oracle import client as oracle_client
from hms_process import HiveMetastoreProcess

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings

pytestmark = pytest.mark.hms

Client = ThriftHiveMetastore.Client
SR, SW, EX = t.LockType.SHARED_READ, t.LockType.SHARED_WRITE, t.LockType.EXCLUSIVE
STATES = t.LockState._VALUES_TO_NAMES
TYPES = t.LockType._VALUES_TO_NAMES

# A step: ("lock", name, components), ("check", name), ("heartbeat", name), ("unlock", name),
# ("show",); a component: (type, table, partition) in the scenario's database.
Step = tuple[Any, ...]


def _component(db: str, kind: int, table: str | None, part: str | None) -> t.LockComponent:
    level = t.LockLevel.PARTITION if part else t.LockLevel.TABLE if table else t.LockLevel.DB
    return t.LockComponent(type=kind, level=level, dbname=db, tablename=table, partitionname=part)


class Transcript:
    """Runs steps on one metastore, naming its locks by the scenario's names."""

    def __init__(self, client: Client, db: str) -> None:
        self.client, self.db = client, db
        self.ids: dict[str, int] = {}
        self.names: dict[int, str] = {}

    def run(self, steps: Sequence[Step]) -> list[str]:
        """The transcript of STEPS; then every lock is released."""
        lines = [self.line(step) for step in steps]
        self.release()
        return lines

    def line(self, step: Step) -> str:
        """Run STEP: a line of the transcript."""
        return f"{step[0]} {' '.join(map(str, step[1:2]))}: {self._step(step)}"

    def release(self) -> None:
        """Unlock every lock taken (what a test leaves would block the next)."""
        for lock_id in self.ids.values():
            self.client.unlock(t.UnlockRequest(lock_id))

    def _step(self, step: Step) -> str:
        kind, *args = step
        try:
            if kind == "lock":
                name, parts = args
                response = self.client.lock(
                    t.LockRequest(
                        component=[_component(self.db, *p) for p in parts],
                        user="etl",
                        hostname="worker-1",
                        agentInfo=f"agent-{name}",
                    )
                )
                self.ids[name], self.names[response.lockid] = response.lockid, name
                return STATES[response.state]
            if kind == "check":
                return STATES[self.client.check_lock(t.CheckLockRequest(self._id(args[0]))).state]
            if kind == "heartbeat":
                self.client.heartbeat(t.HeartbeatRequest(lockid=self._id(args[0])))
                return "ok"
            if kind == "unlock":
                self.client.unlock(t.UnlockRequest(self._id(args[0])))
                return "ok"
            if kind == "show":
                return self._shown()
        except (t.NoSuchLockException, t.NoSuchTxnException) as e:
            return type(e).__name__
        raise AssertionError(f"unknown step {step}")

    def _id(self, name: str) -> int:
        return self.ids.get(name, 10**12)  # a lock never taken

    def _shown(self) -> str:
        shown = self.client.show_locks(t.ShowLocksRequest(dbname=self.db)).locks
        rows = []
        for e in shown:
            # Which lock a waiting one names as its blocker follows the order in which each
            # server looks at the locks (HMS 2.3: by state, then type, then id); whether it
            # names one is compared.
            blocked = "yes" if e.blockedByExtId in self.names else "-"
            rows.append(
                f"{self.names.get(e.lockid, '?')}/{e.lockIdInternal} {e.dbname}.{e.tablename}"
                f".{e.partname} {STATES[e.state]} {TYPES[e.type]} txn={e.txnid} "
                f"by={blocked} acquired={e.acquiredat is not None} {e.user}@{e.hostname} "
                f"{e.agentInfo} beats={e.heartbeatCount}"
            )
        return "; ".join(sorted(rows))  # HMS 2.3 lists them in no order of theirs


SCENARIOS: dict[str, list[Step]] = {
    "exclusive waits for exclusive, then gets it": [
        ("lock", "a", [(EX, "t", None)]),
        ("lock", "b", [(EX, "t", None)]),
        ("show",),
        ("check", "b"),
        ("unlock", "a"),
        ("check", "b"),
        ("show",),
    ],
    "readers share, writers wait": [
        ("lock", "r1", [(SR, "t", None)]),
        ("lock", "r2", [(SR, "t", None)]),
        ("lock", "w", [(SW, "t", None)]),
        ("lock", "x", [(EX, "t", None)]),
        ("show",),
    ],
    "a write lock lets readers in and keeps exclusive ones out": [
        ("lock", "w", [(SW, "t", None)]),
        ("lock", "r", [(SR, "t", None)]),
        ("lock", "x", [(EX, "t", None)]),
        ("unlock", "w"),
        ("check", "x"),
        ("unlock", "r"),
        ("check", "x"),
    ],
    "a database lock covers its tables": [
        ("lock", "db", [(EX, None, None)]),
        ("lock", "table", [(SR, "t", None)]),
        ("lock", "part", [(SR, "t", "ds=1")]),
        ("show",),
        ("unlock", "db"),
        ("check", "table"),
        ("check", "part"),
    ],
    "a database's SHARED_READ (kept from drops) beside a table's EXCLUSIVE": [
        ("lock", "table", [(EX, "t", None)]),
        ("lock", "db", [(SR, None, None)]),
        ("lock", "db exclusive", [(EX, None, None)]),
        ("show",),
    ],
    "a table's EXCLUSIVE under a database's SHARED_READ": [
        ("lock", "db", [(SR, None, None)]),
        ("lock", "table", [(EX, "t", None)]),
        ("show",),
    ],
    "a table lock covers its partitions and not another table's": [
        ("lock", "table", [(EX, "t", None)]),
        ("lock", "part", [(EX, "t", "ds=1")]),
        ("lock", "other", [(EX, "u", "ds=1")]),
        ("lock", "db", [(EX, None, None)]),
        ("show",),
    ],
    "partitions apart": [
        ("lock", "p1", [(EX, "t", "ds=1")]),
        ("lock", "p2", [(EX, "t", "ds=2")]),
        ("lock", "p1 again", [(EX, "t", "ds=1")]),
        ("lock", "table", [(EX, "t", None)]),
        ("show",),
    ],
    "several components, all or nothing": [
        ("lock", "held", [(EX, "b", None)]),
        ("lock", "both", [(SR, "a", None), (SR, "b", None)]),
        ("lock", "only a", [(EX, "a", None)]),
        ("show",),
        ("unlock", "held"),
        ("check", "both"),
        ("check", "only a"),
    ],
    "unlocks, heartbeats and checks of locks gone": [
        ("lock", "a", [(EX, "t", None)]),
        ("lock", "b", [(EX, "t", None)]),
        ("heartbeat", "a"),
        ("heartbeat", "b"),
        ("unlock", "b"),
        ("unlock", "b"),
        ("unlock", "never"),
        ("check", "b"),
        ("heartbeat", "b"),
        ("check", "never"),
        ("heartbeat", "never"),
        ("show",),
    ],
}


@pytest.fixture(scope="module")
def oracle(hms_oracle: HiveMetastoreProcess) -> Iterator[Client]:
    client, transport = oracle_client(hms_oracle.port)
    yield client
    transport.close()


def _both(oracle: Client, colstats: Client, steps: Sequence[Step]) -> tuple[list[str], ...]:
    db = f"lk_{uuid.uuid4().hex[:10]}"
    return Transcript(oracle, db).run(steps), Transcript(colstats, db).run(steps)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_scenario_goes_as_on_hms(oracle: Client, client: Client, scenario: str) -> None:
    hms, ours = _both(oracle, client, SCENARIOS[scenario])
    assert ours == hms


def test_the_calls_of_transactions_are_refused_as_by_hms(oracle: Client, client: Client) -> None:
    db = f"lk_{uuid.uuid4().hex[:10]}"
    answers = []
    for metastore in (oracle, client):
        request = t.LockRequest(
            component=[_component(db, EX, "t", None)], user="etl", hostname="h", txnid=77
        )
        with pytest.raises(t.NoSuchTxnException):
            metastore.lock(request)
        with pytest.raises(t.NoSuchTxnException):
            metastore.heartbeat(t.HeartbeatRequest(txnid=77))
        answers.append(metastore.show_locks(t.ShowLocksRequest(dbname=db)).locks)
    assert answers == [[], []]


# Where HMS 2.3 and Hive 4 part: locks taken in turn, and whether the last one waits on HMS
# 2.3 and on colstats.
PARTING: dict[str, tuple[list[Step], bool, bool]] = {
    "SHARED_WRITE after SHARED_WRITE": (
        [("lock", "w1", [(SW, "t", None)]), ("lock", "w2", [(SW, "t", None)])],
        True,
        False,
    ),
    # HMS 2.3 lets a reader pass an EXCLUSIVE lock that waits for another reader, so that
    # readers coming in turn starve the writer; Hive 4 serves them in the order they came.
    "a reader after a writer that waits for a reader": (
        [
            ("lock", "reader", [(SR, "t", None)]),
            ("lock", "writer", [(EX, "t", None)]),
            ("lock", "late reader", [(SR, "t", None)]),
        ],
        False,
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(PARTING))
def test_where_hive_4_parts_from_hms_2_3(oracle: Client, client: Client, case: str) -> None:
    steps, hms_waits, ours_waits = PARTING[case]
    hms, ours = _both(oracle, client, steps)
    assert hms[:-1] == ours[:-1]
    assert hms[-1].endswith("WAITING" if hms_waits else "ACQUIRED")
    assert ours[-1].endswith("WAITING" if ours_waits else "ACQUIRED")


@pytest.fixture(scope="module")
def same_timeout(server: RunningServer) -> Iterator[Client]:
    """A colstats server whose locks time out as the oracle's do."""
    running = RunningServer(server.url, Settings(lock_timeout=LOCK_TIMEOUT_S))
    client, transport = connect(running.port)
    yield client
    transport.close()
    running.stop()


def _timeout_transcript(client: Client, db: str) -> list[str]:
    """Four locks; then, until the first is gone, the third heartbeats and the waiting ones
    check; then what becomes of each."""
    transcript = Transcript(client, db)
    before = [
        ("lock", "dead", [(EX, "t", None)]),
        ("lock", "waiting", [(EX, "t", None)]),
        ("lock", "alive", [(EX, "u", None)]),
        ("lock", "behind alive", [(EX, "u", None)]),
    ]
    lines = [transcript.line(step) for step in before]
    deadline = time.monotonic() + 4 * LOCK_TIMEOUT_S
    while time.monotonic() < deadline:
        for step in (("heartbeat", "alive"), ("check", "behind alive"), ("check", "waiting")):
            transcript.line(step)
        if not any(e.lockid == transcript.ids["dead"] for e in _shown(client, db)):
            break
        time.sleep(0.5)
    after = [
        ("check", "waiting"),
        ("check", "dead"),
        ("heartbeat", "dead"),
        ("check", "behind alive"),
        ("show",),
    ]
    lines += [transcript.line(step) for step in after]
    transcript.release()
    return lines


def _shown(client: Client, db: str) -> list[t.ShowLocksResponseElement]:
    return list(client.show_locks(t.ShowLocksRequest(dbname=db)).locks)


def test_a_lock_not_heartbeated_times_out_as_on_hms(oracle: Client, same_timeout: Client) -> None:
    """With the same timeout (LOCK_TIMEOUT_S): the lock of a writer that stopped heartbeating
    goes, the lock waiting behind it gets the table, the lock that heartbeats stays."""
    db = f"lk_{uuid.uuid4().hex[:10]}"
    hms = _timeout_transcript(oracle, db)
    ours = _timeout_transcript(same_timeout, db)
    assert ours == hms
    assert "check waiting: ACQUIRED" in ours
    assert "check dead: NoSuchLockException" in ours
