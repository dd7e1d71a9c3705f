"""A cache of the encoded answers of the read calls that planners repeat, exact whatever the
number of servers on one database.

A planner asks the same things for every query: a table, its partitions by a filter or by
names, their names, their statistics. An answer here is the encoded result struct of such a
call, stored under the call's name and the bytes of its arguments (so two requests share an
answer only when they ask exactly the same thing; the server's settings that change answers,
sketches or not, are part of the key too), with the versions of the tables it was read at
(metastore.store.versions: moved by every change, in the change's transaction, on any
server).

A call served through the cache reads the versions of its tables first, in one statement,
and serves the stored bytes when they are the versions of the stored answer; otherwise it
runs as any call and stores its answer under the versions it read. The versions are read
before the answer, so an answer is never stored under versions newer than its data (at
worst, newer data under older versions: the next call finds other versions and reads again),
and never older than every change committed before the call began. (Two statistics reads
over many partitions may instead be rebuilt from parts and stored under the version read
in the same statement as what changed: metastore.hms.held.) An answer replaces a
stored one only when it was read at versions no older than the stored one's. Errors are not
stored. Entries are evicted least recently used first, when the bytes they hold pass the
cache's size; nothing is loaded ahead (no warm-up).

Which calls go through it, and the tables each answer depends on, is `CACHED`: every read
of named tables a planner makes. Calls whose answer depends on which tables or databases
exist (listings, name patterns) are left out. None is left out for its cost: even the one
statement of get_partition_names_ps costs more on PostgreSQL than reading the versions, and
about as much end to end on SQLite (bench/README.md).
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import struct
import threading
from collections.abc import Callable, Sequence
from typing import Any

from thrift.protocol.TProtocol import TProtocolBase, TProtocolFactory
from thrift.Thrift import TMessageType
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ThriftHiveMetastore as Idl
from metastore import names
from metastore.store.versions import TableName

log = logging.getLogger(__name__)

Versions = dict[TableName, tuple[int, int | None]]
Key = tuple[str, str, bytes]
"""(call, the server's settings that change answers, the encoded arguments)."""

_ENTRY_OVERHEAD = 200
"""Bytes an entry costs besides its key and answer (the entry, its dict slot, the versions)."""


@dataclasses.dataclass(frozen=True)
class _Entry:
    versions: Versions
    body: object
    """An encoded answer (bytes), or a part of answers (metastore.hms.aggr_pieces)."""
    size: int


@dataclasses.dataclass
class CacheCounters:
    """What the cache has done since the server started; hits and misses by call."""

    hits: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    misses: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    stored: int = 0
    evictions: int = 0


class AnswerCache:
    """Encoded answers by key, with the versions they were read at, in at most MAX_BYTES
    (least recently used evicted first). Safe for the server's worker threads."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        """The bytes the entries may hold; 0 turns the cache off."""
        self.bytes = 0
        self.counters = CacheCounters()
        self._entries: collections.OrderedDict[Key, _Entry] = collections.OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, key: Key, versions: Versions) -> bytes | None:
        """The answer stored under KEY when it was read at VERSIONS (counted as a hit), else
        None (a miss)."""
        body = self.lookup_object(key, versions)
        return body if isinstance(body, bytes) else None

    def lookup_object(self, key: Key, versions: Versions) -> object | None:
        """As `lookup`, for what `store_object` keeps."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.versions == versions:
                self._entries.move_to_end(key)
                self.counters.hits[key[0]] += 1
                return entry.body
            self.counters.misses[key[0]] += 1
            return None

    def store(self, key: Key, versions: Versions, body: bytes) -> None:
        """Keep BODY, read at VERSIONS, under KEY, unless the stored answer is newer."""
        self.store_object(key, versions, body, len(body))

    def store_object(self, key: Key, versions: Versions, body: object, size: int) -> None:
        """As `store`, for a BODY other than an encoded answer, of about SIZE bytes (what
        the cache counts against its size)."""
        size += len(key[2]) + _ENTRY_OVERHEAD
        if size > self.max_bytes:
            return
        with self._lock:
            stored = self._entries.get(key)
            if stored is not None:
                if _newer(stored.versions, versions):
                    return
                self.bytes -= stored.size
            self._entries[key] = _Entry(versions, body, size)
            self._entries.move_to_end(key)
            self.bytes += size
            self.counters.stored += 1
            while self.bytes > self.max_bytes:
                _, evicted = self._entries.popitem(last=False)
                self.bytes -= evicted.size
                self.counters.evictions += 1


def _newer(stored: Versions, read: Versions) -> bool:
    """Whether STORED was read at a later state than READ: some table both name has a
    higher version in STORED, and none a lower one. Versions are drawn from one source for
    all tables, so versions of a table dropped and created again compare too."""
    common = stored.keys() & read.keys()
    pairs = [(stored[t][1] or 0, read[t][1] or 0) for t in common]
    return any(s > r for s, r in pairs) and all(s >= r for s, r in pairs)


# ------------------------------------------------------------------------------------------
# The calls served through the cache


def _table(db_arg: str | None, table: str | None, catalog: str | None = None) -> TableName | None:
    """The stored name of table TABLE of database DB_ARG (which may carry a catalog prefix;
    CATALOG wins); None when they name no table."""
    if not db_arg or not table:
        return None
    try:
        cat, db = names.split_catalog(db_arg)
    except names.InvalidNameError:
        return None
    if catalog:
        cat = catalog
    if not db:
        return None
    return (names.identifier(cat), names.identifier(db), names.identifier(table))


def _one(found: TableName | None) -> list[TableName] | None:
    return None if found is None else [found]


def _many(db_arg: str | None, tables: Sequence[str] | None, catalog: str | None = None) -> Any:
    if tables is None:  # every table of the database: the answer depends on which exist
        return None
    found = [_table(db_arg, table, catalog) for table in tables if table]
    return None if any(f is None for f in found) else found


def _by_db_and_table(args: Any) -> list[TableName] | None:
    return _one(_table(args.db_name, args.tbl_name))


def _by_request(args: Any) -> list[TableName] | None:
    request = args.request
    return (
        None if request is None else _one(_table(request.dbName, request.tblName, request.catName))
    )


def _by_fields(args: Any) -> list[TableName] | None:
    # HMS accepts "table.field..." (nested fields): the table is the first part.
    return _one(_table(args.db_name, (args.table_name or "").split(".", 1)[0]))


CACHED: dict[str, Callable[[Any], list[TableName] | None]] = {
    "get_table": lambda a: _one(_table(a.dbname, a.tbl_name)),
    "get_table_req": lambda a: (
        None if a.req is None else _one(_table(a.req.dbName, a.req.tblName, a.req.catName))
    ),
    "get_table_objects_by_name": lambda a: _many(a.dbname, a.tbl_names),
    "get_table_objects_by_name_req": lambda a: (
        None if a.req is None else _many(a.req.dbName, a.req.tblNames, a.req.catName)
    ),
    "get_fields": _by_fields,
    "get_fields_with_environment_context": _by_fields,
    "get_schema": _by_fields,
    "get_schema_with_environment_context": _by_fields,
    "get_partition": _by_db_and_table,
    "get_partition_by_name": _by_db_and_table,
    "get_partition_with_auth": _by_db_and_table,
    "get_partitions": _by_db_and_table,
    "get_partitions_by_names": _by_db_and_table,
    "get_partitions_ps": _by_db_and_table,
    "get_partitions_ps_with_auth": _by_db_and_table,
    "get_partitions_by_filter": _by_db_and_table,
    "get_num_partitions_by_filter": _by_db_and_table,
    "get_partition_names": _by_db_and_table,
    "get_partition_names_ps": _by_db_and_table,
    "get_table_column_statistics": _by_db_and_table,
    "get_partition_column_statistics": _by_db_and_table,
    "get_table_statistics_req": _by_request,
    "get_partitions_statistics_req": _by_request,
    "get_aggr_stats_for": _by_request,
}
"""The calls served through the cache: for the arguments of a call, the tables its answer
depends on (None: these arguments are not served through the cache)."""


# ------------------------------------------------------------------------------------------
# Encoded messages


def header_length(data: bytes, name: str) -> int:
    """The length of the header of a binary-protocol message of call NAME at the start of
    DATA: strict (version and type, name, sequence id) or old style (name, type, id)."""
    strict = len(data) > 0 and data[0] & 0x80
    return (12 if strict else 9) + len(name.encode("utf-8"))


def reply_body(reply: bytes, name: str) -> bytes | None:
    """The result struct of a strict REPLY message of call NAME that carries a success value
    (the struct's first field is field 0); None for an exception or an error reply."""
    start = header_length(reply, name)
    if len(reply) < start + 3 or not reply[0] & 0x80:
        return None
    kind = reply[3]
    (field,) = struct.unpack_from(">h", reply, start + 1)
    if kind != TMessageType.REPLY or reply[start] == 0 or field != 0:
        return None
    return reply[start:]


def args_struct(name: str) -> Any:
    """A new, empty argument struct of call NAME."""
    return getattr(Idl, f"{name}_args")()


def result_struct(name: str) -> Any:
    """A new, empty result struct of call NAME."""
    return getattr(Idl, f"{name}_result")()


def replay(processor: Any, data: bytes, protocols: TProtocolFactory) -> bytes:
    """The reply PROCESSOR's generated code gives to the request DATA."""
    requests, replies = TMemoryBuffer(data), TMemoryBuffer()
    iprot: TProtocolBase = protocols.getProtocol(requests)
    name, _, seqid = iprot.readMessageBegin()
    processor._processMap[name](processor, seqid, iprot, protocols.getProtocol(replies))
    reply: bytes = replies.getvalue()
    return reply
