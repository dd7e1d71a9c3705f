"""Several servers on one PostgreSQL, as `metastore serve` runs them: every acknowledged change
is seen by the next read through any server (their caches of answers stay exact); a server
killed under load leaves its clients to carry on through the others, with no acknowledged
write lost and no row twice; servers started together on a new database migrate it in turn."""

from __future__ import annotations

import functools
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import empty_database, wait_for
from metadata_builders import column_stats, database, fields, long_stats, partition, table
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.store import migrate

pytestmark = pytest.mark.postgres

SERVERS = 3
_GONE = (TTransport.TTransportException, ConnectionError, EOFError, TimeoutError, OSError)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class Servers:
    """SERVERS `metastore serve` processes on one database."""

    def __init__(self, url: str, warehouse: Path) -> None:
        self.ports = [_free_port() for _ in range(SERVERS)]
        # Their output goes to files: a pipe nobody reads fills up with the audit log (tens
        # of KB a second under this load), and a server writing to it then stops answering.
        self.logs = [warehouse.parent / f"server-{port}.log" for port in self.ports]
        self.processes = []
        for port, log in zip(self.ports, self.logs, strict=True):
            with log.open("w") as output:
                self.processes.append(
                    subprocess.Popen(
                        [
                            *(sys.executable, "-m", "metastore.cli", "serve"),
                            *("--host", "127.0.0.1", "--port", str(port)),
                            *("--db", url, "--warehouse", str(warehouse), "--no-migrate"),
                            *("--log-level", "WARNING", "--workers", "8"),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=output,
                    )
                )
        for port, process, log in zip(self.ports, self.processes, self.logs, strict=True):
            assert wait_for(functools.partial(_listening, port, process, log), 60), "no server"

    def kill(self, index: int) -> None:
        self.processes[index].send_signal(signal.SIGKILL)
        self.processes[index].wait(30)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _listening(port: int, process: subprocess.Popen[bytes], log: Path) -> bool:
    if process.poll() is not None:
        raise AssertionError(f"a server exited: {log.read_text()}")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


class FailoverClient:
    """A client of several servers, as HMS clients take hive.metastore.uris: it starts at one
    and, when a server is gone, goes on with the next (sending the call again)."""

    def __init__(self, ports: list[int], start: int) -> None:
        self.ports = ports[start:] + ports[:start]
        self.index = 0
        self.failovers = 0
        self._connect()

    def _connect(self) -> None:
        for _ in range(len(self.ports)):
            sock = TSocket.TSocket("127.0.0.1", self.ports[self.index])
            sock.setTimeout(30_000)
            self.transport = TTransport.TBufferedTransport(sock)
            try:
                self.transport.open()
            except _GONE:
                self.index = (self.index + 1) % len(self.ports)
                continue
            protocol = TBinaryProtocol.TBinaryProtocolAccelerated(self.transport)
            self.client = ThriftHiveMetastore.Client(protocol)
            return
        raise ConnectionError("no server answers")

    def call(self, method: str, *args: Any) -> Any:
        """CLIENT.METHOD(*ARGS) through the current server, else the next."""
        for _ in range(len(self.ports) + 1):
            try:
                return getattr(self.client, method)(*args)
            except _GONE:
                self.transport.close()
                self.failovers += 1
                self.index = (self.index + 1) % len(self.ports)
                self._connect()
        raise ConnectionError("every server is gone")

    def close(self) -> None:
        self.transport.close()


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[Servers, str]]:
    for url in empty_database("postgresql", tmp_path):
        migrate.upgrade(url)
        running = Servers(url, tmp_path / "warehouse")
        try:
            yield running, url
        finally:
            running.stop()


def _stats(db: str, value: int, part: str) -> t.ColumnStatistics:
    return column_stats(db, "t", [long_stats("id", -value, value)], part)


def _make_table(client: FailoverClient, db: str) -> None:
    client.call("create_database", database(db))
    client.call("create_table", table(db, "t", keys=fields(("ds", "string"))))
    client.close()


def test_every_change_is_seen_by_the_next_read_through_any_server(
    servers: tuple[Servers, str],
) -> None:
    running, _ = servers
    clients = [FailoverClient(running.ports, i) for i in range(SERVERS)]
    db = "several"
    _make_table(clients[0], db)
    for i in range(30):
        writer, reader, third = clients[i % 3], clients[(i + 1) % 3], clients[(i + 2) % 3]
        part = f"ds={i}"
        request = t.PartitionsStatsRequest(db, "t", ["id"], [f"ds={n}" for n in range(i + 1)])
        # The other servers have answers of the table in their caches from the rounds before.
        for client in (reader, third):
            client.call("get_partition_names", db, "t", -1)
            client.call("get_aggr_stats_for", request)
        writer.call("add_partition", partition(db, "t", [str(i)]))
        writer.call("update_partition_column_statistics", _stats(db, i, part))
        writer.call("alter_table", db, "t", _altered(db, i))
        for client in (reader, third):
            names = client.call("get_partition_names", db, "t", -1)
            assert sorted(names) == sorted(f"ds={n}" for n in range(i + 1))
            aggregate = client.call("get_aggr_stats_for", request)
            assert aggregate.colStats[0].statsData.longStats.highValue == i
            assert client.call("get_table", db, "t").parameters["round"] == str(i)
    for client in clients:
        client.close()


