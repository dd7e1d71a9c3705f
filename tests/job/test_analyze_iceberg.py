"""`metastore analyze` on Iceberg tables that pyiceberg's HiveCatalog wrote through colstats
(both backends): several snapshots, a column renamed and one added since the first files,
partitioned by a transform. The job reads the current snapshot's data files by field id and
writes a Puffin file of theta sketches, registered in the table's metadata for that snapshot
through the HMS lock, and the same figures as HMS column statistics; checked against the data,
by an independent reader of the Puffin file (the datasketches package), and by pyiceberg."""

from __future__ import annotations

import datetime
import decimal
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import datasketches
import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from conftest import RunningServer, connect
from job_checks import new_db, run_job, run_job_result
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.puffin import PuffinFile as PyicebergPuffin
from pyiceberg.transforms import DayTransform
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)
from pyspark.sql import SparkSession

from hive_metastore_thrift import ttypes as t
from metastore.iceberg import parameters as iceberg_params
from metastore.iceberg import puffin
from metastore.job import iceberg
from metastore.job.client import MetastoreClient
from metastore.job.connection import Connection
from metastore.thrift_stats import python_decimal, union_member

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]

LOCK_WAITS = {
    "lock-check-min-wait-time": "0.01",
    "lock-check-max-wait-time": "0.1",
    "lock-check-retries": "200",
}
THETA_ERROR = 0.05
"""How far a theta estimate may be from the true count in these tests (k = 4096: about 1.6%
relative standard error)."""

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "ts", TimestampType(), required=False),
    NestedField(4, "n", IntegerType(), required=False),
    NestedField(5, "price", DecimalType(10, 2), required=False),
    NestedField(6, "day", DateType(), required=False),
    NestedField(7, "ok", BooleanType(), required=False),
)


def _rows(start: int, stop: int, *, renamed: bool = False, score: bool = False) -> pa.Table:
    ids = list(range(start, stop))
    columns: dict[str, Any] = {
        "id": pa.array(ids, pa.int64()),
        "label" if renamed else "name": pa.array(
            [None if i % 11 == 0 else f"name-{i % 1500}" for i in ids], pa.string()
        ),
        "ts": pa.array(
            [datetime.datetime(2024, 1, 1) + datetime.timedelta(hours=i % 72) for i in ids],
            pa.timestamp("us"),
        ),
        "n": pa.array([i % 97 for i in ids], pa.int32()),
        "price": pa.array([decimal.Decimal(i % 1000) / 4 for i in ids], pa.decimal128(10, 2)),
        "day": pa.array([datetime.date(2024, 1, 1 + i % 28) for i in ids], pa.date32()),
        "ok": pa.array([i % 3 == 0 for i in ids], pa.bool_()),
    }
    if score:
        columns["score"] = pa.array([None if i % 5 else i / 7 for i in ids], pa.float64())
    return pa.table(columns)


def _catalog(server: RunningServer, warehouse: Path) -> HiveCatalog:
    return HiveCatalog(
        "colstats",
        uri=f"thrift://127.0.0.1:{server.port}",
        warehouse=warehouse.as_uri(),
        **LOCK_WAITS,
    )


@pytest.fixture(scope="module")
def events(
    server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[HiveCatalog, str]]:
    """DB.events: three appends, `name` renamed `label` and `score` added, one append more."""
    catalog = _catalog(server, tmp_path_factory.mktemp("warehouse"))
    db = new_db()
    catalog.create_namespace(db)
    spec = PartitionSpec(PartitionField(3, 1000, DayTransform(), "ts_day"))
    table = catalog.create_table(f"{db}.events", schema=SCHEMA, partition_spec=spec)
    table.append(_rows(0, 3000))
    table.append(_rows(3000, 5000))
    table.append(_rows(5000, 5500))
    with table.update_schema() as update:
        update.rename_column("name", "label")
        update.add_column("score", DoubleType())
    table = catalog.load_table(f"{db}.events")
    table.append(_rows(5500, 7000, renamed=True, score=True))
    yield catalog, f"{db}.events"


def _data(table: Table) -> pa.Table:
    return table.scan().to_arrow()


