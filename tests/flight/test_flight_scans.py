"""Scans: endpoints and DoGet read the table's files as DuckDB's own readers do (row for
row against read_parquet, read_csv, read_json), with partition values as columns, every
column in schema order, one endpoint per partition, and partitions pruned with DuckDB's
filters for every filter shape (a shape the server does not know prunes nothing)."""

from __future__ import annotations

import datetime
import random
from collections.abc import Iterator

import duckdb
import pyarrow as pa
import pytest
from airport_client import NO_COLUMN, AirportClient, Table
from conftest import RunningServer
from duckdb_filters import (
    Node,
    between,
    column,
    compare,
    conjunction,
    constant,
    function,
    json_filters,
    operator,
)
from flight_tables import DB, FlightStack, partition_values, start


@pytest.fixture(scope="module")
def stack(server: RunningServer) -> Iterator[FlightStack]:
    yield from start(server)


@pytest.fixture
def airport(stack: FlightStack) -> Iterator[AirportClient]:
    client = stack.airport()
    yield client
    client.close()


def differences(con: duckdb.DuckDBPyConnection, left: str, right: str) -> int:
    count: int = con.sql(
        f"SELECT count(*) FROM ((SELECT * FROM {left} EXCEPT ALL SELECT * FROM {right}) "
        f"UNION ALL (SELECT * FROM {right} EXCEPT ALL SELECT * FROM {left}))"
    ).fetchall()[0][0]
    return count


def direct_sales(con: duckdb.DuckDBPyConnection, stack: FlightStack) -> duckdb.DuckDBPyRelation:
    return con.sql(
        f"SELECT * FROM read_parquet('{stack.folder}/web_sales/**/*.parquet', "
        "hive_partitioning = true, hive_types = {'region': 'VARCHAR', 'day': 'DATE'})"
    )


def test_a_partitioned_parquet_table_reads_as_duckdb_reads_its_files(
    stack: FlightStack, airport: AirportClient
) -> None:
    sales = airport.tables()[(DB, "web_sales")]
    endpoints = airport.endpoints(sales)
    assert len(endpoints) == len(partition_values())  # one a partition
    flight_rows = airport.scan(sales)
    assert flight_rows.schema.names == sales.schema.names
    con = duckdb.connect()
    con.register("flight_rows", flight_rows)
    direct = direct_sales(con, stack)
    assert set(direct.columns) == set(sales.schema.names)
    con.register("direct", direct.select(*sales.schema.names))
    assert flight_rows.num_rows == direct.aggregate("count(*)").fetchall()[0][0]
    assert differences(con, "flight_rows", "direct") == 0


def test_columns_not_asked_for_are_null_and_count_star_counts(
    airport: AirportClient,
) -> None:
    sales = airport.tables()[(DB, "web_sales")]
    region = sales.schema.names.index("region")
    only = airport.scan(sales, column_ids=[0, region])
    assert only.schema.names == sales.schema.names
    assert only.column("name").null_count == only.num_rows
    assert only.column("id").null_count == 0
    assert set(only.column("region").to_pylist()) == {"east", "west", "north"}
    counted = airport.scan(sales, column_ids=[NO_COLUMN])
    assert counted.num_rows == only.num_rows == 600


def test_text_json_and_orc_tables_read_as_duckdb_reads_them(
    stack: FlightStack, airport: AirportClient
) -> None:
    tables = airport.tables()
    con = duckdb.connect()
    con.register("events_flight", airport.scan(tables[(DB, "events")]))
    con.register(
        "events_direct",
        con.sql(
            f"SELECT * FROM read_csv('{stack.folder}/events/*', delim = '|', header = false, "
            "nullstr = ['\\N', ''], columns = {'id': 'BIGINT', 'kind': 'VARCHAR', "
            "'amount': 'DECIMAL(10,3)', 'day': 'DATE'})"
        ),
    )
    assert differences(con, "events_flight", "events_direct") == 0
    assert con.sql("SELECT count(*) FROM events_flight").fetchall()[0][0] == 40
    con.register("json_flight", airport.scan(tables[(DB, "json_t")]))
    con.register(
        "json_direct",
        con.sql(
            f"SELECT * FROM read_json('{stack.folder}/json_t/*.json', "
            "columns = {'id': 'BIGINT', 'label': 'VARCHAR'})"
        ),
    )
    assert differences(con, "json_flight", "json_direct") == 0
    orc_rows = airport.scan(tables[(DB, "orc_t")])
    assert orc_rows.column("id").to_pylist() == list(range(20))


NAMES = ["id", "region", "day"]
REGION = column("region", "VARCHAR", NAMES)
DAY = column("day", "DATE", NAMES)
ID = column("id", "INTEGER", NAMES)
DAY1, DAY2 = datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)


def ids(con: duckdb.DuckDBPyConnection, relation: str, flt: Node) -> list[int]:
    return sorted(r[0] for r in con.sql(f"SELECT id FROM {relation} WHERE {flt.sql}").fetchall())


def scanned(airport: AirportClient, table: Table, flt: Node) -> tuple[pa.Table, int]:
    columns = [table.schema.names.index(n) for n in NAMES]
    text = json_filters([flt], NAMES)
    count = len(airport.endpoints(table, json_filters=text, column_ids=columns))
    return airport.scan(table, json_filters=text, column_ids=columns), count