def _altered(db: str, round_: int) -> t.Table:
    return table(db, "t", keys=fields(("ds", "string")), parameters={"round": str(round_)})


def test_a_server_killed_under_load_loses_no_acknowledged_write(
    servers: tuple[Servers, str],
) -> None:
    running, url = servers
    db = "killed"
    _make_table(FailoverClient(running.ports, 0), db)
    acknowledged: set[int] = set()
    lock = threading.Lock()
    stop = threading.Event()
    problems: list[str] = []
    failovers: list[int] = []
    counter = iter(range(10**6))

    def write(start: int) -> None:
        client = FailoverClient(running.ports, start)
        while not stop.is_set():
            with lock:
                n = next(counter)
            part = f"ds={n}"
            add = t.AddPartitionsRequest(db, "t", [partition(db, "t", [str(n)])], True)
            # Sent again after a failover, it must not add the partition twice.
            client.call("add_partitions_req", add)
            client.call("update_partition_column_statistics", _stats(db, n, part))
            with lock:
                acknowledged.add(n)
        failovers.append(client.failovers)
        client.close()

    def read(start: int) -> None:
        client = FailoverClient(running.ports, start)
        while not stop.is_set():
            with lock:
                before = set(acknowledged)
            names = set(client.call("get_partition_names", db, "t", -1))
            missing = {f"ds={n}" for n in before} - names
            if missing:
                problems.append(f"a read missed acknowledged partitions {sorted(missing)[:5]}")
            if before:
                n = random.choice(sorted(before))
                request = t.PartitionsStatsRequest(db, "t", ["id"], [f"ds={n}"])
                stats = client.call("get_partitions_statistics_req", request)
                if f"ds={n}" not in stats.partStats:
                    problems.append(f"a read missed the statistics of ds={n}")
        failovers.append(client.failovers)
        client.close()

    threads = [threading.Thread(target=write, args=(i % SERVERS,)) for i in range(3)]
    threads += [threading.Thread(target=read, args=(i % SERVERS,)) for i in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(3)
    with lock:
        before_kill = len(acknowledged)
    running.kill(0)
    time.sleep(4)
    stop.set()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    assert problems == []
    with lock:
        written = set(acknowledged)
    assert len(written) > before_kill > 0  # writes went on after the kill
    assert sum(failovers) >= 2  # the clients of the killed server went on through others
    survivor = FailoverClient(running.ports, 1)
    names = set(survivor.call("get_partition_names", db, "t", -1))
    assert {f"ds={n}" for n in written} <= names
    stats = survivor.call(
        "get_partitions_statistics_req",
        t.PartitionsStatsRequest(db, "t", ["id"], [f"ds={n}" for n in written]),
    )
    assert {int(part[3:]) for part in stats.partStats} >= written
    survivor.close()
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        twice = conn.execute(
            sa.text(
                'SELECT (SELECT count(*) - count(DISTINCT ("TBL_ID", "PART_NAME")) '
                'FROM "PARTITIONS"), (SELECT count(*) - count(DISTINCT ("PART_ID", '
                '"COLUMN_NAME", "ENGINE")) FROM "PART_COL_STATS")'
            )
        ).one()
        rows = conn.execute(sa.text('SELECT count(*) FROM "PARTITIONS"')).scalar_one()
    engine.dispose()
    assert tuple(twice) == (0, 0)
    # Partitions of calls cut by the kill may be there too (committed, not acknowledged).
    assert len(written) <= rows <= len(written) + 3


def test_servers_started_together_on_a_new_database_migrate_it_in_turn(tmp_path: Path) -> None:
    """Each server migrates its database as it starts: started together on a new one, they
    wait for one another. One waiting for the lock of migrations while another built 0004's
    index CONCURRENTLY (which waits for every older snapshot) deadlocked and did not start."""
    for url in empty_database("postgresql", tmp_path):
        command = [sys.executable, "-m", "metastore.cli", "db", "upgrade", "--db", url]
        upgrades = [
            subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(SERVERS)
        ]
        for upgrade in upgrades:
            with upgrade:
                _, err = upgrade.communicate(timeout=300)
                assert upgrade.returncode == 0, err
        assert migrate.current_revision(url) == migrate.head_revision()
