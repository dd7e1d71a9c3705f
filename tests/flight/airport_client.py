"""A client that replays what DuckDB's Airport extension sends (airport.md sections 1-5),
byte for byte, with its headers, and reads the replies as DuckDB does: the first Result
only, msgpack maps with STR keys (msgpack-c rejects others), compressed content checked
against its length, statistics as an IPC stream whose first batch has one row.

Requests are packed as msgpack-c packs them: every std::string as STR, binary payloads
(a protobuf FlightDescriptor) included, map keys in the order of the C++ struct.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgpack
import pyarrow as pa
import pyarrow.flight as flight
import zstandard

USER_AGENT = "airport/20250723"
LEGACY_USER_AGENT = "airport/20240820"
ROWID = 2**64 - 1
NO_COLUMN = 2**64 - 2
GOLDEN = json.loads((Path(__file__).parent / "golden_requests.json").read_text())
"""Name -> hex of request bodies as DuckDB sends them."""


def pack(value: Any) -> bytes:
    """VALUE packed as msgpack-c packs DuckDB's structs: bytes go as STR."""
    packer = msgpack.Packer(use_bin_type=True, unicode_errors="surrogateescape")
    return bytes(packer.pack(_as_text(value)))


def _as_text(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, dict):
        return {k: _as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    return value


def unpack(body: bytes) -> Any:
    """A reply read as msgpack-c reads it: map keys must be STR."""
    value = msgpack.unpackb(body, raw=False, strict_map_key=False)
    _check_keys(value)
    return value


def _check_keys(value: Any) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str), f"a map key that is not STR: {key!r}"
            _check_keys(item)
    elif isinstance(value, list):
        for item in value:
            _check_keys(item)


def decompress(content: Any) -> bytes:
    """Airport's compressed content [length, zstd frame], as DuckDB reads it."""
    assert isinstance(content, list) and len(content) == 2, content
    length, frame = content
    assert isinstance(length, int) and isinstance(frame, bytes)
    data = zstandard.ZstdDecompressor().decompress(frame, max_output_size=length)
    assert len(data) == length
    return data


@dataclasses.dataclass
class Table:
    """A table as DuckDB files it from list_schemas."""

    info: flight.FlightInfo
    metadata: dict[str, Any]

    @property
    def schema(self) -> pa.Schema:
        return self.info.schema

    @property
    def descriptor(self) -> bytes:
        return bytes(self.info.descriptor.serialize())

    @property
    def advertises_statistics(self) -> bool:
        meta = self.schema.metadata or {}
        return bool(meta.get(b"can_produce_statistics"))


