"""The Spark statistics job (metastore.job) on local Spark, against a real server.

Every test writes Hive-style partition folders of generated data, computes the exact answers
in plain Python (tests/analyze_data.py), runs the job in-process and reads back what the server
stored. Every statistic must be exact, except NDV: the HyperLogLog estimate of the distinct
non-null values must be within 3 * 1.04 / sqrt(1024) of the truth (plus one for NULL).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from analyze_data import (
    COLUMNS,
    COMPLEX_COLUMNS,
    STAT_COLUMNS,
    Expected,
    expect_all,
)
from conftest import RunningServer
from datasketches import kll_floats_sketch
from job_checks import (
    COL,
    KEY,
    MAIN_PARTS,
    assert_same_stats,
    check_obj,
    check_objs,
    names_of,
    new_db,
    partition_stats,
    run_job,
    table_stats,
    union_member,
    write_parts,
)
from pyspark.sql import SparkSession

from hive_metastore_thrift import ttypes as t
from metastore.sketches import HyperLogLog

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]

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
