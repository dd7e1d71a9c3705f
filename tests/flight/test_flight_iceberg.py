"""Iceberg tables through the Flight door: DuckDB's scan reads the current snapshot's data
files by field id (a renamed column keeps its values, an added one is NULL in older files),
and column_statistics answers the figures `metastore analyze` computed for the current
snapshot, current while no other commit came; after an append they describe an older
snapshot and no bounds are answered."""

from __future__ import annotations

import argparse
import datetime
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from airport_client import AirportClient
from conftest import RunningServer, connect
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType
from pyspark.sql import SparkSession

from metastore.cli import analyze as analyze_command
from metastore.flight.server import FlightService
from metastore.iceberg import parameters as iceberg_params
from metastore.job import analyze

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]

CATALOG = "hive"
DB = "flight_iceberg"


def _rows(start: int, stop: int, *, renamed: bool, score: bool) -> pa.Table:
    ids = list(range(start, stop))
    columns = {
        "id": pa.array(ids, pa.int64()),
        "label" if renamed else "name": pa.array([f"n{i % 50}" for i in ids]),
        "ts": pa.array(
            [datetime.datetime(2024, 3, 1) + datetime.timedelta(hours=i) for i in ids],
            pa.timestamp("us"),
        ),
    }
    if score:
        columns["score"] = pa.array([i / 2 for i in ids], pa.float64())
    return pa.table(columns)


@pytest.fixture(scope="module")
def flight_door(server: RunningServer) -> Iterator[AirportClient]:
    service = FlightService(server.handler.tx, server.settings, "127.0.0.1", 0)
    service.start()
    client = AirportClient(f"grpc://127.0.0.1:{service.port}", CATALOG)
    yield client
    client.close()
    service.stop()


@pytest.fixture(scope="module")
def catalog(server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> HiveCatalog:
    warehouse: Path = tmp_path_factory.mktemp("iceberg-warehouse")
    found = HiveCatalog(
        "colstats",
        uri=f"thrift://127.0.0.1:{server.port}",
        warehouse=warehouse.as_uri(),
        **{"lock-check-min-wait-time": "0.01", "lock-check-max-wait-time": "0.1"},
    )
    found.create_namespace(DB)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
    )
    spec = PartitionSpec(PartitionField(3, 1000, DayTransform(), "ts_day"))
    table = found.create_table(f"{DB}.events", schema=schema, partition_spec=spec)
    table.append(_rows(0, 400, renamed=False, score=False))
    with table.update_schema() as update:
        update.rename_column("name", "label")
        update.add_column("score", DoubleType())
    found.load_table(f"{DB}.events").append(_rows(400, 600, renamed=True, score=True))
    return found


def _analyze(spark: SparkSession, server: RunningServer, table: str) -> None:
    parser = argparse.ArgumentParser()
    analyze_command.add_arguments(parser)
    args = parser.parse_args([table, "--uri", f"thrift://127.0.0.1:{server.port}"])
    analyze.run(spark, analyze_command.options(args))


def test_duckdb_scans_and_plans_an_iceberg_table(
    spark: SparkSession, server: RunningServer, catalog: HiveCatalog, flight_door: AirportClient
) -> None:
    tables = flight_door.tables()
    events = tables[(DB, "events")]
    assert events.schema.names == ["id", "label", "ts", "score"]
    rows = flight_door.scan(events).sort_by("id")
    assert rows.num_rows == 600
    assert rows.column("label").to_pylist()[:2] == ["n0", "n1"]  # written as `name`
    assert rows.column("score").null_count == 400  # added after the first files
    assert rows.column("score").to_pylist()[-1] == 599 / 2

    # Not analyzed yet: no bounds.
    assert flight_door.column_statistics(events, "id", "BIGINT").column("min")[0].as_py() is None
    _analyze(spark, server, f"{DB}.events")
    events = flight_door.tables()[(DB, "events")]
    batch = flight_door.column_statistics(events, "id", "BIGINT")
    assert (batch.column("min")[0].as_py(), batch.column("max")[0].as_py()) == (0, 599)
    assert abs(batch.column("distinct_count")[0].as_py() - 600) <= 12
    score = flight_door.column_statistics(events, "score", "DOUBLE")
    assert score.column("has_null")[0].as_py() is True
    assert score.column("min")[0].as_py() == 400 / 2  # (a double's max: NaN may be above)

    # An append makes them describe an older snapshot: no bounds, and HMS says so too.
    catalog.load_table(f"{DB}.events").append(_rows(600, 700, renamed=True, score=True))
    events = flight_door.tables()[(DB, "events")]
    stale = flight_door.column_statistics(events, "id", "BIGINT")
    assert stale.column("max")[0].as_py() is None
    assert flight_door.scan(events).num_rows == 700
    client, transport = connect(server.port)
    try:
        params = client.get_table(DB, "events").parameters
    finally:
        transport.close()
    assert "COLUMN_STATS_ACCURATE" not in params
    assert iceberg_params.STATISTICS_SNAPSHOT in params
