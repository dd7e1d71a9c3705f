"""The Thrift server: one event loop owns every socket, a pool of worker threads runs calls.

Why this shape: HMS clients keep their connection open between calls, and a pool that gives
each connection a thread lets idle connections (a connection pool, a port scanner) take every
thread. Here the loop (a `selectors` loop in the thread that calls serve_forever) waits on all
connections at once and reads what arrives; a worker is given a connection only when a whole
request is there (metastore.hms.wire finds where an unframed request ends), runs it, writes the
reply and puts the connection back to wait for its next request (registering it with the
loop's selector itself, without waking the loop, in the common case). A planner sends its next
call as soon as it has read the answer: the worker first waits a moment (_LINGER_MS) for it on
the connection and serves it itself, while another worker is free. So:

* an idle connection costs a socket and a few hundred bytes, no thread;
* a slow or half-sent request costs no worker, only buffer space, until `request_timeout`;
* a connection runs one call at a time, in order; calls of different connections run in
  parallel on up to `workers` threads;
* malformed input, limits exceeded, a client gone mid-call: one WARNING line naming the peer
  and the reason, a counter, and the connection closed (never a traceback; an unexpected
  error inside a handler is still logged with its traceback by the `call` decorator);
* at `max_connections` open connections, a new one is accepted and closed at once (the client
  sees the connection closed and can retry or fail over), with a WARNING at most every 10 s;
* a connection idle for `idle_timeout` is closed (HMS clients reconnect on their next call).

TLS handshakes run in the loop (non-blocking); Kerberos negotiation frames are read by the
loop and answered by a worker (a GSSAPI step reads the keytab and the replay cache).

Shutdown (stop(), SIGINT, SIGTERM): stop accepting, close idle connections, let calls in
progress finish and write their replies, then close those connections too.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import select
import selectors
import signal
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.protocol.TProtocol import TProtocolException
from thrift.transport.TTransport import TMemoryBuffer, TTransportException

from metastore.access import (
    ConnectionContext,
    release_connection,
    use_connection,
)
from metastore.config import Settings
from metastore.hms.cache import AnswerCache
from metastore.hms.connections import Connection, Counters, State
from metastore.hms.handler import Handler
from metastore.hms.metrics import Metrics
from metastore.hms.processor import Processor
from metastore.hms.security import Security
from metastore.hms.security import build as build_security
from metastore.hms.wire import Limits, Message, Negotiation, ProtocolError

log = logging.getLogger(__name__)

_READ_SIZE = 256 * 1024
_SWEEP_SECONDS = 0.5
_LIMIT_WARNING_SECONDS = 10.0
_ACCEPTS_PER_WAKEUP = 64
# How long a worker that sent a reply waits for the connection's next request (_linger):
# longer than a client takes to read one answer and send its next call, short enough that a
# connection that goes quiet is handed back to the loop at once.
_LINGER_MS = 2
# Decoding errors of a request that passed the scanner (a string that is not UTF-8, a field
# of the wrong type): bad input, not a server bug.
_BAD_REQUEST = (TProtocolException, TTransportException, EOFError, UnicodeDecodeError)


class MetastoreServer:
    """Serves HANDLER on HOST:PORT until stop() is called (port 0 picks a free port)."""

    def __init__(
        self,
        handler: Handler,
        host: str,
        port: int,
        *,
        framed: bool = False,
        workers: int = 100,
        security: Security | None = None,
        max_connections: int = 10_000,
        idle_timeout: float = 3600.0,
        request_timeout: float = 60.0,
        limits: Limits | None = None,
        cache_size: int = 0,
        listener: socket.socket | None = None,
    ) -> None:
        self._limits = limits or Limits()
        self._protocols = TBinaryProtocolAcceleratedFactory(
            string_length_limit=self._limits.max_message_size,
            container_length_limit=self._limits.max_container_size,
        )
        self.cache = AnswerCache(cache_size) if cache_size > 0 else None
        self._processor = Processor(handler, self._protocols, self.cache)
        self._security = security or Security(framed=framed)
        self._max_connections = max_connections
        self._idle_timeout = idle_timeout
        self._request_timeout = request_timeout
        # A LISTENER bound by the caller (`metastore serve` binds before it touches the
        # database, so that a port in use is reported before anything is created).
        self._listener = listener or socket.create_server((host, port), backlog=4096)
        self._listener.setblocking(False)
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="metastore")
        self._workers = workers
        self._busy = 0
        self._busy_lock = threading.Lock()
        self._clients: dict[int, Connection] = {}
        self._returned: collections.deque[tuple[Connection, bool]] = collections.deque()
        self._stopping = threading.Event()
        self._accept_paused = False
        self._limit_warned = 0.0
        self._limit_refused = 0
        self.counters = Counters()
        self.metrics = Metrics(lambda: len(self._clients), self.counters.snapshot, self.cache)
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self.framed = self._security.framed

    @classmethod
    def from_settings(
        cls,
        handler: Handler,
        settings: Settings,
        *,
        host: str | None = None,
        port: int | None = None,
        security: Security | None = None,
        listener: socket.socket | None = None,
    ) -> MetastoreServer:
        """A server as SETTINGS describe it (HOST, PORT and SECURITY, when given, instead of
        theirs); SettingsError when the security settings cannot be used."""
        return cls(
            handler,
            settings.host if host is None else host,
            settings.port if port is None else port,
            workers=settings.workers,
            security=security or build_security(settings),
            max_connections=settings.max_connections,
            idle_timeout=settings.idle_timeout,
            request_timeout=settings.request_timeout,
            limits=Limits(settings.max_message_size, settings.max_container_size),
            cache_size=settings.cache_size,
            listener=listener,
        )

    # -- running and stopping --------------------------------------------------------------

    def serve_forever(self) -> None:
        """Serve until stop(); then let calls in progress finish and close everything."""
        log.info(
            "serving the Hive Metastore protocol on %s:%d (%s, %s transport)",
            self.host,
            self.port,
            self._security.mode,
            "framed" if self.framed else "unframed",
        )
        self._selector.register(self._listener, selectors.EVENT_READ, None)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        draining = False
        next_sweep = time.monotonic() + _SWEEP_SECONDS
        try:
            while True:
                if self._stopping.is_set():
                    if not draining:
                        draining = True
                        self._begin_drain()
                    self._close_idle()  # also those a worker handed back meanwhile (_wait_here)
                if draining and not self._clients:
                    break
                for key, mask in self._selector.select(timeout=_SWEEP_SECONDS):
                    if key.fileobj is self._listener:
                        self._accept()
                    elif key.fileobj is self._wake_r:
                        self._drain_wakeups()
                    else:
                        self._on_event(key.data, mask)
                self._take_back()
                now = time.monotonic()
                if now >= next_sweep:
                    self._sweep(now)
                    next_sweep = now + _SWEEP_SECONDS
        finally:
            for client in list(self._clients.values()):
                if client.state is not State.BUSY:
                    self._close(client)
            self._pool.shutdown(wait=True)
            for client in list(self._clients.values()):
                self._close(client)
            self._selector.close()
            self._listener.close()
            self._wake_r.close()
            self._wake_w.close()
            self.metrics.stop()
            counts = ", ".join(f"{k} {v}" for k, v in self.counters.snapshot().items())
            log.info("stopped (%s)", counts)

    def stop(self) -> None:
        """Stop accepting and close idle connections; calls in progress complete their reply."""
        self._stopping.set()
        self._wake()

    def install_signal_handlers(self) -> None:
        def handle(signum: int, _frame: FrameType | None) -> None:
            log.info("received %s, shutting down", signal.Signals(signum).name)
            self.stop()

        signal.signal(signal.SIGINT, handle)
        signal.signal(signal.SIGTERM, handle)

    def _begin_drain(self) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(self._listener)
        self._listener.close()

    def _close_idle(self) -> None:
        for client in list(self._clients.values()):
            if client.state is not State.BUSY:
                self._close(client)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _drain_wakeups(self) -> None:
        with contextlib.suppress(OSError):
            while self._wake_r.recv(4096):
                pass

    # -- the loop's side: accepting, reading, timing out -------------------------------------

    def _accept(self) -> None:
        for _ in range(_ACCEPTS_PER_WAKEUP):
            try:
                sock, address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:  # e.g. out of file descriptors: pause until the next sweep
                self._limit_warning(f"cannot accept a connection: {e}")
                with contextlib.suppress(KeyError, ValueError):
                    self._selector.unregister(self._listener)
                self._accept_paused = True
                return
            peer = f"{address[0]}:{address[1]}"
            if len(self._clients) >= self._max_connections:
                self._limit_warning(
                    f"connection from {peer} closed: max_connections "
                    f"({self._max_connections}) are open"
                )
                self.counters.add("refused_at_limit")
                sock.close()
                continue
            self.counters.add("accepted")
            self._start(sock, peer)

    def _limit_warning(self, message: str) -> None:
        now = time.monotonic()
        self._limit_refused += 1
        if now - self._limit_warned >= _LIMIT_WARNING_SECONDS:
            more = f" ({self._limit_refused - 1} more since the last warning)"
            log.warning("%s%s", message, more if self._limit_refused > 1 else "")
            self._limit_warned, self._limit_refused = now, 0

    def _start(self, sock: socket.socket, peer: str) -> None:
        sock.setblocking(False)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        security = self._security
        context = ConnectionContext(peer)
        if security.tls is not None:
            sock = security.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        client = Connection(sock, context, security.codec(self._limits))
        client.deadline = time.monotonic() + self._request_timeout
        self._clients[sock.fileno()] = client
        log.debug("connection from %s", peer)
        if security.tls is not None:
            client.state = State.HANDSHAKE
            self._handshake(client)
        elif security.kerberos is None:
            client.ready = True
            self._next(client)  # waits for the first request, under idle_timeout
        else:
            self._watch(client)  # waits for the negotiation, under request_timeout

    def _on_event(self, client: Connection, mask: int) -> None:
        if client.state is State.HANDSHAKE:
            self._handshake(client)
        elif client.state is State.WAITING:
            self._read(client)

    def _handshake(self, client: Connection) -> None:
        sock = client.sock
        assert isinstance(sock, ssl.SSLSocket)
        try:
            sock.do_handshake()
        except ssl.SSLWantReadError:
            self._watch(client)
            return
        except ssl.SSLWantWriteError:
            self._watch(client, selectors.EVENT_WRITE)
            return
        except (ssl.SSLEOFError, ConnectionResetError, BrokenPipeError) as e:
            self._gone(client, _reason(e))  # a client (or a port scanner) that went away
            return
        except (ssl.SSLError, OSError) as e:
            self._refuse(client, f"TLS handshake failed: {_reason(e)}", "refused_authentication")
            return
        client.state = State.WAITING
        client.ready = True
        self._security.tls_established(client.context, sock)
        log.debug("%s: TLS established (%s)", client.peer, sock.version())
        self._read(client)  # the request may have come with the handshake's last flight

    def _read(self, client: Connection) -> None:
        if self._receive(client):
            self._next(client)
        elif client.state is not State.CLOSED:
            self._watch(client)

    def _receive(self, client: Connection) -> bool:
        """Feed what CLIENT sent to its codec. False when nothing was read: nothing has
        arrived yet, or the client is gone (the connection is then closed, by _gone)."""
        sock = client.sock
        try:
            data = sock.recv(_READ_SIZE)
            if isinstance(sock, ssl.SSLSocket):
                while data and sock.pending():  # decrypted bytes the selector cannot see
                    data += sock.recv(sock.pending())
        except (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False
        except OSError as e:
            self._gone(client, _reason(e))
            return False
        if not data:
            self._gone(client, None)
            return False
        client.received += len(data)
        client.codec.feed(data)
        return True

    def _next(self, client: Connection) -> None:
        """Hand the next complete request to a worker, or wait for more bytes."""
        try:
            unit = client.codec.next_message()
        except ProtocolError as e:
            self._refuse(client, e.reason, "bad_input", reply=e.reply)
            return
        now = time.monotonic()
        if unit is None:
            if client.ready and not client.codec.pending:
                client.call = None
                client.deadline = self._idle_deadline(now)
            elif client.ready and client.call is None:
                client.call = ""  # a request has started: it has request_timeout to arrive
                client.deadline = now + self._request_timeout
            self._watch(client)
            return
        self._unwatch(client)
        client.state = State.BUSY
        client.call = _call_name(unit)
        with self._busy_lock:
            self._busy += 1
        self._pool.submit(self._work, client, unit)

    def _idle_deadline(self, now: float) -> float:
        return now + self._idle_timeout if self._idle_timeout else float("inf")

    def _take_back(self) -> None:
        """Connections whose call is done: wait for their next request, or close them."""
        while self._returned:
            client, keep = self._returned.popleft()
            if not keep or self._stopping.is_set():
                self._close(client)
                continue
            client.state = State.WAITING
            client.call = None
            if not client.ready and self._security.kerberos is not None:
                client.ready = client.context.authenticated
            sock = client.sock
            if isinstance(sock, ssl.SSLSocket) and sock.pending():
                self._read(client)
            else:
                self._next(client)

    def _sweep(self, now: float) -> None:
        """Close connections past their deadline; accept again after a failed accept."""
        if self._accept_paused and not self._stopping.is_set():
            self._accept_paused = False
            self._selector.register(self._listener, selectors.EVENT_READ, None)
        for client in list(self._clients.values()):
            if client.state is State.BUSY or now < client.deadline:
                continue
            if not client.ready:
                what = "TLS handshake" if client.state is State.HANDSHAKE else "authentication"
                self._refuse(
                    client,
                    f"{what} not completed within {self._request_timeout:g} s",
                    "timed_out",
                )
            elif client.call is not None:
                self._refuse(
                    client,
                    f"request not complete within {self._request_timeout:g} s "
                    f"({client.codec.pending} bytes received)",
                    "timed_out",
                )
            else:
                log.debug("%s: closed after %g s idle", client.peer, self._idle_timeout)
                self.counters.add("closed_idle")
                self._close(client)

    def _gone(self, client: Connection, error: str | None) -> None:
        """The client closed its connection (ERROR: how it failed)."""
        if client.codec.pending or (not client.ready and client.received):
            where = "during the handshake" if not client.ready else "in the middle of a request"
            detail = f": {error}" if error else ""
            log.warning(
                "%s closed the connection %s (%d bytes received)%s",
                client.peer,
                where,
                client.codec.pending or client.received,
                detail,
            )
            self.counters.add("disconnected")
        else:
            log.debug("%s closed the connection", client.peer)
        self._close(client)

    def _refuse(self, client: Connection, reason: str, counter: str, reply: bytes = b"") -> None:
        """Log and count the refusal, then send REPLY (the peer's last word) and close. The
        record comes first: a client may act on REPLY at once, before the connection closes."""
        log.warning("%s: %s; connection closed", client.peer, reason)
        self.counters.add(counter)
        if reply:
            with contextlib.suppress(OSError):
                client.sock.send(reply)
        self._close(client)

    def _watch(self, client: Connection, events: int = selectors.EVENT_READ) -> None:
        if client.watched == events:
            return
        registered, client.watched = client.watched, events
        if registered:
            self._selector.modify(client.sock, events, client)
        else:
            self._selector.register(client.sock, events, client)

    def _unwatch(self, client: Connection) -> None:
        if client.watched:
            client.watched = 0
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(client.sock)

    def _close(self, client: Connection) -> None:
        if client.state is State.CLOSED:
            return
        self._unwatch(client)
        self._clients.pop(client.sock.fileno(), None)
        client.state = State.CLOSED
        with contextlib.suppress(OSError):
            client.sock.close()

    # -- the workers' side: negotiation steps and calls -------------------------------------

    def _work(self, client: Connection, unit: Message | Negotiation) -> None:
        keep = False
        try:
            next_unit: Message | Negotiation | None = unit
            while next_unit is not None:
                keep = False  # until this unit is served: a call that raises closes
                if isinstance(next_unit, Negotiation):
                    keep = self._negotiate(client, next_unit)
                else:
                    keep = self._call(client, next_unit)
                next_unit = self._linger(client) if keep else None
                if next_unit is not None:
                    client.call = _call_name(next_unit)
        except Exception:
            log.exception("%s: unexpected error serving %s", client.peer, client.call)
        finally:
            with self._busy_lock:
                self._busy -= 1
            # A connection _linger closed is done with; the others wait for their next
            # request, here or in the loop.
            if client.state is not State.CLOSED and not (keep and self._wait_here(client)):
                self._returned.append((client, keep))
                self._wake()

    def _linger(self, client: Connection) -> Message | Negotiation | None:
        """The next request of CLIENT when it arrives whole within _LINGER_MS of the reply,
        to be served by this worker; None otherwise (bytes received so far are left to the
        loop, in the codec). A request taken here spares the selector's unregistering and
        registering, the loop's wake-up and the hand-over to a worker: a call that does
        nothing (set_ugi) went from 0.17-0.22 ms to 0.12-0.17 ms end to end, a cached
        get_table on SQLite from 0.31 to 0.24 ms. Only while another worker is free, so that
        no connection's request waits for a worker that waits for another connection."""
        sock = client.sock
        if (
            self._stopping.is_set()
            or not client.ready
            or isinstance(sock, ssl.SSLSocket)
            or client.codec.pending
        ):
            return None
        with self._busy_lock:
            if self._busy >= self._workers:
                return None
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        if not poller.poll(_LINGER_MS) or not self._receive(client):
            return None
        try:
            unit = client.codec.next_message()
        except ProtocolError as e:
            self._refuse(client, e.reason, "bad_input", reply=e.reply)
            return None
        return unit

    def _wait_here(self, client: Connection) -> bool:
        """From the worker that served CLIENT's call: in the common case (nothing of a next
        request received yet, no TLS bytes pending, not stopping), make the connection wait
        for its next request here, without waking the loop to do it (_take_back); False
        otherwise. This spares every call the loop's wake-up and a switch to the loop's
        thread (measured on a cached get_table: 0.53 ms before, 0.46-0.51 ms after).

        `watched` is set before the selector is given the socket: while stopping, the loop
        may close a WAITING connection at any time (_close_idle), and then the registration
        fails here or is undone there."""
        sock = client.sock
        if (
            self._stopping.is_set()
            or not client.ready
            or client.codec.pending
            or (isinstance(sock, ssl.SSLSocket) and sock.pending())
        ):
            return False
        client.call = None
        client.deadline = self._idle_deadline(time.monotonic())
        client.state = State.WAITING
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._watch(client)
        return True

    def _call(self, client: Connection, message: Message) -> bool:
        started = time.perf_counter()
        requests, replies = TMemoryBuffer(message.data), TMemoryBuffer()
        token = use_connection(client.context)
        try:
            self._processor.process(
                self._protocols.getProtocol(requests), self._protocols.getProtocol(replies)
            )
        except _BAD_REQUEST as e:
            log.warning(
                "%s: malformed %s request: %s; connection closed",
                client.peer,
                message.name,
                _reason(e),
            )
            self.counters.add("bad_input")
            return False
        finally:
            release_connection(token)
        self.counters.add("calls")
        reply = replies.getvalue()
        self.metrics.call(message.name, time.perf_counter() - started, reply)
        if message.oneway or not reply:
            return True
        if self._peer_closed(client.sock):
            log.warning(
                "%s disconnected during %s; its reply is dropped", client.peer, message.name
            )
            self.counters.add("disconnected")
            return False
        return self._send(client, client.codec.encode(reply), f"the reply to {message.name}")

    def _negotiate(self, client: Connection, frame: Negotiation) -> bool:
        from metastore.hms.sasl import SaslCodec, SaslRefused

        codec = client.codec
        assert isinstance(codec, SaslCodec)
        try:
            reply = codec.server.receive(frame.status, frame.payload)
        except SaslRefused as e:
            log.warning("%s: Kerberos authentication failed: %s", client.peer, e.reason)
            self.counters.add("refused_authentication")
            if e.reply_status is not None:
                self._send(client, e.reply(), "the refusal")
            return False
        if reply and not self._send(client, reply, "a SASL negotiation frame"):
            return False
        if codec.server.complete:
            self._security.kerberos_established(client.context, codec.server)
            context = client.context
            log.info(
                "%s authenticated as %s (%s)", client.peer, context.principal, context.protection
            )
        return True

    def _send(self, client: Connection, data: bytes, what: str) -> bool:
        """Send DATA, waiting at most request_timeout for the client to read it. Most replies
        fit the socket's buffer: one non-blocking send, without switching the socket to
        blocking and back (TLS sockets always switch: a TLS write must be retried whole)."""
        sock = client.sock
        try:
            sent = 0
            if not isinstance(sock, ssl.SSLSocket):
                with contextlib.suppress(BlockingIOError):
                    sent = sock.send(data)
            if sent < len(data):
                sock.settimeout(self._request_timeout)
                sock.sendall(memoryview(data)[sent:])
                sock.setblocking(False)
        except TimeoutError:
            log.warning(
                "%s did not read %s within %g s; connection closed",
                client.peer,
                what,
                self._request_timeout,
            )
            self.counters.add("timed_out")
            return False
        except OSError as e:
            log.warning("%s disconnected before %s was sent: %s", client.peer, what, _reason(e))
            self.counters.add("disconnected")
            return False
        return True

    @staticmethod
    def _peer_closed(sock: socket.socket) -> bool:
        """Whether the client has closed its side (it gave up on the call). Peeks at the TCP
        stream underneath TLS; a client waiting for its reply has sent nothing more."""
        try:
            return socket.socket.recv(sock, 1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True


def _call_name(unit: Message | Negotiation) -> str:
    return unit.name if isinstance(unit, Message) else "SASL negotiation"


def _reason(error: BaseException) -> str:
    """A one-line description of ERROR for a log line."""
    if isinstance(error, ssl.SSLError) and error.reason:
        return error.reason
    text = str(error) or type(error).__name__
    return text.splitlines()[0] if text else type(error).__name__
