"""Apache DataSketches' theta hashes of column values in Iceberg's single-value serialization.

An Iceberg engine (Iceberg's Spark actions, Trino, Presto) computes a column's
``apache-datasketches-theta-v1`` blob by feeding each non-null value to DataSketches'
``UpdateSketch.update(ByteBuffer)`` as the bytes of ``Conversions.toByteBuffer``; the
library hashes them with MurmurHash3_x64_128 seeded with 9001 and keeps the first 64-bit
half shifted right by one, a 63-bit hash. :func:`theta_hashes` computes the same hashes
over whole Arrow arrays with NumPy, in the order of the rows:

==========================================  ===============================================
Arrow type (as pyiceberg reads the column)  bytes hashed
==========================================  ===============================================
bool                                        1 byte, 0 or 1
int8, int16, int32 (Iceberg int)            4 bytes little-endian
int64 (long)                                8 bytes little-endian
float32, float64                            4 or 8 bytes little-endian, raw IEEE-754 bits
date32, date64 (date)                       days since the epoch, 4 bytes little-endian
time32, time64[us] (time)                   microseconds, 8 bytes little-endian
timestamp[s|ms|us] (timestamp, -tz)         microseconds, 8 bytes little-endian
timestamp[ns] (timestamp_ns, -tz)           nanoseconds, 8 bytes little-endian
string, binary (and large, view)            the bytes (UTF-8 for strings)
fixed_size_binary, uuid                     the bytes (a UUID's 16 big-endian bytes)
decimal32..256 (decimal, precision <= 38)   the unscaled value, ``BigInteger.toByteArray``
==========================================  ===============================================

Nulls are skipped, and so are empty strings and byte strings: ``update(ByteBuffer)``
rejects an empty buffer. Fixed-width values of up to 8 bytes are hashed in one NumPy pass
(their bytes are MurmurHash's tail alone); variable-length ones work on Arrow's offsets and
data buffers, all rows taking their k-th 16-byte block together, then all tails together,
as :mod:`metastore.sketches.murmur3` does for Hive's 64-bit variant.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from metastore.sketches.murmur3 import fmix_inplace

DEFAULT_SEED = 9001

_M64 = (1 << 64) - 1
_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F
_N1 = 0x52DCE729
_N2 = 0x38495AB5
_F1 = 0xFF51AFD7ED558CCD
_F2 = 0xC4CEB9FE1A85EC53

# Arrays are processed in slices that stay in the CPU cache.
_CHUNK = 1 << 16
# Rows still needing body blocks are finished one by one below this many.
_MIN_VECTOR_ROWS = 16

_U = np.uint64
_UC1, _UC2, _UN1, _UN2 = _U(_C1), _U(_C2), _U(_N1), _U(_N2)
_S1, _S27, _S31, _S33 = _U(1), _U(27), _U(31), _U(33)
# The tail's first word holds its bytes 0-7, the second its bytes 8-14 (tail length 0-15).
_K1_MASKS = np.array([(1 << (8 * min(t, 8))) - 1 for t in range(16)], dtype=np.uint64)
_K2_MASKS = np.array([(1 << (8 * max(t - 8, 0))) - 1 for t in range(16)], dtype=np.uint64)

_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1}
_MILLIS_PER_DAY = 86_400_000
_MAX_DECIMAL_PRECISION = 38


# ------------------------------------------------------------------------------ scalar


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _fmix(h: int) -> int:
    h ^= h >> 33
    h = (h * _F1) & _M64
    h ^= h >> 33
    h = (h * _F2) & _M64
    return h ^ (h >> 33)


def _mix_k1(k: int) -> int:
    return (_rotl((k * _C1) & _M64, 31) * _C2) & _M64


def _mix_k2(k: int) -> int:
    return (_rotl((k * _C2) & _M64, 33) * _C1) & _M64


def _body_round(h1: int, h2: int, k1: int, k2: int) -> tuple[int, int]:
    h1 ^= _mix_k1(k1)
    h1 = ((_rotl(h1, 27) + h2) * 5 + _N1) & _M64
    h2 ^= _mix_k2(k2)
    h2 = ((_rotl(h2, 31) + h1) * 5 + _N2) & _M64
    return h1, h2


def murmur3_x64_128_h1(data: bytes, seed: int) -> int:
    """The first 64-bit half of MurmurHash3_x64_128, unsigned (the scalar reference)."""
    length = len(data)
    h1 = h2 = seed & _M64
    body = length & ~15
    for k1, k2 in struct.iter_unpack("<QQ", data[:body]):
        h1, h2 = _body_round(h1, h2, k1, k2)
    tail = data[body:]
    h2 ^= _mix_k2(int.from_bytes(tail[8:], "little"))
    h1 ^= _mix_k1(int.from_bytes(tail[:8], "little"))
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    return (_fmix(h1) + _fmix(h2)) & _M64


def theta_hash(data: bytes, seed: int = DEFAULT_SEED) -> int:
    """DataSketches' 63-bit hash of one value's bytes (``update(ByteBuffer)``)."""
    return murmur3_x64_128_h1(data, seed) >> 1


# -------------------------------------------------------------------------- vectorized


def _mix_inplace(
    k: npt.NDArray[np.uint64], tmp: npt.NDArray[np.uint64], first: _U, rotation: int, second: _U
) -> None:
    """``k = rotl(k * first, rotation) * second``: C1, 31, C2 for k1; C2, 33, C1 for k2."""
    np.multiply(k, first, out=k)
    np.left_shift(k, _U(rotation), out=tmp)
    np.right_shift(k, _U(64 - rotation), out=k)
    np.bitwise_or(k, tmp, out=k)
    np.multiply(k, second, out=k)


def _finish_inplace(
    h1: npt.NDArray[np.uint64], h2: npt.NDArray[np.uint64], tmp: npt.NDArray[np.uint64]
) -> None:
    """From the lanes after the tail and the length to the 63-bit hash, into ``h1``."""
    np.add(h1, h2, out=h1)
    np.add(h2, h1, out=h2)
    fmix_inplace(h1, tmp)
    fmix_inplace(h2, tmp)
    np.add(h1, h2, out=h1)
    np.right_shift(h1, _S1, out=h1)


def hash_words(words: npt.NDArray[np.uint64], width: int, seed: int) -> npt.NDArray[np.uint64]:
    """63-bit hashes of values of ``width`` (1 to 8) bytes given as their little-endian
    bytes zero-extended to 64 bits: the whole value is MurmurHash's first tail word."""
    out = np.empty(words.shape[0], dtype=np.uint64)
    lane = _U((seed ^ width) & _M64)  # h2 before the final mix: the seed and length only
    scratch_h2 = np.empty(min(_CHUNK, words.shape[0]), dtype=np.uint64)
    scratch = np.empty_like(scratch_h2)
    with np.errstate(over="ignore"):
        for start in range(0, words.shape[0], _CHUNK):
            h1 = out[start : start + _CHUNK]
            size = h1.shape[0]
            h2, tmp = scratch_h2[:size], scratch[:size]
            np.copyto(h1, words[start : start + _CHUNK])
            _mix_inplace(h1, tmp, _UC1, 31, _UC2)
            np.bitwise_xor(h1, lane, out=h1)
            h2.fill(lane)
            _finish_inplace(h1, h2, tmp)
    return out


