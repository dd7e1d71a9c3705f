"""The `metastore` command as a user meets it: `--version`, `ls`, $METASTORE_URI for every
command that takes --uri, `serve`'s address (loopback unless told otherwise) and start-up
failures (in plain words, exit 2, nothing created), and a reader that closes the output
early."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runs import metastore
from conftest import RunningServer, connect

from hive_metastore_thrift import ttypes as t
from metastore.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE


def _table(client: object, db: str, name: str, columns: int, keys: list[str]) -> None:
    cols = [t.FieldSchema(f"c{i}", "bigint", None) for i in range(columns)]
    sd = t.StorageDescriptor(
        cols=cols,
        location=None,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        serdeInfo=t.SerDeInfo(
            serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
            parameters={},
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
        numBuckets=-1,
    )
    client.create_table(  # type: ignore[attr-defined]
        t.Table(
            tableName=name,
            dbName=db,
            sd=sd,
            parameters={"numRows": "1234", "totalSize": "2048", "transient_lastDdlTime": "0"},
            tableType="MANAGED_TABLE",
            partitionKeys=[t.FieldSchema(k, "string", None) for k in keys],
        )
    )


@pytest.fixture
def listed(server: RunningServer, db_name: str) -> str:
    """DB_NAME with a partitioned table (two partitions) and an unpartitioned one."""
    client, transport = connect(server.port)
    try:
        client.create_database(t.Database(name=db_name, parameters={}))
        _table(client, db_name, "events", 2, ["ds"])
        _table(client, db_name, "plain", 3, [])
        for day, rows in (("2024-01-01", "10"), ("2024-01-02", "20")):
            client.add_partition(
                t.Partition(
                    values=[day],
                    dbName=db_name,
                    tableName="events",
                    parameters={"numRows": rows, "transient_lastDdlTime": "86400"},
                )
            )
    finally:
        transport.close()
    return db_name


def test_version() -> None:
    done = metastore("--version")
    assert done.returncode == EXIT_OK
    assert done.stdout == "metastore 0.1.0\n"


def test_ls_lists_databases_tables_and_partitions(server: RunningServer, listed: str) -> None:
    env = {"METASTORE_URI": f"thrift://127.0.0.1:{server.port}"}  # no --uri: the variable's
    done = metastore("ls", env=env)
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.splitlines()[0].split() == ["database", "tables", "location"]
    assert any(line.split()[:2] == [listed, "2"] for line in done.stdout.splitlines())
    done = metastore("ls", listed, env=env)
    assert done.returncode == EXIT_OK, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "table", "type", "format", "partitions", "numRows", "numFiles", "totalSize",
        "rawDataSize", "accurate", "changed",
    ]  # fmt: skip
    assert lines[2].split() == [
        "events", "MANAGED_TABLE", "parquet", "2", "1,234", "-", "2.0", "KiB", "-", "no",
        "1970-01-01", "00:00:00",
    ]  # fmt: skip
    done = metastore("ls", f"{listed}.events", "--json", env=env)
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout) == [
        {
            "partition": "ds=2024-01-01",
            "numRows": 10,
            "numFiles": None,
            "totalSize": None,
            "rawDataSize": None,
            "accurate": False,
            "changed": "1970-01-02 00:00:00",
        },
        {
            "partition": "ds=2024-01-02",
            "numRows": 20,
            "numFiles": None,
            "totalSize": None,
            "rawDataSize": None,
            "accurate": False,
            "changed": "1970-01-02 00:00:00",
        },
    ]
    done = metastore("ls", f"{listed}.plain", env=env)
    assert done.returncode == EXIT_OK and done.stdout.splitlines()[2].startswith(listed)
    done = metastore("ls", f"{listed}.nothing", env=env)
    assert done.returncode == EXIT_USAGE
    assert done.stderr == (
        f"metastore ls: error: no table {listed}.nothing in thrift://127.0.0.1:{server.port}; "
        f"{listed} has events, plain\n"
    )
    done = metastore("ls", "nodb", env=env)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.startswith("metastore ls: error: no database nodb in thrift://")
    done = metastore("ls", "a.b.c", env=env)
    assert done.returncode == EXIT_USAGE


def test_every_command_with_uri_reads_metastore_uri(
    server: RunningServer, listed: str, tmp_path: Path
) -> None:
    closed = _closed_port()
    env = {"METASTORE_URI": f"thrift://127.0.0.1:{closed}", "TMPDIR": str(tmp_path)}
    for argv in (["ping"], ["ls"], ["describe", f"{listed}.events"], ["analyze", "a.b"]):
        done = metastore(*argv, env=env)
        assert done.returncode == EXIT_FAILED, argv
        assert f"cannot reach the metastore at thrift://127.0.0.1:{closed}" in done.stderr, argv
    done = metastore("demo", env=env)
    assert done.returncode == EXIT_FAILED
    (log,) = tmp_path.glob("colstats-demo-*.log")  # named in its first line and its error
    assert done.stdout == (
        f"logs of Spark and the statistics job: {log}\n"
        f"[1/5] using the metastore at thrift://127.0.0.1:{closed}\n"
    )
    assert done.stderr.startswith(
        f"metastore demo: error: cannot reach the metastore at thrift://127.0.0.1:{closed}"
    )
    assert done.stderr.endswith(f"; logs in {log}\n") and done.stderr.count("\n") == 1
    assert "Traceback" in log.read_text()
    env = {"METASTORE_URI": f"thrift://127.0.0.1:{server.port}"}
    done = metastore("describe", f"{listed}.events", env=env)
    assert done.returncode == EXIT_OK, done.stderr


def test_a_reader_that_closes_the_output_early_ends_the_command_quietly(
    server: RunningServer, db_name: str
) -> None:
    """`metastore describe DB.T | head -3` on a table whose description is larger than
    the pipe's buffer: no BrokenPipeError, exit 0."""
    client, transport = connect(server.port)
    try:
        client.create_database(t.Database(name=db_name, parameters={}))
        _table(client, db_name, "wide", 3000, [])
    finally:
        transport.close()
    done = subprocess.run(
        f"{sys.executable} -m metastore.cli describe {db_name}.wide "
        f"--uri thrift://127.0.0.1:{server.port} | head -3; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stderr == ""
    assert done.stdout.splitlines()[0] == f"# {db_name}.wide"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ("--host", "127.0.0.1", "--port", "{busy}"),
            "cannot listen on 127.0.0.1:{busy}: the port is in use (another metastore serve?); "
            "choose another with --port",
        ),
        (
            ("--port", "70000"),
            "cannot listen on 127.0.0.1:70000: a port is a number from 0 to 65535",
        ),
        (
            ("--host", "no-such-host.invalid", "--port", "0"),
            "cannot listen on no-such-host.invalid:0: no-such-host.invalid is not a known host "
            "name or address (--host)",
        ),
        (
            ("--host", "203.0.113.77", "--port", "0"),  # TEST-NET-3: nobody's address
            "cannot listen on 203.0.113.77:0: 203.0.113.77 is not an address of this machine "
            "(--host)",
        ),
    ],
)
def test_serve_start_up_failures_are_plain_and_create_nothing(
    tmp_path: Path, flags: tuple[str, ...], message: str
) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        home = tmp_path / "home"
        done = metastore(
            "serve", *(f.format(busy=port) for f in flags), env={"METASTORE_HOME": str(home)}
        )
    assert done.returncode == EXIT_USAGE
    assert done.stderr == f"metastore serve: error: {message.format(busy=port)}\n"
    assert not home.exists()  # no database file, no folder


