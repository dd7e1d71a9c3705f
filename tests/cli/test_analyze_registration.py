"""`metastore analyze` as a user runs it, checked from outside: every check that needs no
scan answered before Spark starts, in one line and with the exit code docs/cli.md gives, leaving the
metastore and the data as they were; tables registered with the storage of their format,
which a real Spark (Hive support, on colstats) then reads; tables registered earlier
without one repaired; --spark-table on the metastore the job writes to."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pytest
from cli_runs import (
    databases,
    error_lines,
    folders,
    metastore,
    partitions,
    spark_reads,
    table,
)
from conftest import RunningServer, connect

from hive_metastore_thrift import ttypes as t
from metastore import sample_data
from metastore.cli import EXIT_OK, EXIT_USAGE
from metastore.config import Settings
from metastore.store import migrate

pytestmark = pytest.mark.spark

ROWS = 700
PARQUET = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'metastore.db'}"
    migrate.upgrade(url)
    running = RunningServer(url, Settings())
    yield running
    running.stop()


@pytest.fixture(scope="module")
def orders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's orders: 7 daily partitions of Parquet."""
    path = tmp_path_factory.mktemp("data") / "orders"
    sample_data.write_orders(path, rows=ROWS)
    return path


def uri(server: RunningServer) -> str:
    return f"thrift://127.0.0.1:{server.port}"


def test_what_needs_no_scan_is_checked_before_spark_starts(
    server: RunningServer, orders: Path, tmp_path: Path
) -> None:
    """Each in a second, without loading Spark; nothing registered, no folder made."""
    empty = tmp_path / "empty"
    empty.mkdir()
    before = folders(orders)
    program = (
        "import sys\nfrom metastore.cli import main\ncode = main(sys.argv[1:])\n"
        "assert 'pyspark' not in sys.modules, 'Spark was loaded'\nsys.exit(code)"
    )
    client, transport = connect(server.port)
    try:  # a table registered unpartitioned
        client.create_database(t.Database(name="flat", parameters={}))
        client.create_table(
            t.Table(
                tableName="t",
                dbName="flat",
                sd=t.StorageDescriptor(cols=[t.FieldSchema("order_id", "bigint", None)]),
                parameters={},
                partitionKeys=[],
                tableType="EXTERNAL_TABLE",
            )
        )
    finally:
        transport.close()
    cases = [
        (["nosuch.t"], EXIT_USAGE, "nosuch.t is not in the metastore at"),
        (["new.t", "--path", str(empty)], EXIT_USAGE, f"no data under {empty}: no files"),
        (
            ["flat.t", "--path", str(orders)],
            EXIT_USAGE,
            "flat.t in the metastore is partitioned by nothing, the data by ds",
        ),
        (
            ["new.t", "--path", str(orders), "--format", "orc"],
            EXIT_USAGE,
            "part-0.parquet is not orc: it looks like a Parquet file (give --format parquet)",
        ),
        (
            ["new.t", "--path", str(orders), "--format", "csv", "--schema", "a INT"],
            EXIT_USAGE,
            "is not csv: it looks like a Parquet file",
        ),
        (
            ["new.t", "--path", str(orders), "--columns", "amount,nope"],
            EXIT_USAGE,
            "no such column(s): nope; the data has order_id, customer",
        ),
        (
            ["new.t", "--path", str(orders), "--partition", "ds=2099-01-01"],
            EXIT_USAGE,
            "--partition ds=2099-01-01 names no partition of the data under "
            f"{orders}; it has ds=2024-01-01, ds=2024-01-02,",
        ),
        (
            ["new.t", "--path", str(orders), "--partition", "day=1"],
            EXIT_USAGE,
            "partition spec names unknown key(s) day; the keys are ds",
        ),
    ]
    csv_folder = tmp_path / "csv"
    csv_folder.mkdir()
    (csv_folder / "a.csv").write_text("a,b\n1,2\n")
    cases.append(
        (
            ["new.t", "--path", str(csv_folder), "--format", "csv", "--schema", "a INTT, b INT"],
            EXIT_USAGE,
            "cannot read the schema 'a INTT, b INT': unknown type INTT",
        )
    )
    for args, code, message in cases:
        done = subprocess_run(program, [*args, "--uri", uri(server)])
        assert done.returncode == code, (args, done.stderr)
        assert done.stderr.startswith("metastore analyze: error: "), (args, done.stderr)
        assert done.stderr.count("\n") == 1 and message in done.stderr, (args, done.stderr)
    assert "new" not in databases(server)
    assert folders(orders) == before


