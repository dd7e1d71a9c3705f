"""Hive's 64-bit Murmur3 variant and the way Hive feeds column values to it.

The hash is ``org.apache.hive.common.util.Murmur3.hash64``: the first half of
MurmurHash3 x64-128 *without* the second lane, seeded with 104729:

* every 8-byte little-endian block ``k``: ``k *= C1; k = rotl(k, 31); k *= C2;
  h ^= k; h = rotl(h, 27) * 5 + 0x52dce729``;
* a 1-7 byte tail ``k``: ``k *= C1; k = rotl(k, 31); k *= C2; h ^= k``;
* ``h ^= length`` and the usual fmix64.

Hive 4's statistics UDAF feeds (NULLs skipped):

* integer types, date (days) and timestamp (seconds): ``hash64(long)``, which equals the
  hash of the 8 big-endian bytes of the value;
* float and double: ``hash64(Double.doubleToLongBits(v))`` (a float is widened first;
  NaN is canonical, -0.0 and 0.0 differ);
* string, varchar, char: the UTF-8 bytes; binary: the bytes;
* decimal: its double value, hashed as a double.

Every function returns Java's signed ``long``: scalars as ``int``, vectorized ones as
``numpy.int64`` arrays (``.view(np.uint64)`` gives the raw bit patterns). Vectorized and
scalar paths give identical results.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from decimal import Decimal
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metastore.sketches.hive_values import hive_decimal_to_double

if TYPE_CHECKING:
    import pyarrow as pa

SEED = 104729

_M64 = (1 << 64) - 1
_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F
_N1 = 0x52DCE729
_F1 = 0xFF51AFD7ED558CCD
_F2 = 0xC4CEB9FE1A85EC53
_CANONICAL_NAN_BITS = 0x7FF8000000000000

# Arrays are processed in slices that stay in the CPU cache.
_CHUNK = 1 << 16
# Strings still needing body blocks are processed one by one below this many.
_MIN_VECTOR_ROWS = 16

_U = np.uint64
_TAIL_MASKS = np.array([(1 << (8 * t)) - 1 for t in range(8)], dtype=np.uint64)
_UC1, _UC2, _UN1, _UF1, _UF2 = _U(_C1), _U(_C2), _U(_N1), _U(_F1), _U(_F2)
_S27, _S31, _S33, _S37 = _U(27), _U(31), _U(33), _U(37)


def _to_signed(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


def _mix_k(k: int) -> int:
    k = (k * _C1) & _M64
    k = ((k << 31) | (k >> 33)) & _M64
    return (k * _C2) & _M64


def _fmix(h: int) -> int:
    h ^= h >> 33
    h = (h * _F1) & _M64
    h ^= h >> 33
    h = (h * _F2) & _M64
    return h ^ (h >> 33)


def hash64(data: bytes) -> int:
    """``Murmur3.hash64(byte[])`` as a signed 64-bit integer."""
    length = len(data)
    h = SEED
    body = length & ~7
    for (k,) in struct.iter_unpack("<Q", data[:body]):
        h ^= _mix_k(k)
        h = ((((h << 27) | (h >> 37)) & _M64) * 5 + _N1) & _M64
    if length & 7:
        h ^= _mix_k(int.from_bytes(data[body:], "little"))
    return _to_signed(_fmix(h ^ length))


def hash_long(value: int) -> int:
    """Hash of a Java ``long`` (also int types, date days and timestamp seconds)."""
    return hash64(struct.pack(">q", value))


def hash_double(value: float) -> int:
    """Hash of a Java ``double`` by its canonical IEEE-754 bits."""
    return hash_long(_double_bits(value))


def hash_string(value: str) -> int:
    """Hash of a string's UTF-8 bytes (unpaired surrogates become ``?`` as in Java)."""
    return hash64(value.encode("utf-8", "replace"))


def hash_decimal(value: Decimal) -> int:
    """Hash of a decimal: its Hive-normalised double value hashed as a double."""
    as_double = hive_decimal_to_double(value)
    if as_double is None:
        raise ValueError(f"{value!r} is not a Hive decimal (38 digits at most, finite)")
    return hash_double(as_double)


def _double_bits(value: float) -> int:
    if value != value:
        return _to_signed(_CANONICAL_NAN_BITS)
    bits: int = struct.unpack("<q", struct.pack("<d", value))[0]
    return bits


# ---------------------------------------------------------------------------- vectorized


def _mix_k_inplace(k: npt.NDArray[np.uint64], tmp: npt.NDArray[np.uint64]) -> None:
    np.multiply(k, _UC1, out=k)
    np.left_shift(k, _S31, out=tmp)
    np.right_shift(k, _S33, out=k)
    np.bitwise_or(k, tmp, out=k)
    np.multiply(k, _UC2, out=k)


