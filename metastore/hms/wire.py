"""Where a request ends: the byte-level reading of Thrift's binary protocol that the event
loop does before any worker sees a request.

HMS clients send unframed binary-protocol messages, which carry no length: the only way to know
that a request is complete is to walk its structure. `MessageScanner` does that without decoding
anything (no Python objects are built; strings and lists of fixed-size values are skipped by
their declared length) and resumes where it stopped when more bytes arrive, so a request that
comes in many pieces is walked once. It is also where hostile input is refused: a declared size
over the limits, nesting deeper than the limit, an unknown type or something that is not a
binary-protocol call at all raise `ProtocolError` before the bytes it announces are read.

`UnframedCodec` and `FramedCodec` cut a connection's byte stream into whole messages with it;
the SASL transport (metastore.hms.sasl) feeds its unwrapped data to an `UnframedCodec`.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Protocol

# TType and TMessageType values of the binary protocol.
STOP, BOOL, BYTE, DOUBLE, I16, I32, I64 = 0, 2, 3, 4, 6, 8, 10
STRING, STRUCT, MAP, SET, LIST, UUID = 11, 12, 13, 14, 15, 16
CALL, ONEWAY = 1, 4
_FIXED_SIZE = {BOOL: 1, BYTE: 1, DOUBLE: 8, I16: 2, I32: 4, I64: 8, UUID: 16}
_VERSION_1 = 0x80010000
_MAX_NAME = 1024  # method names are short; a longer one means this is not a Thrift call
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_FIELD_HEADER = 3  # type byte and i16 field id

# Frames of the scanner's stack: a struct being walked, or a container with elements left.
_IN_STRUCT, _IN_LIST, _IN_MAP = 0, 1, 2
# What the scanner does with each type byte (an index into these tables).
_K_BAD, _K_FIXED, _K_STRING, _K_STRUCT, _K_MAP, _K_LIST = range(6)
_KIND = [_K_BAD] * 256
_SIZE = [0] * 256
for _type, _size in _FIXED_SIZE.items():
    _KIND[_type], _SIZE[_type] = _K_FIXED, _size
_KIND[STRING], _KIND[STRUCT], _KIND[MAP], _KIND[SET], _KIND[LIST] = (
    _K_STRING,
    _K_STRUCT,
    _K_MAP,
    _K_LIST,
    _K_LIST,
)


class _NeedMore(Exception):
    """The buffer ends inside the message (internal to MessageScanner)."""


class ProtocolError(Exception):
    """Input that is not a well-formed request within the limits; the message says why.

    REPLY holds bytes to send to the peer before closing (a SASL ERROR frame), if any."""

    def __init__(self, reason: str, reply: bytes = b"") -> None:
        super().__init__(reason)
        self.reason = reason
        self.reply = reply


@dataclasses.dataclass(frozen=True)
class Limits:
    """What one request may hold. HMS and libthrift cap messages at 100 MB by default."""

    max_message_size: int = 100 * 1024 * 1024
    max_container_size: int = 1_000_000
    max_depth: int = 64
    """Nesting of structs and containers; Thrift's own decoders stop at 64 too."""


@dataclasses.dataclass(frozen=True)
class Message:
    """One complete request: its bytes (header included) and the method it calls."""

    data: bytes
    name: str
    oneway: bool = False
    """A oneway call gets no reply, whatever the processor writes (Hive's client sends fb303's
    oneway shutdown() and closes the connection at once)."""


@dataclasses.dataclass(frozen=True)
class Negotiation:
    """One SASL negotiation frame from the client, for a worker to answer (metastore.hms.sasl)."""

    status: int
    payload: bytes


class Codec(Protocol):
    """Cuts one connection's bytes into requests, and encodes its replies."""

    @property
    def pending(self) -> int:
        """Bytes received that are not yet a whole request."""
        ...

    def feed(self, data: bytes) -> None: ...

    def next_message(self) -> Message | Negotiation | None:
        """The next complete request, or None until more bytes arrive; ProtocolError for
        input that can never become one."""
        ...

    def encode(self, reply: bytes) -> bytes: ...


def _describe(data: bytes | bytearray) -> str:
    return data[:8].hex(" ")


