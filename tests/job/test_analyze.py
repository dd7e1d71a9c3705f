"""The Spark statistics job (metastore.job) on local Spark, against a real server.

Every test writes Hive-style partition folders of generated data, computes the exact answers
in plain Python (tests/analyze_data.py), runs the job in-process and reads back what the server
stored. Every statistic must be exact, except NDV: the HyperLogLog estimate of the distinct
non-null values must be within 3 * 1.04 / sqrt(1024) of the truth (plus one for NULL).
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
import sqlalchemy as sa
from analyze_data import (
    COLUMNS,
    COMPLEX_COLUMNS,
    STAT_COLUMNS,
    Col,
    Expected,
    expect,
    expect_all,
    generate,
    write_partition,
)
from conftest import RunningServer

from hive_metastore_thrift import ttypes as t
from metastore import models as m
from metastore.sketches import HyperLogLog

if importlib.util.find_spec("pyspark") is None:
    if os.environ.get("CI") == "true":
        pytest.fail("pyspark is required when CI=true", pytrace=False)
    pytest.skip("pyspark is not installed", allow_module_level=True)

from datasketches import kll_floats_sketch
from pyspark.sql import SparkSession

from metastore.cli import analyze as analyze_command
from metastore.job import __main__ as job_main
from metastore.job import analyze
from metastore.job.errors import JobError
from metastore.job.options import parse_partition_spec

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]

COL = {c.name: c for c in COLUMNS}
HLL_BOUND = 3 * 1.04 / math.sqrt(1024)
KEY = "ds"
# Partition values and the names HMS must give them (written out, not computed).
MAIN_PARTS: dict[str | None, tuple[str, int]] = {
    "2024-01-01": ("ds=2024-01-01", 1200),
    "a b/c=d e": ("ds=a b%2Fc%3Dd e", 800),
    "50%: it's": ("ds=50%25%3A it%27s", 500),
    None: ("ds=__HIVE_DEFAULT_PARTITION__", 300),
}
MEMBERS = {
    "boolean": "booleanStats",
    "long": "longStats",
    "double": "doubleStats",
    "decimal": "decimalStats",
    "string": "stringStats",
    "binary": "binaryStats",
    "date": "dateStats",
    "timestamp": "timestampStats",
}


# ------------------------------------------------------------------------------------------
# Fixtures and helpers


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """A small local session. Arrow batches of 256 rows and two files per partition make every
    partition's statistics a merge of several partial states from several tasks; a session
    time zone other than UTC must not change timestamps."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    warehouse = tmp_path_factory.mktemp("warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("colstats tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.sql.session.timeZone", "America/Los_Angeles")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "256")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def run_job(
    spark: SparkSession, server: RunningServer, table: str, *options: str
) -> dict[str, t.ColumnStatisticsObj]:
    """metastore analyze TABLE --uri ... OPTIONS, in this process."""
    parser = argparse.ArgumentParser()
    analyze_command.add_arguments(parser)
    args = parser.parse_args([table, "--uri", f"thrift://127.0.0.1:{server.port}", *options])
    return analyze.run(spark, analyze_command.options(args)).table_stats


def new_db() -> str:
    return f"an_{uuid.uuid4().hex[:10]}"


def write_parts(
    base: Path, parts: dict[str | None, int], columns: Sequence[Col] = COLUMNS, seed: int = 0
) -> dict[str | None, dict[str, list[Any]]]:
    """Generate and write ROWS rows for every partition value; returns the data by value."""
    out = {}
    for n, (value, rows) in enumerate(parts.items()):
        out[value] = generate(columns, rows, seed * 1000 + n)
        write_partition(base, KEY, value, columns, out[value])
    return out


def names_of(data: dict[str | None, Any], names: dict[str | None, str]) -> dict[str, Any]:
    return {names[value]: d for value, d in data.items()}


def as_decimal(value: t.Decimal | None) -> Decimal | None:
    if value is None:
        return None
    # From text: Decimal arithmetic would round to 28 digits.
    return Decimal(f"{int.from_bytes(value.unscaled, 'big', signed=True)}E-{value.scale}")


def stats_of(obj: t.ColumnStatisticsObj, kind: str) -> Any:
    """The one member of the statistics union, which must be the one for KIND."""
    data = obj.statsData
    set_members = [k for k, v in vars(data).items() if v is not None]
    assert set_members == [MEMBERS[kind]], f"{obj.colName}: {set_members}"
    return getattr(data, MEMBERS[kind])


def _seconds_of(kind: str, value: Any) -> float:
    """A low or high value as the histogram holds it: dates as epoch seconds."""
    if kind == "date":
        return value * 86_400
    return float(value)


