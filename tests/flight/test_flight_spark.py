"""DuckDB's view of tables written by real Spark 4.1 with colstats as its metastore and
analyzed by the statistics job (`metastore analyze`, the table's files found through the
metastore): the Hive table and the data source table Spark makes, their statistics as
DuckDB gets them (true bounds, DuckDB's distinct counts, checked against the files read
by DuckDB itself) and their rows, row for row against DuckDB's read_parquet."""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from airport_client import AirportClient
from conftest import RunningServer, empty_database
from java_tools import unavailable

from metastore.config import Settings
from metastore.flight.server import FlightService
from metastore.flight.types import duckdb_type
from metastore.store import migrate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engines"))
from spark_shell import SparkShell

pytestmark = [pytest.mark.spark]

DB = "shop"
ROWS = 3000
NDV_ERROR = 0.05
ROW_SQL = f"""
SELECT CAST(id AS INT) AS id,
       IF(id % 9 = 0, NULL, CAST(id % 500 AS DECIMAL(10,2)) / 4) AS amount,
       IF(id % 10 = 0, NULL, concat('note', CAST(id % 37 AS STRING))) AS note,
       CAST(DATE'2024-03-01' + CAST(id % 40 AS INT) AS DATE) AS day,
       timestamp_seconds(1700000000 + id * 17) AS at,
       CASE id % 3 WHEN 0 THEN 'east' WHEN 1 THEN 'west' ELSE 'south' END AS region
FROM range(1, {ROWS} + 1)
"""


@contextlib.contextmanager
def _spark_stack(workdir: Path) -> Iterator[tuple[RunningServer, FlightService, SparkShell]]:
    if importlib.util.find_spec("pyspark") is None:
        unavailable("pyspark is not installed (pip install -e '.[spark]')")
    if shutil.which("java") is None:
        unavailable("java is not installed (a JDK 17 is needed)")
    with contextlib.contextmanager(empty_database)("sqlite", workdir) as url:
        migrate.upgrade(url)
        running = RunningServer(url, Settings())
        service = FlightService(running.handler.tx, running.settings, "127.0.0.1", 0)
        service.start()
        shell = SparkShell(running.port, workdir / "warehouse", workdir / "spark.log")
        try:
            yield running, service, shell
        finally:
            shell.close()
            service.stop()
            running.stop()


@pytest.fixture(scope="module")
def spark_tables(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FlightService, Path]]:
    """Spark makes shop.orders (a Hive Parquet table) and shop.events (a data source
    table), both partitioned by region; the job analyzes both."""
    workdir = tmp_path_factory.mktemp("flight-spark")
    with _spark_stack(workdir) as (running, service, shell):
        shell.sql(f"CREATE DATABASE {DB}")
        shell.sql(
            f"CREATE TABLE {DB}.orders (id INT, amount DECIMAL(10,2), note STRING, day DATE, "
            "at TIMESTAMP) PARTITIONED BY (region STRING) STORED AS PARQUET"
        )
        shell.sql(f"INSERT INTO {DB}.orders PARTITION (region) {ROW_SQL}")
        shell.sql(
            f"CREATE TABLE {DB}.events (id INT, amount DECIMAL(10,2), note STRING, day DATE, "
            "at TIMESTAMP, region STRING) USING parquet PARTITIONED BY (region)"
        )
        shell.sql(f"INSERT INTO {DB}.events {ROW_SQL}")
        for table in ("orders", "events"):
            done = subprocess.run(
                [
                    *(sys.executable, "-m", "metastore.cli", "analyze", f"{DB}.{table}"),
                    *("--uri", f"thrift://127.0.0.1:{running.port}"),
                ],
                cwd=workdir,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        yield service, workdir / "warehouse" / f"{DB}.db"


def files_of(con: duckdb.DuckDBPyConnection, folder: Path) -> duckdb.DuckDBPyRelation:
    return con.sql(
        f"SELECT * FROM read_parquet('{folder}/**/*.parquet', hive_partitioning = true, "
        "hive_types = {'region': 'VARCHAR'})"
    )


@pytest.mark.parametrize("table", ["orders", "events"])
def test_spark_tables_through_flight(spark_tables: tuple[FlightService, Path], table: str) -> None:
    service, folder = spark_tables
    airport = AirportClient(f"grpc://127.0.0.1:{service.port}", "hive")
    try:
        found = airport.tables()[(DB, table)]
        assert found.schema.names == ["id", "amount", "note", "day", "at", "region"]
        assert found.schema.field("amount").type == pa.decimal128(10, 2)
        assert found.advertises_statistics
        con = duckdb.connect()
        direct = files_of(con, folder / table)
        for column in ("id", "amount", "day", "at", "note", "region"):
            arrow = found.schema.field(column).type
            batch = airport.column_statistics(found, column, duckdb_type(arrow))
            got = {name: batch.column(name)[0].as_py() for name in batch.schema.names}
            quoted = f'"{column}"'
            low, high, nulls, distinct = direct.aggregate(
                f"min({quoted}), max({quoted}), count(*) - count({quoted}), "
                f"count(DISTINCT {quoted})"
            ).fetchall()[0]
            assert got["has_null"] is (nulls > 0), column
            assert abs(got["distinct_count"] - distinct) <= max(NDV_ERROR * distinct, 1), (
                column,
                got,
                distinct,
            )
            if column in ("id", "amount", "day", "region"):
                assert (got["min"], got["max"]) == (low, high), column
            if column == "at":  # whole seconds, widened
                assert got["min"] <= low and got["max"] >= high
        con.register("flight_rows", airport.scan(found))
        con.register("direct", direct.select(*found.schema.names))
        assert con.sql("SELECT count(*) FROM flight_rows").fetchall()[0][0] == ROWS
        missing = con.sql(
            "SELECT count(*) FROM (SELECT * FROM flight_rows EXCEPT ALL SELECT * FROM direct)"
        ).fetchall()[0][0]
        assert missing == 0
    finally:
        airport.close()
