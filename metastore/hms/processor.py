"""The calls of a request: the generated processor, a clear answer to the calls colstats does
not serve, the calls of the cache of answers served through it (metastore.hms.cache), the
statistics reads answered with bytes encoded from their rows (metastore.hms.stats_wire), and
the answers rebuilt by the partitions that changed (metastore.hms.pieces, aggr_pieces and
partition_pieces)."""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.exc import SQLAlchemyError
from thrift.protocol.TProtocol import TProtocolBase, TProtocolFactory
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport.TTransport import TMemoryBuffer, TTransportException

from hive_metastore_thrift import ThriftHiveMetastore
from metastore.access import Right, current_connection
from metastore.errors import MetastoreError
from metastore.hms import aggr_pieces, cache, held, partition_pieces, pieces
from metastore.hms.cache import AnswerCache
from metastore.hms.handler import Handler
from metastore.names import InvalidNameError
from metastore.store import versions
from metastore.store.versions import TableName

log = logging.getLogger(__name__)

T = TypeVar("T")

_SINCE_CALLS = frozenset({pieces.CALL, aggr_pieces.CALL})
"""The calls rebuilt, when the table moved and the cache holds their partitions as last
read, from what changed since, read with the table's versions in one statement
(metastore.hms.held)."""

MOVING_KEPT = 4096
"""The requests whose table moved at their last call that a processor remembers (the most
recent, by the hash of their keys): their next call reads the table's versions with what
changed, in one statement, where the others read the versions alone first
(metastore.hms.held). Two keys of one hash only make a call take the other way to the
same answer."""


def _known(found: cache.Versions, tables: list[TableName]) -> bool:
    """Whether FOUND has a version for each of TABLES: an answer may be kept under them."""
    return len(found) == len(set(tables)) and all(v is not None for _, v in found.values())