def _words_at_every_byte(data: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint64]:
    """The little-endian 8-byte word starting at each byte of ``data`` and up to 16 bytes
    past its end, over a zero-padded copy viewed with a stride of one byte: indexing it loads
    unaligned words directly (tails may read past a value; their masks drop those bytes)."""
    padded = np.zeros(data.shape[0] + 24, dtype=np.uint8)
    padded[: data.shape[0]] = data
    return np.ndarray(shape=(data.shape[0] + 17,), dtype="<u8", buffer=padded, strides=(1,))


def hash_spans(
    data: npt.NDArray[np.uint8],
    starts: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    seed: int,
) -> npt.NDArray[np.uint64]:
    """63-bit hashes of the byte strings ``data[starts[i] : starts[i] + lengths[i]]``, whose
    starts ascend (as Arrow's offsets do). Rows are taken in cache-sized slices, each with a
    copy of its own bytes."""
    out = np.empty(starts.shape[0], dtype=np.uint64)
    for first in range(0, starts.shape[0], _CHUNK):
        rows = slice(first, first + _CHUNK)
        begin = int(starts[first])
        end = int(starts[rows][-1] + lengths[rows][-1])
        out[rows] = _hash_slice(data[begin:end], starts[rows] - begin, lengths[rows], seed)
    return out


def _hash_slice(
    data: npt.NDArray[np.uint8],
    starts: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    seed: int,
) -> npt.NDArray[np.uint64]:
    words = _words_at_every_byte(data)
    h1 = np.full(starts.shape[0], seed & _M64, dtype=np.uint64)
    h2 = h1.copy()
    tmp = np.empty_like(h1)
    blocks = lengths >> 4
    tails = lengths & 15
    with np.errstate(over="ignore"):
        _hash_bodies(h1, h2, words, starts, blocks)
        at = starts + (blocks << 4)
        k1 = words[at]
        k1 &= _K1_MASKS[tails]
        at += 8
        k2 = words[at]
        k2 &= _K2_MASKS[tails]
        # A zero word mixes to zero, so rows without such tail bytes are unchanged.
        _mix_inplace(k2, tmp, _UC2, 33, _UC1)
        h2 ^= k2
        _mix_inplace(k1, tmp, _UC1, 31, _UC2)
        h1 ^= k1
        h1 ^= lengths.view(np.uint64)
        h2 ^= lengths.view(np.uint64)
        _finish_inplace(h1, h2, tmp)
    return h1


