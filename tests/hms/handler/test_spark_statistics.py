"""One set of statistics for every engine, through the Thrift calls Spark makes, on SQLite and
PostgreSQL: Hive-format statistics are served to Spark as spark.sql.statistics.* parameters,
Spark's ANALYZE keys are stored as Hive-format statistics, an echo of old keys undoes
nothing, and Spark's invalidation makes the statistics stale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from metadata_builders import database, fields, storage, table

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.spark_stats import DIGEST_KEY

Client = ThriftHiveMetastore.Client
PREFIX = "spark.sql.statistics."
COLUMNS = fields(("id", "bigint"), ("name", "string"), ("day", "date"))


def make_table(client: Client, db: str) -> None:
    client.create_database(database(db))
    client.create_table(table(db, "t", sd=storage(COLUMNS), parameters={"EXTERNAL": "TRUE"}))
    # The table's data: the server counts its files when an engine alters the table.
    folder = Path(client.get_table(db, "t").sd.location.removeprefix("file:"))
    (folder / "part-0.parquet").write_bytes(bytes(4096))


def write_job_statistics(client: Client, db: str, rows: int, high: int) -> None:
    """What the statistics job (or Hive's statistics task) writes: column statistics, then
    basic statistics in an alter that tells the server not to count the files itself."""
    long_data = t.LongColumnStatsData(lowValue=1, highValue=high, numNulls=2, numDVs=high + 1)
    name = t.StringColumnStatsData(maxColLen=9, avgColLen=4.5, numNulls=0, numDVs=40)
    day = t.DateColumnStatsData(
        lowValue=t.Date(19723), highValue=t.Date(19800), numNulls=0, numDVs=50
    )
    objs = [
        t.ColumnStatisticsObj("id", "bigint", t.ColumnStatisticsData(longStats=long_data)),
        t.ColumnStatisticsObj("name", "string", t.ColumnStatisticsData(stringStats=name)),
        t.ColumnStatisticsObj("day", "date", t.ColumnStatisticsData(dateStats=day)),
    ]
    desc = t.ColumnStatisticsDesc(isTblLevel=True, dbName=db, tableName="t")
    assert client.update_table_column_statistics(t.ColumnStatistics(desc, objs))
    current = client.get_table(db, "t")
    params = {k: v for k, v in current.parameters.items() if not k.startswith(PREFIX)}
    accurate = params["COLUMN_STATS_ACCURATE"].replace("{", '{"BASIC_STATS":"true",', 1)
    current.parameters = {
        **params,
        "numRows": str(rows),
        "totalSize": "4096",
        "COLUMN_STATS_ACCURATE": accurate,
    }
    context = t.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true", "STATS_GENERATED": "TASK"})
    client.alter_table_with_environment_context(db, "t", current, context)


def spark_keys(params: dict[str, str]) -> dict[str, str]:
    """Spark's statistics keys, without colstats' digest beside them."""
    return {
        k.removeprefix(PREFIX): v
        for k, v in params.items()
        if k.startswith(PREFIX) and k != DIGEST_KEY
    }


def test_hive_format_statistics_are_served_in_sparks_keys(client: Client, db_name: str) -> None:
    make_table(client, db_name)
    assert spark_keys(client.get_table(db_name, "t").parameters) == {}  # nothing known yet
    write_job_statistics(client, db_name, rows=100, high=42)
    keys = spark_keys(client.get_table(db_name, "t").parameters)
    assert keys["numRows"] == "100" and keys["totalSize"] == "4096"
    assert {k: v for k, v in keys.items() if k.startswith("colStats.id.")} == {
        "colStats.id.version": "2",
        "colStats.id.min": "1",
        "colStats.id.max": "42",
        "colStats.id.nullCount": "2",
        "colStats.id.distinctCount": "42",  # Hive's NDV counts NULL; Spark's does not
        "colStats.id.avgLen": "8",
        "colStats.id.maxLen": "8",
    }
    assert keys["colStats.name.avgLen"] == "5" and "colStats.name.min" not in keys
    assert (keys["colStats.day.min"], keys["colStats.day.max"]) == ("2024-01-01", "2024-03-18")
    # The same through the other table calls.
    others = [
        client.get_table_req(t.GetTableRequest(dbName=db_name, tblName="t")).table,
        client.get_table_objects_by_name(db_name, ["t"])[0],
    ]
    for other in others:
        assert spark_keys(other.parameters) == keys


def analyze_keys(rows: int) -> dict[str, str]:
    """What Spark's ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS id, name writes."""
    return {
        f"{PREFIX}numRows": str(rows),
        f"{PREFIX}totalSize": "5000",
        f"{PREFIX}colStats.id.version": "2",
        f"{PREFIX}colStats.id.min": "-5",
        f"{PREFIX}colStats.id.max": "77",
        f"{PREFIX}colStats.id.nullCount": "0",
        f"{PREFIX}colStats.id.distinctCount": "80",
        f"{PREFIX}colStats.id.avgLen": "8",
        f"{PREFIX}colStats.id.maxLen": "8",
        f"{PREFIX}colStats.name.version": "2",
        f"{PREFIX}colStats.name.nullCount": "3",
        f"{PREFIX}colStats.name.distinctCount": "9",
        f"{PREFIX}colStats.name.avgLen": "6",
        f"{PREFIX}colStats.name.maxLen": "12",
    }


def table_stats(client: Client, db: str) -> dict[str, Any]:
    request = t.TableStatsRequest(dbName=db, tblName="t", colNames=["id", "name", "day"])
    objs = client.get_table_statistics_req(request).tableStats
    return {o.colName: o.statsData for o in objs}


def test_sparks_analyze_is_stored_in_hive_format(client: Client, db_name: str) -> None:
    make_table(client, db_name)
    analyzed = client.get_table(db_name, "t")
    analyzed.parameters = {**analyzed.parameters, **analyze_keys(rows=200)}
    client.alter_table_with_environment_context(db_name, "t", analyzed, t.EnvironmentContext())
    stats = table_stats(client, db_name)
    assert (stats["id"].longStats.lowValue, stats["id"].longStats.highValue) == (-5, 77)
    assert stats["id"].longStats.numDVs == 80
    assert (stats["name"].stringStats.numNulls, stats["name"].stringStats.numDVs) == (3, 10)
    assert stats["name"].stringStats.maxColLen == 12
    params = client.get_table(db_name, "t").parameters
    assert params["numRows"] == "200" and params["totalSize"] == "5000"
    assert '"BASIC_STATS":"true"' in params["COLUMN_STATS_ACCURATE"]
    # Stored once: as Hive-format statistics, the keys derived again on reads.
    assert spark_keys(params)["colStats.id.max"] == "77"


def test_an_echo_of_old_keys_does_not_undo_a_newer_run(client: Client, db_name: str) -> None:
    make_table(client, db_name)
    write_job_statistics(client, db_name, rows=100, high=42)
    read_by_spark = client.get_table(db_name, "t")  # Spark reads the table ...
    write_job_statistics(client, db_name, rows=300, high=99)  # ... the job runs again ...
    read_by_spark.parameters["owner.team"] = "growth"  # ... Spark alters a property
    client.alter_table(db_name, "t", read_by_spark)
    params = client.get_table(db_name, "t").parameters
    assert params["owner.team"] == "growth"
    # As on HMS, an alter without statistics counts the files again: the size is known, the
    # row count (written back as read) is no longer confirmed and not served to Spark.
    assert (params["numFiles"], params["totalSize"]) == ("1", "4096")
    assert "numRows" not in spark_keys(params)
    assert spark_keys(params)["colStats.id.max"] == "99"
    assert table_stats(client, db_name)["id"].longStats.highValue == 99


def test_spark_dropping_its_keys_makes_the_statistics_stale(client: Client, db_name: str) -> None:
    make_table(client, db_name)
    write_job_statistics(client, db_name, rows=100, high=42)
    truncated = client.get_table(db_name, "t")
    assert DIGEST_KEY in truncated.parameters  # beside Spark's keys, under its prefix
    truncated.parameters = {  # Spark drops every key of its prefix, keeps the others
        k: v for k, v in truncated.parameters.items() if not k.startswith(PREFIX)
    }
    client.alter_table(db_name, "t", truncated)  # TRUNCATE TABLE t
    params = client.get_table(db_name, "t").parameters
    assert "COLUMN_STATS_ACCURATE" not in params
    assert spark_keys(params) == {}


def test_partitions_carry_sparks_size_and_row_count(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(table(db_name, "p", keys=fields(("ds", "string"))))
    client.add_partition(t.Partition(values=["1"], dbName=db_name, tableName="p", parameters={}))
    part = client.get_partition(db_name, "p", ["1"])
    # Spark's ANALYZE TABLE p PARTITION (ds='1') COMPUTE STATISTICS
    part.parameters = {**part.parameters, f"{PREFIX}numRows": "7", f"{PREFIX}totalSize": "900"}
    client.alter_partitions(db_name, "p", [part])
    got = client.get_partition(db_name, "p", ["1"]).parameters
    assert (got["numRows"], got["totalSize"]) == ("7", "900")
    assert spark_keys(got) == {"numRows": "7", "totalSize": "900"}


def test_get_table_serves_the_default_engines_statistics_only(client: Client, db_name: str) -> None:
    """get_table reads the table and its statistics in one statement: the statistics of
    another engine, for the same columns, change neither its keys nor its fields."""
    make_table(client, db_name)
    write_job_statistics(client, db_name, rows=100, high=42)
    before = client.get_table(db_name, "t")
    other = t.LongColumnStatsData(lowValue=-5, highValue=7000, numNulls=0, numDVs=3)
    desc = t.ColumnStatisticsDesc(isTblLevel=True, dbName=db_name, tableName="t")
    obj = t.ColumnStatisticsObj("id", "bigint", t.ColumnStatisticsData(longStats=other))
    assert client.update_table_column_statistics(t.ColumnStatistics(desc, [obj], engine="impala"))
    after = client.get_table(db_name, "t")
    assert spark_keys(after.parameters) == spark_keys(before.parameters)
    assert spark_keys(after.parameters)["colStats.id.max"] == "42"
    assert [c.name for c in after.sd.cols] == ["id", "name", "day"]
    # The call that reads tables apart from their statistics gives the same table.
    [listed] = client.get_table_objects_by_name(db_name, ["t"])
    assert listed == after


def test_get_table_of_a_table_with_another_engines_statistics_only(
    client: Client, db_name: str
) -> None:
    make_table(client, db_name)
    other = t.LongColumnStatsData(lowValue=-5, highValue=7000, numNulls=0, numDVs=3)
    desc = t.ColumnStatisticsDesc(isTblLevel=True, dbName=db_name, tableName="t")
    obj = t.ColumnStatisticsObj("id", "bigint", t.ColumnStatisticsData(longStats=other))
    assert client.update_table_column_statistics(t.ColumnStatistics(desc, [obj], engine="impala"))
    found = client.get_table(db_name, "t")
    assert found.tableName == "t"
    assert not any(k.startswith("colStats.") for k in spark_keys(found.parameters))
