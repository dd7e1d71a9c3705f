"""A metastore's refusal reaches the user as the metastore said it, in one line with exit 1,
whichever command meets it and at whichever stage of `metastore analyze`: the checks before
Spark, the registration of the table, of partitions, the statistics writes, the table-level
write (and `metastore demo`'s). Reads are refused by a Thrift server of the generated
processor that refuses what it is told to; writes by colstats with rights set
(`writers=alice`), the user named as Hadoop's clients name it (HADOOP_USER_NAME)."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runs import error_lines, metastore, partitions, table
from conftest import RunningServer, connect
from metadata_builders import database, fields, storage
from metadata_builders import table as table_struct
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore import sample_data
from metastore.cli import EXIT_FAILED, EXIT_OK
from metastore.config import Settings
from metastore.store import migrate

REASON = "the metastore is read-only during its upgrade"
WRITERS = "(granted by the writers or admins setting of the metastore)"
NOTHING = "nothing was written: the metastore is as it was"
PARQUET = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


class Refusing:
    """A metastore's handler that refuses the calls in REFUSED with a MetaException and
    answers set_ugi and get_all_databases."""

    def __init__(self) -> None:
        self.refused: set[str] = set()

    def set_ugi(self, user: str, groups: list[str]) -> list[str]:
        return [*groups, user]

    def __getattr__(self, call: str) -> Callable[..., Any]:
        def answer(*args: Any) -> Any:
            if call in self.refused:
                raise t.MetaException(f"{call}: {REASON}")
            if call == "get_all_databases":
                return ["default"]
            raise t.MetaException(f"{call} is not served here")

        return answer


@pytest.fixture(scope="module")
def refusing() -> Iterator[tuple[Refusing, int]]:
    """The handler, and the loopback port where the generated processor serves it."""
    handler = Refusing()
    processor = ThriftHiveMetastore.Processor(handler)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        sock = TSocket.TSocket()
        sock.handle = conn
        transport = TTransport.TBufferedTransport(sock)
        protocol = TBinaryProtocol(transport)
        try:
            while True:
                processor.process(protocol, protocol)
        except TTransport.TTransportException:
            pass  # the client is gone
        finally:
            transport.close()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(None)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield handler, listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


@pytest.mark.parametrize(
    ("argv", "refused"),
    [
        (["ping"], "get_all_databases"),
        (["ls"], "get_all_databases"),
        (["ls", "sales"], "get_database"),
        (["describe", "sales.orders"], "get_table"),
        (["analyze", "sales.orders"], "get_all_databases"),  # the metastore's check
        (["analyze", "sales.orders", "--path", "{data}"], "get_table"),  # what is registered
        (["demo", "--rows", "700"], "get_all_databases"),
    ],
)
def test_a_refused_read_is_the_metastores_words(
    refusing: tuple[Refusing, int], tmp_path: Path, argv: list[str], refused: str
) -> None:
    """Before Spark: the job's checks refused are one line too."""
    handler, port = refusing
    handler.refused = {refused}
    sample_data.write_orders(tmp_path / "orders", rows=70)
    args = [a.format(data=tmp_path / "orders") for a in argv]
    logs = tmp_path / "tmp"
    logs.mkdir()
    done = metastore(
        *args, "--uri", f"thrift://127.0.0.1:{port}", env={"TMPDIR": str(logs)}, timeout=120
    )
    assert done.returncode == EXIT_FAILED, done.stderr
    line = f"metastore {argv[0]}: error: the metastore refused: {refused}: {REASON}"
    if argv[0] == "demo":
        line += f"; logs in {next(logs.glob('colstats-demo-*.log'))}"
    assert done.stderr == f"{line}\n"


