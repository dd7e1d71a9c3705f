"""The job's file sources on local Spark, against a real server: ORC, CSV and JSON under a
path; tables found through the metastore (`analyze DB.TABLE` without --path) in every format
it reads; basic statistics; errors for what it cannot read.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest
from analyze_data import DECIMAL_9_2, SMALL, Col, expect_all, folder_of, generate
from conftest import RunningServer
from job_checks import (
    COL,
    KEY,
    check_objs,
    names_of,
    new_db,
    partition_stats,
    run_job,
    run_job_result,
    table_stats,
    union_member,
    write_parts,
)
from pyspark.sql import SparkSession

from hive_metastore_thrift import ttypes as t
from metastore.job.analyze import summary_text
from metastore.job.errors import JobError
from metastore.stats import accurate

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]


def _text(rng: random.Random) -> str:
    """Text without delimiters or quotes; empty now and then (Hive reads it as '')."""
    return "".join(rng.choice("abc xyz é中😀") for _ in range(rng.randrange(0, 8)))


# Columns that text formats carry: no binary, whole-second timestamps written as text.
TEXT_COLUMNS = [
    Col("b", pa.bool_(), "boolean", "boolean", 0.1, lambda r: r.random() < 0.3),
    Col("i", pa.int32(), "int", "long", 0.05, lambda r: r.randrange(-500, 500)),
    Col("l", pa.int64(), "bigint", "long", 0.05, lambda r: r.randrange(-(10**15), 10**15)),
    Col("d", pa.float64(), "double", "double", 0.05, lambda r: r.randrange(-8000, 8000) / 8),
    DECIMAL_9_2,
    Col("s", pa.string(), "string", "string", 0.1, _text),
    Col(
        "dt",
        pa.date32(),
        "date",
        "date",
        0.05,
        lambda r: date(1970, 1, 1) + timedelta(days=r.randrange(-25567, 47482)),
    ),
]
JSON_COLUMNS = [c for c in TEXT_COLUMNS if c.name != "dec"]


def _hive_text(value: Any, null: str) -> str:
    if value is None:
        return null
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def write_text(
    folder: Path, columns: Sequence[Col], data: dict[str, list[Any]], sep: str, null: str
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = len(data[columns[0].name])
    lines = [sep.join(_hive_text(data[c.name][i], null) for c in columns) for i in range(rows)]
    (folder / "000000_0").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def write_json(folder: Path, columns: Sequence[Col], data: dict[str, list[Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = len(data[columns[0].name])
    with open(folder / "part-0.json", "w", encoding="utf-8") as out:
        for i in range(rows):
            row = {c.name: data[c.name][i] for c in columns}
            out.write(json.dumps(row, default=str, ensure_ascii=False) + "\n")


def register(
    client: Any,
    db: str,
    table: str,
    location: Path,
    columns: Sequence[Col],
    *,
    input_format: str,
    serde: str,
    serde_params: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
    partitions: dict[str, Path] | None = None,
) -> None:
    """DB.TABLE in the metastore as Hive would register it, with PARTITIONS (value: folder)."""
    try:
        client.get_database(db)
    except t.NoSuchObjectException:
        client.create_database(t.Database(name=db, parameters={}))

    def sd(where: Path) -> t.StorageDescriptor:
        return t.StorageDescriptor(
            cols=[t.FieldSchema(c.name, c.hive_type, None) for c in columns],
            location=f"file://{where}",  # as Hive writes it: not percent-encoded
            inputFormat=input_format,
            outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            serdeInfo=t.SerDeInfo(serializationLib=serde, parameters=serde_params or {}),
            bucketCols=[],
            sortCols=[],
            parameters={},
            numBuckets=-1,
        )

    client.create_table(
        t.Table(
            tableName=table,
            dbName=db,
            sd=sd(location),
            parameters={"EXTERNAL": "TRUE", **(params or {})},
            tableType="EXTERNAL_TABLE",
            partitionKeys=[t.FieldSchema(KEY, "string", None)] if partitions is not None else [],
        )
    )
    for value, folder in (partitions or {}).items():
        client.add_partition(
            t.Partition(values=[value], dbName=db, tableName=table, sd=sd(folder), parameters={})
        )


TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
LAZY = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


# ------------------------------------------------------------------------------------------
# Formats under --path


def test_orc_files_under_a_path(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    data = {
        v: generate(SMALL, rows, seed=n) for n, (v, rows) in enumerate({"x": 400, "y": 250}.items())
    }
    for value, values in data.items():
        folder = path / folder_of(KEY, value)
        folder.mkdir(parents=True)
        schema = pa.schema([pa.field(c.name, c.arrow) for c in SMALL])
        table = pa.table({c.name: pa.array(values[c.name], c.arrow) for c in SMALL}, schema=schema)
        orc.write_table(table, folder / "part-0.orc")
    by_part, whole = expect_all(SMALL, names_of(data, {"x": "ds=x", "y": "ds=y"}))
    db = new_db()
    result = run_job(spark, server, f"{db}.t", "--path", str(path), "--format", "orc")
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(list(result.values()), whole, SMALL, "table")


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_csv_and_json_files_under_a_path(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path, fmt: str
) -> None:
    """csv as Spark reads it with a schema: a header line (skipped), an empty field is NULL."""
    path = tmp_path / "t"
    columns = [c for c in JSON_COLUMNS if c.name != "s"] if fmt == "csv" else JSON_COLUMNS
    data = {
        v: generate(columns, rows, seed=20 + n)
        for n, (v, rows) in enumerate({"p": 300, "q": 200}.items())
    }
    for value, values in data.items():
        folder = path / folder_of(KEY, value)
        if fmt == "json":
            write_json(folder, columns, values)
        else:
            write_text(folder, columns, values, ",", "")
            text = (folder / "000000_0").read_text(encoding="utf-8")
            (folder / "000000_0").write_text(
                ",".join(c.name for c in columns) + "\n" + text, encoding="utf-8"
            )
    schema = ", ".join(f"{c.name} {c.hive_type}" for c in columns)
    by_part, whole = expect_all(columns, names_of(data, {"p": "ds=p", "q": "ds=q"}))
    db = new_db()
    result = run_job(
        spark, server, f"{db}.t", "--path", str(path), "--format", fmt, "--schema", schema
    )
    for part, objs in partition_stats(client, db, "t", columns).items():
        check_objs(objs, by_part[part], columns, part)
    check_objs(list(result.values()), whole, columns, "table")


# ------------------------------------------------------------------------------------------
# Basic statistics


def test_basic_statistics_of_every_partition_and_the_table(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    rows = {"x": 500, "y": 300, "z": 100}
    write_parts(path, rows, SMALL, seed=30)
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path))
    totals = dict.fromkeys(("numFiles", "totalSize", "rawDataSize", "numRows"), 0)
    for part in client.get_partitions(db, "t", -1):
        files = sorted((path / folder_of(KEY, part.values[0])).glob("*.parquet"))
        expected = {
            "numFiles": len(files),
            "totalSize": sum(f.stat().st_size for f in files),
            "rawDataSize": sum(
                pq.ParquetFile(f).metadata.row_group(g).total_byte_size
                for f in files
                for g in range(pq.ParquetFile(f).metadata.num_row_groups)
            ),
            "numRows": rows[part.values[0]],
        }
        assert {k: int(part.parameters[k]) for k in expected} == expected, part.values
        assert accurate.basic_accurate(part.parameters[accurate.KEY])
        assert accurate.accurate_columns(part.parameters[accurate.KEY]) == {c.name for c in SMALL}
        for key, value in expected.items():
            totals[key] += value
    table = client.get_table(db, "t")
    assert {k: int(table.parameters[k]) for k in totals} == totals
    assert accurate.basic_accurate(table.parameters[accurate.KEY])
    assert accurate.accurate_columns(table.parameters[accurate.KEY]) == {c.name for c in SMALL}


def test_basic_statistics_follow_changed_data_and_partial_runs(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    """A run over one partition sets its statistics and the table's sums of the stored
    partitions; columns not analyzed again lose their accurate flag when the data changed."""
    path = tmp_path / "t"
    write_parts(path, {"x": 400, "y": 200}, SMALL, seed=31)
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path))
    write_parts(path, {"x": 50}, SMALL, seed=32)
    run_job(spark, server, f"{db}.t", "--path", str(path), "--partition", "ds=x", "--columns", "i")
    x = client.get_partition(db, "t", ["x"]).parameters
    y = client.get_partition(db, "t", ["y"]).parameters
    assert x["numRows"] == "50"
    assert accurate.accurate_columns(x[accurate.KEY]) == {"i"}
    assert accurate.accurate_columns(y[accurate.KEY]) == {c.name for c in SMALL}
    table = client.get_table(db, "t").parameters
    for key in ("numFiles", "totalSize", "rawDataSize", "numRows"):
        assert int(table[key]) == int(x[key]) + int(y[key]), key
    assert accurate.basic_accurate(table[accurate.KEY])


def test_unpartitioned_table_gets_basic_statistics(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    path.mkdir()
    data = generate(SMALL, 300, seed=33)
    schema = pa.schema([pa.field(c.name, c.arrow) for c in SMALL])
    pq.write_table(
        pa.table({c.name: pa.array(data[c.name], c.arrow) for c in SMALL}, schema=schema),
        path / "a.parquet",
    )
    (path / "_SUCCESS").write_text("")  # not a data file
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path))
    params = client.get_table(db, "t").parameters
    assert params["numFiles"] == "1"
    assert params["totalSize"] == str((path / "a.parquet").stat().st_size)
    assert params["numRows"] == "300"
    assert accurate.basic_accurate(params[accurate.KEY])


# ------------------------------------------------------------------------------------------
# Tables found through the metastore


def test_parquet_table_found_through_the_metastore(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    """Partitions in folders of their own, not under the table's location; only the
    registered partitions are read, each from its own folder."""
    base = tmp_path / "data"
    data = write_parts(base, {"a": 300, "b/c": 200, "unregistered": 100}, SMALL, seed=40)
    moved = tmp_path / "elsewhere"
    (base / folder_of(KEY, "b/c")).rename(moved)
    db = new_db()
    register(
        client,
        db,
        "t",
        tmp_path / "table",
        SMALL,
        input_format="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        serde="org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        partitions={"a": base / folder_of(KEY, "a"), "b/c": moved},
    )
    del data["unregistered"]
    by_part, whole = expect_all(SMALL, names_of(data, {"a": "ds=a", "b/c": "ds=b%2Fc"}))
    result = run_job(spark, server, f"{db}.t")
    assert sorted(client.get_partition_names(db, "t", -1)) == ["ds=a", "ds=b%2Fc"]
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(list(result.values()), whole, SMALL, "returned")
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")
    assert client.get_partition(db, "t", ["b/c"]).parameters["numRows"] == "200"


@pytest.mark.parametrize("delimiter", [",", "\x01"], ids=["field.delim", "default"])
def test_hive_text_table_found_through_the_metastore(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path, delimiter: str
) -> None:
    """LazySimpleSerDe text: the table's delimiter (field.delim, or serialization.format
    given as a byte value), \\N is NULL, an empty string stays a string, a header line is
    skipped when the table says so."""
    data = {
        v: generate(TEXT_COLUMNS, rows, seed=41 + n)
        for n, (v, rows) in enumerate({"p": 300, "q": 250}.items())
    }
    for value, values in data.items():
        folder = tmp_path / "t" / folder_of(KEY, value)
        write_text(folder, TEXT_COLUMNS, values, delimiter, "\\N")
        text = (folder / "000000_0").read_text(encoding="utf-8")
        (folder / "000000_0").write_text("a header line\n" + text, encoding="utf-8")
    serde_params = {"field.delim": ","} if delimiter == "," else {"serialization.format": "1"}
    db = new_db()
    register(
        client,
        db,
        "t",
        tmp_path / "t",
        TEXT_COLUMNS,
        input_format=TEXT_INPUT,
        serde=LAZY,
        serde_params=serde_params,
        params={"skip.header.line.count": "1"},
        partitions={v: tmp_path / "t" / folder_of(KEY, v) for v in data},
    )
    assert any(v == "" for part in data.values() for v in part["s"])
    by_part, whole = expect_all(TEXT_COLUMNS, names_of(data, {"p": "ds=p", "q": "ds=q"}))
    result = run_job(spark, server, f"{db}.t")
    for part, objs in partition_stats(client, db, "t", TEXT_COLUMNS).items():
        check_objs(objs, by_part[part], TEXT_COLUMNS, part)
    check_objs(list(result.values()), whole, TEXT_COLUMNS, "table")


def test_json_and_spark_datasource_tables_found_through_the_metastore(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    data = generate(JSON_COLUMNS, 400, seed=43)
    write_json(tmp_path / "j", JSON_COLUMNS, data)
    parquet_data = generate(SMALL, 300, seed=44)
    (tmp_path / "s").mkdir()
    schema = pa.schema([pa.field(c.name, c.arrow) for c in SMALL])
    pq.write_table(
        pa.table({c.name: pa.array(parquet_data[c.name], c.arrow) for c in SMALL}, schema=schema),
        tmp_path / "s" / "part-0.parquet",
    )
    db = new_db()
    register(
        client,
        db,
        "j",
        tmp_path / "j",
        JSON_COLUMNS,
        input_format=TEXT_INPUT,
        serde="org.apache.hive.hcatalog.data.JsonSerDe",
    )
    # A Spark data source table: the provider in the parameters, the data at the path serde
    # parameter, the table's own location a placeholder.
    register(
        client,
        db,
        "s",
        tmp_path / "placeholder",
        SMALL,
        input_format="org.apache.hadoop.mapred.SequenceFileInputFormat",
        serde=LAZY,
        serde_params={"path": (tmp_path / "s").as_uri()},
        params={"spark.sql.sources.provider": "parquet"},
    )
    _, expected = expect_all(JSON_COLUMNS, {"": data})
    check_objs(list(run_job(spark, server, f"{db}.j").values()), expected, JSON_COLUMNS, "json")
    _, whole = expect_all(SMALL, {"": parquet_data})
    check_objs(list(run_job(spark, server, f"{db}.s").values()), whole, SMALL, "datasource")
    assert client.get_table(db, "s").parameters["numRows"] == "300"


# ------------------------------------------------------------------------------------------
# What the job cannot read


def test_unsupported_storage_is_a_clear_error(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    db = new_db()
    register(
        client,
        db,
        "avro",
        tmp_path,
        SMALL,
        input_format="org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
        serde="org.apache.hadoop.hive.serde2.avro.AvroSerDe",
    )
    with pytest.raises(JobError, match=r"is stored as .*AvroContainerInputFormat.*AvroSerDe"):
        run_job(spark, server, f"{db}.avro")
    with pytest.raises(JobError, match=r"is not in the metastore .* give --path"):
        run_job(spark, server, f"{db}.missing")


def test_text_that_is_not_of_the_column_type_is_null_and_counted_or_with_strict_an_error(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    """As Spark reads text: a value that does not parse is NULL, counted with an example;
    with --strict the run fails on it, naming the file, the row and the column."""
    (tmp_path / "t").mkdir()
    data = tmp_path / "t" / "000000_0"
    data.write_text("1,a\n2,b\nthree,c\n4\n", encoding="utf-8")
    columns = [Col("i", pa.int32(), "int", "long"), Col("s", pa.string(), "string", "string")]
    db = new_db()
    register(
        client,
        db,
        "t",
        tmp_path / "t",
        columns,
        input_format=TEXT_INPUT,
        serde=LAZY,
        serde_params={"field.delim": ","},
    )
    result = run_job_result(spark, server, f"{db}.t")
    assert (result.unparsed.values, result.unparsed.files) == (2, 1)  # three; row 4 is short
    assert result.unparsed.examples[0] == f"{data} row 3, column i: 'three'"
    assert "2 values in 1 file did not parse as their type" in summary_text(result)
    stats = {o.colName: union_member(o) for o in result.table_stats.values()}
    assert (stats["i"].numNulls, stats["i"].lowValue, stats["i"].highValue) == (1, 1, 4)
    assert stats["s"].numNulls == 1
    assert client.get_table(db, "t").parameters["numRows"] == "4"
    with pytest.raises(JobError, match=rf"^{data} row 4: '4' has 1 field\(s\), the table 2 "):
        run_job(spark, server, f"{db}.t", "--strict")
    data.write_text("1,a\n2,b\nthree,c\n", encoding="utf-8")
    with pytest.raises(JobError, match=rf"^{data} row 3, column i: 'three' does not parse as int"):
        run_job(spark, server, f"{db}.t", "--strict")


def test_data_outside_partition_folders_is_a_clear_error(
    spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    write_parts(path, {"x": 10}, [COL["i"]], seed=45)
    stray = path / "notapartition"
    stray.mkdir()
    (path / folder_of(KEY, "x") / "part-0.parquet").rename(stray / "part-0.parquet")
    with pytest.raises(JobError, match="not a partition folder"):
        run_job(spark, server, f"{new_db()}.t", "--path", str(path))
    with pytest.raises(JobError, match="does not exist"):
        run_job(spark, server, f"{new_db()}.t", "--path", str(tmp_path / "nothing"))
