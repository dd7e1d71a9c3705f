"""ATTACH and the catalog, as DuckDB's Airport meets them: create_transaction, list_schemas
(every database a schema, every table a table whose columns are its columns and then its
partition keys, with Hive's types as Arrow's), catalog_version moving with every change,
and the golden request bytes."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest
from airport_client import GOLDEN, AirportClient, pack, unpack
from conftest import RunningServer
from flight_tables import CATALOG, DB, FlightStack, hive_db, start
from metadata_builders import fields, partition, storage, table

from metastore.arrow_types import arrow_type
from metastore.flight.types import duckdb_type


@pytest.fixture(scope="module")
def stack(server: RunningServer) -> Iterator[FlightStack]:
    yield from start(server)


@pytest.fixture
def airport(stack: FlightStack) -> Iterator[AirportClient]:
    client = stack.airport()
    yield client
    client.close()


def test_the_client_packs_requests_as_duckdb_does() -> None:
    """The golden bytes of airport.md (msgpack-c's packing of DuckDB's request) come out of
    the replaying client's packer."""
    import pyarrow.flight as flight

    descriptor = flight.FlightDescriptor.for_path(CATALOG, DB, "table", "web_sales")
    body = pack(
        {
            "flight_descriptor": descriptor.serialize(),
            "column_name": "ws_price",
            "type": "DECIMAL(7,2)",
        }
    )
    assert body.hex() == GOLDEN["column_statistics_web_sales_ws_price"]
    assert pack({"catalog_name": CATALOG}).hex() == GOLDEN["list_schemas_colstats"]


def test_attach_lists_every_database_and_table(airport: AirportClient) -> None:
    assert airport.create_transaction() == {"identifier": None}
    root = airport.list_schemas()
    assert [s["name"] for s in root["schemas"]] == [DB]
    assert root["version_info"]["is_fixed"] is False
    assert 0 <= root["version_info"]["catalog_version"] < 2**63
    tables = airport.tables()
    assert sorted(name for _, name in tables) == ["events", "json_t", "orc_t", "web_sales"]
    sales = tables[(DB, "web_sales")]
    assert sales.schema.names == [
        "id",
        "ws_price",
        "name",
        "code",
        "ts",
        "score",
        "small",
        "flag",
        "tags",
        "attrs",
        "info",
        "region",
        "day",
    ]
    assert sales.schema.field("ws_price").type == pa.decimal128(7, 2)
    assert sales.schema.field("day").type == pa.date32()
    assert sales.metadata["type"] == "table"
    assert sales.advertises_statistics


def test_the_golden_requests_are_answered(stack: FlightStack, airport: AirportClient) -> None:
    """DuckDB's exact bytes: the statistics of web_sales.ws_price, list_schemas."""
    body = airport.action(
        "column_statistics",
        bytes.fromhex(GOLDEN["column_statistics_web_sales_ws_price"]),
        scan=True,
    )
    batch = pa.ipc.open_stream(pa.py_buffer(body)).read_next_batch()
    assert batch.schema.field("min").type == pa.decimal128(7, 2)
    reply = unpack(airport.action("list_schemas", bytes.fromhex(GOLDEN["list_schemas_colstats"])))
    assert isinstance(reply, list) and len(reply) == 2
    assert unpack(
        airport.action("create_transaction", bytes.fromhex(GOLDEN["create_transaction_colstats"]))
    ) == {"identifier": None}


def test_catalog_version_moves_with_every_change(
    stack: FlightStack, airport: AirportClient
) -> None:
    client, transport = stack.thrift()
    seen = [airport.catalog_version()["catalog_version"]]

    def changed() -> None:
        version = airport.catalog_version()["catalog_version"]
        assert version != seen[-1]
        seen.append(version)

    try:
        client.create_table(
            table(hive_db(), "scratch", keys=fields(("p", "string")), catName=CATALOG)
        )
        changed()
        new = partition(DB, "scratch", ["a"])
        new.catName = CATALOG
        client.add_partition(new)
        changed()
        altered = client.get_table(hive_db(), "scratch")
        altered.parameters["comment"] = "now with a comment"
        client.alter_table(hive_db(), "scratch", altered)
        changed()
        client.drop_table(hive_db(), "scratch", True)
        changed()
        assert (DB, "scratch") not in airport.tables()
        assert seen[-1] == seen[0]  # the catalog is as it was: so is its version
    finally:
        transport.close()
    assert airport.catalog_version() == {"catalog_version": seen[-1], "is_fixed": False}


