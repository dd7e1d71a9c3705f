"""Hive's HyperLogLog (``org.apache.hadoop.hive.common.ndv.hll``), bit for bit.

Registers (p = 4..16, m = 2^p, default p = 10 as in Hive's column statistics):

* A sketch starts SPARSE: a map from the low 25 bits of the hash (the key) to a 6-bit
  rank. The rank is ``trailingZeros(hash >>> p) + 1`` kept to its low 6 bits (Hive's
  encoding drops bit 6, which only matters for the impossible-in-practice rank 64/65).
* When the map holds more than ``((m * 6) / 8) / 5`` entries (153 at p = 10, 2457 at
  p = 14) it turns DENSE: ``register[key & (m - 1)] = max(value)``. Later hashes go to
  ``register[hash & (m - 1)] = max(rank)``.

Serialized form (``HyperLogLogUtils``)::

    "HLL" | p << 4 | encoding | varint count | body

* encoding 0 = SPARSE: varint n, then n varints of ``key << 6 | value``; the first is
  absolute, the rest are deltas with Java ``int`` wrap-around. Hive 4 writes entries in
  ``HashMap`` order, so a delta can be negative (a 10-byte sign-extended varint that is
  truncated to 32 bits on read); Hive 3 and this module write them in ascending order.
* encoding 1..6 = DENSE, registers bit-packed at that width, most significant bit first.
  Encoding 7 = one byte per register (Hive uses it when bit packing is disabled, which it
  is for a sketch that was read in encoding 7, so such a sketch keeps encoding 7 here too).
* p sits in 4 bits, so a p = 16 sketch cannot be serialized (Hive writes an unreadable
  header for it); :meth:`HyperLogLog.to_bytes` refuses it.
* An all-zero dense sketch (Hive's width 0 would make it unreadable) is written as SPARSE
  with 0 entries. The header count is ``max(count, 1)`` as in Hive.
* Varints are unsigned LEB128. Readers ignore the header count and recompute it.

The estimate is Hive's ``count()``: linear counting over 2^25 buckets while sparse; when
dense, ``alphaMM / sum(2^-register)`` (alphaMM in 32-bit float), minus the HLL++ bias of
the six nearest raw estimates when at most 5m, replaced by linear counting over the m
registers when that is below the per-p threshold (``hll_constants``). :meth:`ndv`
is Hive's ``estimateNumDistinctValues``: the count, or 1 when it is 0.

Merging follows Hive 4: the receiving sketch must not have a larger p than the other
one; a sketch with a larger p is first folded to the smaller p (Hive's ``squash``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metastore.sketches import murmur3
from metastore.sketches.errors import SketchFormatError
from metastore.sketches.hll_constants import BIASES, RAW_ESTIMATES, THRESHOLDS

if TYPE_CHECKING:
    import pyarrow as pa

MAGIC = b"HLL"
MIN_P = 4
MAX_P = 16
MAX_SERIALIZED_P = 15
DEFAULT_P = 10

_P_PRIME = 25
_M_PRIME = 1 << _P_PRIME
_Q_PRIME = 6
_K_NEAREST = 6
_MAX_VARINT_BYTES = 10
_CHUNK = 1 << 16

_INVERSE_POW2 = np.power(2.0, -np.arange(256, dtype=np.float64))


class _Scratch:
    """Reusable buffers for one batch of dense updates (fresh arrays cost page faults)."""

    def __init__(self, size: int) -> None:
        self.w = np.empty(size, dtype=np.uint64)
        self.t = np.empty(size, dtype=np.uint64)
        self.index = np.empty(size, dtype=np.intp)
        self.ranks = np.empty(size, dtype=np.uint8)


def _ranks(
    hashes: npt.NDArray[np.uint64], p: int, scratch: _Scratch | None = None
) -> npt.NDArray[np.uint8]:
    """``Long.numberOfTrailingZeros(hash >>> p) + 1`` for every hash (65 when it is 0).

    The trailing zeros of w are the set bits of ``~w & (w - 1)``, so a popcount gives
    them, including 64 for w == 0.
    """
    n = hashes.shape[0]
    scratch = scratch or _Scratch(n)
    w, t, ranks = scratch.w[:n], scratch.t[:n], scratch.ranks[:n]
    np.right_shift(hashes, np.uint64(p), out=w)
    with np.errstate(over="ignore"):
        np.subtract(w, np.uint64(1), out=t)
    np.invert(w, out=w)
    np.bitwise_and(t, w, out=t)
    np.bitwise_count(t, out=ranks)
    np.add(ranks, np.uint8(1), out=ranks)
    return ranks


def _java_round(value: float) -> int:
    """``Math.round(double)``: the nearest integer, ties toward positive infinity."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def _linear_count(m: int, zeros: int) -> int:
    return _java_round(m * math.log(m / zeros))