def test_an_iceberg_table_gets_puffin_statistics_and_hms_statistics(
    spark: SparkSession, server: RunningServer, events: tuple[HiveCatalog, str]
) -> None:
    catalog, name = events
    db, table_name = name.split(".")
    before = catalog.load_table(name)
    snapshot = before.current_snapshot()
    assert snapshot is not None
    data = _data(before)
    stats = run_job(spark, server, name)
    columns = ["id", "label", "ts", "n", "price", "day", "ok", "score"]
    assert sorted(stats) == sorted(columns)

    # HMS column statistics: exact bounds, nulls; distinct counts within the HLL's error.
    for column in columns:
        values = data.column(column)
        found = union_member(stats[column].statsData)
        assert found.numNulls == values.null_count, column
        if column == "ok":
            assert found.numTrues == pc.sum(values.cast(pa.int64())).as_py()
            continue
        distinct = len(pc.unique(values.drop_null()))
        if column in ("label",):
            assert found.maxColLen == max(len(v) for v in values.drop_null().to_pylist())
        else:
            low, high = pc.min(values).as_py(), pc.max(values).as_py()
            if column == "ts":
                low, high = (int(v.timestamp()) for v in (low, high))
            if column == "day":
                found_low = datetime.date(1970, 1, 1) + datetime.timedelta(
                    days=found.lowValue.daysSinceEpoch
                )
                assert found_low == low
            elif column == "price":
                found_bounds = (python_decimal(found.lowValue), python_decimal(found.highValue))
                assert found_bounds == (low, high)
            elif column != "ts":
                assert (found.lowValue, found.highValue) == (low, high), column
        ndv = found.numDVs - (1 if values.null_count else 0)
        assert abs(ndv - distinct) <= max(2, 0.05 * distinct), column

    # The Puffin file, registered for the snapshot that was read.
    after = catalog.load_table(name)
    current = after.current_snapshot()
    assert current is not None and current.snapshot_id == snapshot.snapshot_id  # none new
    [statistics] = after.metadata.statistics
    assert statistics.snapshot_id == snapshot.snapshot_id
    ids = {field.name: field.field_id for field in after.schema().fields}
    blobs = {blob.fields[0]: blob for blob in statistics.blob_metadata}
    assert set(blobs) == set(ids.values())
    read = puffin.read(statistics.statistics_path)
    assert len(read.content) == statistics.file_size_in_bytes
    for column in columns:
        blob = blobs[ids[column]]
        assert blob.type == "apache-datasketches-theta-v1"
        assert blob.snapshot_id == snapshot.snapshot_id
        [stored] = [b for b in read.blobs if b.fields == blob.fields]
        sketch = datasketches.compact_theta_sketch.deserialize(read.data(stored))
        distinct = len(pc.unique(data.column(column).drop_null()))
        assert abs(sketch.get_estimate() - distinct) <= THETA_ERROR * distinct + 1, column
        assert int((blob.properties or {})["ndv"]) == round(sketch.get_estimate())

    # HMS says which snapshot the statistics describe; the data is all still there.
    uri = f"thrift://127.0.0.1:{server.port}"
    client, transport = connect(server.port)
    try:
        hive = client.get_table(db, table_name)
    finally:
        transport.close()
    params = hive.parameters
    assert params[iceberg_params.STATISTICS_SNAPSHOT] == str(snapshot.snapshot_id)
    assert params["numRows"] == str(data.num_rows)
    assert params["metadata_location"] == after.metadata_location
    assert _data(after).num_rows == data.num_rows

    described = subprocess.run(
        [sys.executable, "-m", "metastore.cli", "describe", name, "--uri", uri],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert f"statistics of snapshot {snapshot.snapshot_id} (metastore analyze;" in described[3]
    assert "column statistics (engine hive):" in described

    # Engines read it: pyiceberg's own Puffin reader, and DuckDB's iceberg extension.
    with open(statistics.statistics_path.removeprefix("file:"), "rb") as f:
        assert len(PyicebergPuffin(f.read()).footer.blobs) == len(columns)
    counts = "SELECT count(*), count(label), count(score) FROM iceberg_scan('{}')"
    scanned = _duckdb().sql(counts.format(after.metadata_location))
    assert scanned.fetchall() == [
        (data.num_rows, *(data.num_rows - data.column(c).null_count for c in ("label", "score")))
    ]


def _duckdb() -> duckdb.DuckDBPyConnection:
    """DuckDB with its avro and iceberg extensions from PyPI (the test extra's wheels)."""
    import duckdb_extension_avro  # type: ignore[import-untyped]
    import duckdb_extension_iceberg  # type: ignore[import-untyped]

    con = duckdb.connect(
        config={"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false"}
    )
    for package, name in ((duckdb_extension_avro, "avro"), (duckdb_extension_iceberg, "iceberg")):
        [path] = Path(package.__file__).parent.glob(f"extensions/*/{name}.duckdb_extension")
        con.execute(f"LOAD '{path}'")
    return con


def test_a_commit_made_meanwhile_is_kept(
    server: RunningServer, events: tuple[HiveCatalog, str], tmp_path: Path
) -> None:
    """The statistics commit after another writer's append: the append stays, the
    statistics are registered for the snapshot that was read."""
    catalog, name = events
    db, table_name = name.split(".")
    stored = _hive_table(server, db, table_name)
    source, run = iceberg.describe(stored)
    assert source.spec.field_ids and len(source.listing.files[""]) >= 4
    catalog.load_table(name).append(_rows(9000, 9010, renamed=True, score=True))
    statistics = _empty_statistics(run, tmp_path)
    connection = Connection.of(f"thrift://127.0.0.1:{server.port}")
    with MetastoreClient(connection) as client:
        iceberg.commit_statistics(client, run, statistics, {})
    table = catalog.load_table(name)
    assert _data(table).num_rows >= 7010
    assert any(
        s.snapshot_id == run.snapshot_id and s.statistics_path == statistics.statistics_path
        for s in table.metadata.statistics
    )
    current = table.current_snapshot()
    assert current is not None and current.snapshot_id != run.snapshot_id


def _hive_table(server: RunningServer, db: str, name: str) -> t.Table:
    client, transport = connect(server.port)
    try:
        table: t.Table = client.get_table(db, name)
        return table
    finally:
        transport.close()


def _empty_statistics(run: iceberg.IcebergRun, folder: Path) -> Any:
    from pyiceberg.table.statistics import StatisticsFile

    path = folder / "empty.stats"
    written = puffin.write(str(path), [])
    return StatisticsFile.model_validate(written.statistics_file(run.snapshot_id))


def test_incremental_adds_the_new_files_to_the_stored_sketches(
    spark: SparkSession,
    server: RunningServer,
    events: tuple[HiveCatalog, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    catalog, name = events
    run_job(spark, server, name)
    again = run_job_result(spark, server, name, "--incremental")
    assert again.partitions == 0 and again.table_stats == {}  # nothing new: nothing written
    catalog.load_table(name).append(_rows(20_000, 21_000, renamed=True, score=True))
    with caplog.at_level(logging.INFO, logger="metastore.job"):
        stats = run_job(spark, server, name, "--incremental")
    assert any("data file(s) added since snapshot" in m for m in caplog.messages)
    table = catalog.load_table(name)
    data = _data(table)
    for column in ("id", "n", "label", "score"):
        values = data.column(column)
        found = union_member(stats[column].statsData)
        assert found.numNulls == values.null_count, column
        if column in ("id", "n", "score"):
            assert found.highValue == pc.max(values).as_py(), column
        distinct = len(pc.unique(values.drop_null()))
        ndv = found.numDVs - (1 if values.null_count else 0)
        assert abs(ndv - distinct) <= max(2, THETA_ERROR * distinct), column
    params = _hive_table(server, *name.split(".")).parameters
    assert params["numRows"] == str(data.num_rows)
    current = table.current_snapshot()
    assert current is not None
    [statistics] = [s for s in table.metadata.statistics if s.snapshot_id == current.snapshot_id]
    read = puffin.read(statistics.statistics_path)
    ids = {field.name: field.field_id for field in table.schema().fields}
    for column in ("id", "label"):
        [blob] = [b for b in read.blobs if b.fields == [ids[column]]]
        sketch = datasketches.compact_theta_sketch.deserialize(read.data(blob))
        distinct = len(pc.unique(data.column(column).drop_null()))
        assert abs(sketch.get_estimate() - distinct) <= THETA_ERROR * distinct + 1, column