class _RecentKeys:
    """The last COUNT keys added and not discarded since, for threads sharing them. Their
    reads take no lock: a read that races a change only makes a call take the other way to
    the same answer."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._keys: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, key: int) -> bool:
        return key in self._keys

    def add(self, key: int) -> None:
        with self._lock:
            self._keys[key] = None
            self._keys.move_to_end(key)
            if len(self._keys) > self._count:
                self._keys.popitem(last=False)

    def discard(self, key: int) -> None:
        if key in self._keys:
            with self._lock:
                self._keys.pop(key, None)


# The calls of Hive's ACID tables; colstats serves non-transactional tables only (and the
# locks without a transaction that Iceberg's Hive catalog takes: metastore.hms.handler.locks).
_TRANSACTION_CALLS = frozenset(
    {
        "open_txns",
        "commit_txn",
        "abort_txn",
        "abort_txns",
        "get_open_txns",
        "get_open_txns_info",
        "get_open_txns_req",
        "heartbeat_txn_range",
        "allocate_table_write_ids",
        "get_valid_write_ids",
        "add_dynamic_partitions",
        "compact",
        "compact2",
        "show_compact",
        "replTableWriteIdState",
        "commit_txn_in_streaming",
    }
)


def unserved(method: str) -> str:
    """The message of the answer to a call colstats does not serve."""
    if method in _TRANSACTION_CALLS:
        return (
            f"Unknown function {method}: colstats does not serve Hive ACID transactions "
            "(transactional tables); it serves non-transactional tables, and Iceberg tables "
            "with the locks their Hive catalog takes (lock, check_lock, unlock, heartbeat, "
            "show_locks)"
        )
    return f"Unknown function {method}: colstats does not serve this call"


class Processor(ThriftHiveMetastore.Processor):
    """The generated processor, with a clear answer to the calls colstats does not serve and
    none to a oneway message it does not know (the client reads no answer), the calls of
    metastore.hms.cache.CACHED served through the cache of answers (when there is one),
    get_table_statistics_req and get_partitions_statistics_req answered with their results
    encoded by the handler, and, through the cache, get_aggr_stats_for and the calls of
    partition_pieces.CALLS answered with what the handler encodes from the parts the cache
    keeps."""

    def __init__(
        self, handler: Handler, protocols: TProtocolFactory, cache: AnswerCache | None = None
    ) -> None:
        super().__init__(handler)  # type: ignore[no-untyped-call]  # generated, untyped
        self._protocols = protocols
        self._cache = cache
        settings = handler.settings
        self._variant = f"bitvector={settings.fetch_bitvector},kll={settings.fetch_histogram}"
        self._processMap = {
            **self._processMap,
            "get_table_statistics_req": Processor._table_statistics,
            pieces.CALL: Processor._partitions_statistics,
        }
        if cache is not None:  # answers rebuilt by the partitions that changed
            self._processMap[aggr_pieces.CALL] = Processor._aggr_stats
        self._moving = _RecentKeys(MOVING_KEPT)

    def process(self, iprot: TProtocolBase, oprot: TProtocolBase) -> bool | None:
        name, kind, seqid = iprot.readMessageBegin()
        if self._on_message_begin:  # TProcessor's hook, as the generated process calls it
            self._on_message_begin(name, kind, seqid)
        if name in self._processMap:
            if self._cache is not None and name in cache.CACHED:
                self._through_cache(name, seqid, iprot, oprot)
                return True
            serve: Callable[..., None] = self._processMap[name]
            serve(self, seqid, iprot, oprot)
            return True
        iprot.skip(TType.STRUCT)
        iprot.readMessageEnd()
        log.info("unserved call %s", name)
        if kind == TMessageType.ONEWAY:
            return None
        error = TApplicationException(TApplicationException.UNKNOWN_METHOD, unserved(name))
        oprot.writeMessageBegin(name, TMessageType.EXCEPTION, seqid)
        error.write(oprot)
        oprot.writeMessageEnd()
        oprot.trans.flush()
        return None

    def _through_cache(
        self, name: str, seqid: int, iprot: TProtocolBase, oprot: TProtocolBase
    ) -> None:
        """Call NAME served from the cache when its stored answer was read at the versions
        its tables have now, else rebuilt from what changed since the parts of it held
        (metastore.hms.held) or as any call, its answer stored (metastore.hms.cache).

        A call of _SINCE_CALLS whose table moved at the request's last call (written
        between a planner's reads, as while data is loaded) reads the versions with what
        changed, in one statement; the others read the versions first, a statement that
        costs less when the answer is kept at them, then what changed when it is not."""
        kept = self._cache
        assert kept is not None
        data: bytes = iprot.trans.getvalue()
        key = (name, self._variant, data[cache.header_length(data, name) :])
        arguments = cache.args_struct(name)
        arguments.read(iprot)
        iprot.readMessageEnd()
        tables = cache.CACHED[name](arguments)
        handler: Handler = self._handler
        connection = current_connection()
        if tables is None or (
            connection is not None and not handler.policy.allows(connection, Right.READ)
        ):
            self._send(oprot, cache.replay(self, data, self._protocols))
            return
        since_calls = name in _SINCE_CALLS
        hashed = hash(key)  # what self._moving keeps of it
        moving = since_calls and hashed in self._moving
        found: cache.Versions | None = None
        rebuilt: held.Rebuilt | None = None
        if moving:  # its table moved at the last call: the versions read with what changed
            since = self._since(name, tables[0], arguments)
            if since is not None:
                found, rebuilt = since
        if found is None:
            try:
                found = versions.read(handler.tx, tables)
            except Exception as e:  # the call itself reports what is wrong with the database
                log.debug("%s: the versions of its tables cannot be read: %s", name, e)
                self._send(oprot, cache.replay(self, data, self._protocols))
                return
        body = kept.lookup(key, found)
        if body is not None:
            log.debug("%s answered from the cache", name)
            self._moving.discard(hashed)
            self._send_body(oprot, name, seqid, body)
            return
        known = _known(found, tables)
        if since_calls and not moving and known:  # read again, with what changed since
            since = self._since(name, tables[0], arguments)
            if since is not None:
                found, rebuilt = since
                known = _known(found, tables)
        if rebuilt is not None and known:
            encoded = self._guarded(name, rebuilt)
            if encoded is not None:
                body = pieces.SUCCESS + encoded + pieces.STOP
                kept.store(key, found, body)
                self._moving.add(hashed)
                self._send_body(oprot, name, seqid, body)
                return
        self._moving.discard(hashed)
        if name in partition_pieces.CALLS:  # rebuilt by the partitions that changed
            reply = self._encoded_reply(
                name,
                seqid,
                lambda: handler.partitions_encoded(name, arguments, kept),
                partition_pieces.SUCCESS,
            )
        else:
            reply = cache.replay(self, data, self._protocols)
        body = cache.reply_body(reply, name) if known else None
        if body is not None:
            kept.store(key, found, body)
        self._send(oprot, reply)

    def _since(self, name: str, table: TableName, arguments: Any) -> held.Read | None:
        """The versions of TABLE and call NAME's answer rebuilt from what changed since the
        parts of it held (metastore.hms.held), in one statement; None when nothing is held
        or it fails (`_guarded`)."""
        handler: Handler = self._handler
        kept = self._cache
        assert kept is not None
        return self._guarded(
            name, lambda: handler.answer_since(name, table, arguments.request, kept, self._variant)
        )

    @staticmethod
    def _guarded(name: str, work: Callable[[], T]) -> T | None:
        """WORK, a step of rebuilding call NAME's answer from what changed since the parts
        of it held (one of _SINCE_CALLS: metastore.hms.held), or None when it fails: the
        call then goes as any call, and reports its own errors. A failure other than the
        database's or the request's is logged as a warning: a bug here would otherwise only
        cost a statement or two more per call."""
        try:
            return work()
        except (SQLAlchemyError, MetastoreError, InvalidNameError) as e:
            log.debug("%s: not rebuilt from what changed: %s", name, e)
        except Exception:
            log.warning("%s: not rebuilt from what changed; answered whole", name, exc_info=True)
        return None

    def _table_statistics(self, seqid: int, iprot: TProtocolBase, oprot: TProtocolBase) -> None:
        """get_table_statistics_req encoded from the rows (metastore.hms.stats_wire)."""
        handler: Handler = self._handler
        self._rebuilt(
            "get_table_statistics_req", handler.table_statistics_encoded, seqid, iprot, oprot
        )

    def _partitions_statistics(
        self, seqid: int, iprot: TProtocolBase, oprot: TProtocolBase
    ) -> None:
        """get_partitions_statistics_req encoded from the rows (metastore.hms.stats_wire),
        rebuilt from the parts held with the request in the cache when there is one
        (metastore.hms.pieces)."""
        handler: Handler = self._handler
        cache, variant = self._cache, self._variant
        self._rebuilt(
            pieces.CALL,
            lambda request: handler.partitions_statistics_encoded(request, cache, variant),
            seqid,
            iprot,
            oprot,
        )

    def _aggr_stats(self, seqid: int, iprot: TProtocolBase, oprot: TProtocolBase) -> None:
        """get_aggr_stats_for rebuilt from the runs of partitions held with the request in
        the cache (metastore.hms.aggr_pieces)."""
        handler: Handler = self._handler
        cache, variant = self._cache, self._variant
        assert cache is not None
        self._rebuilt(
            aggr_pieces.CALL,
            lambda request: handler.aggr_stats_encoded(request, cache, variant),
            seqid,
            iprot,
            oprot,
        )

    def _rebuilt(
        self,
        name: str,
        encoded: Callable[[Any], bytes],
        seqid: int,
        iprot: TProtocolBase,
        oprot: TProtocolBase,
    ) -> None:
        """Call NAME, whose argument is one request, answered with the encoded success
        value (a struct) ENCODED gives for it."""
        arguments = cache.args_struct(name)
        arguments.read(iprot)
        iprot.readMessageEnd()
        reply = self._encoded_reply(name, seqid, lambda: encoded(arguments.request), pieces.SUCCESS)
        self._send(oprot, reply)

    def _encoded_reply(
        self,
        name: str,
        seqid: int,
        encoded: Callable[[], bytes],
        success: bytes,
    ) -> bytes:
        """The reply message of call NAME (sequence id SEQID): its success value as ENCODED
        gives it (after SUCCESS, the start of the result's field 0), or its error as the
        generated code answers it (a declared exception in its field of the result, else an
        application exception)."""
        replies = TMemoryBuffer()
        oprot = self._protocols.getProtocol(replies)
        result = cache.result_struct(name)
        try:
            body = encoded()
        except TTransportException:
            raise
        except Exception as e:
            field = _declared_field(result, e)
            if field is not None:
                setattr(result, field, e)
                kind = TMessageType.REPLY
            elif isinstance(e, TApplicationException):
                log.exception("TApplication exception in handler")
                result, kind = e, TMessageType.EXCEPTION
            else:
                log.exception("Unexpected exception in handler")
                kind = TMessageType.EXCEPTION
                result = TApplicationException(
                    TApplicationException.INTERNAL_ERROR, "Internal error"
                )
            oprot.writeMessageBegin(name, kind, seqid)
            result.write(oprot)
        else:
            oprot.writeMessageBegin(name, TMessageType.REPLY, seqid)
            oprot.trans.write(success + body + pieces.STOP)
        oprot.writeMessageEnd()
        value: bytes = replies.getvalue()
        return value

    @staticmethod
    def _send_body(oprot: TProtocolBase, name: str, seqid: int, body: bytes) -> None:
        """Send the reply of call NAME whose result struct is encoded as BODY."""
        oprot.writeMessageBegin(name, TMessageType.REPLY, seqid)
        oprot.trans.write(body)
        oprot.writeMessageEnd()
        oprot.trans.flush()

    @staticmethod
    def _send(oprot: TProtocolBase, reply: bytes) -> None:
        oprot.trans.write(reply)
        oprot.trans.flush()


def _declared_field(result: Any, error: Exception) -> str | None:
    """The field of RESULT (a call's result struct) that holds ERROR, when the call declares
    its class (the fields after the success value, by their thrift_spec)."""
    for spec in result.thrift_spec[1:]:
        if spec is not None and spec[1] == TType.STRUCT and isinstance(error, spec[3][0]):
            name: str = spec[2]
            return name
    return None
