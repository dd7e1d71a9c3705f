"""`metastore analyze` as a user runs it, on what it can tell before Spark starts and on
--incremental runs of a registered table: a --path that is a file or a folder without data,
a registered table without data, each one line with 2 before Spark is loaded; new partition
folders under the table's location registered and analyzed, the table level then equal to a
full run's (sketches included), and a run with nothing new that says so without Spark."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runs import databases, folders, metastore, partitions, table
from conftest import RunningServer, connect
from datasketches import kll_floats_sketch

from hive_metastore_thrift import ttypes as t
from metastore import sample_data
from metastore.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from metastore.config import Settings
from metastore.sketches import HyperLogLog
from metastore.store import migrate

pytestmark = pytest.mark.spark

NO_SPARK = (
    "import sys\nfrom metastore.cli import main\ncode = main(sys.argv[1:])\n"
    "assert 'pyspark' not in sys.modules, 'Spark was loaded'\nsys.exit(code)"
)
"""`metastore` that fails if Spark was loaded."""
COLUMNS = [
    "order_id", "customer", "country", "amount", "quantity", "discount", "is_gift",
    "ordered_at", "ship_date",
]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """colstats returning sketches, so that the tests read what the job wrote."""
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'metastore.db'}"
    migrate.upgrade(url)
    running = RunningServer(url, Settings(fetch_bitvector=True, fetch_histogram=True))
    yield running
    running.stop()


def uri(server: RunningServer) -> str:
    return f"thrift://127.0.0.1:{server.port}"


def without_spark(server: RunningServer, *args: str) -> subprocess.CompletedProcess[str]:
    """`metastore analyze ARGS`, failing if it loaded Spark."""
    return subprocess.run(
        [sys.executable, "-c", NO_SPARK, "analyze", *args, "--uri", uri(server)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def register(server: RunningServer, db: str, name: str, location: Path, keys: list[str]) -> None:
    """A Parquet table at LOCATION, as Hive registers one, with no partitions."""
    client, transport = connect(server.port)
    try:
        if db not in client.get_all_databases():
            client.create_database(t.Database(name=db, parameters={}))
        client.create_table(
            t.Table(
                tableName=name,
                dbName=db,
                sd=t.StorageDescriptor(
                    cols=[t.FieldSchema("order_id", "bigint", None)],
                    location=f"file:{location}",
                    inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                    outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                    serdeInfo=t.SerDeInfo(
                        serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                        parameters={},
                    ),
                    bucketCols=[],
                    sortCols=[],
                    parameters={},
                    numBuckets=-1,
                ),
                parameters={"EXTERNAL": "TRUE"},
                partitionKeys=[t.FieldSchema(k, "string", None) for k in keys],
                tableType="EXTERNAL_TABLE",
            )
        )
    finally:
        transport.close()


def test_what_needs_no_scan_fails_before_spark_starts(
    server: RunningServer, tmp_path: Path
) -> None:
    """A --path that is a file or holds no data file, a registered table without data: one
    line with 2 (a registered Parquet table whose files are not: 1), Spark never loaded,
    nothing registered, no folder made."""
    orders = tmp_path / "orders"
    sample_data.write_orders(orders, rows=300, days=3)
    a_file = orders / "ds=2024-01-01" / "part-0.parquet"
    empty = tmp_path / "empty"
    empty.mkdir()
    hidden = tmp_path / "hidden"
    (hidden / "ds=1").mkdir(parents=True)
    (hidden / "_SUCCESS").write_text("")
    (hidden / "ds=1" / ".part-0.parquet.crc").write_bytes(b"crc")
    (hidden / "ds=1" / "_temporary").mkdir()
    (hidden / "ds=1" / "_temporary" / "part-0.parquet").write_bytes(b"PAR1")
    flat = tmp_path / "flat"
    flat.mkdir()
    register(server, "reg", "flat", flat, [])
    register(server, "reg", "parts", empty, ["ds"])
    register(server, "reg", "orders", orders, ["ds"])
    text = tmp_path / "text"
    (text / "ds=1").mkdir(parents=True)
    (text / "ds=1" / "part-0.parquet").write_text("a,b\n1,2\n")
    register(server, "reg", "text", text, ["ds"])
    before = folders(tmp_path)
    cases = [
        (
            ["new.t", "--path", str(a_file)],
            EXIT_USAGE,
            f"--path {a_file} is a file; give the folder that holds the table's files (and "
            "its partition folders)",
        ),
        (
            ["new.t", "--path", str(empty)],
            EXIT_USAGE,
            f"no data under {empty}: no files (names starting with _ or . are skipped)",
        ),
        (
            ["new.t", "--path", str(hidden)],
            EXIT_USAGE,
            f"no data under {hidden}: no files (names starting with _ or . are skipped)",
        ),
        (
            ["reg.flat"],
            EXIT_USAGE,
            f"no data under file:{flat}: no files (names starting with _ or . are skipped)",
        ),
        (
            ["reg.parts"],
            EXIT_USAGE,
            "reg.parts has no partitions in the metastore; --incremental registers and "
            f"analyzes the partition folders under file:{empty}",
        ),
        (
            ["reg.orders", "--incremental", "--partition", "ds=2099-01-01"],
            EXIT_USAGE,
            "--partition ds=2099-01-01 names no partition of reg.orders; it has "
            "ds=2024-01-01, ds=2024-01-02, ds=2024-01-03",
        ),
        (  # the data, not what was typed
            ["reg.text", "--incremental"],
            EXIT_FAILED,
            f"{text}/ds=1/part-0.parquet is not parquet, as reg.text is registered: it looks "
            "like text (replace it or move it out of the table's folder)",
        ),
    ]
    for args, code, message in cases:
        done = without_spark(server, *args)
        assert (done.returncode, done.stderr.splitlines()[-1:]) == (
            code,
            [f"metastore analyze: error: {message}"],
        ), (args, done.stderr)
    assert "new" not in databases(server)
    assert partitions(server, "reg", "orders") == []
    assert folders(tmp_path) == before


def table_level(server: RunningServer, db: str, name: str) -> dict[str, Any]:
    """The table's column statistics by column, the union member of each."""
    client, transport = connect(server.port)
    try:
        objs = client.get_table_statistics_req(
            t.TableStatsRequest(dbName=db, tblName=name, colNames=COLUMNS, engine="hive")
        ).tableStats
    finally:
        transport.close()
    return {o.colName: next(v for v in vars(o.statsData).values() if v is not None) for o in objs}


