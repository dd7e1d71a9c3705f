"""The bytes of DuckDB's Airport requests and of our replies (airport.md section 1).

Requests are msgpack maps that msgpack-c packs: every std::string as STR, binary payloads
(a protobuf FlightDescriptor) included. They are unpacked with raw=True, so no byte
sequence can fail to decode, and each field is read with the type it must have: a request
that does not fit is BadRequest, which the door answers with a Flight error naming the
field. Replies are msgpack maps with STR keys (keys are str, payloads bytes, which msgpack-c
reads as std::string too); a catalog's contents travel compressed, as the array
[uncompressed length, zstd frame].
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack
import zstandard

from metastore.errors import InvalidInput

MAX_REQUEST_BYTES = 16 * 1024 * 1024
"""The largest DoAction body decoded (DuckDB's are a few hundred bytes)."""


class BadRequest(InvalidInput):
    """A request that cannot be decoded or lacks a field; the message says which (an error
    of the core's kind, so that the door translates it wherever it is raised)."""


def unpack_map(body: bytes, action: str) -> dict[bytes, Any]:
    """The msgpack map of ACTION's BODY, keys and strings as bytes."""
    if len(body) > MAX_REQUEST_BYTES:
        raise BadRequest(f"{action}: a request of {len(body)} bytes is too large")
    try:
        value = msgpack.unpackb(body, raw=True, strict_map_key=False)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as e:
        raise BadRequest(f"{action}: the request is not msgpack ({e or 'bad bytes'})") from None
    if not isinstance(value, dict):
        raise BadRequest(f"{action}: the request must be a msgpack map")
    return value


def field_bytes(request: Mapping[bytes, Any], name: str, action: str) -> bytes:
    """Field NAME of REQUEST, a string or binary (as bytes)."""
    value = request.get(name.encode())
    if not isinstance(value, bytes):
        raise BadRequest(f"{action}: the request needs {name} (a string)")
    return value


def field_text(request: Mapping[bytes, Any], name: str, action: str) -> str:
    """Field NAME of REQUEST, UTF-8 text."""
    try:
        return field_bytes(request, name, action).decode()
    except UnicodeDecodeError:
        raise BadRequest(f"{action}: {name} is not UTF-8 text") from None


def optional_map(request: Mapping[bytes, Any], name: str, action: str) -> dict[bytes, Any]:
    """Field NAME of REQUEST, a map (empty when absent or nil)."""
    value = request.get(name.encode())
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequest(f"{action}: {name} must be a map")
    return value


def pack(value: Any) -> bytes:
    """VALUE as msgpack: str as STR, bytes as BIN."""
    packed: bytes = msgpack.packb(value, use_bin_type=True)
    return packed


def compressed(payload: bytes) -> bytes:
    """PAYLOAD as Airport's compressed content: msgpack [length, zstd frame]."""
    return pack([len(payload), zstandard.ZstdCompressor(level=3).compress(payload)])