@pytest.mark.parametrize(
    "url", ["mysql+pymysql://u@localhost/db", "sqlite+pysqlcipher:///x.db", "oracle://u@h/d"]
)
def test_serve_refuses_an_unsupported_database(tmp_path: Path, url: str) -> None:
    done = metastore("serve", "--db", url, "--port", "0", env={"METASTORE_HOME": str(tmp_path)})
    assert done.returncode == EXIT_USAGE
    assert done.stderr.startswith("metastore serve: error: unsupported database ")
    assert done.stderr.count("\n") == 1
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_serve_refuses_a_database_in_memory(tmp_path: Path, url: str) -> None:
    done = metastore("serve", "--db", url, "--port", "0", env={"METASTORE_HOME": str(tmp_path)})
    assert done.returncode == EXIT_USAGE
    assert done.stderr == (
        f"metastore serve: error: {url} is a database in memory, which the server's "
        "connections would not share and which is lost when it stops: give a file, "
        "sqlite:///PATH\n"
    )
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("flags", "listening", "who"),
    [
        (
            (),
            "127.0.0.1",
            "any program on this machine (it listens on 127.0.0.1:{port}, loopback only)",
        ),
        (
            ("--host", "0.0.0.0"),
            "0.0.0.0",
            "any client that reaches this machine (it listens on 0.0.0.0:{port}, every interface)",
        ),
    ],
)
def test_serve_listens_on_loopback_unless_told_otherwise(
    tmp_path: Path, flags: tuple[str, ...], listening: str, who: str
) -> None:
    """What the kernel says the server listens on, and who its WARNING says may call it."""
    port = _closed_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "metastore.cli", "serve", "--port", str(port), *flags],
        env={**os.environ, "METASTORE_HOME": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_until_serving(server, port)
        assert _listening_on(port) == [listening]
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=30)
    assert server.returncode == EXIT_OK, output
    assert f"serving the Hive Metastore protocol on {listening}:{port} " in output
    warning = (
        f"WARNING metastore: authentication is off: {who.format(port=port)} may create, change "
        "and drop anything (set security = kerberos, or tls with tls_client_ca)\n"
    )
    assert warning in output