def _round_inplace(
    h1: npt.NDArray[np.uint64],
    h2: npt.NDArray[np.uint64],
    k1: npt.NDArray[np.uint64],
    k2: npt.NDArray[np.uint64],
    tmp: npt.NDArray[np.uint64],
) -> None:
    """One 16-byte body block ``(k1, k2)`` mixed into the lanes."""
    _mix_inplace(k1, tmp, _UC1, 31, _UC2)
    h1 ^= k1
    np.left_shift(h1, _S27, out=tmp)
    np.right_shift(h1, _U(37), out=h1)
    h1 |= tmp
    h1 += h2
    h1 *= _U(5)
    h1 += _UN1
    _mix_inplace(k2, tmp, _UC2, 33, _UC1)
    h2 ^= k2
    np.left_shift(h2, _S31, out=tmp)
    np.right_shift(h2, _S33, out=h2)
    h2 |= tmp
    h2 += h1
    h2 *= _U(5)
    h2 += _UN2


def _hash_bodies(
    h1: npt.NDArray[np.uint64],
    h2: npt.NDArray[np.uint64],
    words: npt.NDArray[np.uint64],
    starts: npt.NDArray[np.int64],
    blocks: npt.NDArray[np.int64],
) -> None:
    """Mix every row's 16-byte body blocks into its lanes, one block index at a time.

    Block ``b`` is mixed into the rows that have more than ``b`` blocks; that set only
    shrinks, so it is narrowed from the previous one and the work stays proportional to the
    number of blocks. The last few long rows are finished in Python.
    """
    shortest = int(blocks.min())
    rows: npt.NDArray[np.int64] | None = None  # None: every row
    for block in range(int(blocks.max())):
        if block >= shortest:
            rows = np.flatnonzero(blocks > block) if rows is None else rows[blocks[rows] > block]
            if rows.shape[0] < _MIN_VECTOR_ROWS:
                for row in rows.tolist():
                    h1[row], h2[row] = _finish_body(
                        int(h1[row]), int(h2[row]), words, int(starts[row]), block, int(blocks[row])
                    )
                return
        positions = starts + 16 * block if rows is None else starts[rows] + 16 * block
        k1, k2 = words[positions], words[positions + 8]
        if rows is None:
            _round_inplace(h1, h2, k1, k2, np.empty_like(k1))
        else:
            lane1, lane2 = h1[rows], h2[rows]
            _round_inplace(lane1, lane2, k1, k2, np.empty_like(k1))
            h1[rows], h2[rows] = lane1, lane2


def _finish_body(
    h1: int, h2: int, words: npt.NDArray[np.uint64], start: int, block: int, blocks: int
) -> tuple[int, int]:
    """Scalar continuation of the body blocks of one long row."""
    for at in range(start + 16 * block, start + 16 * blocks, 16):
        h1, h2 = _body_round(h1, h2, int(words[at]), int(words[at + 8]))
    return h1, h2


# -------------------------------------------------------------- Iceberg's serialization