HIVE_TYPES = [
    ("boolean", pa.bool_(), "BOOLEAN"),
    ("tinyint", pa.int8(), "TINYINT"),
    ("smallint", pa.int16(), "SMALLINT"),
    ("int", pa.int32(), "INTEGER"),
    ("bigint", pa.int64(), "BIGINT"),
    ("float", pa.float32(), "FLOAT"),
    ("double", pa.float64(), "DOUBLE"),
    ("decimal", pa.decimal128(10, 0), "DECIMAL(10,0)"),
    ("decimal(38,10)", pa.decimal128(38, 10), "DECIMAL(38,10)"),
    ("string", pa.string(), "VARCHAR"),
    ("varchar(20)", pa.string(), "VARCHAR"),
    ("char(3)", pa.string(), "VARCHAR"),
    ("binary", pa.binary(), "BLOB"),
    ("date", pa.date32(), "DATE"),
    ("timestamp", pa.timestamp("us"), "TIMESTAMP"),
    ("timestamp with local time zone", pa.timestamp("us", "UTC"), "TIMESTAMP WITH TIME ZONE"),
    ("interval_day_time", pa.month_day_nano_interval(), "INTERVAL"),
    ("void", pa.null(), '"NULL"'),
    ("array<int>", pa.list_(pa.int32()), "INTEGER[]"),
    (
        "map<string,array<date>>",
        pa.map_(pa.string(), pa.list_(pa.date32())),
        "MAP(VARCHAR, DATE[])",
    ),
    (
        "struct<a:int,b:struct<c:string>>",
        pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.string())]))]),
        "STRUCT(a INTEGER, b STRUCT(c VARCHAR))",
    ),
]


@pytest.mark.parametrize(("hive", "arrow", "duck"), HIVE_TYPES, ids=[h for h, _, _ in HIVE_TYPES])
def test_every_hive_type_has_its_arrow_type(hive: str, arrow: pa.DataType, duck: str) -> None:
    assert arrow_type(hive) == arrow
    assert duckdb_type(arrow) == duck


def test_duckdb_reads_the_arrow_types_as_the_type_table_says() -> None:
    import duckdb

    columns = {
        f"c{i}": pa.array([None], arrow)
        for i, (_, arrow, duck) in enumerate(HIVE_TYPES)
        if duck not in ('"NULL"',)
    }
    con = duckdb.connect()
    relation = con.from_arrow(pa.table(columns))
    read = dict(zip(relation.columns, [str(t) for t in relation.types], strict=True))
    for i, (_, _, duck) in enumerate(HIVE_TYPES):
        if f"c{i}" in read:
            assert read[f"c{i}"] == duck, (i, duck)


def test_a_table_of_every_type_is_listed(stack: FlightStack, airport: AirportClient) -> None:
    client, transport = stack.thrift()
    try:
        columns = [(f"c{i}", hive) for i, (hive, _, _) in enumerate(HIVE_TYPES)]
        client.create_table(
            table(hive_db(), "all_types", sd=storage(fields(*columns)), catName=CATALOG)
        )
        listed = airport.tables()[(DB, "all_types")]
        assert [f.type for f in listed.schema] == [arrow for _, arrow, _ in HIVE_TYPES]
        # binary, interval and void columns: DuckDB takes no statistics for them
        assert not listed.advertises_statistics
        client.drop_table(hive_db(), "all_types", True)
    finally:
        transport.close()
