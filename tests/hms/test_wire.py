"""Where a request ends (metastore.hms.wire): any split of a stream of real requests gives the same
messages; hostile declared sizes, nesting and non-Thrift input are refused before the bytes
they announce are read."""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from metadata_builders import database, fields, storage
from stats_builders import EXAMPLES, column_stats, obj
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ThriftHiveMetastore as H
from hive_metastore_thrift import ttypes as t
from metastore.hms.wire import FramedCodec, Limits, MessageScanner, ProtocolError, UnframedCodec


def encode(name: str, args: Any, *, strict: bool = True, kind: int = TMessageType.CALL) -> bytes:
    buffer = TMemoryBuffer()
    protocol = TBinaryProtocol(buffer, strictWrite=strict)
    protocol.writeMessageBegin(name, kind, 7)
    args.write(protocol)
    protocol.writeMessageEnd()
    return bytes(buffer.getvalue())


def _requests() -> list[bytes]:
    stats = column_stats("db", [obj(c, d) for c, (_, d) in EXAMPLES.items()], "ds=1/region=x")
    table = t.Table(
        tableName="t",
        dbName="d",
        parameters={"a": "b", "c": "d"},
        partitionKeys=fields(("k", "string")),
        sd=storage(fields(("c", "int"), ("d", "string"))),
    )
    return [
        encode(
            "set_aggr_stats_for",
            H.set_aggr_stats_for_args(t.SetPartitionsStatsRequest([stats] * 5)),
        ),
        encode("get_database", H.get_database_args("x"), strict=False),
        encode("create_table", H.create_table_args(table)),
        encode("create_database", H.create_database_args(database("d"))),
        encode("get_partitions_by_names", H.get_partitions_by_names_args("d", "t", ["a"] * 50)),
        encode("get_all_databases", H.get_all_databases_args()),
    ]


REQUESTS = _requests()
STREAM = b"".join(REQUESTS)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=400))
def test_any_split_of_a_stream_gives_the_same_messages(cuts: list[int]) -> None:
    codec = UnframedCodec(Limits())
    got: list[bytes] = []
    at, i = 0, 0
    while at < len(STREAM):
        size = cuts[i % len(cuts)]
        codec.feed(STREAM[at : at + size])
        at, i = at + size, i + 1
        while (message := codec.next_message()) is not None:
            got.append(message.data)
    assert got == REQUESTS
    assert codec.pending == 0


def test_the_method_name_is_read_from_both_header_forms() -> None:
    for data, name in ((REQUESTS[1], "get_database"), (REQUESTS[3], "create_database")):
        scanner = MessageScanner(Limits())
        assert scanner.scan(data) == len(data)
        assert scanner.name == name
        assert not scanner.oneway


def test_oneway_calls_are_marked() -> None:
    codec = UnframedCodec(Limits())
    codec.feed(encode("shutdown", H.get_all_databases_args(), kind=TMessageType.ONEWAY))
    message = codec.next_message()
    assert message is not None and message.oneway and message.name == "shutdown"


def _refused(data: bytes, limits: Limits | None = None) -> str:
    codec = UnframedCodec(limits or Limits())
    codec.feed(data)
    with pytest.raises(ProtocolError) as raised:
        codec.next_message()
    return raised.value.reason


def _call_with_field(type_byte: int, value: bytes) -> bytes:
    header = struct.pack(">Ii", 0x80010001, 3) + b"abc" + struct.pack(">i", 1)
    return header + bytes([type_byte]) + struct.pack(">h", 1) + value


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"GET / HTTP/1.1\r\n\r\n", "not a Thrift binary-protocol message"),
        (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", "not a Thrift binary-protocol message"),
        (b"\x01\x00\x00\x00\x06GSSAPI", "not a Thrift binary-protocol message"),
        (b"\x80\x02\x00\x01\x00\x00\x00\x03abc", "not a Thrift binary-protocol message"),
        (encode("get_database", H.get_database_args("x"), kind=TMessageType.REPLY), "not a call"),
        (_call_with_field(11, struct.pack(">i", 2**31 - 1)), "exceeds max_message_size"),
        (_call_with_field(11, struct.pack(">i", -5)), "negative string length"),
        (
            _call_with_field(15, b"\x0b" + struct.pack(">i", 2_000_000)),
            "exceeds max_container_size",
        ),
        (_call_with_field(15, b"\x0a" + struct.pack(">i", 900_000)), "exceeds max_message_size"),
        (_call_with_field(13, b"\x0b\x0b" + struct.pack(">i", -1)), "negative container size"),
        (_call_with_field(15, b"\x63" + struct.pack(">i", 1)), "unknown element type 99"),
        (_call_with_field(99, b""), "unknown field type 99"),
        (_call_with_field(12, b"\x0c\x00\x01" * 100), "nesting deeper than 64 levels"),
    ],
)
def test_hostile_input_is_refused_before_it_is_read(data: bytes, reason: str) -> None:
    assert reason in _refused(data, Limits(max_message_size=5_000_000))


def test_a_message_over_the_limit_is_refused_while_it_arrives() -> None:
    """No single declared size is over the limit here: the bytes that arrive are."""
    big = encode("get_partitions_by_names", H.get_partitions_by_names_args("d", "t", ["p"] * 2000))
    codec = UnframedCodec(Limits(max_message_size=4_000))
    codec.feed(big[:3_000])
    assert codec.next_message() is None
    codec.feed(big[3_000:])
    with pytest.raises(ProtocolError, match="exceeds max_message_size"):
        codec.next_message()


def test_framed_codec_checks_each_frame() -> None:
    codec = FramedCodec(Limits())
    message = REQUESTS[3]
    codec.feed(struct.pack(">i", len(message)) + message[:10])
    assert codec.next_message() is None
    codec.feed(message[10:])
    got = codec.next_message()
    assert got is not None and got.data == message and got.name == "create_database"
    assert codec.encode(b"xy") == b"\x00\x00\x00\x02xy"
    for frame, reason in [
        (struct.pack(">i", 2**30), "frame size"),
        (struct.pack(">i", len(message) - 1) + message[:-1], "incomplete message"),
        (struct.pack(">i", len(message) + 1) + message + b"\x00", "extra bytes"),
    ]:
        codec = FramedCodec(Limits(max_message_size=10_000))
        codec.feed(frame)
        with pytest.raises(ProtocolError, match=reason):
            codec.next_message()