def _round_inplace(h: npt.NDArray[np.uint64], tmp: npt.NDArray[np.uint64]) -> None:
    """``h = rotl(h, 27) * 5 + N1`` after a body block."""
    np.left_shift(h, _S27, out=tmp)
    np.right_shift(h, _S37, out=h)
    np.bitwise_or(h, tmp, out=h)
    np.multiply(h, _U(5), out=h)
    np.add(h, _UN1, out=h)


def fmix_inplace(h: npt.NDArray[np.uint64], tmp: npt.NDArray[np.uint64]) -> None:
    """MurmurHash3's 64-bit finalizer (fmix64) in place, ``tmp`` a scratch array as long
    (shared by Hive's hash64 and MurmurHash3_x64_128 of theta sketches)."""
    for factor in (_UF1, _UF2):
        np.right_shift(h, _S33, out=tmp)
        np.bitwise_xor(h, tmp, out=h)
        np.multiply(h, factor, out=h)
    np.right_shift(h, _S33, out=tmp)
    np.bitwise_xor(h, tmp, out=h)


def hash_long_bits_into(
    values: npt.NDArray[np.int64], out: npt.NDArray[np.uint64], tmp: npt.NDArray[np.uint64]
) -> npt.NDArray[np.uint64]:
    """``hash64(long)`` of every value into ``out``, using ``tmp`` as scratch space.

    All three arrays have the same length; keep it cache-sized (~64K) for speed. This
    is the building block for callers that hash and consume in chunks.
    """
    with np.errstate(over="ignore"):
        np.copyto(out, values.view(np.uint64))
        out.byteswap(inplace=True)  # hash64(long) hashes the big-endian bytes
        _mix_k_inplace(out, tmp)
        np.bitwise_xor(out, _U(SEED), out=out)
        _round_inplace(out, tmp)
        np.bitwise_xor(out, _U(8), out=out)
        fmix_inplace(out, tmp)
    return out


