"""The server facing a busy or hostile network: idle connections cost no worker, the
connection limit and the timeouts hold, bad input costs one log line and no memory, a client
gone mid-call is one warning, and calls in progress survive a shutdown."""

from __future__ import annotations

import logging
import os
import resource
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RunningServer, connect, wait_for
from metadata_builders import database
from test_wire import encode
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TSocket
from thrift.transport.TTransport import TBufferedTransport, TTransportException

from hive_metastore_thrift import ThriftHiveMetastore as H
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import databases, migrate


@pytest.fixture(scope="module")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The transport does not depend on the database: these tests run on SQLite only."""
    url = f"sqlite:///{tmp_path_factory.mktemp('connections') / 'metastore.db'}"
    migrate.upgrade(url)
    return url


@pytest.fixture
def running(sqlite_url: str) -> Iterator[Callable[..., RunningServer]]:
    """Start servers with the given settings; stopped at the end of the test."""
    started: list[RunningServer] = []

    def start(**settings: Any) -> RunningServer:
        server = RunningServer(sqlite_url, Settings(**settings))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _raw(port: int, timeout: float = 10.0) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return sock


def _closed_by_server(sock: socket.socket, within: float = 10.0) -> bool:
    """Whether the server closes SOCK within WITHIN seconds (what it sends is skipped)."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True  # reset
    return True


