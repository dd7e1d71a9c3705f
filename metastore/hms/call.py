"""The `call` decorator: a handler method becomes a Thrift call, run as an operation of the
core (metastore.operation: rights, one transaction with its retries, the audit line, work
after the commit) with its errors translated to the exceptions its IDL entry declares.

Every error a caller can cause is answered with an exception the method declares, with a
message that names the object at fault: the core's errors (metastore.errors) become the
IDL exception of their kind when the call declares it (NotFound: NoSuchObjectException,
InvalidInput: InvalidInputException, ...), MetaException otherwise. Anything unexpected is
logged with its traceback and answered with MetaException, never with the INTERNAL_ERROR
that Java HMS gives.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from sqlalchemy.orm import Session
from thrift.Thrift import TApplicationException

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.errors import (
    AlreadyExists,
    InvalidInput,
    InvalidObject,
    MetastoreError,
    NotFound,
    OutcomeUnknown,
)
from metastore.hms.audit_target import target
from metastore.operation import Operations
from metastore.store.transactions import ATTEMPTS

# The exceptions of the IDL: each reaches the client as declared by the call (a call that
# raises one its IDL entry does not declare makes the processor answer INTERNAL_ERROR).
DECLARED = (
    t.MetaException,
    t.NoSuchObjectException,
    t.InvalidObjectException,
    t.InvalidInputException,
    t.AlreadyExistsException,
    t.InvalidOperationException,
    t.UnknownDBException,
    t.UnknownTableException,
    t.UnknownPartitionException,
    t.InvalidPartitionException,
    t.NoSuchLockException,
    t.NoSuchTxnException,
    t.TxnAbortedException,
    t.TxnOpenException,
    TApplicationException,
)

# The IDL exception of each kind of the core's errors.
_OF_KIND: tuple[tuple[type[MetastoreError], type[Exception]], ...] = (
    (NotFound, t.NoSuchObjectException),
    (InvalidInput, t.InvalidInputException),
    (InvalidObject, t.InvalidObjectException),
    (AlreadyExists, t.AlreadyExistsException),
)


@functools.cache
def declared(name: str) -> frozenset[type[Exception]]:
    """The exceptions the IDL declares for call NAME (from its generated result struct)."""
    result = getattr(ThriftHiveMetastore, f"{name}_result", None)
    spec = getattr(result, "thrift_spec", None) or ()
    return frozenset(
        field[3][0] for field in spec if field is not None and field[0] > 0 and field[3]
    )


class ThriftDoor:
    """How the Thrift door's callers receive errors (metastore.operation.Door)."""

    known: tuple[type[Exception], ...] = DECLARED

    def error(self, name: str, error: MetastoreError) -> Exception:
        if isinstance(error, OutcomeUnknown):
            return _meta(name, f"{name}: {error.message}")
        for kind, exception in _OF_KIND:
            if isinstance(error, kind) and exception in declared(name):
                return exception(error.message)
        return _meta(name, error.message)

    def internal(self, name: str, error: Exception) -> Exception:
        return _meta(name, f"internal error in {name}: {type(error).__name__}: {error}")


def _meta(name: str, message: str) -> Exception:
    """MetaException(MESSAGE) where call NAME declares it; else (the lock calls declare only
    their own exceptions) the TApplicationException that HMS answers such calls with, which
    carries MESSAGE too (the generated processor would replace any other exception with
    "Internal error")."""
    error: Exception
    if t.MetaException in declared(name):
        error = t.MetaException(message)
    else:
        error = TApplicationException(TApplicationException.INTERNAL_ERROR, message)
    return error


THRIFT_DOOR = ThriftDoor()


class Served(Protocol):
    """A handler: what `call` needs of the object whose methods it wraps."""

    operations: Operations


S = TypeVar("S", bound=Served)
P = ParamSpec("P")
R = TypeVar("R")

CHANGING_CALLS: set[str] = set()
"""The names of the `call(write=True)` methods; each must have its right in access.RIGHTS."""


def call(
    *,
    write: bool,
    audited: Callable[[Any], str] | None = None,
    attempts: int = ATTEMPTS,
) -> Callable[[Callable[Concatenate[S, Session, P], R]], Callable[Concatenate[S, P], R]]:
    """Make a handler method a Thrift call: METHOD(self, session, *args) becomes
    CALL(self, *args), run as an operation (metastore.operation.Operations.run) named after
    the method. A WRITE call is a change: it needs the right access.RIGHTS gives it and
    leaves an audit line naming the objects of its arguments (metastore.hms.audit_target)
    and, when AUDITED is given, what AUDITED(result) says of its result. ATTEMPTS: how
    often its transaction may run (metastore.store.transactions.Transactions.run).
    """

    def decorate(method: Callable[Concatenate[S, Session, P], R]) -> Callable[Concatenate[S, P], R]:
        name = method.__name__
        signature = inspect.signature(method)
        if write:
            CHANGING_CALLS.add(name)

        @functools.wraps(method)
        def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            what = ""
            if write:
                bound = signature.bind_partial(self, None, *args, **kwargs).arguments
                what = target({k: v for k, v in list(bound.items())[2:]})
            return self.operations.run(
                name,
                lambda s: method(self, s, *args, **kwargs),
                write=write,
                target=what,
                audited=audited,
                attempts=attempts,
            )

        return wrapper

    return decorate