def check_histogram(blob: bytes | None, exp: Expected, where: str) -> None:
    """A KLL sketch (read with DataSketches itself) of every non-null, non-NaN value."""
    if exp.finite == 0:
        assert blob is None, where
        return
    assert blob is not None, where
    sketch = kll_floats_sketch.deserialize(blob)
    assert sketch.n == exp.finite, where
    with np.errstate(over="ignore"):
        low, high = (np.float32(_seconds_of(exp.kind, v)) for v in (exp.low, exp.high))
    assert (sketch.get_min_value(), sketch.get_max_value()) == (low, high), where


def check_ndv(num_dvs: int, bit_vectors: bytes | None, exp: Expected, where: str) -> None:
    """numDVs is the estimate of the distinct non-null values, capped at their count, plus
    one when there are NULLs; the bit vector is the sketch it came from."""
    estimate = num_dvs - (1 if exp.nulls else 0)
    assert 0 <= estimate <= exp.non_null, (where, num_dvs, exp)
    assert abs(estimate - exp.distinct) <= HLL_BOUND * exp.distinct, (where, num_dvs, exp)
    assert bit_vectors is not None, where
    assert min(HyperLogLog.from_bytes(bit_vectors).estimate(), exp.non_null) == estimate, where


def check_obj(obj: t.ColumnStatisticsObj, column: Col, exp: Expected, where: str) -> None:
    """Every field of OBJ against the independently computed EXP."""
    where = f"{where}, column {column.name}"
    assert (obj.colName, obj.colType) == (column.name, column.hive_type), where
    s = stats_of(obj, exp.kind)
    assert s.numNulls == exp.nulls, where
    if exp.kind == "boolean":
        assert (s.numTrues, s.numFalses) == (exp.trues, exp.falses), where
        assert s.bitVectors is None, where
        return
    if exp.kind in ("string", "binary"):
        assert s.maxColLen == exp.max_len, where
        assert s.avgColLen == pytest.approx(exp.avg_len, rel=1e-12), where
        if exp.kind == "string":
            check_ndv(s.numDVs, s.bitVectors, exp, where)
        else:
            assert s.bitVectors is None, where
        return
    low, high = s.lowValue, s.highValue
    if exp.kind == "decimal":
        low, high = as_decimal(low), as_decimal(high)
    elif exp.kind == "date":
        low, high = (v.daysSinceEpoch if v else None for v in (low, high))
    elif exp.kind == "timestamp":
        low, high = (v.secondsSinceEpoch if v else None for v in (low, high))
    assert (low, high) == (exp.low, exp.high), where
    check_ndv(s.numDVs, s.bitVectors, exp, where)
    check_histogram(s.histogram, exp, where)


def check_objs(
    objs: Sequence[t.ColumnStatisticsObj],
    expected: dict[str, Expected],
    columns: Sequence[Col],
    where: str,
) -> None:
    by_name = {o.colName: o for o in objs}
    wanted = [c for c in columns if c.kind]
    assert sorted(by_name) == sorted(c.name for c in wanted), where
    for column in wanted:
        check_obj(by_name[column.name], column, expected[column.name], where)


def table_stats(
    client: Any, db: str, table: str, columns: Sequence[Col], engine: str = "hive"
) -> list[t.ColumnStatisticsObj]:
    return client.get_table_statistics_req(
        t.TableStatsRequest(
            dbName=db, tblName=table, colNames=[c.name for c in columns], engine=engine
        )
    ).tableStats


def partition_stats(
    client: Any,
    db: str,
    table: str,
    columns: Sequence[Col],
    parts: Sequence[str] | None = None,
    engine: str = "hive",
) -> dict[str, list[t.ColumnStatisticsObj]]:
    parts = client.get_partition_names(db, table, -1) if parts is None else parts
    return client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(
            dbName=db,
            tblName=table,
            colNames=[c.name for c in columns],
            partNames=list(parts),
            engine=engine,
        )
    ).partStats


def paired_fields(
    got: Sequence[t.ColumnStatisticsObj], want: Sequence[t.ColumnStatisticsObj], where: str
) -> Iterator[tuple[str, str, Any, Any]]:
    """(column, field, got value, wanted value) of two lists of the same columns, after
    checking that they hold the same columns, types and kinds of statistics."""
    got_by, want_by = {o.colName: o for o in got}, {o.colName: o for o in want}
    assert sorted(got_by) == sorted(want_by), where
    for name, w in want_by.items():
        g = got_by[name]
        assert g.colType == w.colType, (where, name)
        gs, ws = union_member(g), union_member(w)
        assert type(gs) is type(ws), (where, name)
        for field, value in vars(ws).items():
            yield name, field, getattr(gs, field), value