def theta_hashes(
    values: pa.Array | pa.ChunkedArray, seed: int = DEFAULT_SEED
) -> npt.NDArray[np.uint64]:
    """The 63-bit hash of each non-null, non-empty value, in the order of the rows.

    ``values`` has the Arrow type pyiceberg reads the Iceberg column as (see the module's
    table); any other type is a TypeError. Zero hashes are kept: the sketch drops them.
    """
    if isinstance(values, pa.ChunkedArray):
        parts = [theta_hashes(chunk, seed) for chunk in values.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.uint64)
    if isinstance(values.type, pa.BaseExtensionType):
        values = values.storage
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if values.null_count:
        values = values.drop_null()
    kind = values.type
    if pa.types.is_boolean(kind):
        return hash_words(values.to_numpy(zero_copy_only=False).astype(np.uint64), 1, seed)
    if pa.types.is_integer(kind) and pa.types.is_signed_integer(kind):
        if kind.bit_width == 64:
            return hash_words(_fixed(values, np.uint64), 8, seed)
        ints = values.to_numpy(zero_copy_only=False).astype(np.int32)
        return hash_words(ints.view(np.uint32).astype(np.uint64), 4, seed)
    if pa.types.is_float32(kind):
        return hash_words(_fixed(values, np.uint32).astype(np.uint64), 4, seed)
    if pa.types.is_float64(kind):
        return hash_words(_fixed(values, np.uint64), 8, seed)
    if pa.types.is_date32(kind):
        return hash_words(_fixed(values, np.uint32).astype(np.uint64), 4, seed)
    if pa.types.is_date64(kind):
        days = (_fixed(values, np.int64) // _MILLIS_PER_DAY).astype(np.int32)
        return hash_words(days.view(np.uint32).astype(np.uint64), 4, seed)
    if pa.types.is_timestamp(kind) or (pa.types.is_time(kind) and kind.unit in _MICROS):
        return _hash_instants(values, seed)
    if pa.types.is_decimal(kind):
        return _hash_decimals(values, seed)
    if pa.types.is_fixed_size_binary(kind):
        width = kind.byte_width
        data = _data_bytes(values.buffers()[1], values.offset * width, len(values) * width)
        starts = np.arange(len(values), dtype=np.int64) * width
        return hash_spans(data, starts, np.full(len(values), width, dtype=np.int64), seed)
    if pa.types.is_string(kind) or pa.types.is_binary(kind):
        return _hash_binaries(values, np.int32, seed)
    if pa.types.is_large_string(kind) or pa.types.is_large_binary(kind):
        return _hash_binaries(values, np.int64, seed)
    if pa.types.is_string_view(kind) or pa.types.is_binary_view(kind):
        return _hash_binaries(values.cast(pa.large_binary()), np.int64, seed)
    raise TypeError(f"no Iceberg single-value serialization for Arrow type {kind}")


def _fixed(values: pa.Array, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """The values buffer of a null-free fixed-width array, as ``dtype`` (no copy)."""
    size = np.dtype(dtype).itemsize
    return np.frombuffer(
        values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * size
    )


def _hash_instants(values: pa.Array, seed: int) -> npt.NDArray[np.uint64]:
    """Times and timestamps in microseconds; timestamp[ns] in nanoseconds (timestamp_ns)."""
    kind = values.type
    raw = _fixed(values, np.int32 if kind.bit_width == 32 else np.int64)
    if kind.unit in ("us", "ns"):
        return hash_words(raw.view(np.uint64), 8, seed)
    micros = raw.astype(np.int64) * _MICROS[kind.unit]
    return hash_words(micros.view(np.uint64), 8, seed)


def _data_bytes(buffer: pa.Buffer | None, offset: int, size: int) -> npt.NDArray[np.uint8]:
    if buffer is None or size == 0:
        return np.empty(0, dtype=np.uint8)
    return np.frombuffer(buffer, dtype=np.uint8, count=size, offset=offset)


def _hash_binaries(
    values: pa.Array, offset_type: type[np.int32] | type[np.int64], seed: int
) -> npt.NDArray[np.uint64]:
    n = len(values)
    _, offsets_buf, data_buf = values.buffers()
    offsets = np.frombuffer(
        offsets_buf,
        dtype=offset_type,
        count=n + 1,
        offset=values.offset * np.dtype(offset_type).itemsize,
    ).astype(np.int64)
    first = int(offsets[0])
    data = _data_bytes(data_buf, first, int(offsets[-1]) - first)
    starts = offsets[:-1] - first
    lengths = np.diff(offsets)
    if not lengths.all():  # update(ByteBuffer) rejects an empty buffer
        kept = lengths != 0
        starts, lengths = starts[kept], lengths[kept]
    return hash_spans(data, starts, lengths, seed)


def _hash_decimals(values: pa.Array, seed: int) -> npt.NDArray[np.uint64]:
    """Hashes of the unscaled values as ``BigInteger.toByteArray`` writes them: big-endian
    two's complement in the fewest bytes that keep the sign (0 is one zero byte)."""
    kind = values.type
    if kind.precision > _MAX_DECIMAL_PRECISION:
        raise TypeError(f"Iceberg decimals have at most 38 digits, not Arrow's {kind}")
    if not pa.types.is_decimal128(kind):
        values = values.cast(pa.decimal128(kind.precision, kind.scale))
    n = len(values)
    little = _data_bytes(values.buffers()[1], values.offset * 16, n * 16).reshape(n, 16)
    big = np.ascontiguousarray(little[:, ::-1])
    sign = big[:, 0] >> 7
    extension = (sign * 0xFF).astype(np.uint8)
    same = big == extension[:, None]
    # Leading bytes that only extend the sign; one of them stays when the next byte's top
    # bit differs from the sign.
    leading = np.where(same.all(axis=1), 16, same.argmin(axis=1))
    rows = np.arange(n)
    next_sign = big[rows, np.minimum(leading, 15)] >> 7
    dropped = np.where((leading < 16) & (next_sign != sign), leading - 1, np.minimum(leading, 15))
    lengths = (16 - dropped).astype(np.int64)
    starts = rows.astype(np.int64) * 16 + dropped
    return hash_spans(big.reshape(-1), starts, lengths, seed)
