"""Ctrl-C (SIGINT) and SIGTERM sent to the real `metastore analyze` at several moments of a
run: while the JVM starts, while the data is scanned, while the statistics are written. It
stops within seconds with one line and exit code 130, and leaves the metastore as it was,
or with whole partitions only (each registered with its basic and column statistics) and
the table level untouched. The same for a metastore lost in the middle of the writes."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runs import databases, error_lines, partitions, table
from conftest import RunningServer, connect

from hive_metastore_thrift import ttypes as t
from metastore import sample_data
from metastore.cli import EXIT_FAILED, EXIT_INTERRUPTED
from metastore.config import Settings
from metastore.store import migrate

pytestmark = pytest.mark.spark

STOPPED_WITHIN_S = 15.0
"""From the signal to the exit (a loaded machine of 2 cores; Spark stops in 1-3 s)."""
MANY = 240


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'metastore.db'}"
    migrate.upgrade(url)
    running = RunningServer(url, Settings())
    yield running
    running.stop()


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Orders enough for a scan of several seconds."""
    path = tmp_path_factory.mktemp("large") / "orders"
    sample_data.write_orders(path, rows=3_000_000, days=14)
    return path


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MANY small partitions: written one a batch, the writes take seconds."""
    path = tmp_path_factory.mktemp("many") / "t"
    for day in range(MANY):
        folder = path / f"ds={day:04d}"
        folder.mkdir(parents=True)
        pq.write_table(
            pa.table({"a": pa.array(range(day, day + 5), pa.int64()), "b": ["x"] * 5}),
            folder / "part-0.parquet",
        )
    return path


class Run:
    """`metastore analyze ARGS` in a process of its own, its stderr read line by line."""

    def __init__(self, server: RunningServer, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "metastore.cli", "analyze", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={
                **os.environ,
                "PYSPARK_PYTHON": sys.executable,
                "METASTORE_URI": f"thrift://127.0.0.1:{server.port}",
            },
        )
        self.lines: list[str] = []

    def wait_for(self, text: str, timeout: float = 300) -> None:
        """Read stderr until a line holds TEXT."""
        assert self.process.stderr is not None
        deadline = time.monotonic() + timeout
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))
            if text in line:
                return
            if time.monotonic() > deadline:
                break
        self.process.kill()
        pytest.fail(f"no line with {text!r} in:\n" + "\n".join(self.lines[-30:]))

    def interrupt(self, number: signal.Signals) -> tuple[int, float, list[str]]:
        """Send signal NUMBER; (exit code, seconds to exit, the error lines)."""
        sent = time.monotonic()
        self.process.send_signal(number)
        _, rest = self.process.communicate(timeout=120)
        took = time.monotonic() - sent
        self.lines.extend(rest.splitlines())
        return self.process.returncode, took, error_lines("\n".join(self.lines))


def _nothing_written(server: RunningServer, name: str) -> None:
    assert name not in databases(server)


def test_ctrl_c_while_the_jvm_starts(server: RunningServer, large: Path) -> None:
    run = Run(server, "sig1.t", "--path", str(large))
    run.wait_for("checked the table, its files and the options")  # Spark starts now
    time.sleep(1.0)
    code, took, errors = run.interrupt(signal.SIGINT)
    assert code == EXIT_INTERRUPTED, run.lines
    assert took < STOPPED_WITHIN_S
    assert errors == [
        "metastore analyze: error: interrupted; nothing was written: the metastore is as it was"
    ]
    _nothing_written(server, "sig1")


@pytest.mark.parametrize("wait_s", [0.0, 0.5, 1.5, 2.5, 3.5])
def test_ctrl_c_at_any_moment_while_spark_starts(
    server: RunningServer, large: Path, wait_s: float
) -> None:
    """Whether the JVM is being launched, or is up and making the session (where Spark's
    own SIGINT handler, installed from the main thread, used to take the signal and fail
    the run with a Spark error), the run stops with the one line of an interrupt."""
    name = f"sigstart{int(wait_s * 10)}"
    run = Run(server, f"{name}.t", "--path", str(large))
    run.wait_for("checked the table, its files and the options")
    time.sleep(wait_s)
    code, took, errors = run.interrupt(signal.SIGINT)
    assert code == EXIT_INTERRUPTED, run.lines
    assert took < STOPPED_WITHIN_S
    assert errors == [
        "metastore analyze: error: interrupted; nothing was written: the metastore is as it was"
    ]
    _nothing_written(server, name)


def test_sigterm_during_the_scan(server: RunningServer, large: Path) -> None:
    run = Run(server, "sig2.t", "--path", str(large), "--skew")
    run.wait_for("stage 2/3: scanning the data")
    time.sleep(1.0)
    code, took, errors = run.interrupt(signal.SIGTERM)
    assert code == EXIT_INTERRUPTED, run.lines
    assert took < STOPPED_WITHIN_S
    assert not any("scanned the data" in line for line in run.lines), "the scan had ended"
    assert errors == [
        "metastore analyze: error: interrupted; nothing was written: the metastore is as it was"
    ]
    _nothing_written(server, "sig2")


def test_ctrl_c_during_the_writes(server: RunningServer, many: Path) -> None:
    """The batch being written is finished, nothing after it: whole partitions only, the
    table level untouched, and the line says how many were written."""
    run = Run(server, "sig3.t", "--path", str(many), "--batch-size", "1")
    run.wait_for("wrote the statistics of 1 partition(s)")
    code, took, errors = run.interrupt(signal.SIGINT)
    assert code == EXIT_INTERRUPTED, run.lines
    assert took < STOPPED_WITHIN_S
    (error,) = errors
    found = re.fullmatch(
        r"metastore analyze: error: interrupted; (\d+) of 240 partition\(s\) were written "
        r"before it stopped \(their names are logged\); the others and the table level are "
        r"as they were",
        error,
    )
    assert found is not None, error
    written = int(found.group(1))
    assert 1 <= written < MANY
    stored = partitions(server, "sig3", "t")
    assert len(stored) == written
    names = [f"ds={p.values[0]}" for p in stored]
    client, transport = connect(server.port)
    try:
        stats = client.get_partitions_statistics_req(
            t.PartitionsStatsRequest(
                dbName="sig3", tblName="t", colNames=["a", "b"], partNames=names, engine="hive"
            )
        ).partStats
        assert sorted(stats) == sorted(names)
        assert all(len(objs) == 2 for objs in stats.values())  # every column
        assert all(p.parameters["numRows"] == "5" for p in stored)
        assert (
            client.get_table_statistics_req(
                t.TableStatsRequest(dbName="sig3", tblName="t", colNames=["a", "b"])
            ).tableStats
            == []
        )
    finally:
        transport.close()
    assert "numRows" not in table(server, "sig3", "t").parameters


class CuttingProxy:
    """A TCP proxy to SERVER that cuts the connection carrying the CUT-th
    set_aggr_stats_for call and refuses the next REFUSED connections (the job's client
    retries three times), then forwards again: a metastore lost in the middle of the writes
    that comes back for the job's undo."""

    def __init__(self, server: RunningServer, cut: int, refused: int = 3) -> None:
        self.target = ("127.0.0.1", server.port)
        self.cut, self.refused, self.seen = cut, refused, 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                refuse = self.seen >= self.cut and self.refused > 0
                if refuse:
                    self.refused -= 1
            if refuse:
                conn.close()
                continue
            upstream = socket.create_connection(self.target)
            threading.Thread(target=self._pipe, args=(conn, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, conn, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        tail = b""
        try:
            while data := source.recv(65536):
                if requests:
                    window = tail + data
                    with self.lock:
                        self.seen += window.count(b"set_aggr_stats_for")
                        cut = self.seen == self.cut and self.refused > 0
                    tail = data[-32:]
                    if cut:
                        break
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def close(self) -> None:
        self.listener.close()


def test_a_metastore_lost_during_the_writes(server: RunningServer, many: Path) -> None:
    """The batch whose write failed is undone; those before it stay whole; the line says
    how many were written; the table level is untouched."""
    proxy = CuttingProxy(server, cut=3)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "metastore.cli", "analyze", "lost.t", "--path", str(many),
             "--batch-size", "50", "--uri", f"thrift://127.0.0.1:{proxy.port}"],
            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=600, check=False,
            env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        )  # fmt: skip
    finally:
        proxy.close()
    assert done.returncode == EXIT_FAILED, done.stderr
    (error,) = error_lines(done.stderr)
    assert error.startswith(
        f"metastore analyze: error: cannot reach the metastore at thrift://127.0.0.1:{proxy.port}: "
    )
    assert error.endswith(
        "; 100 of 240 partition(s) were written before it stopped (their names are logged); "
        "the others and the table level are as they were"
    )
    stored = partitions(server, "lost", "t")
    assert len(stored) == 100 and all(p.parameters["numRows"] == "5" for p in stored)
    client, transport = connect(server.port)
    try:
        stats = client.get_partitions_statistics_req(
            t.PartitionsStatsRequest(
                dbName="lost",
                tblName="t",
                colNames=["a", "b"],
                partNames=[f"ds={p.values[0]}" for p in stored],
            )
        ).partStats
        assert len(stats) == 100 and all(len(objs) == 2 for objs in stats.values())
    finally:
        transport.close()
    assert "numRows" not in table(server, "lost", "t").parameters
