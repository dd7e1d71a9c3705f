"""The Thrift server: binary protocol (C-accelerated), unframed like HMS or framed, a pool of
worker threads that each serve one client connection at a time, and a clean shutdown."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.protocol.TProtocol import TProtocolBase
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from metastore.service import Handler

log = logging.getLogger(__name__)

_ACCEPT_POLL_SECONDS = 0.5

# The calls of Hive's ACID tables; colstats serves non-transactional tables only.
_TRANSACTION_CALLS = frozenset(
    {
        "open_txns",
        "commit_txn",
        "abort_txn",
        "abort_txns",
        "get_open_txns",
        "get_open_txns_info",
        "get_open_txns_req",
        "lock",
        "check_lock",
        "unlock",
        "show_locks",
        "heartbeat",
        "heartbeat_txn_range",
        "allocate_table_write_ids",
        "get_valid_write_ids",
        "add_dynamic_partitions",
        "compact",
        "compact2",
        "show_compact",
        "replTableWriteIdState",
        "commit_txn_in_streaming",
    }
)


def unserved(method: str) -> str:
    """The message of the answer to a call colstats does not serve."""
    if method in _TRANSACTION_CALLS:
        return (
            f"Unknown function {method}: colstats does not serve transactions and locks "
            "(ACID tables); use non-transactional tables"
        )
    return f"Unknown function {method}: colstats does not serve this call"


class Processor(ThriftHiveMetastore.Processor):
    """The generated processor, with a clear answer to the calls colstats does not serve and
    none to a oneway message it does not know (the client reads no answer)."""

    def __init__(self, handler: Handler) -> None:
        super().__init__(handler)  # type: ignore[no-untyped-call]  # generated, untyped

    def process(self, iprot: TProtocolBase, oprot: TProtocolBase) -> bool | None:
        name, kind, seqid = iprot.readMessageBegin()
        if name in self._processMap:
            serve: Callable[..., None] = self._processMap[name]
            serve(self, seqid, iprot, oprot)
            return True
        iprot.skip(TType.STRUCT)
        iprot.readMessageEnd()
        log.info("unserved call %s", name)
        if kind == TMessageType.ONEWAY:
            return None
        error = TApplicationException(TApplicationException.UNKNOWN_METHOD, unserved(name))
        oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
        error.write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()
        return None


class MetastoreServer:
    """Serves HANDLER on HOST:PORT until stop() is called (port 0 picks a free port)."""

    def __init__(
        self, handler: Handler, host: str, port: int, *, framed: bool = False, workers: int = 100
    ) -> None:
        self._processor = Processor(handler)
        self._transports = (
            TTransport.TFramedTransportFactory()
            if framed
            else TTransport.TBufferedTransportFactory()
        )
        self._protocols = TBinaryProtocolAcceleratedFactory()
        self._listener = socket.create_server((host, port), reuse_port=False, backlog=128)
        self._listener.settimeout(_ACCEPT_POLL_SECONDS)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="metastore")
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self.framed = framed

    def serve_forever(self) -> None:
        """Accept connections until stop(); then wait for calls in progress to finish."""
        log.info(
            "serving the Hive Metastore protocol on %s:%d (%s transport)",
            self.host,
            self.port,
            "framed" if self.framed else "unframed",
        )
        try:
            while not self._stopping.is_set():
                try:
                    conn, peer = self._listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    if self._stopping.is_set():
                        break
                    raise
                conn.settimeout(None)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with self._lock:
                    self._connections.add(conn)
                self._pool.submit(self._serve_connection, conn, peer)
        finally:
            self._listener.close()
            self._close_connections()
            self._pool.shutdown(wait=True)
            log.info("stopped")

    def stop(self) -> None:
        """Stop accepting, end idle connections; calls in progress complete their reply."""
        self._stopping.set()
        self._close_connections()

    def install_signal_handlers(self) -> None:
        def handle(signum: int, _frame: FrameType | None) -> None:
            log.info("received %s, shutting down", signal.Signals(signum).name)
            self.stop()

        signal.signal(signal.SIGINT, handle)
        signal.signal(signal.SIGTERM, handle)

    def _close_connections(self) -> None:
        # Shutting down the read side wakes a worker waiting for the next call with EOF; a
        # worker inside a call has read its whole request and can still write the reply.
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RD)

    def _serve_connection(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        client = TSocket.TSocket()
        client.setHandle(conn)
        transport = self._transports.getTransport(client)
        protocol = self._protocols.getProtocol(transport)
        log.debug("connection from %s:%d", peer[0], peer[1])
        try:
            while not self._stopping.is_set():
                self._processor.process(protocol, protocol)
        except TTransport.TTransportException:
            pass  # the client closed the connection
        except Exception:
            log.exception("connection from %s:%d failed", peer[0], peer[1])
        finally:
            with self._lock:
                self._connections.discard(conn)
            transport.close()
