"""What a client was told holds: a PostgreSQL restart under concurrent writers loses no
acknowledged write, and a server killed (SIGKILL) in the middle of a batch leaves nothing of
it (a batch is one transaction)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect, wait_for
from java_tools import unavailable
from metadata_builders import database
from pg_cluster import PrivateCluster, postgres_bin
from stats_builders import EXAMPLES, column_stats, make_table, obj
from thrift.transport.TTransport import TTransportException

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import migrate

WRITERS = 8


def _writer(
    port: int, index: int, stop: threading.Event, acked: list[str], failures: list[str]
) -> Callable[[], None]:
    """A client that adds partitions and databases until STOP, reconnecting after transport
    errors; ACKED gets what the server acknowledged, FAILURES what it did not."""

    def run() -> None:
        client, transport = connect(port)
        n = 0
        try:
            while not stop.is_set():
                n += 1
                name = f"w{index}_{n}"
                try:
                    if n % 2:
                        client.add_partition(
                            t.Partition(
                                values=[name, "r"], dbName="durable", tableName="t", parameters={}
                            )
                        )
                    else:
                        client.create_database(database(name))
                    acked.append(name)
                except t.MetaException as e:
                    failures.append(f"{name}: {e.message}")
                except (TTransportException, OSError) as e:
                    failures.append(f"{name}: {e}")
                    transport.close()
                    client, transport = connect(port)
        finally:
            transport.close()

    return run


@pytest.mark.postgres
def test_a_postgres_restart_under_concurrent_writes_loses_no_acknowledged_write() -> None:
    bin_dir = postgres_bin()
    if bin_dir is None:
        unavailable("PostgreSQL's initdb and pg_ctl are not installed")
    cluster = PrivateCluster(bin_dir).start()
    server: RunningServer | None = None
    try:
        migrate.upgrade(cluster.url)
        server = RunningServer(cluster.url, Settings())
        client, transport = connect(server.port)
        make_table(client, "durable")
        transport.close()
        stop = threading.Event()
        acked: list[str] = []
        failures: list[str] = []
        threads = [
            threading.Thread(target=_writer(server.port, i, stop, acked, failures))
            for i in range(WRITERS)
        ]
        for thread in threads:
            thread.start()
        wait_for(lambda: len(acked) >= 20)
        before = len(acked)
        took = cluster.restart()
        after_restart = len(acked)
        # Until the writers have been acknowledged again (however slow the machine).
        recovered = wait_for(lambda: len(acked) >= after_restart + 20)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        engine = sa.create_engine(cluster.url)
        with engine.connect() as conn:
            partitions = set(conn.exec_driver_sql('SELECT "PART_NAME" FROM "PARTITIONS"').scalars())
            databases = set(conn.exec_driver_sql('SELECT "NAME" FROM "DBS"').scalars())
        engine.dispose()
    finally:
        if server is not None:
            server.stop()
        cluster.stop()
    stored = {p.split("/")[0].removeprefix("ds=") for p in partitions} | databases
    lost = [name for name in acked if name not in stored]
    print(
        f"\n{len(acked)} writes acknowledged ({before} before the restart, "
        f"{len(acked) - after_restart} after it), {len(failures)} refused; restart took "
        f"{took:.1f} s; lost: {len(lost)}"
    )
    assert lost == []
    assert recovered, "writes must be acknowledged again after the restart"


# -- a server killed in the middle of a batch -------------------------------------------------

PARTITIONS = 1_000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _serve(url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "metastore.cli", "serve", "--host", "127.0.0.1"),
                *("--port", str(port), "--db", url),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)


def _batch(db_name: str, names: list[str]) -> t.SetPartitionsStatsRequest:
    columns = [obj(column, data) for column, (_, data) in EXAMPLES.items()]
    return t.SetPartitionsStatsRequest(
        [column_stats(db_name, columns, name) for name in names], needMerge=False
    )


@contextlib.contextmanager
def _batch_in_progress(url: str) -> Iterator[Callable[[], bool]]:
    """Whether a write transaction of the server is open: on SQLite, the database's write
    lock is taken (writes begin with BEGIN IMMEDIATE); on PostgreSQL, a transaction of the
    server has written (it holds a transaction id), whether a statement is running or the
    server is between two of them."""
    if url.startswith("sqlite"):
        probe = sqlite3.connect(sa.make_url(url).database or "", timeout=0, isolation_level=None)

        def locked() -> bool:
            try:
                probe.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError:
                return True
            probe.execute("ROLLBACK")
            return False

        try:
            yield locked
        finally:
            probe.close()
        return
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")

    def active() -> bool:
        with engine.connect() as conn:
            return bool(
                conn.exec_driver_sql(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()"
                ).scalar_one()
            )

    try:
        yield active
    finally:
        engine.dispose()


def _stats_rows(url: str) -> int:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        count: int = conn.exec_driver_sql('SELECT count(*) FROM "PART_COL_STATS"').scalar_one()
    engine.dispose()
    return count


def test_a_server_killed_mid_batch_leaves_nothing_half_written(
    database_url: str, db_name: str, tmp_path: Path
) -> None:
    port, log = _free_port(), tmp_path / "server.log"
    process = _serve(database_url, port, log)
    outcome: list[Any] = []
    transport: Any = None
    try:
        client, transport = connect(port)
        make_table(client, db_name)
        values = [(f"2024-01-{i // 100:02d}", f"r{i % 100}") for i in range(1, PARTITIONS)]
        # make_table made the first partition.
        for start in range(0, len(values), 500):
            client.add_partitions(
                [
                    t.Partition(values=list(v), dbName=db_name, tableName="t", parameters={})
                    for v in values[start : start + 500]
                ]
            )
        names = sorted(client.get_partition_names(db_name, "t", -1))
        assert len(names) == PARTITIONS
        request = _batch(db_name, names)

        def send() -> None:
            try:
                outcome.append(client.set_aggr_stats_for(request))
            except Exception as e:
                outcome.append(e)

        sender = threading.Thread(target=send)
        with _batch_in_progress(database_url) as in_progress:
            started = time.perf_counter()
            sender.start()
            while not in_progress():
                assert not outcome, f"the batch ended before it could be killed: {outcome}"
                time.sleep(0.005)
            time.sleep(0.05)  # into the batch's writes
            assert in_progress(), "the batch committed before it could be killed"
            os.kill(process.pid, signal.SIGKILL)
            killed_after = time.perf_counter() - started
        process.wait(timeout=30)
        sender.join(timeout=60)
    finally:
        if transport is not None:
            transport.close()
        if process.poll() is None:
            process.kill()
            process.wait()
    assert len(outcome) == 1 and isinstance(outcome[0], TTransportException), outcome
    assert _stats_rows(database_url) == 0, "nothing of the killed batch may be stored"
    # A new server on the same database: the batch, sent again, is stored whole.
    process = _serve(database_url, port, log)
    try:
        client, transport = connect(port)
        try:
            started = time.perf_counter()
            assert client.set_aggr_stats_for(request) is True
            whole = time.perf_counter() - started
        finally:
            transport.close()
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    print(f"\nkilled {killed_after:.2f} s into a batch that takes {whole:.2f} s whole")
    assert _stats_rows(database_url) == PARTITIONS * len(EXAMPLES)
