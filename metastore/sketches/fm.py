"""Hive's Flajolet-Martin sketch (``FMSketch``, ``hive.stats.ndv.algo=fm``).

Binary layout (Hive 3+, ``FMSketchUtils``)::

    "FM" | uint16 LE numBitVectors | numBitVectors x uint32 LE

Bit i (0..30) of each word is bit i of that vector; Hive never writes bit 31.

Hive 2.x stored the same vectors as text, one ``FastBitSet.toString()`` brace group per
vector listing the set bits: ``{0, 1, 2}{0, 3}`` (16 vectors by default). It is read here
into the same object.

Algorithm: vector i hashes a value v (a Java long) with
``h = (a_i * v + b_i) mod (2^31 - 1)`` in wrapping 64-bit arithmetic, Java's remainder
(sign of the dividend), plus the modulus when negative; the bit set is the index of the
lowest set bit of h (31 when h == 0). The odd coefficients a_i, b_i are successive
``nextInt()`` draws of ``java.util.Random(99397)`` and ``java.util.Random(9876413)``,
skipping even draws and adding 2^30 to negative ones. v is the long itself,
``Double.hashCode``, ``String.hashCode`` or ``HiveDecimal.hashCode`` (ints widened).

Estimate: S = sum over vectors of the index of the lowest clear bit;
``NDV = trunc(2^(S/n - log2(0.77351)))``. Merge is a bitwise OR of equal-length sketches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from decimal import Decimal
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metastore.sketches.errors import SketchFormatError
from metastore.sketches.hive_values import (
    hive_decimal_hash_code,
    java_string_hash_code,
    to_int32,
)
from metastore.sketches.murmur3 import as_long_array, double_bits

if TYPE_CHECKING:
    import pyarrow as pa

MAGIC = b"FM"
BIT_VECTOR_SIZE = 31
DEFAULT_NUM_BIT_VECTORS = 16
MAX_NUM_BIT_VECTORS = 1024
_PHI = 0.77351
_MOD = (1 << BIT_VECTOR_SIZE) - 1
_SEED_A = 99397
_SEED_B = 9876413
_CHUNK = 1 << 14
_TEXT = re.compile(r"(?:\{\s*(?:\d+\s*(?:,\s*\d+\s*)*)?\})+")
_GROUP = re.compile(r"\{([^{}]*)\}")


class JavaRandom:
    """``java.util.Random``: the 48-bit linear congruential generator."""

    _MULTIPLIER = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ self._MULTIPLIER) & self._MASK

    def next_bits(self, bits: int) -> int:
        """``Random.next(bits)`` as the Java ``int`` it returns."""
        self._seed = (self._seed * self._MULTIPLIER + 0xB) & self._MASK
        return to_int32(self._seed >> (48 - bits))

    def next_int(self) -> int:
        """``Random.nextInt()``."""
        return self.next_bits(32)


@lru_cache(maxsize=8)
def _coefficients(count: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Hive's odd hash coefficients a_i and b_i for ``count`` vectors."""
    rand_a, rand_b = JavaRandom(_SEED_A), JavaRandom(_SEED_B)
    a: list[int] = []
    b: list[int] = []
    for _ in range(count):
        for rand, out in ((rand_a, a), (rand_b, b)):
            value = rand.next_int()
            while value % 2 == 0:
                value = rand.next_int()
            out.append(value + (1 << 30) if value < 0 else value)
    return np.array(a, dtype=np.int64), np.array(b, dtype=np.int64)