def assert_equal_figures(got: dict[str, Any], full: dict[str, Any]) -> None:
    """Every figure of GOT as in FULL, a full run's; the sketches of the same values."""
    assert sorted(got) == sorted(full) == sorted(COLUMNS)
    for column, want in full.items():
        for field, value in vars(want).items():
            other = getattr(got[column], field)
            if field == "bitVectors" and value is not None:
                assert other is not None, column
                assert HyperLogLog.from_bytes(other) == HyperLogLog.from_bytes(value), column
            elif field == "histogram" and value is not None:
                assert other is not None, column
                a, b = kll_floats_sketch.deserialize(other), kll_floats_sketch.deserialize(value)
                assert (a.n, a.get_min_value(), a.get_max_value()) == (
                    b.n,
                    b.get_min_value(),
                    b.get_max_value(),
                ), column
            elif field == "avgColLen":
                assert other == pytest.approx(value, rel=1e-12), column
            else:
                assert other == value, (column, field)


def test_incremental_registers_and_analyzes_new_partition_folders(
    server: RunningServer, tmp_path: Path
) -> None:
    """A table registered by name with 3 partitions gets a 4th folder: --incremental
    registers it in its own folder, reads it alone, says so, and leaves the table level as a
    full run of the 4 makes it; run again, it says there is nothing new and loads no Spark."""
    orders = tmp_path / "orders"
    sample_data.write_orders(orders, rows=3000, days=3)
    done = metastore("analyze", "inc.orders", "--uri", uri(server), "--path", str(orders))
    assert done.returncode == EXIT_OK, done.stderr
    more = tmp_path / "more"
    sample_data.write_orders(more, rows=4000, days=4)
    shutil.copytree(more / "ds=2024-01-04", orders / "ds=2024-01-04")
    (orders / "ds=2024-01-05").mkdir()  # no data file: not a partition to register
    (orders / "ds=2024-01-05" / "_SUCCESS").write_text("")

    done = metastore("analyze", "inc.orders", "--uri", uri(server), "--incremental")
    assert done.returncode == EXIT_OK, done.stderr
    assert "incremental: 1 partition folder(s) not registered yet: ds=2024-01-04" in done.stderr
    assert (
        "statistics of inc.orders: 9 column(s), 1 partition(s) analyzed, 3 kept as they were "
        "(--incremental) in "
    ) in done.stdout
    assert " WARNING " not in done.stderr  # the sketches were merged
    (new,) = [p for p in partitions(server, "inc", "orders") if p.values == ["2024-01-04"]]
    assert new.sd.location == f"file:{orders}/ds=2024-01-04"
    assert new.sd.inputFormat == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
    assert new.parameters["numRows"] == "1000"
    assert len(partitions(server, "inc", "orders")) == 4
    params = table(server, "inc", "orders").parameters
    assert (params["numRows"], params["numFiles"]) == ("4000", "4")

    done = metastore("analyze", "full.orders", "--uri", uri(server), "--path", str(orders))
    assert done.returncode == EXIT_OK, done.stderr
    full = table(server, "full", "orders").parameters
    for key in ("numRows", "numFiles", "totalSize", "rawDataSize"):
        assert params[key] == full[key], key
    assert_equal_figures(
        table_level(server, "inc", "orders"), table_level(server, "full", "orders")
    )
    described = metastore("describe", "inc.orders", "--uri", uri(server))
    assert "basic statistics (accurate): numRows 4000, numFiles 4," in described.stdout

    stored = table_level(server, "inc", "orders")
    started = time.monotonic()
    done = without_spark(server, "inc.orders", "--incremental")
    seconds = time.monotonic() - started
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout == (
        "nothing new to analyze in inc.orders: 4 partition(s) have statistics already and no "
        f"other partition under file:{orders} has data files (--incremental); nothing was "
        "written\n"
    )
    assert seconds < 10, seconds  # a Spark session alone takes longer
    assert table_level(server, "inc", "orders") == stored
