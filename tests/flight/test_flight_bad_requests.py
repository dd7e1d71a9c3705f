"""Bad input first: unknown catalogs, schemas, tables and columns, requests that are not
what DuckDB sends, forged tickets, writes, a missing or wrong bearer token. Each gets a
Flight error with a clear message, typed for DuckDB (extra_info msgpack {exception_type,
message}), and the server goes on serving."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import msgpack
import pyarrow as pa
import pyarrow.flight as flight
import pytest
from airport_client import AirportClient, pack
from conftest import RunningServer
from flight_tables import CATALOG, DB, PARQUET_SERDE, FlightStack, hive_db, start
from metadata_builders import fields, storage, table

from hive_metastore_thrift import ttypes as t
from metastore.flight.server import FlightService


@pytest.fixture(scope="module")
def stack(server: RunningServer) -> Iterator[FlightStack]:
    yield from start(server)


@pytest.fixture
def airport(stack: FlightStack) -> Iterator[AirportClient]:
    client = stack.airport()
    yield client
    client.close()


def refused(call: Callable[[], Any], words: str) -> flight.FlightError:
    """The error CALL gets: typed for DuckDB as InvalidInputException, with WORDS."""
    with pytest.raises(flight.FlightError) as raised:
        call()
    error = raised.value
    assert words in str(error), str(error)
    detail = msgpack.unpackb(error.extra_info, raw=False)
    assert detail["exception_type"] == "InvalidInputException"
    assert words in detail["message"]
    return error


def descriptor(*path: str) -> bytes:
    return bytes(flight.FlightDescriptor.for_path(*path).serialize())


def statistics_request(desc: bytes, column: str = "id") -> bytes:
    return pack({"flight_descriptor": desc, "column_name": column, "type": "INTEGER"})


def test_unknown_catalogs_schemas_tables_and_columns(airport: AirportClient) -> None:
    for action in ("create_transaction", "list_schemas", "catalog_version"):
        refused(
            lambda a=action: airport.action(a, pack({"catalog_name": "nope"})),  # type: ignore[misc]
            "catalog nope does not exist; ATTACH one of: colstats, hive",
        )
    refused(
        lambda: airport.action(
            "column_statistics", statistics_request(descriptor(CATALOG, "nodb", "table", "t"))
        ),
        "schema colstats.nodb does not exist",
    )
    refused(
        lambda: airport.action(
            "column_statistics", statistics_request(descriptor(CATALOG, DB, "table", "nope"))
        ),
        "table colstats.default.nope does not exist",
    )
    refused(
        lambda: airport.action(
            "column_statistics", statistics_request(descriptor(CATALOG, DB, "table", "orc_t"), "zz")
        ),
        "has no column 'zz'; its columns are id, v",
    )
    refused(
        lambda: airport.action("column_statistics", statistics_request(descriptor("a", "b"))),
        "the descriptor does not name a table of this service",
    )


def test_requests_that_are_not_what_duckdb_sends(airport: AirportClient) -> None:
    refused(
        lambda: airport.action("list_schemas", b"\xc1"), "list_schemas: the request is not msgpack"
    )
    refused(lambda: airport.action("list_schemas", pack([1, 2])), "must be a msgpack map")
    refused(lambda: airport.action("list_schemas", pack({})), "the request needs catalog_name")
    refused(
        lambda: airport.action("list_schemas", pack({"catalog_name": 5})),
        "the request needs catalog_name (a string)",
    )
    refused(
        lambda: airport.action(
            "column_statistics", pack({"flight_descriptor": b"\xff\xfe", "column_name": "id"})
        ),
        "not a serialized FlightDescriptor",
    )
    orc = descriptor(CATALOG, DB, "table", "orc_t")
    refused(
        lambda: airport.action(
            "endpoints", pack({"descriptor": orc, "parameters": {"column_ids": "x"}})
        ),
        "column_ids must be a list",
    )
    refused(
        lambda: airport.action(
            "endpoints", pack({"descriptor": orc, "parameters": {"column_ids": [7]}})
        ),
        "column id 7 is not a column of default.orc_t (2 columns)",
    )
    refused(
        lambda: airport.action(
            "endpoints", pack({"descriptor": orc, "parameters": {"json_filters": "{nope"}})
        ),
        "json_filters is not JSON",
    )
    refused(
        lambda: airport.action("endpoints", pack({"parameters": {}})),
        "the request needs descriptor",
    )


def test_forged_tickets_writes_and_unknown_actions(airport: AirportClient) -> None:
    orc = airport.tables()[(DB, "orc_t")]
    (endpoint,) = airport.endpoints(orc)
    ticket = endpoint.ticket.ticket  # its last byte changed (a fixed one may be the same)
    forged = flight.FlightEndpoint(ticket[:-1] + bytes([ticket[-1] ^ 1]), [])
    refused(lambda: airport.do_get(orc, forged), "the ticket is not one this server issued")
    refused(
        lambda: airport.action("create_table", pack({"catalog_name": CATALOG})),
        "colstats serves reads only: the action 'create_table' is not served",
    )
    writer, _ = airport.client.do_put(
        flight.FlightDescriptor.for_path("x"), pa.schema([("a", pa.int32())])
    )
    with pytest.raises(flight.FlightError, match="DoPut is not served"):
        writer.close()
    refused(lambda: list(airport.client.list_flights()), "ListFlights is not served")
    # and the server still serves
    assert airport.scan(orc).num_rows == 20


@dataclasses.dataclass
class Guarded:
    service: FlightService
    location: str


@pytest.fixture(scope="module")
def guarded(server: RunningServer) -> Iterator[Guarded]:
    settings = dataclasses.replace(server.settings, flight_token="s3cret")
    service = FlightService(server.handler.tx, settings, "127.0.0.1", 0)
    service.start()
    yield Guarded(service, f"grpc://127.0.0.1:{service.port}")
    service.stop()


def test_a_bearer_token_is_required_when_set(guarded: Guarded) -> None:
    for token, words in ((None, "needs a bearer token"), ("wrong", "is not this colstats")):
        client = AirportClient(guarded.location, "hive", token=token)
        try:
            with pytest.raises(flight.FlightUnauthenticatedError, match=words):
                client.create_transaction()
        finally:
            client.close()
    client = AirportClient(guarded.location, "hive", token="s3cret")
    try:
        assert client.create_transaction() == {"identifier": None}
        assert "default" in [s["name"] for s in client.list_schemas()["schemas"]]
    finally:
        client.close()


def test_files_that_do_not_read_get_a_clear_error(
    stack: FlightStack, airport: AirportClient
) -> None:
    """A table in a format the readers do not read, and a Parquet table whose file is not
    Parquet: the scan's planning or its DoGet fails with a message naming the table."""
    client, transport = stack.thrift()
    try:
        folder = stack.folder / "broken"
        folder.mkdir()
        (folder / "part-0.parquet").write_bytes(b"this is no parquet file")
        parquet = t.SerDeInfo("s", PARQUET_SERDE, {})
        client.create_table(
            table(
                hive_db(),
                "broken",
                sd=storage(fields(("id", "int")), f"file:{folder}", serdeInfo=parquet),
                catName=CATALOG,
            )
        )
        avro = t.SerDeInfo("s", "org.apache.hadoop.hive.serde2.avro.AvroSerDe", {})
        client.create_table(
            table(
                hive_db(),
                "avro_t",
                sd=storage(
                    fields(("id", "int")),
                    f"file:{folder}",
                    inputFormat="org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat",
                    serdeInfo=avro,
                ),
                catName=CATALOG,
            )
        )
    finally:
        transport.close()
    tables = airport.tables()
    refused(
        lambda: airport.endpoints(tables[(DB, "avro_t")]),
        "colstats.default.avro_t cannot be scanned: default.avro_t is stored as",
    )
    broken = tables[(DB, "broken")]
    (endpoint,) = airport.endpoints(broken)
    refused(lambda: airport.do_get(broken, endpoint), "colstats.default.broken: cannot read")
    assert airport.scan(tables[(DB, "orc_t")]).num_rows == 20