class FMSketch:
    """A Hive-compatible FM sketch of ``num_bit_vectors`` 31-bit vectors."""

    __slots__ = ("_vectors",)

    def __init__(self, num_bit_vectors: int = DEFAULT_NUM_BIT_VECTORS) -> None:
        if not 1 <= num_bit_vectors <= MAX_NUM_BIT_VECTORS:
            raise ValueError(
                f"num_bit_vectors must be 1..{MAX_NUM_BIT_VECTORS}, got {num_bit_vectors}"
            )
        # bit 31 is kept in memory (set when a hash is 0, as in Hive) but never written
        self._vectors = np.zeros(num_bit_vectors, dtype=np.uint32)

    @property
    def num_bit_vectors(self) -> int:
        return int(self._vectors.shape[0])

    def bit_vectors(self) -> npt.NDArray[np.uint32]:
        """The vectors as integers (bit i = position i)."""
        return self._vectors.copy()

    # ------------------------------------------------------------------ adding

    def add_longs(self, values: npt.ArrayLike) -> FMSketch:
        """Add Java longs (integer types, dates as days, timestamps as seconds)."""
        array = as_long_array(values)
        a, b = _coefficients(self.num_bit_vectors)
        with np.errstate(over="ignore"):
            for start in range(0, array.shape[0], _CHUNK):
                v = array[start : start + _CHUNK]
                h = np.fmod(a[:, None] * v[None, :] + b[:, None], _MOD)
                h[h < 0] += _MOD
                lowest = h & -h
                lowest[h == 0] = 1 << BIT_VECTOR_SIZE
                self._vectors |= np.bitwise_or.reduce(lowest, axis=1).astype(np.uint32)
        return self

    def add_doubles(self, values: npt.ArrayLike) -> FMSketch:
        """Add doubles by ``Double.hashCode`` (canonical NaN; float32 widened)."""
        bits = double_bits(values).view(np.uint64)
        folded = (bits ^ (bits >> np.uint64(32))).astype(np.uint32).view(np.int32)
        return self.add_longs(folded.astype(np.int64))

    def add_strings(self, values: Iterable[str | None] | pa.Array | pa.ChunkedArray) -> FMSketch:
        """Add strings by ``String.hashCode`` (UTF-16 code units); None skipped."""
        if hasattr(values, "to_pylist"):  # an Arrow array
            values = values.to_pylist()
        codes = [java_string_hash_code(v) for v in values if v is not None]
        return self.add_longs(np.array(codes, dtype=np.int64))

    def add_decimals(self, values: Iterable[Decimal | None]) -> FMSketch:
        """Add decimals by ``HiveDecimal.hashCode`` of the Hive-normalised value."""
        codes = []
        for value in values:
            if value is None:
                continue
            code = hive_decimal_hash_code(value)
            if code is None:
                raise ValueError(f"{value!r} is not a Hive decimal (38 digits at most, finite)")
            codes.append(code)
        return self.add_longs(np.array(codes, dtype=np.int64))

    # ------------------------------------------------------------------ merge, estimate

    def merge(self, other: FMSketch) -> FMSketch:
        """Bitwise OR of ``other`` into this sketch; the vector counts must be equal."""
        if not isinstance(other, FMSketch):
            raise TypeError(f"cannot merge {type(other).__name__} into FMSketch")
        if other.num_bit_vectors != self.num_bit_vectors:
            raise ValueError(
                f"cannot merge FM sketches with {other.num_bit_vectors} and "
                f"{self.num_bit_vectors} bit vectors"
            )
        self._vectors |= other._vectors
        return self

    def estimate(self) -> int:
        """Hive's ``estimateNumDistinctValues`` (at least 1, even for an empty sketch)."""
        inverted = ~self._vectors.astype(np.uint64)
        lowest_clear = np.log2((inverted & (~inverted + np.uint64(1))).astype(np.float64))
        total = int(lowest_clear.sum())
        average = total / (self.num_bit_vectors * 1.0) - (math.log(_PHI) / math.log(2.0))
        return int(math.pow(2.0, average))

    def ndv(self) -> int:
        """Same as :meth:`estimate` (FM never reports 0)."""
        return self.estimate()

    # ------------------------------------------------------------------ bytes and text

    def to_bytes(self) -> bytes:
        """Hive's binary FM layout (bit 31 of each vector cleared)."""
        header = MAGIC + self.num_bit_vectors.to_bytes(2, "little")
        return header + (self._vectors & np.uint32(_MOD)).astype("<u4").tobytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> FMSketch:
        """Read the binary layout; raises :class:`SketchFormatError` if malformed."""
        data = bytes(data)
        if len(data) < 4 or data[:2] != MAGIC:
            raise SketchFormatError("not an FM blob (needs 'FM' and a vector count)")
        count = int.from_bytes(data[2:4], "little")
        if not 1 <= count <= MAX_NUM_BIT_VECTORS:
            raise SketchFormatError(f"FM blob has {count} bit vectors, expected 1..1024")
        if len(data) != 4 + 4 * count:
            raise SketchFormatError(
                f"FM blob with {count} vectors must be {4 + 4 * count} bytes, got {len(data)}"
            )
        sketch = cls(count)
        sketch._vectors = np.frombuffer(data, dtype="<u4", offset=4).astype(np.uint32)
        return sketch

    @classmethod
    def from_text(cls, text: str | bytes) -> FMSketch:
        """Read Hive 2.x text (``{0, 1, 2}{0, 3}``: set bits per vector, 0..31)."""
        if isinstance(text, bytes):
            try:
                text = text.decode("ascii")
            except UnicodeDecodeError as exc:
                raise SketchFormatError("FM text is not ASCII") from exc
        text = text.strip()
        if not _TEXT.fullmatch(text):
            raise SketchFormatError(f"not Hive 2.x FM text: {text[:40]!r}")
        groups = _GROUP.findall(text)
        if len(groups) > MAX_NUM_BIT_VECTORS:
            raise SketchFormatError(f"FM text has {len(groups)} vectors, at most 1024 allowed")
        sketch = cls(len(groups))
        for i, group in enumerate(groups):
            for token in filter(None, (t.strip() for t in group.split(","))):
                bit = int(token)
                if bit > BIT_VECTOR_SIZE:
                    raise SketchFormatError(f"FM text sets bit {bit}, beyond 31")
                sketch._vectors[i] |= np.uint32(1 << bit)
        return sketch

    # ------------------------------------------------------------------ object protocol

    def copy(self) -> FMSketch:
        clone = FMSketch(self.num_bit_vectors)
        clone._vectors = self._vectors.copy()
        return clone

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FMSketch):
            return NotImplemented
        return bool(np.array_equal(self._vectors, other._vectors))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FMSketch(num_bit_vectors={self.num_bit_vectors}, estimate={self.estimate()})"
