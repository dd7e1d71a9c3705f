"""The Flight door: an Arrow Flight service for DuckDB's Airport extension, on its own port
of `metastore serve`, over the same database as the Thrift door.

What DuckDB calls (airport.md section 3), each a read of the core run as an operation
(metastore.operation: one transaction with its retries, the log line of a failure, errors
translated once by metastore.flight.door):

| call | answer |
|---|---|
| DoAction create_transaction | {identifier: nil}: nothing to hold, every call reads |
| DoAction list_schemas | the catalog's databases and tables (metastore.flight.catalog) |
| DoAction catalog_version | the catalog's version, which changes with any table |
| DoAction column_statistics | a column's statistics (metastore.flight.statistics) |
| DoAction endpoints | the endpoints of a scan (metastore.flight.scans) |
| DoGet | the rows of one endpoint |
| GetFlightInfo | a table's FlightInfo with the endpoints of a whole scan |

Every action answers with exactly one Result (DuckDB reads the first and dereferences it).
Nothing else is served: writes (DoPut, DoExchange, the create_/drop_/alter actions) get
a clear error that this service only reads. Bad input (an unknown catalog, schema, table
or column, a request that is not msgpack or lacks a field, a forged ticket) gets a Flight
error with a message, typed for DuckDB (door.typed), and one WARNING line; never a crash.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pyarrow.flight as flight
from sqlalchemy.orm import Session

from metastore.access import Policy, parse_group_mapping
from metastore.config import Settings
from metastore.errors import InvalidObject
from metastore.files import object_storage
from metastore.files.errors import FilesError
from metastore.flight import catalog, scans, statistics, types
from metastore.flight.door import FLIGHT_DOOR, typed
from metastore.flight.filters import predicate
from metastore.flight.security import MIDDLEWARE, Caller, CallerFactory, tls_certificates
from metastore.flight.wire import (
    BadRequest,
    field_bytes,
    field_text,
    optional_map,
    pack,
    unpack_map,
)
from metastore.iceberg import parameters as iceberg
from metastore.operation import Operations
from metastore.store import shapes
from metastore.store.transactions import Transactions

log = logging.getLogger(__name__)

T = TypeVar("T")

ACTIONS = {
    "create_transaction": "start a DuckDB transaction (nothing to hold: reads only)",
    "list_schemas": "the databases of a catalog and their tables",
    "catalog_version": "the catalog's version, which changes with any table",
    "column_statistics": "a column's statistics for DuckDB's planner",
    "endpoints": "the endpoints of a scan of a table, pruned with DuckDB's filters",
}


class FlightService(flight.FlightServerBase):  # type: ignore[misc]
    """The Flight door on HOST:PORT (0: a free port) over TX."""

    def __init__(self, tx: Transactions, settings: Settings, host: str, port: int) -> None:
        certificates = tls_certificates(settings.tls_cert, settings.tls_key)
        scheme = "grpc+tls" if certificates else "grpc+tcp"
        super().__init__(
            f"{scheme}://{host}:{port}",
            tls_certificates=certificates or None,
            middleware={MIDDLEWARE: CallerFactory(settings.flight_token)},
        )
        policy = Policy(
            authentication=settings.authentication,
            writers=settings.writers,
            droppers=settings.droppers,
            admins=settings.admins,
            group_mapping=parse_group_mapping(settings.group_mapping),
        )
        self.operations = Operations(tx, policy, FLIGHT_DOOR)
        # Tables on object storage are scanned with the server's own S3A settings (and the
        # process's AWS environment), in this process.
        self.object_storage = object_storage.S3Settings.from_hadoop(dict(settings.s3a))
        object_storage.use(self.object_storage)
        self.tickets = scans.Tickets(secrets.token_bytes(32))
        self.tls = bool(certificates)
        self.token = bool(settings.flight_token)
        self.host = host
        self._thread: threading.Thread | None = None

    # -- running ------------------------------------------------------------------------------

    def start(self) -> None:
        """Serve in a thread of this process (the server listens from its creation)."""
        self._thread = threading.Thread(target=self.serve, name="flight", daemon=True)
        self._thread.start()
        log.info(
            "serving Arrow Flight (DuckDB's Airport) on %s:%d (%s, %s)",
            self.host,
            self.port,
            "TLS" if self.tls else "no TLS",
            "bearer token" if self.token else "no token",
        )
        if self.object_storage.settings:
            log.info("object storage for scans: %r", self.object_storage)  # secrets masked
        if not self.token:
            log.warning(
                "the Flight port has no flight_token: anyone who reaches it reads every "
                "table's metadata, statistics and files"
            )

    def stop(self) -> None:
        self.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=30)

    # -- the calls ---------------------------------------------------------------------------

    def _read(self, name: str, work: Callable[[Session], T]) -> T:
        return self.operations.run(name, work, write=False)

    def list_actions(self, context: Any) -> list[tuple[str, str]]:
        return list(ACTIONS.items())

    def do_action(self, context: Any, action: flight.Action) -> Iterator[bytes]:
        name = action.type
        handler = getattr(self, f"_action_{name}", None) if name in ACTIONS else None
        if handler is None:
            log.warning("action %s refused: not served", name)
            raise typed(
                f"colstats serves reads only: the action {name!r} is not served "
                f"(served: {', '.join(ACTIONS)})"
            )
        body = action.body.to_pybytes() if action.body is not None else b""
        try:
            result: bytes = handler(context, unpack_map(body, name))
        except BadRequest as e:
            log.warning("%s refused: %s", name, e)
            raise typed(str(e)) from None
        return iter([result])

    def _caller(self, context: Any) -> Caller:
        caller: Caller = context.get_middleware(MIDDLEWARE)
        return caller

    def _action_create_transaction(self, context: Any, request: dict[bytes, Any]) -> bytes:
        name = field_text(request, "catalog_name", "create_transaction")
        self._read("create_transaction", lambda s: shapes.database_names(s, name))
        return pack({"identifier": None})

    def _action_list_schemas(self, context: Any, request: dict[bytes, Any]) -> bytes:
        name = field_text(request, "catalog_name", "list_schemas")
        legacy = self._caller(context).legacy
        return self._read("list_schemas", lambda s: catalog.list_schemas(s, name, legacy=legacy))

    def _action_catalog_version(self, context: Any, request: dict[bytes, Any]) -> bytes:
        name = field_text(request, "catalog_name", "catalog_version")

        def version(s: Session) -> dict[str, Any]:
            shapes.database_names(s, name)
            return catalog.version_info(s, name)

        return pack(self._read("catalog_version", version))

    def _table(self, s: Session, descriptor: bytes) -> catalog.TableShape:
        try:
            parsed = flight.FlightDescriptor.deserialize(descriptor)
        except Exception:  # pyarrow raises its own errors for bytes that do not parse
            raise BadRequest("the descriptor is not a serialized FlightDescriptor") from None
        return catalog.describe(s, *catalog.table_path(parsed))

    def _action_column_statistics(self, context: Any, request: dict[bytes, Any]) -> bytes:
        descriptor = field_bytes(request, "flight_descriptor", "column_statistics")
        column = field_text(request, "column_name", "column_statistics")
        legacy = self._caller(context).legacy

        def read(s: Session) -> bytes:
            shape = self._table(s, descriptor)
            index = shape.field_index(column)
            arrow = shape.fields[index].arrow
            stats = statistics.column_statistics(s, shape, index)
            if legacy:
                return pack(statistics.legacy_answer(stats, arrow))
            return statistics.arrow_answer(stats, arrow)

        return self._read("column_statistics", read)

    def _action_endpoints(self, context: Any, request: dict[bytes, Any]) -> bytes:
        descriptor = field_bytes(request, "descriptor", "endpoints")
        parameters = optional_map(request, "parameters", "endpoints")
        filters = parameters.get(b"json_filters") or b""
        if not isinstance(filters, bytes):
            raise BadRequest("endpoints: json_filters must be a string")
        try:
            may_match = predicate(filters.decode())
        except UnicodeDecodeError:
            raise BadRequest("endpoints: json_filters is not UTF-8 text") from None
        planned = self._read(
            "endpoints",
            lambda s: self._plan(s, descriptor, parameters.get(b"column_ids"), may_match),
        )
        return pack(self._endpoints(*planned))

    def _plan(
        self,
        s: Session,
        descriptor: bytes,
        column_ids: Any,
        may_match: Callable[[dict[str, Any]], bool],
    ) -> tuple[catalog.TableShape, Any, list[int], list[tuple[list[str | None], str]]]:
        """What a scan reads: the table, how, its columns and the (values, folder) of the
        partitions the filters leave (the table's folder when unpartitioned)."""
        shape = self._table(s, descriptor)
        columns = scans.requested_columns(shape, column_ids)
        if iceberg.is_iceberg(shape.params):  # its files are planned outside the transaction
            return shape, None, columns, []
        try:
            layout = scans.layout(s, shape)
        except FilesError as e:  # a format the readers do not read
            raise InvalidObject(f"{shape.catalog}.{shape.where} cannot be scanned: {e}") from None
        spec = layout.spec
        if not shape.keys:
            location = layout.location
            return shape, spec, columns, [([], location)] if location else []
        base = (shape.stored.location or "").rstrip("/")
        folders = []
        for part_name, location in shapes.partition_locations(s, shape.stored.tbl_id):
            texts = scans.key_texts(shape, part_name)
            values = {
                key.name: types.key_value(text, key.arrow)
                for key, text in zip(shape.keys, texts, strict=True)
            }
            if may_match(values):
                folders.append((texts, location or f"{base}/{part_name}"))
        return shape, spec, columns, folders

    def _endpoints(
        self,
        shape: catalog.TableShape,
        spec: Any,
        columns: list[int],
        folders: list[tuple[list[str | None], str]],
    ) -> list[bytes]:
        """The endpoints of the planned folders, listed outside the transaction."""
        groups = []
        try:
            if spec is None:  # an Iceberg table: the data files of its current snapshot
                spec, files = scans.iceberg_layout(shape)
                groups = scans.groups_of(files, [], spec)
            for values, location in folders:
                groups.extend(scans.file_groups(location, values, spec))
        except FilesError as e:
            raise typed(f"{shape.catalog}.{shape.where}: {e}") from None
        return scans.endpoints(self.tickets, shape, spec, groups, columns)

    def do_get(self, context: Any, ticket: flight.Ticket) -> flight.FlightDataStream:
        try:
            content = self.tickets.open(ticket.ticket)
        except BadRequest as e:
            log.warning("DoGet refused: %s", e)
            raise typed(str(e)) from None
        return scans.stream(content)

    def get_flight_info(
        self, context: Any, descriptor: flight.FlightDescriptor
    ) -> flight.FlightInfo:
        raw = descriptor.serialize()
        planned = self._read("get_flight_info", lambda s: self._plan(s, raw, None, lambda _: True))
        shape = planned[0]
        endpoints = [flight.FlightEndpoint.deserialize(e) for e in self._endpoints(*planned)]
        return flight.FlightInfo(shape.schema(legacy=False), shape.descriptor(), endpoints, -1, -1)

    def list_flights(self, context: Any, criteria: bytes) -> Iterator[flight.FlightInfo]:
        raise typed(
            "colstats lists its tables with the list_schemas action; ListFlights is not served"
        )

    def do_put(self, context: Any, descriptor: Any, reader: Any, writer: Any) -> None:
        raise typed("colstats serves reads only: DoPut is not served")

    def do_exchange(self, context: Any, descriptor: Any, reader: Any, writer: Any) -> None:
        raise typed("colstats serves reads only: DoExchange is not served")