def _hash_long_bits(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    out = np.empty(values.shape[0], dtype=np.uint64)
    tmp = np.empty(min(_CHUNK, values.shape[0]), dtype=np.uint64)
    for start in range(0, values.shape[0], _CHUNK):
        chunk = values[start : start + _CHUNK]
        hash_long_bits_into(chunk, out[start : start + _CHUNK], tmp[: chunk.shape[0]])
    return out.view(np.int64)


def as_long_array(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Integers as a contiguous int64 array (TypeError for anything else)."""
    array = np.asarray(values)
    if array.size and array.dtype.kind not in "iub":
        raise TypeError(f"expected integers, got {array.dtype}")
    return np.ascontiguousarray(array, dtype=np.int64).ravel()


def double_bits(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``Double.doubleToLongBits`` of every value (float32 widened, NaN canonical)."""
    array = np.ascontiguousarray(values, dtype=np.float64).ravel()
    bits = array.view(np.int64).copy()
    bits[np.isnan(array)] = _to_signed(_CANONICAL_NAN_BITS)
    return bits


def hash_longs(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Vectorized :func:`hash_long` over any integer array (values taken as int64)."""
    return _hash_long_bits(as_long_array(values))


def hash_doubles(values: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Vectorized :func:`hash_double` over a float array (float32 is widened first)."""
    return _hash_long_bits(double_bits(values))


def hash_decimals(values: Iterable[Decimal | None]) -> npt.NDArray[np.int64]:
    """Vectorized :func:`hash_decimal`; None entries are skipped like SQL NULLs."""
    doubles = []
    for value in values:
        if value is None:
            continue
        as_double = hive_decimal_to_double(value)
        if as_double is None:
            raise ValueError(f"{value!r} is not a Hive decimal (38 digits at most, finite)")
        doubles.append(as_double)
    return hash_doubles(np.array(doubles, dtype=np.float64))


def _as_binary_array(values: Iterable[object] | pa.Array | pa.ChunkedArray) -> pa.Array:
    """Arrow large_string/large_binary array without nulls from strings, bytes or an Arrow
    array. (PyArrow is imported here, not with the module: a server that only merges sketches
    never needs it.)"""
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        items = list(values)
        try:
            values = pa.array(items)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeEncodeError):
            values = pa.array(
                [v.encode("utf-8", "replace") if isinstance(v, str) else v for v in items],
                type=pa.binary(),
            )
        if values.type == pa.null():
            values = values.cast(pa.binary())
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if pa.types.is_string_view(values.type) or pa.types.is_binary_view(values.type):
        values = values.cast(pa.large_binary())
    if values.type not in (pa.string(), pa.binary(), pa.large_string(), pa.large_binary()):
        raise TypeError(f"expected strings or bytes, got Arrow type {values.type}")
    if values.type in (pa.string(), pa.binary()):
        # 64-bit offsets: several times faster through the NumPy arithmetic below.
        values = values.cast(pa.large_binary())
    return values.drop_null() if values.null_count else values


def hash_binaries(values: Iterable[object] | pa.Array | pa.ChunkedArray) -> npt.NDArray[np.int64]:
    """Vectorized :func:`hash64` over strings (as UTF-8) or bytes; nulls are skipped.

    Accepts an Arrow string, large_string, binary or large_binary array, or any
    iterable of ``str``/``bytes``/None. The work is done on Arrow's offsets and data
    buffers: all rows take their k-th 8-byte block together (each round touches only the
    rows that are long enough), then all tails together.
    There is no Python loop per value except for the few rows much longer than the rest.
    """
    array = _as_binary_array(values)
    n = len(array)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    _, offsets_buf, data_buf = array.buffers()
    # _as_binary_array gives large (64-bit offset) arrays only.
    offsets = np.frombuffer(offsets_buf, dtype=np.int64, count=n + 1, offset=array.offset * 8)
    lengths = np.diff(offsets)
    first, last = int(offsets[0]), int(offsets[-1])
    starts = offsets[:-1] - first
    words = _words_at_every_byte(data_buf, first, last)

    h = np.full(n, SEED, dtype=np.uint64)
    blocks = lengths >> 3
    with np.errstate(over="ignore"):
        _hash_bodies(h, words, starts, blocks)
        tails = lengths & 7
        with_tail = np.count_nonzero(tails)
        if with_tail:
            rows = slice(None) if with_tail == n else np.flatnonzero(tails)
            k = words[starts[rows] + (blocks[rows] << 3)]
            k &= _TAIL_MASKS[tails[rows]]
            _mix_k_inplace(k, np.empty_like(k))
            h[rows] ^= k
        h ^= lengths.view(np.uint64)
        fmix_inplace(h, np.empty_like(h))
    return h.view(np.int64)


def _words_at_every_byte(
    data_buf: pa.Buffer | None, first: int, last: int
) -> npt.NDArray[np.uint64]:
    """The little-endian 8-byte word starting at each byte of ``data_buf[first:last]``.

    A copy of the bytes, zero-padded so that a word may start at any of them, viewed with a
    stride of one byte: indexing it loads unaligned words directly, several times faster
    than splicing each word from the two aligned words around it.
    """
    size = last - first
    padded = np.zeros(size + 8, dtype=np.uint8)
    if data_buf is not None and size:
        padded[:size] = np.frombuffer(data_buf, dtype=np.uint8, count=size, offset=first)
    return np.ndarray(shape=(size + 1,), dtype="<u8", buffer=padded, strides=(1,))


def _hash_bodies(
    h: npt.NDArray[np.uint64],
    words: npt.NDArray[np.uint64],
    starts: npt.NDArray[np.int64],
    blocks: npt.NDArray[np.int64],
) -> None:
    """Mix every row's 8-byte body blocks into ``h``, one block index at a time.

    Block ``b`` is mixed into the rows that have more than ``b`` blocks; that set only
    shrinks, so it is narrowed from the previous one and the work stays proportional to
    the number of blocks. While every row is still active no index is needed.
    """
    shortest = int(blocks.min())
    rows: npt.NDArray[np.int64] | None = None  # None: every row
    tmp = np.empty_like(h)
    for block in range(int(blocks.max())):
        if block >= shortest:
            rows = np.flatnonzero(blocks > block) if rows is None else rows[blocks[rows] > block]
            if rows.shape[0] < _MIN_VECTOR_ROWS:
                for row in rows.tolist():
                    h[row] = _finish_body(
                        int(h[row]), words, int(starts[row]), block, int(blocks[row])
                    )
                return
        if rows is None:
            k = words[starts + 8 * block]
            _mix_k_inplace(k, tmp)
            h ^= k
            _round_inplace(h, tmp)
        else:
            k = words[starts[rows] + 8 * block]
            scratch = tmp[: rows.shape[0]]
            _mix_k_inplace(k, scratch)
            hr = h[rows] ^ k
            _round_inplace(hr, scratch)
            h[rows] = hr


def _finish_body(h: int, words: npt.NDArray[np.uint64], start: int, block: int, blocks: int) -> int:
    """Scalar continuation of the body blocks of one long row."""
    for k in words[start + 8 * block : start + 8 * blocks : 8].tolist():
        h ^= _mix_k(k)
        h = ((((h << 27) | (h >> 37)) & _M64) * 5 + _N1) & _M64
    return h


def hash_strings(
    values: Iterable[str | None] | pa.Array | pa.ChunkedArray,
) -> npt.NDArray[np.int64]:
    """Vectorized :func:`hash_string`; same as :func:`hash_binaries` on strings."""
    return hash_binaries(values)