def assert_identical(
    got: Sequence[t.ColumnStatisticsObj], want: Sequence[t.ColumnStatisticsObj], where: str
) -> None:
    """Every field equal, bit vectors included; KLL histograms, whose compaction is random,
    hold the same number of values and the same extremes."""
    for name, field, other, value in paired_fields(got, want, where):
        if field == "histogram" and value is not None and other is not None:
            a, b = kll_floats_sketch.deserialize(other), kll_floats_sketch.deserialize(value)
            assert (a.n, a.get_min_value(), a.get_max_value()) == (
                b.n,
                b.get_min_value(),
                b.get_max_value(),
            ), (where, name, field)
        else:
            assert other == value, (where, name, field)


def assert_same_stats(
    got: Sequence[t.ColumnStatisticsObj], want: Sequence[t.ColumnStatisticsObj], where: str
) -> None:
    """Equal field by field, except NDV (within the bound of each other, as two sketches of
    the same values may be merged in another order or representation) and avgColLen."""
    for name, field, other, value in paired_fields(got, want, where):
        if field in ("bitVectors", "histogram"):
            continue
        if field == "numDVs":
            assert abs(other - value) <= HLL_BOUND * value, (where, name, other, value)
        elif field == "avgColLen":
            assert other == pytest.approx(value, rel=1e-9), (where, name)
        else:
            assert other == value, (where, name, field)


def union_member(obj: t.ColumnStatisticsObj) -> Any:
    (value,) = [v for v in vars(obj.statsData).values() if v is not None]
    return value


def stored_rows(server: RunningServer, db: str) -> dict[str, int]:
    """How many rows of PARTITIONS, TAB_COL_STATS and PART_COL_STATS belong to DB."""
    tables = (
        sa.select(m.Table.TBL_ID)
        .join(m.Database, m.Database.DB_ID == m.Table.DB_ID)
        .where(m.Database.NAME == db)
    )
    parts = sa.select(m.Partition.PART_ID).where(m.Partition.TBL_ID.in_(tables))
    queries = {
        "PARTITIONS": sa.select(sa.func.count())
        .select_from(m.Partition)
        .where(m.Partition.TBL_ID.in_(tables)),
        "TAB_COL_STATS": sa.select(sa.func.count())
        .select_from(m.TableColumnStats)
        .where(m.TableColumnStats.TBL_ID.in_(tables)),
        "PART_COL_STATS": sa.select(sa.func.count())
        .select_from(m.PartitionColumnStats)
        .where(m.PartitionColumnStats.PART_ID.in_(parts)),
    }
    with server.engine.connect() as conn:
        return {name: conn.execute(query).scalar_one() for name, query in queries.items()}


# ------------------------------------------------------------------------------------------
# One full run over every type, shared by the first tests of each backend


@dataclass
class FullRun:
    db: str
    table: str
    path: Path
    by_part: dict[str, dict[str, Expected]]
    whole: dict[str, Expected]
    result: dict[str, t.ColumnStatisticsObj]


