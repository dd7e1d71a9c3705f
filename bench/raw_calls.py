"""Calls whose replies are read as bytes and not decoded, for bench/planner_bench.py: what the
server and the transfer take of a call, without the client's decoding of the answer."""

from __future__ import annotations

import select
import socket
from collections.abc import Sequence
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TMessageType
from thrift.transport import TTransport

from hive_metastore_thrift import ThriftHiveMetastore


class RawCaller:
    """Calls on a connection of their own to the server at PORT, their replies read as bytes
    and not decoded: what the server and the transfer take of a call, without this
    script's client."""

    def __init__(self, port: int) -> None:
        self._socket = socket.create_connection(("127.0.0.1", port))
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.settimeout(60)

    def call(self, request: bytes, reply_size: int) -> None:
        """Send the encoded REQUEST and read its reply of REPLY_SIZE bytes."""
        self._socket.sendall(request)
        left = reply_size
        while left > 0:
            try:
                chunk = self._socket.recv(min(left, 1 << 20))
            except TimeoutError:
                raise RuntimeError(
                    f"a reply shorter than its expected {reply_size} bytes ({left} missing)"
                ) from None
            if not chunk:
                raise RuntimeError("the server closed the connection")
            left -= len(chunk)

    def check_size(self, request: bytes, reply_size: int) -> None:
        """Fail unless the reply to REQUEST is REPLY_SIZE bytes, before any is timed: a
        reply read at another size would leave bytes for the next, or wait for more."""
        self._socket.settimeout(10)
        try:
            self.call(request, reply_size)
        finally:
            self._socket.settimeout(60)
        self.check_drained()

    def check_drained(self) -> None:
        """Fail when bytes arrive after the last reply read (within 0.2 s): it was longer
        than the size it was read at."""
        ready, _, _ = select.select([self._socket], [], [], 0.2)
        if not ready:
            return
        extra = self._socket.recv(1)
        if not extra:
            raise RuntimeError("the server closed the connection")
        raise RuntimeError(f"a reply was longer than its expected size ({extra!r} left)")

    def close(self) -> None:
        self._socket.close()


def encoded_call(call: str, arguments: Sequence[Any]) -> bytes:
    """The request of CALL with ARGUMENTS as the generated client sends it."""
    buffer = TTransport.TMemoryBuffer()
    getattr(ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(buffer)), f"send_{call}")(
        *arguments
    )
    return bytes(buffer.getvalue())


def reply_size(call: str, answer: Any) -> int:
    """The bytes of the reply of CALL answering ANSWER (as the server sends it)."""
    buffer = TTransport.TMemoryBuffer()
    protocol = TBinaryProtocolAccelerated(buffer)
    protocol.writeMessageBegin(call, TMessageType.REPLY, 0)
    getattr(ThriftHiveMetastore, f"{call}_result")(success=answer).write(protocol)
    protocol.writeMessageEnd()
    return len(buffer.getvalue())
