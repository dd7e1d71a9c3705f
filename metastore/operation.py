"""What every operation needs, whatever the door it came through: the caller's right, one
transaction (with its retries and the work after its commit), an audit line for a change,
a log line for a failure, and errors in the door's own terms.

A door (the Thrift door, metastore.hms; the Flight door) names the operation, gives the work
to run on a session and says how its caller receives errors (a `Door`). Everything else is
the same for every door:

1. the caller of the current connection (metastore.access) must hold the operation's right,
   else the operation is refused (and, for a change, audited as refused);
2. the work runs in one transaction (metastore.store.transactions.Transactions.run: run again
   where a new attempt fixes the failure; actions registered with on_commit run once it is
   committed);
3. a failure is logged on one line (an unexpected one with its traceback) and reaches the
   caller as the door's error: the core's errors (metastore.errors) translated by the door,
   the door's own errors as they are;
4. a change leaves one audit line (metastore.audit) whatever its outcome.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from sqlalchemy.orm import Session

from metastore import audit
from metastore.access import Policy, current_connection, required_right
from metastore.errors import MetastoreError, OutcomeUnknown, Refused
from metastore.names import InvalidNameError
from metastore.store.transactions import ATTEMPTS, Transactions

log = logging.getLogger(__name__)

T = TypeVar("T")


class Door(Protocol):
    """What an operation needs to know of the door that serves it."""

    known: tuple[type[Exception], ...]
    """The door's own errors, which its code raises during an operation: they reach the
    caller as they are."""

    def error(self, name: str, error: MetastoreError) -> Exception:
        """The door's error for a failure of the core in operation NAME."""
        ...

    def internal(self, name: str, error: Exception) -> Exception:
        """The door's error for an unexpected failure of operation NAME (a bug)."""
        ...


def message_of(error: BaseException) -> str:
    """The message of an error: its `message` (the IDL's exceptions, the core's), else its
    text."""
    message = getattr(error, "message", None)
    return message if isinstance(message, str) else str(error)


class Operations:
    """Runs the operations of one door over one database and one rights policy."""

    def __init__(self, tx: Transactions, policy: Policy, door: Door) -> None:
        self.tx = tx
        self.policy = policy
        self.door = door

    def run(
        self,
        name: str,
        work: Callable[[Session], T],
        *,
        write: bool,
        target: str = "",
        audited: Callable[[Any], str] | None = None,
        attempts: int = ATTEMPTS,
    ) -> T:
        """WORK(session) as operation NAME (see the module docstring). WRITE marks a change:
        it needs the right access.RIGHTS gives it and is audited with TARGET (the objects it
        names, as audit.target renders them) and, when it succeeds, AUDITED(result) (what it
        made, such as a lock's id). ATTEMPTS: as Transactions.run takes it."""
        started = time.perf_counter()
        connection = current_connection()
        right = required_right(name, write)
        if connection is not None and not self.policy.allows(connection, right):
            message = self.policy.refusal(connection, right, name)
            log.warning("%s refused: %s", name, message)
            if write:
                audit.record(connection, self.policy.authentication, name, target, "refused")
            raise self.door.error(name, Refused(message)) from None
        outcome = "ok"
        try:
            result = self.tx.run(work, name=name, write=write, attempts=attempts)
            if write and audited is not None:
                target = f"{target} {audited(result)}".strip()
        except Exception as e:
            error, outcome = self._failure(name, e)
            if error is e:
                raise
            raise error from None
        finally:
            if write:
                audit.record(connection, self.policy.authentication, name, target, outcome)
        log.debug("%s ok in %.1f ms", name, (time.perf_counter() - started) * 1e3)
        return result

    def _failure(self, name: str, error: Exception) -> tuple[Exception, str]:
        """The error the caller receives for ERROR, and the audit outcome; logged."""
        if isinstance(error, self.door.known):
            log.warning("%s failed: %s: %s", name, type(error).__name__, message_of(error))
            return error, f"failed:{type(error).__name__}"
        if isinstance(error, InvalidNameError):
            error = MetastoreError(str(error))
        if isinstance(error, MetastoreError):
            translated = self.door.error(name, error)
            if isinstance(error, OutcomeUnknown):
                log.error("%s: %s", name, error.message)
                return translated, f"unknown:{type(translated).__name__}"
            log.warning(
                "%s failed: %s: %s", name, type(translated).__name__, message_of(translated)
            )
            return translated, f"failed:{type(translated).__name__}"
        log.exception("%s failed unexpectedly", name)
        translated = self.door.internal(name, error)
        return translated, f"failed:{type(translated).__name__}"