def _alpha_mm(m: int) -> float:
    """Hive computes alpha * m^2 in 32-bit float arithmetic."""
    f32 = np.float32
    alpha = f32(0.7213) / (f32(1) + f32(1.079) / f32(m))
    return float(f32(f32(alpha * f32(m)) * f32(m)))


def _bias(p: int, count: int) -> int:
    """Mean bias at the 6 raw estimates nearest to ``count`` (Hive's TreeMap walk).

    Hive keys a TreeMap by squared distance, so equal distances keep only the last
    index; the sum is always divided by 6 and truncated after adding 0.5.
    """
    nearest: dict[float, int] = {}
    for index, raw in enumerate(RAW_ESTIMATES[p]):
        distance = float(count) - raw
        nearest[distance * distance] = index
    total = 0.0
    for distance in sorted(nearest)[:_K_NEAREST]:
        total += BIASES[p][nearest[distance]]
    return int(total / _K_NEAREST + 0.5)


def _write_varint(out: bytearray, value: int) -> None:
    value &= (1 << 64) - 1
    while value > 0x7F:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)


class _Reader:
    """Bounds-checked cursor over a serialized sketch."""

    def __init__(self, data: bytes, position: int) -> None:
        self.data = data
        self.position = position

    def varint(self) -> int:
        result = 0
        for shift in range(0, 7 * _MAX_VARINT_BYTES, 7):
            if self.position >= len(self.data):
                raise SketchFormatError("HLL blob is truncated inside a varint")
            byte = self.data[self.position]
            self.position += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                return result & ((1 << 64) - 1)
        raise SketchFormatError("HLL blob has a varint longer than 10 bytes")

    def take(self, size: int) -> bytes:
        if self.position + size > len(self.data):
            raise SketchFormatError(
                f"HLL blob is truncated: {size} register bytes expected, "
                f"{len(self.data) - self.position} present"
            )
        chunk = self.data[self.position : self.position + size]
        self.position += size
        return chunk


