"""The six column-statistics calls, through the generated client, on SQLite and PostgreSQL."""

from __future__ import annotations

import math
from typing import Any

import pytest
from stats_builders import (
    EXAMPLES,
    HISTOGRAM,
    PART,
    SKETCH,
    all_examples,
    column_stats,
    dec,
    make_table,
    obj,
    row_count,
    stats_data,
)

from hive_metastore_thrift import ttypes as t

# ------------------------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize("level", ["table", "partition"])
def test_every_statistics_type_round_trips_exactly(client: Any, db_name: str, level: str) -> None:
    make_table(client, db_name)
    part = PART if level == "partition" else None
    update = (
        client.update_partition_column_statistics if part else client.update_table_column_statistics
    )
    assert update(column_stats(db_name, all_examples(), part)) is True
    for column, (col_type, data) in EXAMPLES.items():
        got = (
            client.get_partition_column_statistics(db_name, "t", PART, column)
            if part
            else client.get_table_column_statistics(db_name, "t", column)
        )
        assert got.statsDesc.isTblLevel is (part is None)
        assert got.statsDesc.dbName == db_name and got.statsDesc.tableName == "t"
        assert got.statsDesc.partName == part
        assert got.statsDesc.lastAnalyzed > 0
        assert got.engine == "hive"
        assert got.statsObj == [obj(column, data, col_type)], column


