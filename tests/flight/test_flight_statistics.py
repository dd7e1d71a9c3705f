"""column_statistics as DuckDB reads it: the batch imported with the duckdb package and
checked against the column's type, and what it says checked against the files (true
bounds), the metastore's statistics (DuckDB's distinct count) and their state (statistics
not current give unknown bounds); DuckDB 1.2's msgpack answer."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterator
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from airport_client import LEGACY_USER_AGENT, AirportClient, Table, unpack
from conftest import RunningServer
from flight_tables import CATALOG, DB, FlightStack, hive_db, start
from metadata_builders import column_stats
from stats_builders import stats_data

from hive_metastore_thrift import ttypes as t
from metastore.flight.types import duckdb_type

NDV_ERROR = 0.05


@pytest.fixture(scope="module")
def stack(server: RunningServer) -> Iterator[FlightStack]:
    yield from start(server)


@pytest.fixture
def airport(stack: FlightStack) -> Iterator[AirportClient]:
    client = stack.airport()
    yield client
    client.close()


def statistics(airport: AirportClient, table: Table, column: str) -> dict[str, Any]:
    """The statistics of COLUMN as DuckDB imports them: the batch read by the duckdb
    package, min and max of the column's DuckDB type."""
    field = table.schema.field(column)
    batch = airport.column_statistics(table, column, duckdb_type(field.type))
    relation = duckdb.connect().from_arrow(pa.Table.from_batches([batch]))
    types = dict(zip(relation.columns, [str(t) for t in relation.types], strict=True))
    assert types["min"] == types["max"] == duckdb_type(field.type)
    assert types["distinct_count"] == "UBIGINT"
    row = dict(zip(relation.columns, relation.fetchall()[0], strict=True))
    assert row["has_null"] or row["has_not_null"]
    return row


def data(stack: FlightStack) -> duckdb.DuckDBPyRelation:
    con = duckdb.connect()
    return con.sql(
        f"SELECT * FROM read_parquet('{stack.folder}/web_sales/**/*.parquet', "
        "hive_partitioning = true, hive_types = {'region': 'VARCHAR', 'day': 'DATE'})"
    )


def truth(stack: FlightStack, column: str) -> tuple[Any, Any, int, int]:
    """min, max, NULLs and distinct non-null values of COLUMN in the files."""
    rel = data(stack)
    low, high, nulls, distinct = rel.aggregate(
        f"min({column}), max({column}), count(*) - count({column}), count(DISTINCT {column})"
    ).fetchall()[0]
    return low, high, nulls, distinct


def test_statistics_merged_from_current_partitions_are_true(
    stack: FlightStack, airport: AirportClient
) -> None:
    sales = airport.tables()[(DB, "web_sales")]
    # id: exact bounds, no NULLs, the union of the partitions' sketches
    low, high, nulls, distinct = truth(stack, "id")
    assert nulls == 0
    got = statistics(airport, sales, "id")
    assert (got["min"], got["max"]) == (low, high)
    assert got["has_null"] is False and got["has_not_null"] is True
    assert abs(got["distinct_count"] - distinct) <= NDV_ERROR * distinct
    # a decimal with NULLs: Hive's numDVs counts NULL, DuckDB's distinct count does not
    low, high, _, distinct = truth(stack, "ws_price")
    got = statistics(airport, sales, "ws_price")
    assert (got["min"], got["max"]) == (low, high)
    assert got["has_null"] is True
    assert 0 < got["distinct_count"] <= distinct  # the largest partition's, without NULL
    # a timestamp kept in whole seconds: widened to the microseconds around them
    low, high, _, _ = truth(stack, "ts")
    got = statistics(airport, sales, "ts")
    assert got["min"] <= low < got["min"] + datetime.timedelta(seconds=1)
    assert got["max"] >= high > got["max"] - datetime.timedelta(seconds=1)
    # a float: the low bound rounded down to a float, no high bound (NaN)
    low, _, _, _ = truth(stack, "small")
    got = statistics(airport, sales, "small")
    assert got["min"] <= low and got["max"] is None
    got = statistics(airport, sales, "flag")
    assert (got["min"], got["max"]) == (False, True)
    assert got["distinct_count"] == 2


def test_strings_have_unknown_bounds_and_a_byte_length_bound(
    stack: FlightStack, airport: AirportClient
) -> None:
    sales = airport.tables()[(DB, "web_sales")]
    batch = airport.column_statistics(sales, "name", "VARCHAR")
    assert batch.column("min")[0].as_py() == ""
    assert batch.column("max")[0].as_py() == "\U0010ffff\U0010ffff"
    assert batch.column("contains_unicode")[0].as_py() is True
    longest = data(stack).aggregate("max(strlen(name))").fetchall()[0][0]
    assert batch.column("max_string_length")[0].as_py() >= longest
    code = airport.column_statistics(sales, "code", "VARCHAR")  # varchar(10): 40 bytes
    assert code.column("max_string_length")[0].as_py() == 40


def test_partition_keys_come_from_the_partition_values(
    stack: FlightStack, airport: AirportClient
) -> None:
    sales = airport.tables()[(DB, "web_sales")]
    region = statistics(airport, sales, "region")
    assert (region["min"], region["max"], region["distinct_count"]) == ("east", "west", 3)
    assert region["has_null"] is False
    day = statistics(airport, sales, "day")
    assert (day["min"], day["max"]) == (datetime.date(2024, 1, 1), datetime.date(2024, 1, 2))


