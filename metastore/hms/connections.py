"""A connection as the server (metastore.hms.server) tracks it, and the counters of what the
server has seen: the state the event loop and the workers hand to each other."""

from __future__ import annotations

import dataclasses
import enum
import socket
import threading

from metastore.access import ConnectionContext
from metastore.hms.wire import Codec


class State(enum.Enum):
    """Where a connection is: with the loop (handshaking, waiting) or with a worker."""

    HANDSHAKE = "handshake"  # TLS handshake in progress, in the loop
    WAITING = "waiting"  # registered with the selector for the next request
    BUSY = "busy"  # a worker has it
    CLOSED = "closed"


@dataclasses.dataclass
class Counters:
    """What the server has seen since it started (logged when it stops)."""

    accepted: int = 0
    refused_at_limit: int = 0
    closed_idle: int = 0
    timed_out: int = 0
    bad_input: int = 0
    disconnected: int = 0
    """Clients gone in the middle of a request or a call."""
    refused_authentication: int = 0
    calls: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()

    def add(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


class Connection:
    """A connection as the loop tracks it."""

    __slots__ = (
        "call",
        "codec",
        "context",
        "deadline",
        "ready",
        "received",
        "sock",
        "state",
        "watched",
    )

    def __init__(self, sock: socket.socket, context: ConnectionContext, codec: Codec) -> None:
        self.sock = sock
        self.context = context
        self.codec = codec
        self.state = State.WAITING
        self.ready = False  # TLS handshake or Kerberos negotiation done (or none needed)
        self.deadline = 0.0
        self.received = 0
        self.call: str | None = None
        self.watched = 0  # the events the selector waits for on SOCK (0: not registered)

    @property
    def peer(self) -> str:
        return self.context.peer