def test_decimal_keeps_unscaled_value_and_scale(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    for low, high in [
        (dec(-1050, 2), dec(1050, 2)),
        (dec(0, 5), dec(1, 0)),
        (dec(-128, 0), dec(127, 0)),
        (dec(-(10**38 - 1), 0), dec(10**38 - 1, 0)),
    ]:
        data = stats_data("decimalStats", lowValue=low, highValue=high, numNulls=0, numDVs=1)
        client.update_table_column_statistics(column_stats(db_name, [obj("c_dec", data)]))
        got = client.get_table_column_statistics(db_name, "t", "c_dec").statsObj[0]
        assert got.statsData.decimalStats.lowValue == low
        assert got.statsData.decimalStats.highValue == high


def test_timestamp_written_as_long_stats_reads_back_as_long_stats(
    client: Any, db_name: str
) -> None:
    """Trino writes longStats for timestamp columns; it must read back what it wrote."""
    make_table(client, db_name)
    data = stats_data("longStats", lowValue=-5, highValue=5, numNulls=0, numDVs=3)
    client.update_table_column_statistics(column_stats(db_name, [obj("c_ts", data)]))
    got = client.get_table_column_statistics(db_name, "t", "c_ts").statsObj[0]
    assert got.statsData == data


def test_names_are_lower_cased_and_catalog_prefix_accepted(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    data = EXAMPLES["c_long"][1]
    stats = column_stats(db_name.upper(), [obj("C_LONG", data, "BIGINT")])
    stats.statsDesc.tableName = "T"
    client.update_table_column_statistics(stats)
    got = client.get_table_column_statistics(f"@hive#{db_name.upper()}", "T", "C_Long")
    assert got.statsObj[0].colName == "c_long"
    assert got.statsObj[0].colType == "bigint"
    part_name_upper_key = "DS=2024-01-01/REGION=a%2Fb"
    stats.statsDesc.partName = part_name_upper_key
    stats.statsDesc.isTblLevel = False
    client.update_partition_column_statistics(stats)
    got = client.get_partition_column_statistics(db_name, "t", part_name_upper_key, "c_long")
    assert got.statsDesc.partName == PART


def test_update_keeps_fields_the_caller_left_unset(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    first = stats_data(
        "longStats",
        lowValue=1,
        highValue=10,
        numNulls=1,
        numDVs=5,
        bitVectors=SKETCH,
        histogram=HISTOGRAM,
    )
    client.update_table_column_statistics(column_stats(db_name, [obj("c_long", first)]))
    second = stats_data("longStats", highValue=20, numNulls=2, numDVs=6)
    client.update_table_column_statistics(column_stats(db_name, [obj("c_long", second)]))
    got = client.get_table_column_statistics(db_name, "t", "c_long").statsObj[0]
    assert got.statsData == stats_data(
        "longStats",
        lowValue=1,
        highValue=20,
        numNulls=2,
        numDVs=6,
        bitVectors=SKETCH,
        histogram=HISTOGRAM,
    )


def test_update_of_one_column_leaves_other_columns_alone(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    client.update_table_column_statistics(column_stats(db_name, all_examples()))
    data = stats_data("booleanStats", numTrues=1, numFalses=1, numNulls=1)
    client.update_table_column_statistics(column_stats(db_name, [obj("c_bool", data)]))
    assert client.get_table_column_statistics(db_name, "t", "c_bool").statsObj[0].statsData == data
    assert (
        client.get_table_column_statistics(db_name, "t", "c_str").statsObj[0].statsData
        == EXAMPLES["c_str"][1]
    )


def test_last_analyzed_is_kept_when_given_and_set_when_absent(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    data = EXAMPLES["c_long"][1]
    client.update_table_column_statistics(
        column_stats(db_name, [obj("c_long", data)], last_analyzed=1234)
    )
    assert client.get_table_column_statistics(db_name, "t", "c_long").statsDesc.lastAnalyzed == 1234
    client.update_table_column_statistics(column_stats(db_name, [obj("c_long", data)]))
    assert (
        client.get_table_column_statistics(db_name, "t", "c_long").statsDesc.lastAnalyzed
        > 1_700_000_000
    )


def test_engines_are_kept_apart(client: Any, db_name: str, server: Any) -> None:
    make_table(client, db_name)
    hive = stats_data("longStats", lowValue=1, highValue=2, numNulls=0, numDVs=2)
    impala = stats_data("longStats", lowValue=3, highValue=4, numNulls=0, numDVs=2)
    client.update_table_column_statistics(column_stats(db_name, [obj("c_long", hive)], engine=None))
    client.update_table_column_statistics(
        column_stats(db_name, [obj("c_long", impala)], engine="impala")
    )
    # Reads are for engine "hive", as in HMS.
    assert client.get_table_column_statistics(db_name, "t", "c_long").statsObj[0].statsData == hive
    assert client.delete_table_column_statistics(db_name, "t", "c_long", "impala") is True
    assert client.get_table_column_statistics(db_name, "t", "c_long").statsObj[0].statsData == hive
    with pytest.raises(t.NoSuchObjectException):
        client.delete_table_column_statistics(db_name, "t", "c_long", "impala")


def test_bit_vectors_and_histograms_are_not_returned_unless_enabled(
    db_name: str, migrated_url: str
) -> None:
    from conftest import RunningServer, connect

    from metastore.config import Settings

    running = RunningServer(migrated_url, Settings())
    try:
        client, transport = connect(running.port)
        make_table(client, db_name)
        client.update_table_column_statistics(column_stats(db_name, all_examples()))
        got = client.get_table_column_statistics(db_name, "t", "c_double").statsObj[0]
        assert got.statsData.doubleStats.bitVectors is None
        assert got.statsData.doubleStats.histogram is None
        assert got.statsData.doubleStats.numDVs == 9
        transport.close()
    finally:
        running.stop()


# ------------------------------------------------------------------------------------------
# Deletes and cascades


def test_delete_without_column_deletes_every_column(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    client.update_table_column_statistics(column_stats(db_name, all_examples()))
    client.update_partition_column_statistics(column_stats(db_name, all_examples(), PART))
    assert client.delete_table_column_statistics(db_name, "t", None, None) is True
    for column in EXAMPLES:
        with pytest.raises(t.NoSuchObjectException):
            client.get_table_column_statistics(db_name, "t", column)
    # Partition statistics are untouched by a table-level delete.
    assert client.get_partition_column_statistics(db_name, "t", PART, "c_long").statsObj
    assert client.delete_partition_column_statistics(db_name, "t", PART, None, None) is True
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_column_statistics(db_name, "t", PART, "c_long")
    # Deleting nothing is fine when no column is named, as in HMS.
    assert client.delete_table_column_statistics(db_name, "t", None, None) is True


def test_delete_one_column(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    client.update_partition_column_statistics(column_stats(db_name, all_examples(), PART))
    assert client.delete_partition_column_statistics(db_name, "t", PART, "C_LONG", "hive")
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_column_statistics(db_name, "t", PART, "c_long")
    assert client.get_partition_column_statistics(db_name, "t", PART, "c_str").statsObj
    with pytest.raises(t.NoSuchObjectException, match="c_long"):
        client.delete_partition_column_statistics(db_name, "t", PART, "c_long", "hive")


def test_dropping_partition_and_table_deletes_their_statistics(
    client: Any, db_name: str, server: Any
) -> None:
    make_table(client, db_name)
    before_tab = row_count(server.url, "TAB_COL_STATS")
    before_part = row_count(server.url, "PART_COL_STATS")
    client.update_table_column_statistics(column_stats(db_name, all_examples()))
    client.update_partition_column_statistics(column_stats(db_name, all_examples(), PART))
    assert row_count(server.url, "PART_COL_STATS") == before_part + len(EXAMPLES)
    client.drop_partition_by_name(db_name, "t", PART, True)
    assert row_count(server.url, "PART_COL_STATS") == before_part
    assert row_count(server.url, "TAB_COL_STATS") == before_tab + len(EXAMPLES)
    client.drop_table(db_name, "t", True)
    assert row_count(server.url, "TAB_COL_STATS") == before_tab


# ------------------------------------------------------------------------------------------
# Errors


def test_unknown_database_table_or_partition(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    data = EXAMPLES["c_long"][1]
    for db, table in [("no_such_db", "t"), (db_name, "no_such_table")]:
        stats = column_stats(db, [obj("c_long", data)])
        stats.statsDesc.tableName = table
        with pytest.raises(t.NoSuchObjectException, match=r"no_such"):
            client.update_table_column_statistics(stats)
        with pytest.raises(t.NoSuchObjectException, match=r"no_such"):
            client.get_table_column_statistics(db, table, "c_long")
        with pytest.raises(t.NoSuchObjectException, match=r"no_such"):
            client.delete_table_column_statistics(db, table, "c_long", None)
    missing = "ds=2030-01-01/region=x"
    with pytest.raises(t.NoSuchObjectException, match="2030"):
        client.update_partition_column_statistics(
            column_stats(db_name, [obj("c_long", data)], missing)
        )
    with pytest.raises(t.NoSuchObjectException, match="2030"):
        client.get_partition_column_statistics(db_name, "t", missing, "c_long")
    with pytest.raises(t.NoSuchObjectException, match="2030"):
        client.delete_partition_column_statistics(db_name, "t", missing, None, None)


def test_partition_name_missing_a_key_is_invalid(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    stats = column_stats(db_name, [obj("c_long", EXAMPLES["c_long"][1])], "ds=2024-01-01")
    with pytest.raises(t.InvalidObjectException, match="region"):
        client.update_partition_column_statistics(stats)
    with pytest.raises(t.NoSuchObjectException, match="region"):
        client.get_partition_column_statistics(db_name, "t", "ds=2024-01-01", "c_long")


def test_unknown_column_is_named(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    bad = obj("no_such_col", EXAMPLES["c_long"][1], "bigint")
    with pytest.raises(t.InvalidObjectException, match="no_such_col"):
        client.update_table_column_statistics(column_stats(db_name, [bad]))
    with pytest.raises(t.InvalidObjectException, match="no_such_col"):
        client.update_partition_column_statistics(column_stats(db_name, [bad], PART))
    with pytest.raises(t.InvalidObjectException, match="no_such_col"):
        client.get_table_column_statistics(db_name, "t", "no_such_col")
    with pytest.raises(t.InvalidObjectException, match="no_such_col"):
        client.delete_table_column_statistics(db_name, "t", "no_such_col", None)
    # A partition key is not a data column.
    with pytest.raises(t.InvalidObjectException, match="'ds'"):
        client.update_table_column_statistics(
            column_stats(db_name, [obj("ds", EXAMPLES["c_str"][1], "string")])
        )


@pytest.mark.parametrize(
    ("column", "data", "message"),
    [
        (
            "c_long",
            stats_data("stringStats", maxColLen=1, avgColLen=1.0, numNulls=0, numDVs=1),
            "stringStats does not fit a column of type 'bigint'",
        ),
        ("c_str", stats_data("longStats", numNulls=0, numDVs=1), "longStats does not fit"),
        ("c_date", stats_data("timestampStats", numNulls=0, numDVs=1), "expected dateStats"),
        ("c_arr", stats_data("longStats", numNulls=0, numDVs=1), "no statistics are kept"),
        ("c_long", t.ColumnStatisticsData(), "exactly one kind of statistics, found 0"),
        (
            "c_long",
            t.ColumnStatisticsData(
                longStats=t.LongColumnStatsData(numNulls=0, numDVs=1),
                doubleStats=t.DoubleColumnStatsData(numNulls=0, numDVs=1),
            ),
            "found 2",
        ),
        ("c_long", stats_data("longStats", numDVs=1), "longStats.numNulls is required"),
        ("c_bool", stats_data("booleanStats", numTrues=1, numNulls=0), "numFalses is required"),
        (
            "c_long",
            stats_data("longStats", lowValue=5, highValue=4, numNulls=0, numDVs=1),
            "lowValue 5 is greater than highValue 4",
        ),
        (
            "c_double",
            stats_data("doubleStats", lowValue=math.nan, numNulls=0, numDVs=1),
            "lowValue is NaN",
        ),
        (
            "c_double",
            stats_data("doubleStats", highValue=math.nan, numNulls=0, numDVs=1),
            "highValue is NaN",
        ),
        (
            "c_str",
            stats_data("stringStats", maxColLen=1, avgColLen=math.nan, numNulls=0, numDVs=1),
            "avgColLen is NaN",
        ),
        (
            "c_bin",
            stats_data("binaryStats", maxColLen=1, avgColLen=math.inf, numNulls=0),
            "avgColLen is infinite",
        ),
        (
            "c_dec",
            stats_data("decimalStats", lowValue=t.Decimal(b"", 2), numNulls=0, numDVs=1),
            "unscaled bytes and a scale",
        ),
        (
            "c_dec",
            stats_data("decimalStats", lowValue=dec(1, 39), numNulls=0, numDVs=1),
            "scale 39 is outside",
        ),
        (
            "c_dec",
            stats_data(
                "decimalStats", lowValue=dec(2, 0), highValue=dec(-1, 0), numNulls=0, numDVs=1
            ),
            "greater than highValue",
        ),
        (
            "c_date",
            stats_data("dateStats", lowValue=t.Date(), numNulls=0, numDVs=1),
            "needs daysSinceEpoch",
        ),
        (
            "c_dec",
            stats_data("decimalStats", lowValue=dec(-(10**4100), 0), numNulls=0, numDVs=1),
            "lowValue is 4102 characters long; at most 4000",
        ),
    ],
)
def test_invalid_statistics_are_rejected_and_nothing_is_written(
    client: Any, db_name: str, column: str, data: t.ColumnStatisticsData, message: str
) -> None:
    make_table(client, db_name)
    good = obj("c_vchar", EXAMPLES["c_vchar"][1])
    bad = obj(column, data)
    for part in (None, PART):
        update = (
            client.update_partition_column_statistics
            if part
            else client.update_table_column_statistics
        )
        with pytest.raises(t.InvalidInputException, match=f"'{column}'.*{message}"):
            update(column_stats(db_name, [good, bad], part))
        with pytest.raises(t.NoSuchObjectException):
            if part:
                client.get_partition_column_statistics(db_name, "t", part, "c_vchar")
            else:
                client.get_table_column_statistics(db_name, "t", "c_vchar")


def test_over_long_engine_and_column_type_are_refused_not_cut(client: Any, db_name: str) -> None:
    """PostgreSQL would keep only the first 128 characters; two long engine names would then
    share one row."""
    make_table(client, db_name)
    good = obj("c_long", EXAMPLES["c_long"][1])
    with pytest.raises(t.InvalidInputException, match="engine is 129 characters long"):
        client.update_table_column_statistics(column_stats(db_name, [good], engine="e" * 129))
    with pytest.raises(t.InvalidInputException, match=r"'c_long'.*colType is 129 characters"):
        client.update_table_column_statistics(
            column_stats(db_name, [obj("c_long", EXAMPLES["c_long"][1], "b" * 129)])
        )
    assert client.update_table_column_statistics(column_stats(db_name, [good], engine="e" * 128))
    got = client.get_table_statistics_req(
        t.TableStatsRequest(dbName=db_name, tblName="t", colNames=["c_long"], engine="e" * 128)
    )
    assert [o.colName for o in got.tableStats] == ["c_long"]


def test_malformed_requests(client: Any, db_name: str) -> None:
    make_table(client, db_name)
    with pytest.raises(t.InvalidInputException, match="statsDesc is required"):
        client.update_table_column_statistics(t.ColumnStatistics(statsObj=[]))
    with pytest.raises(t.InvalidInputException, match="dbName and tableName"):
        client.update_table_column_statistics(
            t.ColumnStatistics(statsDesc=t.ColumnStatisticsDesc(isTblLevel=True), statsObj=[])
        )
    with pytest.raises(t.InvalidInputException, match="statsObj is required"):
        client.update_table_column_statistics(
            t.ColumnStatistics(
                statsDesc=t.ColumnStatisticsDesc(isTblLevel=True, dbName=db_name, tableName="t")
            )
        )
    with pytest.raises(t.InvalidInputException, match="partName is required"):
        client.update_partition_column_statistics(
            column_stats(db_name, [obj("c_long", EXAMPLES["c_long"][1])])
        )
    twice = [obj("c_long", EXAMPLES["c_long"][1]), obj("C_LONG", EXAMPLES["c_long"][1])]
    with pytest.raises(t.InvalidInputException, match="appears twice"):
        client.update_table_column_statistics(column_stats(db_name, twice))
    with pytest.raises(t.InvalidInputException, match="no column name"):
        client.get_table_column_statistics(db_name, "t", "")
    # An empty list is accepted and changes nothing.
    assert client.update_table_column_statistics(column_stats(db_name, [])) is True
