"""The statistics job's options and reruns (metastore.job) on local Spark, against a real
server: partitions named or skipped, engines, columns, incremental runs, sources, spark-submit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from analyze_data import (
    COLUMNS,
    SMALL,
    Col,
    expect,
    expect_all,
    generate,
    write_partition,
)
from conftest import RunningServer
from job_checks import (
    COL,
    KEY,
    assert_identical,
    assert_same_stats,
    check_objs,
    names_of,
    new_db,
    partition_stats,
    run_job,
    run_job_result,
    stored_rows,
    table_stats,
    union_member,
    write_parts,
)
from pyspark.sql import SparkSession

from metastore.job import __main__ as job_main
from metastore.job.analyze import SESSION_SETTINGS

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]

# ------------------------------------------------------------------------------------------
# Options and re-runs


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

    # Nothing new: nothing is scanned nor written, and the statistics stay as they are.
    again = run_job_result(spark, server, f"{db}.inc", "--path", str(path), "--incremental")
    assert (again.partitions, again.kept, again.table_stats) == (0, 3, {})
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


def test_python_workers_get_the_allocator_settings_of_the_session(spark: SparkSession) -> None:
    """SESSION_SETTINGS, which the job's own session sets (and this test session too), reach
    the environment of the Python workers, where glibc reads them when a worker starts."""
    names = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    found = (
        spark.sparkContext.parallelize(range(2), 2)
        .map(lambda _: [os.environ.get(name) for name in names])
        .collect()
    )
    expected = [SESSION_SETTINGS[f"spark.executorEnv.{name}"] for name in names]
    assert expected == [str(32 << 20), str(128 << 20)]
    assert found == [expected, expected]