SHAPES: list[tuple[Node, int]] = [
    (compare("COMPARE_EQUAL", REGION, constant("east", "VARCHAR")), 2),
    (compare("COMPARE_EQUAL", constant("west", "VARCHAR"), REGION), 2),
    (compare("COMPARE_NOTEQUAL", REGION, constant("east", "VARCHAR")), 4),
    (compare("COMPARE_GREATERTHAN", DAY, constant(DAY1, "DATE")), 3),
    (compare("COMPARE_LESSTHANOREQUALTO", DAY, constant(DAY1, "DATE")), 3),
    (between(DAY, constant(DAY2, "DATE"), constant(DAY2, "DATE")), 3),
    (operator("COMPARE_IN", REGION, constant("east", "VARCHAR"), constant("x", "VARCHAR")), 2),
    (operator("COMPARE_NOT_IN", REGION, constant("east", "VARCHAR")), 4),
    (operator("OPERATOR_IS_NULL", REGION), 0),
    (operator("OPERATOR_IS_NOT_NULL", DAY), 6),
    (operator("OPERATOR_NOT", compare("COMPARE_EQUAL", REGION, constant("east", "VARCHAR"))), 4),
    (
        conjunction(
            "CONJUNCTION_AND",
            compare("COMPARE_EQUAL", REGION, constant("north", "VARCHAR")),
            compare("COMPARE_EQUAL", DAY, constant(DAY2, "DATE")),
        ),
        1,
    ),
    (
        conjunction(
            "CONJUNCTION_OR",
            compare("COMPARE_EQUAL", REGION, constant("north", "VARCHAR")),
            compare("COMPARE_LESSTHAN", ID, constant(10, "INTEGER")),
        ),
        6,  # id is no partition key: the OR keeps every partition
    ),
    (
        conjunction(
            "CONJUNCTION_AND",
            compare("COMPARE_EQUAL", REGION, constant("north", "VARCHAR")),
            compare("COMPARE_LESSTHAN", ID, constant(10, "INTEGER")),
        ),
        2,
    ),
    (compare("COMPARE_EQUAL", REGION, constant(None, "VARCHAR")), 0),
    (compare("COMPARE_DISTINCT_FROM", REGION, constant(None, "VARCHAR")), 6),
    (compare("COMPARE_NOT_DISTINCT_FROM", REGION, constant("east", "VARCHAR")), 2),
    (compare("COMPARE_EQUAL", function("lower", REGION), constant("east", "VARCHAR")), 6),
]


@pytest.mark.parametrize(("flt", "expected"), SHAPES, ids=[s.sql for s, _ in SHAPES])
def test_partitions_are_pruned_for_every_filter_shape(
    stack: FlightStack, airport: AirportClient, flt: Node, expected: int
) -> None:
    sales = airport.tables()[(DB, "web_sales")]
    rows, endpoint_count = scanned(airport, sales, flt)
    assert endpoint_count == expected
    con = duckdb.connect()
    con.register("pruned", rows)
    con.register("direct", direct_sales(con, stack))
    assert ids(con, "pruned", flt) == ids(con, "direct", flt)


def random_filter(rng: random.Random, depth: int = 0) -> Node:
    roll = rng.random()
    if depth < 3 and roll < 0.3:
        op = rng.choice(["CONJUNCTION_AND", "CONJUNCTION_OR"])
        return conjunction(op, *(random_filter(rng, depth + 1) for _ in range(rng.randint(2, 3))))
    if depth < 3 and roll < 0.4:
        return operator("OPERATOR_NOT", random_filter(rng, depth + 1))
    op = rng.choice(list(_COMPARE_OPS))
    which = rng.random()
    if which < 0.4:
        value = constant(rng.choice(["east", "west", "north", "a", "zz", None]), "VARCHAR")
        return compare(op, REGION, value)
    if which < 0.7:
        day = rng.choice([DAY1, DAY2, datetime.date(2023, 12, 31), None])
        if rng.random() < 0.2:
            return between(DAY, constant(DAY1, "DATE"), constant(day or DAY2, "DATE"))
        return compare(op, DAY, constant(day, "DATE"))
    if which < 0.85:
        values = [constant(v, "VARCHAR") for v in rng.sample(["east", "west", "q"], 2)]
        return operator(rng.choice(["COMPARE_IN", "COMPARE_NOT_IN"]), REGION, *values)
    return compare(op, ID, constant(rng.randint(0, 600), "INTEGER"))


_COMPARE_OPS = (
    "COMPARE_EQUAL",
    "COMPARE_NOTEQUAL",
    "COMPARE_LESSTHAN",
    "COMPARE_GREATERTHAN",
    "COMPARE_LESSTHANOREQUALTO",
    "COMPARE_GREATERTHANOREQUALTO",
    "COMPARE_DISTINCT_FROM",
    "COMPARE_NOT_DISTINCT_FROM",
)


def test_random_filters_never_lose_a_row(stack: FlightStack, airport: AirportClient) -> None:
    """Three-valued logic on nested AND, OR, NOT, IN, BETWEEN, NULLs and columns that are
    no partition keys: the rows of the pruned scan that pass the filter are DuckDB's."""
    sales = airport.tables()[(DB, "web_sales")]
    rng = random.Random(22)
    con = duckdb.connect()
    con.register("direct", direct_sales(con, stack))
    for _ in range(40):
        flt = random_filter(rng)
        rows, _ = scanned(airport, sales, flt)
        con.register("pruned", rows)
        assert ids(con, "pruned", flt) == ids(con, "direct", flt), flt.sql


def test_get_flight_info_plans_a_whole_scan(airport: AirportClient) -> None:
    """DuckDB's airport_take_flight(location, [path]) asks GetFlightInfo: the table's
    schema and the endpoints of every partition."""
    sales = airport.tables()[(DB, "web_sales")]
    info = airport.client.get_flight_info(sales.info.descriptor, options=airport.headers())
    assert info.schema.equals(sales.schema, check_metadata=False)
    assert len(info.endpoints) == len(partition_values())
    rows = sum(airport.do_get(sales, e).num_rows for e in info.endpoints)
    assert rows == 600