def _wait_until_serving(server: subprocess.Popen[str], port: int) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            client, transport = connect(port)
            client.get_all_databases()
            transport.close()
            return
        except Exception:
            assert server.poll() is None and time.monotonic() < deadline, "it did not start"
            time.sleep(0.1)


def _listening_on(port: int) -> list[str]:
    """The IPv4 and IPv6 addresses with a socket listening on PORT, as Linux lists them."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                # Each 32-bit word as the kernel holds it: in this machine's byte order.
                raw = b"".join(
                    int(address[i : i + 8], 16).to_bytes(4, sys.byteorder)
                    for i in range(0, len(address), 8)
                )
                family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
                found.append(socket.inet_ntop(family, raw))
    return found


def test_db_upgrade_prints_the_revisions_it_runs_and_a_failure_in_one_line(
    tmp_path: Path,
) -> None:
    """`db upgrade` and `db downgrade` show a line per revision run, not Alembic's lines
    about the backend it opened; a failure is its one line."""
    url = f"sqlite:///{tmp_path / 'metastore.db'}"
    done = metastore("db", "upgrade", "--db", url, "--revision", "0002")
    assert done.returncode == EXIT_OK, done.stderr
    logged = done.stderr.splitlines()
    assert [line.split(": ", 1)[1] for line in logged] == [
        "Running upgrade  -> 0001, initial schema",
        "Running upgrade 0001 -> 0002, functions (FUNCS, FUNC_RU) and skewed values (SKEWED_*)",
    ]
    assert done.stdout == f"{url} is at revision 0002\n"
    done = metastore("db", "downgrade", "--db", url, "--revision", "0001")
    assert done.returncode == EXIT_OK, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Running downgrade 0002 -> 0001" in done.stderr
    done = metastore("db", "upgrade", "--db", url, "--revision", "0001")
    assert done.returncode == EXIT_OK and done.stderr == "", done.stderr
    with contextlib.closing(sqlite3.connect(tmp_path / "metastore.db")) as conn, conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099'")  # a newer colstats'
    for argv in (["upgrade"], ["downgrade", "--revision", "-1"]):
        done = metastore("db", *argv, "--db", url)
        assert done.returncode == EXIT_FAILED, done.stderr
        assert done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"metastore db {argv[0]}: error: {url} is at revision 0099")