class MessageScanner:
    """Finds the end of one binary-protocol call in a buffer that grows between calls.

    `scan(buffer)` returns the length of the message at the buffer's start once it is all
    there, else None; call it again, with the same buffer and more bytes appended, to go on.
    `reset()` before scanning the next message (from the start of a new buffer).
    """

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self.reset()

    def reset(self) -> None:
        self.name: str | None = None
        """The method, once the header is read."""
        self.oneway = False
        self._pos = 0
        self._stack: list[list[int]] = []

    @property
    def started(self) -> bool:
        return self._pos > 0

    def scan(self, buf: bytes | bytearray) -> int | None:
        if self.name is None and not self._header(buf):
            return None
        return self._walk(buf)

    def _header(self, buf: bytes | bytearray) -> bool:
        """Read the message header (strict or old non-strict form); False if incomplete."""
        n = len(buf)
        if n < 4:
            return False
        (word,) = _U32.unpack_from(buf, 0)
        if word & 0x80000000:
            if word & 0xFFFF0000 != _VERSION_1:
                raise ProtocolError(
                    f"not a Thrift binary-protocol message (starts {_describe(buf)})"
                )
            kind, name_at = word & 0xFF, 8
            if n < 8:
                return False
            (name_len,) = _I32.unpack_from(buf, 4)
        else:
            kind, name_at, name_len = -1, 4, word
        if not 0 < name_len <= _MAX_NAME:
            raise ProtocolError(f"not a Thrift binary-protocol message (starts {_describe(buf)})")
        end = name_at + name_len + (4 if kind >= 0 else 5)
        if n < end:
            return False
        if kind < 0:
            kind = buf[name_at + name_len]
        if kind not in (CALL, ONEWAY):
            raise ProtocolError(f"message type {kind} is not a call")
        self.name = bytes(buf[name_at : name_at + name_len]).decode("utf-8", "replace")
        self.oneway = kind == ONEWAY
        self._pos = end
        self._stack = [[_IN_STRUCT]]
        return True

    def _too_big(self, end: int) -> ProtocolError:
        return ProtocolError(
            f"request of at least {end} bytes exceeds max_message_size "
            f"({self._limits.max_message_size})"
        )

    def _count(self, buf: bytes | bytearray, at: int) -> int:
        count: int = _I32.unpack_from(buf, at)[0]
        if count < 0:
            raise ProtocolError(f"negative container size {count} at byte {at}")
        if count > self._limits.max_container_size:
            raise ProtocolError(
                f"container of {count} elements exceeds max_container_size "
                f"({self._limits.max_container_size})"
            )
        return count

    def _walk(self, buf: bytes | bytearray) -> int | None:
        """Walk from where the last call stopped; the state (position, stack) only changes
        once all the bytes of a step are there. Hot loop: fields of fixed-size and string
        values, and lists of them, are taken in inner loops without a stack frame."""
        max_size = self._limits.max_message_size
        kinds, sizes, unpack = _KIND, _SIZE, _I32.unpack_from
        stack = self._stack
        pos = self._pos
        n = len(buf)
        try:
            while stack:
                top = stack[-1]
                if top[0] == _IN_STRUCT:
                    while True:
                        if pos >= n:
                            raise _NeedMore
                        vtype = buf[pos]
                        if vtype == STOP:
                            break
                        at = pos + _FIELD_HEADER
                        kind = kinds[vtype]
                        if kind == _K_FIXED:
                            end = at + sizes[vtype]
                        elif kind == _K_STRING:
                            if at + 4 > n:
                                raise _NeedMore
                            end = at + 4 + unpack(buf, at)[0]
                            if end < at + 4:
                                raise ProtocolError(f"negative string length at byte {at}")
                            if end > max_size:
                                raise self._too_big(end)
                        else:
                            break
                        if end > n:
                            raise _NeedMore
                        pos = end
                    if vtype == STOP:
                        pos += 1
                        stack.pop()
                        continue
                    if kind == _K_BAD:
                        raise ProtocolError(f"unknown field type {vtype} at byte {pos}")
                    if at > n:
                        raise _NeedMore
                    element = False
                else:
                    remaining = top[-1]
                    if not remaining:
                        stack.pop()
                        continue
                    if top[0] == _IN_LIST:
                        vtype = top[1]
                        kind = kinds[vtype]
                        if kind == _K_FIXED:
                            end = pos + remaining * sizes[vtype]
                            if end > n:
                                raise _NeedMore
                            pos, top[-1] = end, 0
                            continue
                        if kind == _K_STRING:
                            while top[-1]:
                                if pos + 4 > n:
                                    raise _NeedMore
                                end = pos + 4 + unpack(buf, pos)[0]
                                if end < pos + 4:
                                    raise ProtocolError(f"negative string length at byte {pos}")
                                if end > max_size:
                                    raise self._too_big(end)
                                if end > n:
                                    raise _NeedMore
                                pos = end
                                top[-1] -= 1
                            continue
                    else:
                        vtype = top[1] if remaining % 2 == 0 else top[2]
                        kind = kinds[vtype]
                    at = pos
                    element = True
                # One value of kind KIND at AT: take it whole, or take its header and enter it.
                new: list[int] | None = None
                if kind == _K_FIXED:
                    end = at + sizes[vtype]
                    if end > n:
                        raise _NeedMore
                    pos = end
                elif kind == _K_STRING:
                    if at + 4 > n:
                        raise _NeedMore
                    end = at + 4 + unpack(buf, at)[0]
                    if end < at + 4:
                        raise ProtocolError(f"negative string length at byte {at}")
                    if end > max_size:
                        raise self._too_big(end)
                    if end > n:
                        raise _NeedMore
                    pos = end
                elif kind == _K_STRUCT:
                    pos = at
                    new = [_IN_STRUCT]
                elif kind == _K_MAP:
                    if at + 6 > n:
                        raise _NeedMore
                    ktype, itype = buf[at], buf[at + 1]
                    count = self._count(buf, at + 2)
                    if count and (kinds[ktype] == _K_BAD or kinds[itype] == _K_BAD):
                        raise ProtocolError(f"unknown map types {ktype}, {itype} at byte {at}")
                    pos = at + 6
                    if count and kinds[ktype] == _K_FIXED and kinds[itype] == _K_FIXED:
                        end = pos + count * (sizes[ktype] + sizes[itype])
                        if end > max_size:
                            raise self._too_big(end)
                        if end > n:
                            raise _NeedMore
                        pos = end
                    else:
                        new = [_IN_MAP, ktype, itype, 2 * count]
                elif kind == _K_LIST:
                    if at + 5 > n:
                        raise _NeedMore
                    etype = buf[at]
                    count = self._count(buf, at + 1)
                    if count and kinds[etype] == _K_BAD:
                        raise ProtocolError(f"unknown element type {etype} at byte {at}")
                    if (
                        count
                        and kinds[etype] == _K_FIXED
                        and at + 5 + count * sizes[etype] > max_size
                    ):
                        raise self._too_big(at + 5 + count * sizes[etype])
                    pos = at + 5
                    new = [_IN_LIST, etype, count]
                else:
                    raise ProtocolError(f"unknown type {vtype} at byte {at}")
                if element:
                    top[-1] -= 1
                if new is not None:
                    if len(stack) >= self._limits.max_depth:
                        raise ProtocolError(f"nesting deeper than {self._limits.max_depth} levels")
                    stack.append(new)
        except _NeedMore:
            self._pos = pos
            if n > max_size:
                raise self._too_big(n) from None
            return None
        self._pos = pos
        return pos