@pytest.fixture(scope="module")
def full_run(
    spark: SparkSession, server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> FullRun:
    path = tmp_path_factory.mktemp("full") / "events"
    data = write_parts(path, {value: rows for value, (_, rows) in MAIN_PARTS.items()})
    by_part, whole = expect_all(
        COLUMNS, names_of(data, {v: name for v, (name, _) in MAIN_PARTS.items()})
    )
    db = new_db()
    # Batches of 3: the four partitions are registered and written in two calls each.
    result = run_job(spark, server, f"{db}.Events", "--path", str(path), "--batch-size", "3")
    return FullRun(db, "events", path, by_part, whole, result)


def test_every_type_is_exact_in_every_partition(client: Any, full_run: FullRun) -> None:
    got = partition_stats(client, full_run.db, full_run.table, COLUMNS)
    assert sorted(got) == sorted(full_run.by_part)
    for part, objs in got.items():
        check_objs(objs, full_run.by_part[part], COLUMNS, f"partition {part}")
    # The single-partition call reads the same.
    one = client.get_partition_column_statistics(
        full_run.db, full_run.table, "ds=a b%2Fc%3Dd e", "dec38"
    )
    assert one.statsDesc.partName == "ds=a b%2Fc%3Dd e"
    assert one.engine == "hive"
    check_obj(one.statsObj[0], COL["dec38"], full_run.by_part["ds=a b%2Fc%3Dd e"]["dec38"], "one")


def test_every_type_is_exact_at_the_table_level(client: Any, full_run: FullRun) -> None:
    stored = table_stats(client, full_run.db, full_run.table, COLUMNS)
    check_objs(stored, full_run.whole, COLUMNS, "table")
    check_objs(list(full_run.result.values()), full_run.whole, COLUMNS, "returned")
    assert_same_stats(list(full_run.result.values()), stored, "returned vs stored")
    legacy = client.get_table_column_statistics(full_run.db, full_run.table, "ts")
    assert legacy.statsDesc.isTblLevel is True
    check_obj(legacy.statsObj[0], COL["ts"], full_run.whole["ts"], "legacy read")


def test_table_level_equals_the_merge_of_the_partitions(client: Any, full_run: FullRun) -> None:
    """The stored table level against the metastore's merge of the stored partitions, and its
    NDV against the union of the partitions' bit vectors (capped, plus one for NULL)."""
    parts = client.get_partition_names(full_run.db, full_run.table, -1)
    aggr = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(
            dbName=full_run.db,
            tblName=full_run.table,
            colNames=[c.name for c in STAT_COLUMNS],
            partNames=parts,
        )
    )
    assert aggr.partsFound == len(MAIN_PARTS)
    merged = {o.colName: union_member(o) for o in aggr.colStats}
    stored = {
        o.colName: union_member(o)
        for o in table_stats(client, full_run.db, full_run.table, COLUMNS)
    }
    by_part = partition_stats(client, full_run.db, full_run.table, STAT_COLUMNS, parts)
    assert sorted(merged) == sorted(stored) == sorted(c.name for c in STAT_COLUMNS)
    for name, table_level in stored.items():
        for field, value in vars(merged[name]).items():
            if field in ("numDVs", "bitVectors", "histogram"):
                continue
            if field == "avgColLen":
                assert getattr(table_level, field) == pytest.approx(value, rel=1e-12), name
            else:
                assert getattr(table_level, field) == value, (name, field)
        partitions = [
            union_member(o) for objs in by_part.values() for o in objs if o.colName == name
        ]
        if getattr(table_level, "numDVs", None) is not None:
            union = HyperLogLog()
            for p in partitions:
                union.merge(HyperLogLog.from_bytes(p.bitVectors))
            non_null = full_run.whole[name].non_null
            nulls = 1 if table_level.numNulls else 0
            assert table_level.numDVs == min(union.estimate(), non_null) + nulls, name
            assert HyperLogLog.from_bytes(table_level.bitVectors).estimate() == union.estimate()
        if getattr(table_level, "histogram", None) is not None:
            assert kll_floats_sketch.deserialize(table_level.histogram).n == sum(
                kll_floats_sketch.deserialize(p.histogram).n for p in partitions if p.histogram
            )


def test_missing_database_table_and_partitions_are_registered(
    client: Any, full_run: FullRun
) -> None:
    assert client.get_database(full_run.db).name == full_run.db
    table = client.get_table(full_run.db, full_run.table)
    assert table.tableName == "events"  # DB.Events: names are lower-cased
    assert table.tableType == "EXTERNAL_TABLE"
    assert [(c.name, c.type) for c in table.sd.cols] == [(c.name, c.hive_type) for c in COLUMNS]
    assert [(k.name, k.type) for k in table.partitionKeys] == [(KEY, "string")]
    assert table.sd.location.rstrip("/").endswith(str(full_run.path))
    names = client.get_partition_names(full_run.db, full_run.table, -1)
    assert sorted(names) == sorted(name for name, _ in MAIN_PARTS.values())
    for value, (name, rows) in MAIN_PARTS.items():
        shown = "__HIVE_DEFAULT_PARTITION__" if value is None else value
        part = client.get_partition(full_run.db, full_run.table, [shown])
        assert part.values == [shown]
        assert part.parameters["numRows"] == str(rows), name
        assert client.get_partition_by_name(full_run.db, full_run.table, name).values == [shown]


def test_arrays_maps_and_structs_get_no_statistics(client: Any, full_run: FullRun) -> None:
    assert [c.name for c in COMPLEX_COLUMNS] == ["arr", "m", "st"]
    assert sorted(full_run.result) == sorted(c.name for c in STAT_COLUMNS)
    assert table_stats(client, full_run.db, full_run.table, COMPLEX_COLUMNS) == []
    assert partition_stats(client, full_run.db, full_run.table, COMPLEX_COLUMNS) == {}


# ------------------------------------------------------------------------------------------
# Options and re-runs