def subprocess_run(program: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", program, "analyze", *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def _write_formats(base: Path) -> dict[str, Path]:
    """The same 3 rows as ORC, csv (with a header) and json, two partitions each."""
    rows: dict[str, list[tuple[int, str | None, str | None]]] = {
        "p=1": [(1, "a,b", "2024-01-01"), (2, None, None)],
        "p=2": [(3, "c", "2024-02-01")],
    }
    out = {}
    for fmt in ("orc", "csv", "json"):
        for part, values in rows.items():
            folder = base / fmt / part
            folder.mkdir(parents=True)
            if fmt == "orc":
                columns = list(zip(*values, strict=True))
                orc.write_table(
                    pa.table(
                        {
                            "i": pa.array(columns[0], pa.int32()),
                            "s": pa.array(columns[1], pa.string()),
                            "d": pa.array(columns[2], pa.string()).cast(pa.date32()),
                        }
                    ),
                    folder / "part-0.orc",
                )
            elif fmt == "csv":
                lines = ["i,s,d"] + [
                    ",".join(
                        "" if v is None else (f'"{v}"' if "," in str(v) else str(v)) for v in row
                    )
                    for row in values
                ]
                (folder / "part-0.csv").write_text("\n".join(lines) + "\n")
            else:
                (folder / "part-0.json").write_text(
                    "".join(json.dumps(dict(zip("isd", row, strict=True))) + "\n" for row in values)
                )
        out[fmt] = base / fmt
    return out


def test_tables_the_job_registers_are_read_by_spark(
    server: RunningServer, orders: Path, tmp_path: Path
) -> None:
    """Parquet, ORC, csv and json under --path: registered with their format's storage,
    read back by a new Spark session with Hive support on colstats; then analyzed again by
    name. No folder is made in the data."""
    paths = {"parquet": orders, **_write_formats(tmp_path)}
    before = {fmt: folders(path) for fmt, path in paths.items()}
    for fmt, path in paths.items():
        extra = ["--schema", "i INT, s STRING, d DATE"] if fmt in ("csv", "json") else []
        done = metastore(
            "analyze", f"reg.{fmt}", "--uri", uri(server), "--path", str(path), "--format", fmt,
            *extra,
        )  # fmt: skip
        assert done.returncode == EXIT_OK, done.stderr
        assert folders(path) == before[fmt]
    stored = table(server, "reg", "parquet")
    assert (stored.sd.inputFormat, stored.sd.serdeInfo.serializationLib) == (
        PARQUET,
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
    )
    assert stored.sd.location == f"file:{orders}"
    for part in partitions(server, "reg", "parquet"):
        assert part.sd.inputFormat == PARQUET
        assert part.sd.location == f"file:{orders}/ds={part.values[0]}"
    csv = table(server, "reg", "csv")
    assert csv.sd.serdeInfo.serializationLib == "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
    assert csv.sd.serdeInfo.parameters["field.delim"] == ","
    assert csv.parameters["skip.header.line.count"] == "1"
    assert csv.parameters["spark.sql.sources.provider"] == "csv"
    json_table = table(server, "reg", "json")
    assert json_table.sd.serdeInfo.serializationLib == "org.apache.hive.hcatalog.data.JsonSerDe"
    assert table(server, "reg", "orc").sd.serdeInfo.serializationLib.endswith("OrcSerde")

    answers = spark_reads(
        server,
        tmp_path / "warehouse",
        [
            "SELECT count(*) FROM reg.parquet",
            "SELECT count(*) FROM reg.parquet WHERE ds = '2024-01-03'",
            *(f"SELECT i, s, d, p FROM reg.{fmt} ORDER BY i" for fmt in ("orc", "csv", "json")),
        ],
    )
    assert answers[0][0][0] == str(ROWS), answers[0]
    assert answers[1] == [["100"]]
    expected = [
        ["1", "a,b", "2024-01-01", "1"],
        ["2", "None", "None", "1"],
        ["3", "c", "2024-02-01", "2"],
    ]
    for fmt, answer in zip(("orc", "csv", "json"), answers[2:], strict=True):
        assert answer == expected, (fmt, answer)

    for fmt in paths:  # by name: the registered storage says how to read the files
        done = metastore("analyze", f"reg.{fmt}", "--uri", uri(server))
        assert done.returncode == EXIT_OK, (fmt, done.stderr)
        assert "statistics of reg." in done.stdout


def test_a_table_registered_without_storage_is_repaired(
    server: RunningServer, orders: Path, tmp_path: Path
) -> None:
    """A table and partitions as older runs of the job registered them (no input format,
    no SerDe) get Parquet's storage the next time the job sees them; Spark reads them."""
    client, transport = connect(server.port)
    try:
        client.create_database(t.Database(name="old", parameters={}))
        bare = t.StorageDescriptor(
            cols=[t.FieldSchema("order_id", "bigint", None)],
            location=str(orders),
            serdeInfo=t.SerDeInfo(parameters={}),
            bucketCols=[],
            sortCols=[],
            parameters={},
            numBuckets=-1,
        )
        client.create_table(
            t.Table(
                tableName="orders",
                dbName="old",
                sd=bare,
                parameters={"EXTERNAL": "TRUE"},
                tableType="EXTERNAL_TABLE",
                partitionKeys=[t.FieldSchema("ds", "string", None)],
            )
        )
        client.add_partition(
            t.Partition(values=["2024-01-02"], dbName="old", tableName="orders", parameters={})
        )
    finally:
        transport.close()
    assert not table(server, "old", "orders").sd.inputFormat
    done = metastore("analyze", "old.orders", "--uri", uri(server))
    assert done.returncode == EXIT_OK, done.stderr
    assert table(server, "old", "orders").sd.inputFormat == PARQUET
    (part,) = partitions(server, "old", "orders")
    assert part.sd.inputFormat == PARQUET
    assert part.parameters["numRows"] == "100"
    answers = spark_reads(server, tmp_path / "warehouse", ["SELECT count(*) FROM old.orders"])
    assert answers == [[["100"]]]


def test_a_format_other_than_the_registered_one_is_refused(
    server: RunningServer, orders: Path
) -> None:
    done = metastore(
        "analyze", "fmt.t", "--uri", uri(server), "--path", str(orders), "--partition",
        "ds=2024-01-01",
    )  # fmt: skip
    assert done.returncode == EXIT_OK, done.stderr
    done = metastore("analyze", "fmt.t", "--uri", uri(server), "--format", "orc")
    assert done.returncode == EXIT_USAGE
    assert error_lines(done.stderr) == [
        "metastore analyze: error: fmt.t is registered as parquet, not orc"
    ]
    # --partition naming no stored partition lists those there are.
    done = metastore("analyze", "fmt.t", "--uri", uri(server), "--partition", "ds=2024-01-05")
    assert done.returncode == EXIT_USAGE
    assert error_lines(done.stderr) == [
        "metastore analyze: error: --partition ds=2024-01-05 names no partition of fmt.t; it "
        "has ds=2024-01-01"
    ]


def test_spark_table_reads_the_metastore_the_job_writes_to(
    server: RunningServer, orders: Path
) -> None:
    """--spark-table finds the metastore's tables: the job's session has a Hive catalog on
    --uri, unless Spark's configuration names another catalog."""
    done = metastore("analyze", "src.orders", "--uri", uri(server), "--path", str(orders))
    assert done.returncode == EXIT_OK, done.stderr
    done = metastore("analyze", "copy.orders", "--uri", uri(server), "--spark-table", "src.orders")
    assert done.returncode == EXIT_OK, done.stderr
    assert f"Spark's catalog: the metastore at {uri(server)}" in done.stderr
    assert table(server, "copy", "orders").parameters["numRows"] == str(ROWS)
    assert table(server, "copy", "orders").sd.location == f"file:{orders}"
    in_memory = {
        "PYSPARK_SUBMIT_ARGS": "--conf spark.sql.catalogImplementation=in-memory pyspark-shell"
    }
    done = metastore(
        "analyze", "copy2.orders", "--uri", uri(server), "--spark-table", "src.orders",
        env=in_memory,
    )  # fmt: skip
    assert done.returncode == EXIT_USAGE  # a table the Spark catalog does not have
    (line,) = error_lines(done.stderr)
    assert line.startswith("metastore analyze: error: Spark failed: [TABLE_OR_VIEW_NOT_FOUND]")
    assert "copy2" not in databases(server)