def _raise_fd_limit(wanted: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


GET_DATABASE = encode("get_database", H.get_database_args("default"))


def test_thousands_of_idle_connections_do_not_delay_a_new_client(
    running: Callable[..., RunningServer],
) -> None:
    """2,000 idle connections and 100 half-sent requests on a server of 4 workers: a new
    client is answered at once, and the server closes nothing it should not."""
    idle_count = 2_000
    assert _raise_fd_limit(2 * idle_count + 1_000) >= 2 * idle_count + 500
    server = running(workers=4)
    idle: list[socket.socket] = []
    try:
        started = time.perf_counter()
        for i in range(idle_count):
            sock = _raw(server.port)
            if i % 20 == 0:
                sock.sendall(GET_DATABASE[:15])  # a request that never completes
            idle.append(sock)
        opened = time.perf_counter() - started
        started = time.perf_counter()
        client, transport = connect(server.port)
        databases = client.get_all_databases()
        answered = time.perf_counter() - started
        transport.close()
        print(
            f"\n{idle_count} idle connections opened in {opened:.2f} s; new client answered "
            f"in {answered * 1e3:.1f} ms"
        )
        assert isinstance(databases, list)
        assert answered < 5.0, "a generous bound; measured well under 0.1 s"
        counters = server.server.counters.snapshot()
        assert counters["accepted"] == idle_count + 1
        assert counters["timed_out"] == counters["closed_idle"] == 0
    finally:
        for sock in idle:
            sock.close()


def test_idle_connections_are_closed_after_the_idle_timeout(
    running: Callable[..., RunningServer],
) -> None:
    server = running(idle_timeout=2.0)
    idle = _raw(server.port)
    busy, transport = connect(server.port)
    for _ in range(14):  # a client that calls more often than the timeout stays connected
        busy.get_all_databases()
        time.sleep(0.2)
    assert _closed_by_server(idle, within=5)
    idle.close()
    busy.get_all_databases()
    transport.close()
    assert server.server.counters.snapshot()["closed_idle"] == 1


def test_at_the_connection_limit_new_connections_are_closed_at_once(
    running: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = running(max_connections=3)
    clients = [connect(server.port) for _ in range(3)]
    for client, _ in clients:
        client.get_all_databases()
    refused = [_raw(server.port) for _ in range(3)]
    for sock in refused:
        assert _closed_by_server(sock, within=5)
        sock.close()
    limit_lines = [r for r in caplog.records if "max_connections (3) are open" in r.message]
    assert len(limit_lines) == 1, "one warning per 10 s, not one per connection"
    # A connection that closes makes room.
    clients[0][1].close()
    time.sleep(0.3)
    client, transport = connect(server.port)
    assert isinstance(client.get_all_databases(), list)
    transport.close()
    for _, other in clients[1:]:
        other.close()
    assert server.server.counters.snapshot()["refused_at_limit"] == 3


def test_a_half_sent_request_holds_no_worker_and_times_out(
    running: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = running(workers=1, request_timeout=1.0)
    slow = _raw(server.port)
    slow.sendall(GET_DATABASE[:-3])
    client, transport = connect(server.port)
    for _ in range(5):  # served by the only worker meanwhile
        client.get_all_databases()
    assert _closed_by_server(slow, within=5)
    slow.close()
    transport.close()
    assert any(
        "request not complete within 1 s" in r.message and r.levelno == logging.WARNING
        for r in caplog.records
    )


def test_requests_over_the_limits_are_refused(
    running: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = running(max_message_size=10_000, max_container_size=100)
    client, transport = connect(server.port)
    with pytest.raises(TTransportException):
        client.get_databases("p" * 20_000)
    transport.close()
    client, transport = connect(server.port)
    with pytest.raises(TTransportException):
        client.get_partitions_by_names("d", "t", ["x"] * 101)
    transport.close()
    client, transport = connect(server.port)
    with pytest.raises(t.NoSuchObjectException):  # within the limits: answered
        client.get_partitions_by_names("no_db", "t", ["x"] * 100)
    transport.close()
    messages = [r.message for r in caplog.records if r.levelno == logging.WARNING]
    assert any("exceeds max_message_size (10000)" in m for m in messages)
    assert any("exceeds max_container_size (100)" in m for m in messages)


def _held_lookups(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Database lookups that wait (up to 30 s) for the second event once they have set the
    first: a call the test holds in progress for as long as it needs, however slow the
    machine."""
    entered, release = threading.Event(), threading.Event()
    find = databases.find_database

    def held(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(30)
        return find(*args, **kwargs)

    monkeypatch.setattr(databases, "find_database", held)
    return entered, release


def test_a_reply_larger_than_the_socket_buffers_reaches_a_slow_reader_whole(
    running: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture
) -> None:
    """A reply that does not fit the sockets' buffers is sent in parts as the client reads;
    a client that reads nothing for request_timeout is closed with one warning."""
    server = running(request_timeout=2.0)
    client, transport = connect(server.port)
    value = "v" * 600
    big = {f"k{i}": value for i in range(8_000)}  # about 5 MB of parameters
    client.create_database(database("big_reply", parameters=big))
    transport.close()
    request = encode("get_database", H.get_database_args("big_reply"))

    def small_buffered() -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.port))
        sock.sendall(request)
        return sock

    slow = small_buffered()
    time.sleep(0.5)  # the server has filled the buffers and waits for the client to read
    handle = TSocket.TSocket()
    handle.setHandle(slow)
    reader = H.Client(TBinaryProtocol.TBinaryProtocolAccelerated(TBufferedTransport(handle)))
    assert reader.recv_get_database().parameters == big
    # The connection serves its next call as usual.
    assert reader.get_database("big_reply").name == "big_reply"
    slow.close()

    never = small_buffered()  # reads nothing
    wait_for(
        lambda: any("did not read the reply to get_database" in r.message for r in caplog.records),
        10,
    )
    [line] = [r for r in caplog.records if "did not read the reply" in r.message]
    assert line.levelno == logging.WARNING and "within 2 s; connection closed" in line.message
    assert _closed_by_server(never)
    never.close()


def test_a_client_gone_mid_call_is_one_warning(
    running: Callable[..., RunningServer],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = running()
    entered, release = _held_lookups(monkeypatch)
    sock = _raw(server.port)
    sock.sendall(GET_DATABASE)
    assert entered.wait(10)
    sock.close()
    time.sleep(0.2)  # the FIN reaches the server before the reply is ready
    release.set()
    wait_for(lambda: server.server.counters.snapshot()["disconnected"] >= 1, 10)
    lines = [r for r in caplog.records if "disconnected during get_database" in r.message]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert lines[0].exc_info is None
    # And a client gone in the middle of sending a request.
    sock = _raw(server.port)
    sock.sendall(GET_DATABASE[:20])
    time.sleep(0.2)
    sock.close()
    wait_for(lambda: server.server.counters.snapshot()["disconnected"] >= 2, 10)
    assert any(
        "closed the connection in the middle of a request (20 bytes received)" in r.message
        for r in caplog.records
    )


def test_an_unexpected_error_in_a_handler_keeps_its_traceback(
    client: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(databases, "find_database", broken)
    with pytest.raises(t.MetaException, match="internal error in get_database: RuntimeError"):
        client.get_database("default")
    [record] = [r for r in caplog.records if "get_database failed unexpectedly" in r.message]
    assert record.exc_info is not None and record.levelno == logging.ERROR


def test_stop_lets_a_call_in_progress_send_its_reply(
    sqlite_url: str, db_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = RunningServer(sqlite_url, Settings())
    client, transport = connect(server.port)
    client.create_database(database(db_name))
    entered, release = _held_lookups(monkeypatch)
    got: list[Any] = []
    caller = threading.Thread(target=lambda: got.append(client.get_database(db_name)))
    caller.start()
    assert entered.wait(10)
    server.server.stop()  # returns at once
    time.sleep(0.3)  # the server drains while the call is held
    release.set()
    caller.join(timeout=10)
    transport.close()
    server.stop()  # joins the server's thread
    assert [d.name for d in got] == [db_name]
    assert not server.thread.is_alive()


# -- the next request of a connection, read by the worker that sent the reply ---------------


def _opened(port: int) -> tuple[Any, socket.socket, TBufferedTransport]:
    """A client whose socket the test also writes to directly: the generated client's recv_*
    methods read the replies."""
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(10_000)
    transport = TBufferedTransport(sock)
    transport.open()
    assert sock.handle is not None
    return H.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport)), sock.handle, transport


def test_a_request_sent_in_pieces_right_after_a_reply_is_answered(
    running: Callable[..., RunningServer],
) -> None:
    """The first piece arrives while the worker waits for the next request; the rest after it
    gave the connection back to the loop."""
    server = running(workers=2)
    client, sock, transport = _opened(server.port)
    for _ in range(5):
        sock.sendall(GET_DATABASE)
        assert client.recv_get_database().name == "default"
        sock.sendall(GET_DATABASE[:20])
        time.sleep(0.05)
        sock.sendall(GET_DATABASE[20:])
        assert client.recv_get_database().name == "default"
    transport.close()


def test_two_requests_in_one_packet_are_both_answered_in_order(
    running: Callable[..., RunningServer],
) -> None:
    server = running(workers=2)
    client, sock, transport = _opened(server.port)
    unknown = encode("get_database", H.get_database_args("no_such_db"))
    sock.sendall(GET_DATABASE)
    assert client.recv_get_database().name == "default"
    sock.sendall(unknown + GET_DATABASE)
    with pytest.raises(t.NoSuchObjectException):
        client.recv_get_database()
    assert client.recv_get_database().name == "default"
    transport.close()


def test_garbage_right_after_a_reply_is_one_warning_and_closes_the_connection(
    running: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = running(workers=2)
    client, sock, transport = _opened(server.port)
    sock.sendall(GET_DATABASE)
    assert client.recv_get_database().name == "default"
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _closed_by_server(sock)
    transport.close()
    wait_for(lambda: server.server.counters.snapshot()["bad_input"] >= 1, 10)
    warnings = [r.message for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "connection closed" in warnings[0], warnings


def test_a_call_that_fails_outside_its_handler_closes_the_connection_not_hangs(
    running: Callable[..., RunningServer],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A reply that cannot be encoded (an error outside the handler, which the call's own
    error handling does not see) closes the connection, also when the call came right after
    another on it: the client is not left waiting for a reply that never comes."""
    server = running(workers=2)
    processor = server.server._processor
    process = processor.process

    def failing(iprot: Any, oprot: Any) -> Any:
        if iprot.trans.getvalue().find(b"get_all_databases") >= 0:
            raise OverflowError("int too big to convert")
        return process(iprot, oprot)

    monkeypatch.setattr(processor, "process", failing)
    client, sock, transport = _opened(server.port)
    sock.sendall(GET_DATABASE)
    assert client.recv_get_database().name == "default"
    client.send_get_all_databases()
    with pytest.raises(TTransportException) as closed:
        client.recv_get_all_databases()
    assert closed.value.type == TTransportException.END_OF_FILE  # not TIMED_OUT
    transport.close()
    assert any("unexpected error serving get_all_databases" in r.message for r in caplog.records)


def test_connections_calling_back_to_back_all_get_served_by_two_workers(
    running: Callable[..., RunningServer],
) -> None:
    """A worker waits for its connection's next request only while another worker is free:
    six connections calling without a pause, on two workers, all get their answers."""
    server = running(workers=2)
    answers: list[int] = []
    failures: list[BaseException] = []

    def calls() -> None:
        try:
            client, transport = connect(server.port)
            n = sum(client.get_database("default").name == "default" for _ in range(200))
            transport.close()
            answers.append(n)
        except BaseException as e:  # reported below
            failures.append(e)

    threads = [threading.Thread(target=calls) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not failures and answers == [200] * 6


# -- a flood of bad input, against `metastore serve` in a process of its own ----------------


def _bad_frames() -> list[tuple[str, bytes, bool]]:
    """(what, bytes, whether to close before the server does) for each kind of bad input."""

    def field(type_byte: int, value: bytes) -> bytes:
        header = struct.pack(">Ii", 0x80010001, 12) + b"get_database" + struct.pack(">i", 1)
        return header + bytes([type_byte]) + struct.pack(">h", 1) + value

    reply = encode("get_database", H.get_database_args("x"), kind=TMessageType.REPLY)
    return [
        ("garbage", os.urandom(64), False),
        ("http", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", False),
        ("huge string", field(11, struct.pack(">i", 2**31 - 1)), False),
        ("huge list", field(15, b"\x0c" + struct.pack(">i", 2**31 - 1)), False),
        ("deep nesting", field(12, b"\x0c\x00\x01" * 200), False),
        ("bad type", field(42, b"\x00" * 8), False),
        ("a reply", reply, False),
        ("cut short", GET_DATABASE[:25], True),
    ]


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _send_bad(port: int, frames: list[tuple[str, bytes, bool]], count: int) -> None:
    for i in range(count):
        what, data, close_first = frames[i % len(frames)]
        sock = _raw(port)
        sock.sendall(data)
        if close_first:
            sock.close()
            continue
        assert _closed_by_server(sock, within=10), f"{what}: {data[:16].hex(' ')}"
        sock.close()


def _warnings(log: Path) -> list[str]:
    """The server's warnings about connections (not the start-up's, which may be written
    after the port opens)."""
    return [
        line for line in log.read_text().splitlines() if " WARNING metastore.hms.server: " in line
    ]


def test_a_flood_of_malformed_frames_costs_one_line_each_and_no_memory(tmp_path: Path) -> None:
    port = _free_port()
    log = tmp_path / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "metastore.cli", "serve", "--host", "127.0.0.1"),
                *("--port", str(port), "--db", f"sqlite:///{tmp_path / 'm.db'}"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_port(port, process)
        frames = _bad_frames()
        at_start = len(_warnings(log))
        _send_bad(port, frames, 400)  # warm up: allocator pools, logging, imports
        # The last one was closed without waiting for its warning.
        wait_for(lambda: len(_warnings(log)) >= at_start + 400, 10)
        rss_before, lines_before = _rss_kb(process.pid), len(_warnings(log))
        flood = 3_000
        started = time.perf_counter()
        _send_bad(port, frames, flood)
        elapsed = time.perf_counter() - started
        wait_for(lambda: len(_warnings(log)) >= lines_before + flood, 10)
        rss_after = _rss_kb(process.pid)
        client, transport = connect(port)
        assert isinstance(client.get_all_databases(), list)  # still serving
        transport.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    text = log.read_text()
    new_warnings = len(_warnings(log)) - lines_before
    print(
        f"\n{flood} bad frames in {elapsed:.1f} s: {new_warnings} warning lines, "
        f"RSS {rss_before} kB -> {rss_after} kB"
    )
    assert new_warnings == flood
    assert "Traceback" not in text
    assert rss_after - rss_before < 10_000, "memory must stay flat"
    for reason in (
        "not a Thrift binary-protocol message",
        "exceeds max_message_size",
        "exceeds max_container_size",
        "nesting deeper than 64",
        "unknown field type 42",
        "message type 2 is not a call",
        "in the middle of a request",
    ):
        assert reason in text, reason


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for_port(port: int, process: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("the server did not start")