# ------------------------------------------------------------------------------------------
# Writes, refused by colstats's rights: each stage of the job, with Spark


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'metastore.db'}"
    migrate.upgrade(url)
    server = RunningServer(url, Settings(writers=("alice",)))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def orders(guarded: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """guard.orders: the demo's 7 daily partitions, analyzed by alice."""
    path = tmp_path_factory.mktemp("data") / "orders"
    sample_data.write_orders(path, rows=700)
    done = analyze("alice", guarded, "guard.orders", "--path", str(path))
    assert done.returncode == EXIT_OK, done.stderr
    return path


def analyze(user: str, server: RunningServer, *argv: str) -> Any:
    return metastore(
        "analyze",
        *argv,
        "--uri",
        f"thrift://127.0.0.1:{server.port}",
        env={"HADOOP_USER_NAME": user},
    )


def refused_line(done: Any, call: str) -> None:
    assert done.returncode == EXIT_FAILED, done.stderr
    assert error_lines(done.stderr) == [
        f"metastore analyze: error: the metastore refused: bob lacks the write right that "
        f"{call} needs {WRITERS}; {NOTHING}"
    ]
    assert "Traceback" not in done.stderr


@pytest.mark.spark
def test_the_table_registration_refused(guarded: RunningServer, orders: Path) -> None:
    done = analyze("bob", guarded, "guard.copy", "--path", str(orders))
    refused_line(done, "create_table_with_environment_context")  # colstats's name of it
    with pytest.raises(t.NoSuchObjectException):
        table(guarded, "guard", "copy")


@pytest.mark.spark
def test_a_partition_registration_refused(
    guarded: RunningServer, orders: Path, tmp_path: Path
) -> None:
    more = tmp_path / "orders"
    shutil.copytree(orders, more)
    shutil.copytree(more / "ds=2024-01-07", more / "ds=2024-01-08")
    refused_line(analyze("bob", guarded, "guard.orders", "--path", str(more)), "add_partitions_req")
    assert len(partitions(guarded, "guard", "orders")) == 7


@pytest.mark.spark
def test_the_statistics_writes_refused(guarded: RunningServer, orders: Path) -> None:
    """The partitions are registered with these very figures: the first write is the
    statistics'."""
    before = table(guarded, "guard", "orders").parameters
    refused_line(
        analyze("bob", guarded, "guard.orders", "--path", str(orders)), "set_aggr_stats_for"
    )
    assert table(guarded, "guard", "orders").parameters == before


@pytest.mark.spark
def test_the_table_level_write_refused(guarded: RunningServer, tmp_path: Path) -> None:
    """An unpartitioned table, registered by alice without basic statistics: the table
    level is the first write."""
    pq.write_table(pa.table({"id": [1, 2, 3], "name": ["a", "b", None]}), tmp_path / "f.parquet")
    client, transport = connect(guarded.port)
    try:
        client.set_ugi("alice", [])
        client.create_database(database("flat"))
        sd = storage(
            fields(("id", "bigint"), ("name", "string")),
            f"file:{tmp_path}",
            inputFormat=PARQUET,
            serdeInfo=t.SerDeInfo(None, PARQUET_SERDE, {}),
        )
        client.create_table(table_struct("flat", "t", sd=sd, tableType="EXTERNAL_TABLE"))
    finally:
        transport.close()
    done = analyze("bob", guarded, "flat.t", "--path", str(tmp_path))
    refused_line(done, "alter_table_with_environment_context")
    assert "numRows" not in table(guarded, "flat", "t").parameters


@pytest.mark.spark
def test_the_demo_refused(guarded: RunningServer, tmp_path: Path) -> None:
    done = metastore(
        "demo", "--uri", f"thrift://127.0.0.1:{guarded.port}", "--rows", "700",
        "--table", "demo.orders", "--data", str(tmp_path / "orders"),
        env={"HADOOP_USER_NAME": "bob", "TMPDIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == EXIT_FAILED, done.stderr
    (log,) = tmp_path.glob("colstats-demo-*.log")
    assert done.stderr == (
        "metastore demo: error: the metastore refused: bob lacks the write right that "
        f"create_database needs {WRITERS}; {NOTHING}; logs in {log}\n"
    )
