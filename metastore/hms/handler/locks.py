"""The lock calls: lock, check_lock, unlock, heartbeat and show_locks, for the locks Iceberg's
Hive catalog (pyiceberg, Java Iceberg, Trino) takes around a commit (metastore.store.locks).

Locks without a transaction are served; colstats keeps no Hive ACID transactions, so a call
that names one (a txnid other than 0) is refused with NoSuchTxnException. Every answer is
read from the database: nothing about a lock is cached or held in this server.
"""

from __future__ import annotations

from sqlalchemy.orm import Session
from thrift.Thrift import TApplicationException

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.hms.call import call
from metastore.hms.handler.base import ServiceBase
from metastore.store import locks

_TYPES = {
    t.LockType.SHARED_READ: locks.LockType.SHARED_READ,
    t.LockType.SHARED_WRITE: locks.LockType.SHARED_WRITE,
    t.LockType.EXCLUSIVE: locks.LockType.EXCLUSIVE,
    t.LockType.EXCL_WRITE: locks.LockType.EXCL_WRITE,
}
_WIRE_TYPES = {ours: wire for wire, ours in _TYPES.items()}
_STATES = {
    locks.LockState.ACQUIRED: t.LockState.ACQUIRED,
    locks.LockState.WAITING: t.LockState.WAITING,
}


def _no_transactions(call_name: str, txnid: int | None) -> None:
    """Refuse a call that names a Hive transaction."""
    if txnid:
        raise t.NoSuchTxnException(
            f"{call_name}: transaction {txnid} does not exist: colstats keeps no Hive ACID "
            "transactions (locks without one, as Iceberg's Hive catalog takes them, are served)"
        )


def _component(component: t.LockComponent) -> locks.Component:
    """The core's lock component for one of the request's, checked: a type, a level, and
    the names its level needs (a DB lock names no table, a TABLE lock no partition)."""
    if component is None:
        raise _bad("a lock component is missing")
    kind = _TYPES.get(component.type)
    if kind is None:
        raise _bad(
            f"unknown lock type {component.type} (SHARED_READ, SHARED_WRITE, EXCLUSIVE, EXCL_WRITE)"
        )
    db = names.identifier(names.split_catalog(component.dbname)[1] or "")
    if not db:
        raise _bad("a lock component needs a dbname")
    table = names.identifier(component.tablename) if component.tablename else None
    partition = component.partitionname or None
    level = component.level
    if level == t.LockLevel.DB:
        if table is not None or partition is not None:
            raise _bad(
                f"a DB lock of {db} names a table or partition: use level TABLE or PARTITION"
            )
    elif level == t.LockLevel.TABLE:
        if table is None or partition is not None:
            raise _bad(f"a TABLE lock in {db} needs a tablename and no partitionname")
    elif level == t.LockLevel.PARTITION:
        if table is None or partition is None:
            raise _bad(f"a PARTITION lock in {db} needs a tablename and a partitionname")
    else:
        raise _bad(f"unknown lock level {level} (DB, TABLE, PARTITION)")
    return locks.Component(kind, db, table, partition)


def _bad(problem: str) -> TApplicationException:
    """The answer to a lock request that cannot be right: lock declares no MetaException,
    so HMS answers such requests with TApplicationException, which carries the message."""
    return TApplicationException(TApplicationException.INTERNAL_ERROR, f"lock: {problem}")


def _no_such_lock(lock_id: int, timeout: float) -> t.NoSuchLockException:
    return t.NoSuchLockException(
        f"No such lock lockid:{lock_id}: it is not held (never taken, unlocked, or timed out "
        f"after {timeout:g} s without a heartbeat)"
    )


def _state(response: t.LockResponse) -> str:
    """What the audit line of check_lock says of the answer."""
    return f"state={t.LockState._VALUES_TO_NAMES.get(response.state)}"


def _granted(response: t.LockResponse) -> str:
    """What the audit line of lock says of the answer."""
    return f"lockid={response.lockid} {_state(response)}"


class LockCalls(ServiceBase):
    @property
    def _timeout_ms(self) -> int:
        return int(self.settings.lock_timeout * 1000)

    @call(write=True, audited=_granted, attempts=locks.TAKE_ATTEMPTS)
    def lock(self, s: Session, rqst: t.LockRequest) -> t.LockResponse:
        if rqst is None:
            raise _bad("no lock request given")
        _no_transactions("lock", rqst.txnid)
        if not rqst.component:
            raise _bad("a lock request needs at least one component")
        components = [_component(c) for c in rqst.component]
        requester = locks.Requester(
            user=rqst.user or "",
            host=rqst.hostname or "",
            agent_info=rqst.agentInfo or locks.DEFAULT_AGENT,
        )
        lock_id, state = locks.take(s, components, requester, self._timeout_ms)
        return t.LockResponse(lockid=lock_id, state=_STATES[state])

    @call(write=True, audited=_state)
    def check_lock(self, s: Session, rqst: t.CheckLockRequest) -> t.LockResponse:
        if rqst is None or rqst.lockid is None:
            raise t.NoSuchLockException("check_lock: no lock id given")
        _no_transactions("check_lock", rqst.txnid)
        try:
            state = locks.check(s, rqst.lockid, self._timeout_ms)
        except locks.NoSuchLock:
            raise _no_such_lock(rqst.lockid, self.settings.lock_timeout) from None
        return t.LockResponse(lockid=rqst.lockid, state=_STATES[state])

    @call(write=True)
    def unlock(self, s: Session, rqst: t.UnlockRequest) -> None:
        if rqst is None or rqst.lockid is None:
            raise t.NoSuchLockException("unlock: no lock id given")
        try:
            locks.release(s, rqst.lockid)
        except locks.LockOfTransaction as e:
            raise t.TxnOpenException(e.message) from None

    @call(write=True)
    def heartbeat(self, s: Session, ids: t.HeartbeatRequest | None) -> None:
        if ids is None:
            return
        _no_transactions("heartbeat", ids.txnid)
        if not ids.lockid:
            return
        try:
            locks.heartbeat(s, ids.lockid, self._timeout_ms)
        except locks.NoSuchLock:
            raise _no_such_lock(ids.lockid, self.settings.lock_timeout) from None

    @call(write=False)
    def show_locks(self, s: Session, rqst: t.ShowLocksRequest | None) -> t.ShowLocksResponse:
        rqst = rqst or t.ShowLocksRequest()
        db = names.split_catalog(rqst.dbname)[1] if rqst.dbname else None
        found = locks.listed(
            s,
            self._timeout_ms,
            db=names.identifier(db) if db else None,
            table=names.identifier(rqst.tablename) if rqst.tablename else None,
            partition=rqst.partname or None,
            txn_id=rqst.txnid,
        )
        return t.ShowLocksResponse(locks=[_shown(lock) for lock in found])


def _shown(lock: locks.Lock) -> t.ShowLocksResponseElement:
    blocked = lock.blocked_by
    return t.ShowLocksResponseElement(
        lockid=lock.lock_id,
        dbname=lock.db,
        tablename=lock.table,
        partname=lock.partition,
        state=_STATES[lock.state],
        type=_WIRE_TYPES[lock.type],
        txnid=lock.txn_id,
        lastheartbeat=lock.last_heartbeat,
        acquiredat=lock.acquired_at,
        user=lock.user,
        hostname=lock.host,
        heartbeatCount=lock.heartbeat_count,
        agentInfo=lock.agent_info,
        blockedByExtId=blocked[0] if blocked else None,
        blockedByIntId=blocked[1] if blocked else None,
        lockIdInternal=lock.component_id,
    )