SMALL = [c for c in COLUMNS if c.name in ("b", "i", "d", "dec38", "s", "bin", "dt", "ts")]


def test_rerun_is_idempotent(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    data = write_parts(path, {"x": 400, "a/b": 300}, SMALL, seed=1)
    names = {"x": "ds=x", "a/b": "ds=a%2Fb"}
    db = new_db()
    first = run_job(spark, server, f"{db}.t", "--path", str(path))
    rows = stored_rows(server, db)
    assert rows == {"PARTITIONS": 2, "TAB_COL_STATS": 8, "PART_COL_STATS": 16}
    parts = partition_stats(client, db, "t", SMALL)
    table = table_stats(client, db, "t", SMALL)

    second = run_job(spark, server, f"{db}.t", "--path", str(path))
    assert stored_rows(server, db) == rows
    assert sorted(client.get_partition_names(db, "t", -1)) == sorted(names.values())
    assert_same_stats(list(second.values()), list(first.values()), "returned")
    again = partition_stats(client, db, "t", SMALL)
    for part in parts:
        assert_identical(again[part], parts[part], part)
    assert_identical(table_stats(client, db, "t", SMALL), table, "table")
    by_part, whole = expect_all(SMALL, names_of(data, names))
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table after re-run")
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)


def write_unpartitioned(base: Path, data: dict[str, list[Any]], columns: Sequence[Col]) -> None:
    """DATA as two parquet files directly in BASE (no partition folders)."""
    folder = write_partition(base, KEY, "only", columns, data)
    for file in folder.glob("*.parquet"):
        file.rename(base / file.name)
    folder.rmdir()


@pytest.mark.parametrize("rows", [700, 0], ids=["rows", "empty"])
def test_unpartitioned_table_gets_table_statistics_and_num_rows(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path, rows: int
) -> None:
    """Without partitions the table level is all there is; numRows goes into the table's
    parameters, where planners take the row count from."""
    path = tmp_path / "t"
    path.mkdir()
    data = generate(SMALL, rows, seed=11)
    write_unpartitioned(path, data, SMALL)
    db = new_db()
    result = run_job(spark, server, f"{db}.t", "--path", str(path))
    table = client.get_table(db, "t")
    assert table.partitionKeys == []
    assert table.parameters["numRows"] == str(rows)
    assert client.get_partition_names(db, "t", -1) == []
    whole = {c.name: expect(c.kind, data[c.name]) for c in SMALL}
    if rows:
        check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")
        check_objs(list(result.values()), whole, SMALL, "returned")
    else:
        for obj in table_stats(client, db, "t", SMALL):
            assert union_member(obj).numNulls == 0, obj.colName
    accurate = table.parameters["COLUMN_STATS_ACCURATE"]
    assert all(f'"{c.name}"' in accurate for c in SMALL)


def test_rerun_on_changed_data_updates_num_rows(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    write_parts(path, {"x": 300, "y": 100}, SMALL, seed=12)
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path))
    data = write_parts(path, {"x": 150}, SMALL, seed=13)  # x rewritten with fewer rows
    run_job(spark, server, f"{db}.t", "--path", str(path), "--partition", "ds=x")
    counts = {p.values[0]: p.parameters["numRows"] for p in client.get_partitions(db, "t", -1)}
    assert counts == {"x": "150", "y": "100"}
    by_part, _ = expect_all(SMALL, names_of(data, {"x": "ds=x"}))
    check_objs(partition_stats(client, db, "t", SMALL)["ds=x"], by_part["ds=x"], SMALL, "ds=x")


def test_other_engine_is_written_apart(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    data = write_parts(path, {"p1": 300, "p2": 200}, SMALL, seed=2)
    by_part, whole = expect_all(SMALL, names_of(data, {"p1": "ds=p1", "p2": "ds=p2"}))
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path), "--engine", "spark")
    check_objs(table_stats(client, db, "t", SMALL, engine="spark"), whole, SMALL, "spark")
    spark_parts = partition_stats(client, db, "t", SMALL, engine="spark")
    assert sorted(spark_parts) == ["ds=p1", "ds=p2"]
    for part, objs in spark_parts.items():
        check_objs(objs, by_part[part], SMALL, part)
    assert table_stats(client, db, "t", SMALL) == []
    assert partition_stats(client, db, "t", SMALL) == {}
    assert stored_rows(server, db) == {"PARTITIONS": 2, "TAB_COL_STATS": 8, "PART_COL_STATS": 16}


