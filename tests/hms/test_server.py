"""The server process: transports, start-up, concurrency, logging and shutdown."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect, empty_database
from metadata_builders import database
from stats_builders import EXAMPLES, column_stats, make_table, obj, row_count
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import migrate


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "metastore.cli", "serve", "--host", "127.0.0.1", *args],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_until_serving(port: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited early:\n{process.stdout.read()}")  # type: ignore[union-attr]
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("server did not start listening")


def test_framed_transport(migrated_url: str, db_name: str) -> None:
    running = RunningServer(migrated_url, Settings(framed=True))
    try:
        client, transport = connect(running.port, framed=True)
        client.create_database(t.Database(name=db_name, locationUri="file:/x", parameters={}))
        assert client.get_database(db_name).name == db_name
        transport.close()
    finally:
        running.stop()


def test_serve_with_a_metrics_port_serves_prometheus_metrics(tmp_path: Path) -> None:
    port, metrics_port = _free_port(), _free_port()
    process = _start(
        ["--port", str(port), "--metrics-port", str(metrics_port), "--cache-size", "1000000"],
        {"METASTORE_HOME": str(tmp_path / "home")},
    )
    try:
        _wait_until_serving(port, process)
        client, transport = connect(port)
        client.get_database("default")
        with pytest.raises(t.NoSuchObjectException):
            client.get_table("default", "missing")
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as r:
            text = r.read().decode()
        transport.close()
    finally:
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=30)
    assert f"metrics on http://127.0.0.1:{metrics_port}/metrics" in output
    assert 'colstats_call_seconds_count{call="get_database"} 1.0' in text
    assert 'colstats_call_errors_total{call="get_table",error="NoSuchObjectException"} 1.0' in text
    assert 'colstats_cache_misses_total{call="get_table"} 1.0' in text
    assert "colstats_cache_max_bytes 1e+06" in text
    assert "colstats_open_connections 1.0" in text


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serve_creates_the_embedded_database_and_stops_cleanly_on_signal(
    tmp_path: Path, signum: signal.Signals
) -> None:
    home = tmp_path / "home"
    port = _free_port()
    process = _start(["--port", str(port), "--log-level", "DEBUG"], {"METASTORE_HOME": str(home)})
    try:
        _wait_until_serving(port, process)
        client, transport = connect(port)
        client.create_database(t.Database(name="d", locationUri="file:/x", parameters={}))
        with pytest.raises(t.NoSuchObjectException):
            client.get_database("missing")
        # An idle connection stays open while the server shuts down.
        process.send_signal(signum)
        output, _ = process.communicate(timeout=30)
        transport.close()
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, output
    assert (home / "metastore.db").is_file()
    assert "create_database ok" in output
    assert "WARNING metastore.operation: get_database failed: NoSuchObjectException" in output
    assert f"received {signum.name}, shutting down" in output
    assert "stopped" in output


def test_serve_without_migration_refuses_an_old_schema(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "metastore.cli",
            "serve",
            "--no-migrate",
            "--db",
            f"sqlite:///{tmp_path / 'empty.db'}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "metastore db upgrade" in result.stderr


def test_concurrent_writers_never_duplicate_rows(
    client: Any, db_name: str, server: RunningServer
) -> None:
    """Many clients upserting the same columns at once leave one row per column."""
    make_table(client, db_name)
    before = row_count(server.url, "TAB_COL_STATS")
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            c, transport = connect(server.port)
            for j in range(10):
                data = t.ColumnStatisticsData(
                    longStats=t.LongColumnStatsData(
                        lowValue=-i, highValue=j, numNulls=i, numDVs=j + 1
                    )
                )
                c.update_table_column_statistics(
                    column_stats(db_name, [obj("c_long", data), obj("c_str", EXAMPLES["c_str"][1])])
                )
            transport.close()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert row_count(server.url, "TAB_COL_STATS") == before + 2
    stored = client.get_table_column_statistics(db_name, "t", "c_long").statsObj[0]
    assert stored.statsData.longStats.highValue == 9


def test_concurrent_batch_writes_in_opposite_orders_do_not_fail(
    client: Any, db_name: str, server: RunningServer
) -> None:
    """Batches that list the same partitions in different orders must not deadlock (rows
    are locked in one order) or, if the database still reports one, fail the call."""
    make_table(client, db_name)
    parts = [f"ds=2024-01-{d:02d}/region=r" for d in range(1, 21)]
    client.add_partitions(
        [
            t.Partition(values=[p[3:13], "r"], dbName=db_name, tableName="t", parameters={})
            for p in parts
        ]
    )
    long_data = EXAMPLES["c_long"][1]
    errors: list[BaseException] = []

    def write(order: list[str]) -> None:
        c, transport = connect(server.port)
        try:
            for _ in range(15):
                entries = [column_stats(db_name, [obj("c_long", long_data)], p) for p in order]
                c.set_aggr_stats_for(t.SetPartitionsStatsRequest(entries, needMerge=False))
        except BaseException as e:
            errors.append(e)
        finally:
            transport.close()

    orders = [parts, parts[::-1], parts, parts[::-1]]
    threads = [threading.Thread(target=write, args=(order,)) for order in orders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


@pytest.mark.postgres
def test_calls_survive_database_connections_being_killed(
    db_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """When PostgreSQL drops the server's pooled connections (a restart, a proxy's idle
    timeout), the next calls run again on new connections instead of failing."""
    for url in empty_database("postgresql", Path()):
        migrate.upgrade(url)
        running = RunningServer(url, Settings())
        client, transport = connect(running.port)
        admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
        try:
            client.create_database(t.Database(name=db_name, parameters={}))
            with admin.connect() as conn:
                killed = conn.exec_driver_sql(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                ).scalar_one()
            assert killed >= 1
            assert client.get_database(db_name).name == db_name
            assert "get_database failed" in caplog.text and "running it again" in caplog.text
            client.create_database(t.Database(name=f"{db_name}_2", parameters={}))
            assert f"{db_name}_2" in client.get_all_databases()
        finally:
            admin.dispose()
            transport.close()
            running.stop()


def test_a_write_after_single_query_reads_is_still_all_or_nothing(
    client: Any, db_name: str, server: RunningServer
) -> None:
    """Single-query reads run without BEGIN/COMMIT on PostgreSQL; the pooled connection they
    used must come back transactional for the next write."""
    make_table(client, db_name)
    request = t.TableStatsRequest(dbName=db_name, tblName="t", colNames=["c_long"])
    for _ in range(5):
        assert client.get_table_statistics_req(request).tableStats == []
    second = client.get_table(db_name, "t")
    second.tableName, second.parameters = "t2", {}
    client.create_table(second)
    # Entries are written table by table: t's rows are upserted before t2's entry fails.
    good = column_stats(db_name, [obj("c_long", EXAMPLES["c_long"][1])])
    bad = column_stats(db_name, [obj("no_such_column", EXAMPLES["c_long"][1], "bigint")])
    bad.statsDesc.tableName = "t2"
    with pytest.raises(t.InvalidObjectException, match="no_such_column"):
        client.set_aggr_stats_for(t.SetPartitionsStatsRequest([good, bad], needMerge=False))
    assert client.get_table_statistics_req(request).tableStats == []


def _write_unknown_call(
    proto: TBinaryProtocol.TBinaryProtocol, name: str, seqid: int, kind: int = TMessageType.CALL
) -> None:
    """A call of NAME whose arguments hold a string, a list and a nested struct to skip."""
    proto.writeMessageBegin(name, kind, seqid)
    proto.writeStructBegin("args")
    proto.writeFieldBegin("s", TType.STRING, 1)
    proto.writeString("skip me")
    proto.writeFieldEnd()
    proto.writeFieldBegin("l", TType.LIST, 2)
    proto.writeListBegin(TType.I64, 3)
    for i in range(3):
        proto.writeI64(i)
    proto.writeListEnd()
    proto.writeFieldEnd()
    proto.writeFieldBegin("req", TType.STRUCT, 3)
    proto.writeStructBegin("req")
    proto.writeFieldBegin("x", TType.I32, 1)
    proto.writeI32(7)
    proto.writeFieldEnd()
    proto.writeFieldStop()
    proto.writeStructEnd()
    proto.writeFieldEnd()
    proto.writeFieldStop()
    proto.writeStructEnd()
    proto.writeMessageEnd()
    proto.trans.flush()


def test_calls_of_names_the_idl_does_not_have_are_counted_as_one_unknown_call(
    migrated_url: str,
) -> None:
    """Every name a client makes up would otherwise be a series of its own in the metrics
    (the calls of HMS that colstats does not serve are not in its IDL: they are logged)."""
    server = RunningServer(migrated_url, Settings())
    try:
        socket = TSocket.TSocket("127.0.0.1", server.port)
        socket.setTimeout(10_000)
        transport = TTransport.TBufferedTransport(socket)
        proto = TBinaryProtocol.TBinaryProtocol(transport)
        transport.open()
        for seqid, method in enumerate(["made_up_1", "made_up_2", "get_catalogs"]):
            _write_unknown_call(proto, method, seqid)
            assert proto.readMessageBegin()[1] == TMessageType.EXCEPTION
            TApplicationException().read(proto)
            proto.readMessageEnd()
        transport.close()
        port = server.server.metrics.serve("127.0.0.1", 0)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            text = answer.read().decode()
        server.server.metrics.stop()
    finally:
        server.stop()
    assert 'colstats_call_seconds_count{call="unknown"} 3.0' in text
    assert 'colstats_call_errors_total{call="unknown",error="TApplicationException"} 3.0' in text
    assert "made_up" not in text and "get_catalogs" not in text


@pytest.mark.parametrize("method", ["get_catalogs", "getStatus", "open_txns"])
def test_unknown_method_is_answered_and_the_connection_survives(
    server: Any, db_name: str, method: str
) -> None:
    socket = TSocket.TSocket("127.0.0.1", server.port)
    socket.setTimeout(10_000)
    transport = TTransport.TBufferedTransport(socket)
    proto = TBinaryProtocol.TBinaryProtocol(transport)
    transport.open()
    try:
        for seqid in (41, 42):
            _write_unknown_call(proto, method, seqid)
            name, kind, got_seqid = proto.readMessageBegin()
            assert (name, kind, got_seqid) == (method, TMessageType.EXCEPTION, seqid)
            error = TApplicationException()
            error.read(proto)
            proto.readMessageEnd()
            assert error.type == TApplicationException.UNKNOWN_METHOD
            assert method in (error.message or "")
            if method == "open_txns":
                message = error.message or ""
                assert "does not serve Hive ACID transactions" in message
                assert "Iceberg tables with the locks" in message
        client = ThriftHiveMetastore.Client(proto)
        client.create_database(database(db_name))
        assert client.get_database(db_name).name == db_name
    finally:
        transport.close()


def test_oneway_messages_get_no_answer(server: Any, db_name: str) -> None:
    """Hive 2.3 clients (Spark) send fb303's shutdown as a oneway message before they
    reconnect; neither it nor an unknown oneway message is answered."""
    socket = TSocket.TSocket("127.0.0.1", server.port)
    socket.setTimeout(10_000)
    transport = TTransport.TBufferedTransport(socket)
    proto = TBinaryProtocol.TBinaryProtocol(transport)
    transport.open()
    try:
        client = ThriftHiveMetastore.Client(proto)
        client.send_shutdown()
        _write_unknown_call(proto, "some_oneway_call", 7, TMessageType.ONEWAY)
        client.create_database(database(db_name))  # the next answer is this call's
        assert client.get_database(db_name).name == db_name
    finally:
        transport.close()