class AirportClient:
    """DuckDB attached to LOCATION as CATALOG (with a bearer TOKEN when given)."""

    def __init__(
        self,
        location: str,
        catalog: str,
        *,
        token: str | None = None,
        user_agent: str = USER_AGENT,
        tls_root: bytes | None = None,
    ) -> None:
        self.location = location
        self.catalog = catalog
        self.token = token
        self.user_agent = user_agent
        self.session = str(uuid.uuid4())
        kwargs: dict[str, Any] = {}
        if tls_root is not None:
            kwargs["tls_root_certs"] = tls_root
        self.client = flight.FlightClient(location, **kwargs)

    def close(self) -> None:
        self.client.close()

    def headers(self, *, action: str | None = None, scan: bool = False, path: str = "") -> Any:
        headers = [
            (b"airport-user-agent", self.user_agent.encode()),
            (b"authority", self.location.encode()),
            (b"airport-client-session-id", self.session.encode()),
            (b"airport-catalog", self.catalog.encode()),
        ]
        if self.token is not None:
            headers.append((b"authorization", f"Bearer {self.token}".encode()))
        if scan:
            headers.append((b"airport-trace-id", str(uuid.uuid4()).encode()))
        if path:
            headers.append((b"airport-flight-path", path.encode()))
        if action is not None:
            headers.append((b"airport-action-name", action.encode()))
        return flight.FlightCallOptions(headers=headers, timeout=120)

    def action(self, name: str, body: bytes, *, scan: bool = False) -> bytes:
        """The first Result of DoAction NAME (the others are drained, as DuckDB does)."""
        results = self.client.do_action(
            flight.Action(name, body), options=self.headers(action=name, scan=scan)
        )
        first = next(iter(results))
        for _ in results:
            pass
        return bytes(first.body.to_pybytes())

    # -- the sequence of ATTACH and SELECT ---------------------------------------------------

    def create_transaction(self) -> dict[str, Any]:
        reply: dict[str, Any] = unpack(
            self.action("create_transaction", pack({"catalog_name": self.catalog}))
        )
        return reply

    def list_schemas(self) -> dict[str, Any]:
        root: dict[str, Any] = unpack(
            decompress(unpack(self.action("list_schemas", pack({"catalog_name": self.catalog}))))
        )
        assert set(root) >= {"contents", "schemas", "version_info"}
        assert set(root["version_info"]) == {"catalog_version", "is_fixed"}
        return root

    def tables(self) -> dict[tuple[str, str], Table]:
        """(schema, table) -> Table, decoded from list_schemas' inline contents as DuckDB
        decodes them (SHA-256 checked)."""
        import hashlib

        out = {}
        for schema in self.list_schemas()["schemas"]:
            contents = schema["contents"]
            blob = contents["serialized"]
            assert contents["sha256"] == hashlib.sha256(blob).hexdigest()
            for item in unpack(decompress(unpack(blob))):
                info = flight.FlightInfo.deserialize(item)
                metadata = unpack(info.app_metadata)
                assert metadata["catalog"] == self.catalog and metadata["schema"] == schema["name"]
                out[(schema["name"], metadata["name"])] = Table(info, metadata)
        return out

    def catalog_version(self) -> dict[str, Any]:
        reply: dict[str, Any] = unpack(
            self.action("catalog_version", pack({"catalog_name": self.catalog}))
        )
        return reply

    def column_statistics_raw(self, table: Table, column: str, duckdb_type: str) -> bytes:
        body = pack(
            {"flight_descriptor": table.descriptor, "column_name": column, "type": duckdb_type}
        )
        return self.action("column_statistics", body, scan=True)

    def column_statistics(self, table: Table, column: str, duckdb_type: str) -> pa.RecordBatch:
        """The statistics batch, checked as DuckDB checks it."""
        body = self.column_statistics_raw(table, column, duckdb_type)
        reader = pa.ipc.open_stream(pa.py_buffer(body))
        batch = reader.read_next_batch()
        assert batch.num_rows == 1
        for name in ("min", "max", "has_not_null", "has_null", "distinct_count"):
            assert name in batch.schema.names, name
        for name in ("has_not_null", "has_null", "distinct_count"):
            assert batch.column(name).null_count == 0, name
        return batch

    def endpoints(
        self,
        table: Table,
        *,
        json_filters: str = "",
        column_ids: Sequence[int] | None = None,
    ) -> list[flight.FlightEndpoint]:
        ids = list(range(len(table.schema))) if column_ids is None else list(column_ids)
        body = pack(
            {
                "descriptor": table.descriptor,
                "parameters": {
                    "json_filters": json_filters,
                    "column_ids": ids,
                    "table_function_parameters": "",
                    "table_function_input_schema": "",
                    "at_unit": "",
                    "at_value": "",
                },
            }
        )
        reply = unpack(self.action("endpoints", body, scan=True))
        return [flight.FlightEndpoint.deserialize(e) for e in reply]

    def do_get(self, table: Table, endpoint: flight.FlightEndpoint) -> pa.Table:
        path = "/".join(p.decode() for p in table.info.descriptor.path)
        reader = self.client.do_get(endpoint.ticket, options=self.headers(scan=True, path=path))
        result: pa.Table = reader.read_all()
        assert result.schema.equals(table.schema, check_metadata=False)
        return result

    def scan(
        self,
        table: Table,
        *,
        json_filters: str = "",
        column_ids: Sequence[int] | None = None,
        threads: int = 4,
    ) -> pa.Table:
        """Every endpoint read, several at once (DuckDB reads one endpoint a thread)."""
        endpoints = self.endpoints(table, json_filters=json_filters, column_ids=column_ids)
        with ThreadPoolExecutor(max_workers=threads) as pool:
            parts = list(pool.map(lambda e: self.do_get(table, e), endpoints))
        if not parts:
            return table.schema.empty_table()
        return pa.concat_tables(parts)