class UnframedCodec:
    """The unframed (buffered) transport HMS clients use: messages back to back."""

    def __init__(self, limits: Limits) -> None:
        self._buffer = bytearray()
        self._scanner = MessageScanner(limits)

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next_message(self) -> Message | None:
        if not self._buffer:
            return None
        end = self._scanner.scan(self._buffer)
        if end is None:
            return None
        scanner = self._scanner
        message = Message(bytes(self._buffer[:end]), scanner.name or "", scanner.oneway)
        del self._buffer[:end]
        self._scanner.reset()
        return message

    def encode(self, reply: bytes) -> bytes:
        return reply


class FramedCodec:
    """The framed transport: each message preceded by its length (i32)."""

    def __init__(self, limits: Limits) -> None:
        self._buffer = bytearray()
        self._limits = limits

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next_message(self) -> Message | None:
        if len(self._buffer) < 4:
            return None
        (length,) = _I32.unpack_from(self._buffer, 0)
        if not 0 < length <= self._limits.max_message_size:
            raise ProtocolError(
                f"frame size {length} is outside 1..max_message_size "
                f"({self._limits.max_message_size})"
            )
        if len(self._buffer) < 4 + length:
            return None
        frame = bytes(self._buffer[4 : 4 + length])
        del self._buffer[: 4 + length]
        # The frame must hold exactly one well-formed call within the limits.
        scanner = MessageScanner(self._limits)
        end = scanner.scan(frame)
        if end != length:
            raise ProtocolError(
                "frame holds an incomplete message" if end is None else "frame holds extra bytes"
            )
        return Message(frame, scanner.name or "", scanner.oneway)

    def encode(self, reply: bytes) -> bytes:
        return _U32.pack(len(reply)) + reply