class HyperLogLog:
    """A Hive-compatible HyperLogLog sketch (see the module docstring).

    Mutating methods return ``self`` so calls can be chained.
    """

    __slots__ = ("_dense", "_one_byte", "_sparse", "m", "p")

    def __init__(self, p: int = DEFAULT_P, *, dense: bool = False) -> None:
        """An empty sketch; Hive starts SPARSE unless its builder asks for DENSE."""
        if not isinstance(p, int) or not MIN_P <= p <= MAX_P:
            raise ValueError(f"p must be an integer from {MIN_P} to {MAX_P}, got {p!r}")
        self.p = p
        self.m = 1 << p
        self._sparse: dict[int, int] | None = None if dense else {}
        self._dense: npt.NDArray[np.uint8] | None = np.zeros(self.m, np.uint8) if dense else None
        # Hive disables bit packing for a sketch read in encoding 7: it keeps encoding 7.
        self._one_byte = False

    # ------------------------------------------------------------------ properties

    @property
    def encoding(self) -> str:
        """``"SPARSE"`` or ``"DENSE"``, as Hive's ``EncodingType``."""
        return "SPARSE" if self._sparse is not None else "DENSE"

    @property
    def switch_threshold(self) -> int:
        """Sparse entries allowed before switching to dense: ``((m * 6) / 8) / 5``."""
        return ((self.m * 6) // 8) // 5

    def registers(self) -> npt.NDArray[np.uint8]:
        """The dense register view (length m); a sparse sketch is projected as Hive does."""
        if self._dense is not None:
            return self._dense.copy()
        registers = np.zeros(self.m, dtype=np.uint8)
        if self._sparse:
            keys = np.fromiter(self._sparse.keys(), dtype=np.int64, count=len(self._sparse))
            values = np.fromiter(self._sparse.values(), dtype=np.uint8, count=len(self._sparse))
            np.maximum.at(registers, keys & (self.m - 1), values)
        return registers

    def sparse_entries(self) -> dict[int, int] | None:
        """Sparse map ``{25-bit key: rank}``, or None for a dense sketch."""
        return None if self._sparse is None else dict(self._sparse)

    # ------------------------------------------------------------------ adding

    def add_hash(self, hashcode: int) -> HyperLogLog:
        """Add one 64-bit hash (Hive's ``add(long)``; signed or unsigned form)."""
        h = hashcode & ((1 << 64) - 1)
        w = h >> self.p
        rank = (w & -w).bit_length() if w else 65
        if self._sparse is not None:
            key = h & (_M_PRIME - 1)
            value = rank & 0x3F
            if value > self._sparse.get(key, -1):
                self._sparse[key] = value
            if len(self._sparse) > self.switch_threshold:
                self._to_dense()
        else:
            assert self._dense is not None
            index = h & (self.m - 1)
            if rank > self._dense[index]:
                self._dense[index] = rank
        return self

    def add_hashes(self, hashes: npt.ArrayLike) -> HyperLogLog:
        """Add many 64-bit hashes (int64 or uint64 array) in order, as repeated add_hash."""
        array = np.asarray(hashes)
        if array.dtype.kind not in "iu":
            raise TypeError(f"hashes must be integers, got {array.dtype}")
        if array.dtype.itemsize != 8:
            array = array.astype(np.int64)
        self._add_hash_array(np.ascontiguousarray(array.ravel()).view(np.uint64))
        return self

    def _add_hash_array(self, h: npt.NDArray[np.uint64], scratch: _Scratch | None = None) -> None:
        if self._sparse is not None:
            h = self._add_sparse(h)
        scratch = scratch or _Scratch(min(h.shape[0], _CHUNK))
        for start in range(0, h.shape[0], _CHUNK):
            self._add_dense(h[start : start + _CHUNK], scratch)

    def _add_long_bits(self, values: npt.NDArray[np.int64]) -> HyperLogLog:
        """Hash and add int64 values chunk by chunk, reusing cache-sized buffers."""
        size = min(values.shape[0], _CHUNK)
        scratch = _Scratch(size)
        hashes = np.empty(size, dtype=np.uint64)
        for start in range(0, values.shape[0], _CHUNK):
            chunk = values[start : start + _CHUNK]
            n = chunk.shape[0]
            murmur3.hash_long_bits_into(chunk, hashes[:n], scratch.t[:n])
            self._add_hash_array(hashes[:n], scratch)
        return self

    def _add_sparse(self, h: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
        """Add hashes while sparse; return those left over after a switch to dense.

        Hive checks the size after every single add, so the switch happens right after
        the hash that brings in the (threshold + 1)-th key.
        """
        assert self._sparse is not None
        position = 0
        step = max(1024, 4 * self.switch_threshold)
        while position < h.shape[0] and self._sparse is not None:
            chunk = h[position : position + step]
            keys = (chunk & np.uint64(_M_PRIME - 1)).astype(np.int64)
            unique, first = np.unique(keys, return_index=True)
            known = np.fromiter(self._sparse.keys(), dtype=np.int64, count=len(self._sparse))
            new = ~np.isin(unique, known)
            room = self.switch_threshold - len(self._sparse)
            if np.count_nonzero(new) > room or room < 0:
                # A sketch read with too many entries switches after its next add.
                cut = 1 if room < 0 else int(np.sort(first[new])[room]) + 1
                self._merge_sparse_batch(keys[:cut], chunk[:cut])
                self._to_dense()
                return h[position + cut :]
            self._merge_sparse_batch(keys, chunk)
            position += chunk.shape[0]
            step *= 2
        return h[position:]

    def _merge_sparse_batch(self, keys: npt.NDArray[np.int64], h: npt.NDArray[np.uint64]) -> None:
        assert self._sparse is not None
        values = _ranks(h, self.p) & np.uint8(0x3F)  # Hive's sparse encoding keeps 6 bits
        unique, inverse = np.unique(keys, return_inverse=True)
        best = np.zeros(unique.shape[0], dtype=np.int16)
        np.maximum.at(best, inverse, values)
        sparse = self._sparse
        for key, value in zip(unique.tolist(), best.tolist(), strict=True):
            if value > sparse.get(key, -1):
                sparse[key] = value

    def _add_dense(self, h: npt.NDArray[np.uint64], scratch: _Scratch | None = None) -> None:
        assert self._dense is not None
        scratch = scratch or _Scratch(h.shape[0])
        t, index = scratch.t[: h.shape[0]], scratch.index[: h.shape[0]]
        np.bitwise_and(h, np.uint64(self.m - 1), out=t)
        index[:] = t
        np.maximum.at(self._dense, index, _ranks(h, self.p, scratch))

    def _to_dense(self) -> None:
        self._dense = self.registers()
        self._sparse = None

    def add_longs(self, values: npt.ArrayLike) -> HyperLogLog:
        """Add integers (also dates as days, timestamps as seconds), hashed as Java longs."""
        return self._add_long_bits(murmur3.as_long_array(values))

    def add_doubles(self, values: npt.ArrayLike) -> HyperLogLog:
        """Add floating-point values (float32 widened), hashed by their IEEE bits."""
        return self._add_long_bits(murmur3.double_bits(values))

    def add_strings(self, values: Iterable[str | None] | pa.Array | pa.ChunkedArray) -> HyperLogLog:
        """Add strings as UTF-8 bytes (an iterable or an Arrow string array; None skipped)."""
        return self.add_hashes(murmur3.hash_strings(values))

    def add_bytes(self, values: Iterable[bytes | None] | pa.Array | pa.ChunkedArray) -> HyperLogLog:
        """Add binary values (an iterable or an Arrow binary array; None skipped)."""
        return self.add_hashes(murmur3.hash_binaries(values))

    def add_decimals(self, values: Iterable[Decimal | None]) -> HyperLogLog:
        """Add decimals, hashed as their (Hive-normalised) double value; None skipped."""
        return self.add_hashes(murmur3.hash_decimals(values))

    # ------------------------------------------------------------------ merging

    def merge(self, other: HyperLogLog) -> HyperLogLog:
        """Merge ``other`` into this sketch in place (Hive's ``merge``).

        A larger-p ``other`` is folded to this p first. Merging a smaller-p sketch into
        this one raises ValueError, as in Hive: merge into the smaller-p sketch instead.
        """
        if not isinstance(other, HyperLogLog):
            raise TypeError(f"cannot merge {type(other).__name__} into HyperLogLog")
        if other.p < self.p:
            raise ValueError(
                f"cannot merge a p={other.p} HyperLogLog into a p={self.p} one; "
                "merge into the sketch with the smaller p"
            )
        if other.p > self.p:
            other = other.fold(self.p)
        if self._sparse is not None and other._sparse is not None:
            for key, value in other._sparse.items():
                if value > self._sparse.get(key, -1):
                    self._sparse[key] = value
            if len(self._sparse) > self.switch_threshold:
                self._to_dense()
            return self
        if self._sparse is not None:
            self._to_dense()
            self._one_byte = other._one_byte
        elif other._sparse is None:
            self._one_byte |= other._one_byte
        assert self._dense is not None
        np.maximum(self._dense, other.registers(), out=self._dense)
        return self

    def fold(self, p: int) -> HyperLogLog:
        """A new dense sketch at a smaller p (Hive's ``squash``), exactly as Hive does it.

        Each non-zero register (or sparse entry) is turned back into a representative
        hash ``(1 << (p_old + rank - 1)) | index`` that is added to the new sketch, so the
        index bits dropped by the smaller p move into the rank. Java's shift semantics
        are kept: a 64-bit shift for sparse entries and a 32-bit ``int`` shift for dense
        registers (the count wraps modulo the width).
        """
        if not MIN_P <= p <= self.p:
            raise ValueError(f"can only fold to a p from {MIN_P} to {self.p}, got {p}")
        if p == self.p:
            return self.copy()
        result = HyperLogLog(p, dense=True)
        if self._sparse is not None:
            keys = np.fromiter(self._sparse.keys(), dtype=np.uint64, count=len(self._sparse))
            ranks = np.fromiter(self._sparse.values(), dtype=np.uint64, count=len(self._sparse))
            keep = ranks != 0
            shifts = (np.uint64(self.p) + ranks[keep] - np.uint64(1)) & np.uint64(63)
            hashes = (np.uint64(1) << shifts) | keys[keep]
        else:
            assert self._dense is not None
            index = np.flatnonzero(self._dense).astype(np.int64)
            shifts = (self.p + self._dense[index].astype(np.int64) - 1) & 31
            as_int = ((np.int64(1) << shifts) | index).astype(np.uint32).view(np.int32)
            hashes = as_int.astype(np.int64).view(np.uint64)
        result._add_dense(hashes)
        return result

    # ------------------------------------------------------------------ estimating

    def estimate(self) -> int:
        """Hive's ``count()``: the estimated number of distinct hashes (0 when empty)."""
        if self._sparse is not None:
            return _linear_count(_M_PRIME, _M_PRIME - len(self._sparse))
        assert self._dense is not None
        inverse_sum = float(np.cumsum(_INVERSE_POW2[self._dense])[-1])  # Java's summing order
        count = int(_alpha_mm(self.m) * (1.0 / inverse_sum))
        if count <= 5 * self.m:
            count -= _bias(self.p, count)
        zeros = self.m - int(np.count_nonzero(self._dense))
        linear = _linear_count(self.m, zeros) if zeros else count
        return linear if linear < int(THRESHOLDS[self.p - MIN_P] + 0.5) else count

    def ndv(self) -> int:
        """Hive's ``estimateNumDistinctValues``: :meth:`estimate`, or 1 when that is 0.

        Hive writes this in the serialized header and reports it as the NDV of merged
        sketches. An empty sketch (an all-NULL column) counts 0 but reports 1.
        """
        return max(self.estimate(), 1)

    # ------------------------------------------------------------------ bytes

    def to_bytes(self) -> bytes:
        """Serialize in Hive's format (see the module docstring).

        The header keeps p in 4 bits, so p = 16 cannot be written: Hive itself writes
        ``(16 << 4) & 0xFF`` = p 0, which its reader rejects. ValueError here instead.
        """
        if self.p > MAX_SERIALIZED_P:
            raise ValueError(f"Hive's HLL header holds p up to {MAX_SERIALIZED_P}, not {self.p}")
        out = bytearray(MAGIC)
        registers = self._dense
        width = 0
        if registers is not None:
            width = int(max(int(registers.max()), 0xFF if self._one_byte else 0)).bit_length()
        if width > 6:
            out.append(self.p << 4 | 7)
            _write_varint(out, self.ndv())
            assert registers is not None
            out += registers.tobytes()
        elif width > 0:
            out.append(self.p << 4 | width)
            _write_varint(out, self.ndv())
            assert registers is not None
            bits = np.unpackbits(registers[:, None], axis=1)[:, 8 - width :]
            out += np.packbits(bits.ravel()).tobytes()
        else:
            out.append(self.p << 4)
            _write_varint(out, self.ndv())
            entries = sorted(self._sparse.items()) if self._sparse is not None else []
            _write_varint(out, len(entries))
            previous = 0
            for key, value in entries:
                current = key << _Q_PRIME | value
                _write_varint(out, current - previous)
                previous = current
        return bytes(out)

    @classmethod
    def from_bytes(cls, data: bytes) -> HyperLogLog:
        """Read Hive's format; raises :class:`SketchFormatError` for anything unreadable.

        Sparse entries may come in any order (Hive 4 writes hash-map order). Trailing
        bytes, a p outside 4..16, sparse keys over 25 bits and dense registers over 127
        are rejected as corrupt.
        """
        data = bytes(data)
        if len(data) < 5 or data[:3] != MAGIC:
            raise SketchFormatError("not an HLL blob (needs 'HLL', a header byte and a count)")
        p, encoding = data[3] >> 4, data[3] & 7
        if not MIN_P <= p <= MAX_SERIALIZED_P:
            raise SketchFormatError(f"HLL blob has p={p}, outside {MIN_P}..{MAX_SERIALIZED_P}")
        sketch = cls(p)
        reader = _Reader(data, 4)
        reader.varint()  # the count at write time; recomputed from the registers
        if encoding == 0:
            sketch._sparse = cls._read_sparse(reader)
        else:
            width = 8 if encoding == 7 else encoding
            raw = np.frombuffer(reader.take(sketch.m * width // 8), dtype=np.uint8)
            if width == 8:
                registers = raw.copy()
            else:
                bits = np.unpackbits(raw).reshape(sketch.m, width)
                registers = np.packbits(np.pad(bits, ((0, 0), (8 - width, 0))), axis=1)[:, 0]
            if int(registers.max()) > 127:
                raise SketchFormatError("HLL blob has a register above 127")
            sketch._sparse = None
            sketch._dense = registers
            sketch._one_byte = encoding == 7
        if reader.position != len(data):
            raise SketchFormatError(f"HLL blob has {len(data) - reader.position} trailing bytes")
        return sketch

    @staticmethod
    def _read_sparse(reader: _Reader) -> dict[int, int]:
        count = reader.varint()
        if count > len(reader.data) - reader.position:
            raise SketchFormatError(f"HLL blob claims {count} sparse entries, too few bytes")
        sparse: dict[int, int] = {}
        current = 0
        for i in range(count):
            delta = reader.varint() & 0xFFFFFFFF
            current = delta if i == 0 else (current + delta) & 0xFFFFFFFF
            if current >> 31:
                raise SketchFormatError("HLL blob has a sparse key wider than 25 bits")
            key, value = current >> _Q_PRIME, current & 0x3F
            if value > sparse.get(key, -1):
                sparse[key] = value
        return sparse

    # ------------------------------------------------------------------ object protocol

    def copy(self) -> HyperLogLog:
        """An independent copy."""
        clone = HyperLogLog(self.p, dense=self._dense is not None)
        clone._sparse = None if self._sparse is None else dict(self._sparse)
        clone._dense = None if self._dense is None else self._dense.copy()
        clone._one_byte = self._one_byte
        return clone

    def __getstate__(self) -> tuple[int, bool, bytes, bytes, bytes | None]:
        """A compact pickle: the statistics job moves a sketch per column and partition
        between processes, and a pickled dict of sparse entries takes three times the
        bytes of its keys and ranks as arrays (int32 and uint8)."""
        sparse = self._sparse or {}
        keys = np.fromiter(sparse.keys(), dtype=np.int32, count=len(sparse))
        ranks = np.fromiter(sparse.values(), dtype=np.uint8, count=len(sparse))
        dense = None if self._dense is None else self._dense.tobytes()
        return self.p, self._one_byte, keys.tobytes(), ranks.tobytes(), dense

    def __setstate__(self, state: tuple[int, bool, bytes, bytes, bytes | None]) -> None:
        p, self._one_byte, keys, ranks, dense = state
        self.p, self.m = p, 1 << p
        if dense is None:
            self._sparse = dict(
                zip(
                    np.frombuffer(keys, dtype=np.int32).tolist(),
                    np.frombuffer(ranks, dtype=np.uint8).tolist(),
                    strict=True,
                )
            )
            self._dense = None
        else:
            self._sparse = None
            self._dense = np.frombuffer(dense, dtype=np.uint8).copy()

    def __eq__(self, other: object) -> bool:
        """Equal p, encoding and content (sparse entries as a set, or dense registers)."""
        if not isinstance(other, HyperLogLog):
            return NotImplemented
        if self.p != other.p or self.encoding != other.encoding:
            return False
        if self._sparse is not None or other._sparse is not None:
            return self._sparse == other._sparse
        assert self._dense is not None and other._dense is not None
        return bool(np.array_equal(self._dense, other._dense))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"HyperLogLog(p={self.p}, encoding={self.encoding}, estimate={self.estimate()})"