def test_columns_option_analyzes_only_the_named_columns(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    columns = [*SMALL, COL["st"]]
    data = write_parts(path, {"p": 300}, columns, seed=9)
    db = new_db()
    # Names are case-insensitive; a struct among them is skipped, not an error.
    result = run_job(spark, server, f"{db}.t", "--path", str(path), "--columns", "S, dt,st,I")
    named = [COL["s"], COL["dt"], COL["i"]]
    assert sorted(result) == ["dt", "i", "s"]
    # The table is registered with every column all the same.
    assert [c.name for c in client.get_table(db, "t").sd.cols] == [c.name for c in columns]
    exp = {c.name: expect(c.kind, data["p"][c.name]) for c in named}
    check_objs(table_stats(client, db, "t", columns), exp, named, "table")
    check_objs(partition_stats(client, db, "t", columns)["ds=p"], exp, named, "ds=p")


def test_partition_option_scans_and_registers_only_the_named_partition(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    data = write_parts(path, {"2024-01-01": 400, "2024-01-02": 300, "2024-01-03": 200}, SMALL, 3)
    db = new_db()
    result = run_job(spark, server, f"{db}.t", "--path", str(path), "--partition", "ds=2024-01-02")
    assert client.get_partition_names(db, "t", -1) == ["ds=2024-01-02"]
    exp = {c.name: expect(c.kind, data["2024-01-02"][c.name]) for c in SMALL}
    (objs,) = partition_stats(client, db, "t", SMALL).values()
    check_objs(objs, exp, SMALL, "ds=2024-01-02")
    # The metastore holds one partition: the table level is its statistics.
    check_objs(table_stats(client, db, "t", SMALL), exp, SMALL, "table")
    check_objs(list(result.values()), exp, SMALL, "returned")


def test_partition_option_takes_partition_names_with_escapes(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    """--partition with a partition name as the metastore shows it (and as its folder is
    named): 'ds=a b%2Fc%3Dd e' is the partition whose value is 'a b/c=d e'."""
    path = tmp_path / "t"
    values = {"plain": "ds=plain", "a b/c=d e": "ds=a b%2Fc%3Dd e", "x=1": "ds=x%3D1"}
    data = write_parts(path, dict.fromkeys(values, 200), SMALL, seed=4)
    by_part, whole = expect_all(SMALL, names_of(data, values))
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path))
    for name in values.values():
        run_job(spark, server, f"{db}.t", "--path", str(path), "--partition", name)
    assert sorted(client.get_partition_names(db, "t", -1)) == sorted(values.values())
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")


def test_named_empty_partition_gets_empty_statistics(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    data = write_parts(path, {"full": 500, "half": 250, "empty": 0}, SMALL, seed=5)
    assert list((path / "ds=empty").glob("*.parquet"))  # a folder with a file of no rows
    names = {"full": "ds=full", "half": "ds=half", "empty": "ds=empty"}
    by_part, whole = expect_all(SMALL, names_of(data, names))
    db = new_db()
    # Spark sees no row of the empty partition: a full run registers only the others.
    result = run_job(spark, server, f"{db}.t", "--path", str(path))
    assert sorted(client.get_partition_names(db, "t", -1)) == ["ds=full", "ds=half"]
    check_objs(list(result.values()), whole, SMALL, "returned")

    # Named, it is registered with no rows and statistics of nothing.
    result = run_job(spark, server, f"{db}.t", "--path", str(path), "--partition", "ds=empty")
    assert sorted(client.get_partition_names(db, "t", -1)) == ["ds=empty", "ds=full", "ds=half"]
    assert client.get_partition(db, "t", ["empty"]).parameters["numRows"] == "0"
    empty = partition_stats(client, db, "t", SMALL, ["ds=empty"])["ds=empty"]
    check_objs(empty, by_part["ds=empty"], SMALL, "ds=empty")
    for obj in empty:
        s = union_member(obj)
        assert s.numNulls == 0
        assert getattr(s, "numDVs", 0) == 0
        assert getattr(s, "lowValue", None) is None and getattr(s, "highValue", None) is None
    # The table level, now the metastore's merge of the three, is unchanged.
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")
    check_objs(list(result.values()), whole, SMALL, "returned after --partition")


def test_partition_emptied_since_the_last_run_loses_its_old_values(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    """Writes keep the stored value of an unset field (as HMS does); the job must not leave
    the low and high values of rows that are gone."""
    path = tmp_path / "t"
    write_parts(path, {"x": 300, "y": 200}, SMALL, seed=14)
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path))
    data = write_parts(path, {"x": 0}, SMALL, seed=15)
    run_job(spark, server, f"{db}.t", "--path", str(path), "--partition", "ds=x")
    assert client.get_partition(db, "t", ["x"]).parameters["numRows"] == "0"
    by_part, _ = expect_all(SMALL, names_of(data, {"x": "ds=x"}))
    emptied = partition_stats(client, db, "t", SMALL, ["ds=x"])["ds=x"]
    check_objs(emptied, by_part["ds=x"], SMALL, "ds=x")
    for obj in emptied:
        s = union_member(obj)
        assert getattr(s, "lowValue", None) is None and getattr(s, "highValue", None) is None
        assert getattr(s, "histogram", None) is None


def test_default_partition_can_be_named(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    """Spark reads the __HIVE_DEFAULT_PARTITION__ folder as NULL keys; naming it must select
    those rows, not an empty partition."""
    path = tmp_path / "t"
    data = write_parts(path, {"a": 100, None: 150}, SMALL, seed=16)
    default = "ds=__HIVE_DEFAULT_PARTITION__"
    by_part, _ = expect_all(SMALL, names_of(data, {"a": "ds=a", None: default}))
    db = new_db()
    for spec in (default, "ds="):
        run_job(spark, server, f"{db}.t", "--path", str(path), "--partition", spec)
        assert client.get_partition_names(db, "t", -1) == [default]
        assert client.get_partition_by_name(db, "t", default).parameters["numRows"] == "150"
        got = partition_stats(client, db, "t", SMALL, [default])[default]
        check_objs(got, by_part[default], SMALL, default)


def test_incremental_run_equals_a_full_run(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    parts = {"old": 500, "a b/c=d e": 400}
    data = write_parts(path, parts, COLUMNS, seed=6)
    names = {"old": "ds=old", "a b/c=d e": "ds=a b%2Fc%3Dd e", "new": "ds=new"}
    db = new_db()
    run_job(spark, server, f"{db}.inc", "--path", str(path))
    before = partition_stats(client, db, "inc", COLUMNS)

    data["new"] = generate(COLUMNS, 600, seed=7)
    write_partition(path, KEY, "new", COLUMNS, data["new"])
    full = run_job(spark, server, f"{db}.full", "--path", str(path))
    # Change the old partitions' files: an incremental run must not read them again.
    for n, value in enumerate(parts):
        write_partition(path, KEY, value, COLUMNS, generate(COLUMNS, 50, seed=100 + n))

    incremental = run_job(spark, server, f"{db}.inc", "--path", str(path), "--incremental")
    assert sorted(client.get_partition_names(db, "inc", -1)) == sorted(names.values())
    after = partition_stats(client, db, "inc", COLUMNS)
    for part in before:
        assert_identical(after[part], before[part], part)
    by_part, whole = expect_all(COLUMNS, names_of(data, names))
    check_objs(after["ds=new"], by_part["ds=new"], COLUMNS, "new partition")

    check_objs(list(incremental.values()), whole, COLUMNS, "incremental, returned")
    stored = table_stats(client, db, "inc", COLUMNS)
    check_objs(stored, whole, COLUMNS, "incremental, stored")
    assert_same_stats(stored, table_stats(client, db, "full", COLUMNS), "incremental vs full")
    assert_same_stats(list(incremental.values()), list(full.values()), "returned")

    # Nothing new: nothing is scanned and the statistics stay as they are.
    again = run_job(spark, server, f"{db}.inc", "--path", str(path), "--incremental")
    assert_identical(list(again.values()), list(incremental.values()), "no-op, returned")
    assert_identical(table_stats(client, db, "inc", COLUMNS), stored, "no-op, stored")


def test_spark_catalog_table_with_varchar_and_char(
    client: Any, spark: SparkSession, server: RunningServer
) -> None:
    """--spark-table: CHAR/VARCHAR keep their Hive types. CHAR values fill their width, so
    Spark's read-side padding does not change their lengths."""
    name = f"src_{uuid.uuid4().hex[:8]}"
    spark.sql(
        f"CREATE TABLE {name} (v VARCHAR(6), c CHAR(3), s STRING, n BIGINT, p STRING) "
        "USING parquet PARTITIONED BY (p)"
    )
    columns = [  # the values are made here, as rows for Spark
        Col("v", pa.string(), "varchar(6)", "string"),
        Col("c", pa.string(), "char(3)", "string"),
        Col("s", pa.string(), "string", "string"),
        Col("n", pa.int64(), "bigint", "long"),
    ]
    rows: dict[str, list[tuple[Any, ...]]] = {}
    alphabet = "ab é中😀"
    for k, value in enumerate(["x y", "a/b", "k=v"]):
        rows[value] = [
            (
                # VARCHAR keeps trailing spaces; CHAR values are never shorter than 3 and
                # never end with a space (which Hive would strip).
                None if i % 7 == 0 else "".join(alphabet[(i * j + k) % 6] for j in range(i % 7)),
                None
                if i % 5 == 0
                else "".join(alphabet[(i + j) % 6] for j in range(3)).replace(" ", "_"),
                None if i % 11 == 0 else f"{value}-{i % 50}😀" * (i % 3),
                None if i % 13 == 0 else (i * 7919) % 1000 - 500,
                value,
            )
            for i in range(300 + 100 * k)
        ]
    spark.createDataFrame(
        [r for part in rows.values() for r in part],
        "v string, c string, s string, n bigint, p string",
    ).write.insertInto(name)
    names = {"x y": "p=x y", "a/b": "p=a%2Fb", "k=v": "p=k%3Dv"}
    data = {
        names[value]: {c.name: [r[i] for r in part] for i, c in enumerate(columns)}
        for value, part in rows.items()
    }
    by_part, whole = expect_all(columns, data)
    db = new_db()
    try:
        result = run_job(spark, server, f"{db}.cat", "--spark-table", name)
    finally:
        spark.sql(f"DROP TABLE {name}")
    table = client.get_table(db, "cat")
    assert [(c.name, c.type) for c in table.sd.cols] == [(c.name, c.hive_type) for c in columns]
    assert [(k.name, k.type) for k in table.partitionKeys] == [("p", "string")]
    assert sorted(client.get_partition_names(db, "cat", -1)) == sorted(names.values())
    for part, objs in partition_stats(client, db, "cat", columns).items():
        check_objs(objs, by_part[part], columns, part)
    check_objs(table_stats(client, db, "cat", columns), whole, columns, "table")
    check_objs(list(result.values()), whole, columns, "returned")


def test_path_given_as_a_file_uri(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    """Spark paths are often URIs (file:, hdfs:, s3a:); the partition keys must still be
    found from the folders under it."""
    path = tmp_path / "t"
    data = write_parts(path, {"1": 100, "2": 100}, SMALL, seed=8)
    by_part, whole = expect_all(SMALL, names_of(data, {"1": "ds=1", "2": "ds=2"}))
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", path.as_uri())
    table = client.get_table(db, "t")
    assert [(k.name, k.type) for k in table.partitionKeys] == [(KEY, "string")]
    assert [c.name for c in table.sd.cols] == [c.name for c in SMALL]
    assert sorted(client.get_partition_names(db, "t", -1)) == ["ds=1", "ds=2"]
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")


def test_spark_submit_runs_the_job_file(client: Any, server: RunningServer, tmp_path: Path) -> None:
    """The job as a cluster runs it: spark-submit of the file that --path-of-script names,
    in a Spark of its own, with the command's options."""
    path = tmp_path / "t"
    data = write_parts(path, {"1": 150, "2": 50}, SMALL, seed=9)
    by_part, whole = expect_all(SMALL, names_of(data, {"1": "ds=1", "2": "ds=2"}))
    script = subprocess.run(
        [sys.executable, "-m", "metastore.job", "--path-of-script"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert script == job_main.__file__
    submit = Path(sys.executable).with_name("spark-submit")
    db = new_db()
    done = subprocess.run(
        [
            str(submit) if submit.exists() else "spark-submit",
            "--master",
            "local[2]",
            script,
            f"{db}.t",
            "--uri",
            f"thrift://127.0.0.1:{server.port}",
            "--path",
            str(path),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"statistics of {db}.t" in done.stdout
    assert sorted(client.get_partition_names(db, "t", -1)) == ["ds=1", "ds=2"]
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ds=2024-01-01", {"ds": "2024-01-01"}),
        ("DS=2024-01-01/hr=1", {"ds": "2024-01-01", "hr": "1"}),
        ("ds='2024-01-01',hr=1", {"ds": "2024-01-01", "hr": "1"}),
        ("ds=a b%2Fc%3Dd e", {"ds": "a b/c=d e"}),
        ("ds=a,b", {"ds": "a,b"}),
        ("ds=__HIVE_DEFAULT_PARTITION__", {"ds": "__HIVE_DEFAULT_PARTITION__"}),
    ],
)
def test_partition_specs_are_parsed_like_partition_names(
    spec: str, expected: dict[str, str]
) -> None:
    assert parse_partition_spec(spec) == expected


@pytest.mark.parametrize("spec", ["ds", "=1", " =1", "hr/ds=1"])
def test_bad_partition_specs_are_refused(spec: str) -> None:
    with pytest.raises(JobError, match="is not key=value"):
        parse_partition_spec(spec)