def test_nested_columns_are_unknown_and_valid(airport: AirportClient) -> None:
    sales = airport.tables()[(DB, "web_sales")]
    for column in ("tags", "attrs", "info"):
        got = statistics(airport, sales, column)
        assert (got["has_null"], got["has_not_null"], got["distinct_count"]) == (True, True, 0)
        assert got["min"] is None and got["max"] is None


def test_statistics_not_current_give_unknown_bounds(
    stack: FlightStack, airport: AirportClient
) -> None:
    client, transport = stack.thrift()
    try:
        name = "region=east/day=2024-01-01"
        stale = client.get_partition_by_name(hive_db(), "web_sales", name)
        accurate = stale.parameters.pop("COLUMN_STATS_ACCURATE")
        client.alter_partition(hive_db(), "web_sales", stale)
        sales = airport.tables()[(DB, "web_sales")]
        got = statistics(airport, sales, "id")
        assert got["min"] is None and got["max"] is None and got["has_null"] is True
        assert got["distinct_count"] > 0  # an estimate is still an estimate
        stale.parameters["COLUMN_STATS_ACCURATE"] = accurate
        client.alter_partition(hive_db(), "web_sales", stale)
        assert statistics(airport, sales, "id")["min"] == 0
    finally:
        transport.close()


def test_current_table_statistics_and_row_counts(
    stack: FlightStack, airport: AirportClient
) -> None:
    """events: table-level statistics, BASIC_STATS with numRows: a column all NULL has no
    non-null values; NDV without the NULL; decimal bounds rounded outward to the scale."""
    client, transport = stack.thrift()
    try:
        objs = [
            t.ColumnStatisticsObj(
                "kind",
                "string",
                stats_data("stringStats", maxColLen=2, avgColLen=2.0, numNulls=4, numDVs=5),
            ),
            t.ColumnStatisticsObj(
                "amount",
                "decimal(10,3)",
                stats_data(
                    "decimalStats",
                    lowValue=t.Decimal(unscaled=(11250).to_bytes(2, "big"), scale=4),
                    highValue=t.Decimal(unscaled=(450001).to_bytes(3, "big"), scale=4),
                    numNulls=3,
                    numDVs=38,
                ),
            ),
            t.ColumnStatisticsObj(
                "id",
                "bigint",
                stats_data("longStats", lowValue=1, highValue=40, numNulls=40, numDVs=0),
            ),
        ]
        stats = column_stats(DB, "events", objs)
        stats.statsDesc.catName = CATALOG
        client.update_table_column_statistics(stats)
        events = client.get_table(hive_db(), "events")
        events.parameters["numRows"] = "40"
        events.parameters["COLUMN_STATS_ACCURATE"] = (
            '{"BASIC_STATS":"true","COLUMN_STATS":{"amount":"true","id":"true","kind":"true"}}'
        )
        task = t.EnvironmentContext({"STATS_GENERATED": "TASK"})  # as a statistics job
        client.alter_table_with_environment_context(hive_db(), "events", events, task)
        table = airport.tables()[(DB, "events")]
        kind = statistics(airport, table, "kind")
        assert kind["distinct_count"] == 4 and kind["has_null"] is True
        amount = statistics(airport, table, "amount")
        assert amount["min"] == decimal.Decimal("1.125")  # 1.1250 at scale 3
        assert amount["max"] == decimal.Decimal("45.001")  # 45.0001 rounded up
        nulls = statistics(airport, table, "id")
        assert nulls["has_not_null"] is False and nulls["has_null"] is True
    finally:
        transport.close()


def test_a_table_without_statistics_is_unknown(airport: AirportClient) -> None:
    orc_t = airport.tables()[(DB, "orc_t")]
    got = statistics(airport, orc_t, "id")
    assert (got["has_null"], got["has_not_null"], got["distinct_count"]) == (True, True, 0)
    assert got["min"] is None


def test_duckdb_1_2_gets_the_msgpack_answer(stack: FlightStack) -> None:
    legacy = stack.airport(user_agent=LEGACY_USER_AGENT)
    try:
        tables = legacy.tables()
        # DuckDB 1.2 takes no statistics of DECIMAL, DATE, TIMESTAMP: not advertised there
        assert not tables[(DB, "web_sales")].advertises_statistics
        orc_t = tables[(DB, "orc_t")]
        assert orc_t.advertises_statistics
        answer = unpack(legacy.column_statistics_raw(tables[(DB, "web_sales")], "id", "INTEGER"))
        assert set(answer) == {
            "has_null",
            "has_no_null",
            "distinct_count",
            "numeric_stats",
            "string_stats",
        }
        assert answer["has_null"] is False and answer["has_no_null"] is True
        assert answer["numeric_stats"]["min"]["integer"] == 0
        assert answer["numeric_stats"]["max"]["integer"] == 599
        unknown = unpack(legacy.column_statistics_raw(orc_t, "id", "BIGINT"))
        assert unknown["numeric_stats"]["min"]["bigint"] == -(2**63)
        assert unknown["numeric_stats"]["max"]["bigint"] == 2**63 - 1
        text = unpack(legacy.column_statistics_raw(orc_t, "v", "VARCHAR"))
        assert text["string_stats"] == {"min": "", "max": "\U0010ffff\U0010ffff"}
    finally:
        legacy.close()
