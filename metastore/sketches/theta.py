"""Theta sketches as Apache DataSketches (Java and C++) make them, byte for byte.

Iceberg keeps a column's distinct count as an ``apache-datasketches-theta-v1`` Puffin blob:
the compact theta sketch of the column's values (:mod:`metastore.sketches.theta_hashes`
gives their hashes). This module builds, merges, writes and reads such sketches without the
DataSketches library, to the same bytes:

* :class:`ThetaUnion` is DataSketches' union (nominal entries k = 2^lg_k, 4096 by default),
  whose result does not depend on the order: of the distinct hashes below the smallest theta
  of the inputs, the k smallest, with theta the (k+1)-th smallest, or all of them with that
  theta when there are at most k. It takes compact sketches (a Spark task's, or one read back
  from a Puffin file) and values or their hashes, each batch as the exact sketch of its
  hashes: what DataSketches' union answers for an update sketch large enough to hold them
  all. Unlike an update sketch's, whose retained hashes depend on when it rebuilt (the order
  of the values), the result is the k smallest hashes whatever the order, and costs about
  one comparison a row once theta is small.
* :class:`CompactThetaSketch` is the result, in the compact ordered format (serial version
  3, family 3): one preamble long when empty or for a single hash, two in exact mode (the
  count), three in estimation mode (the count, theta); then the hashes, ascending.

The estimate is the number of retained hashes divided by theta / 2^63 (exact when theta is
the maximum). As in DataSketches' Java compaction, a sketch without hashes and without a
lower theta is written empty.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from metastore.sketches.errors import SketchFormatError
from metastore.sketches.theta_hashes import DEFAULT_SEED, murmur3_x64_128_h1, theta_hashes

DEFAULT_LG_K = 12
MIN_LG_K = 5
MAX_LG_K = 26
MAX_THETA: Final = (1 << 63) - 1

SERIAL_VERSION = 3
FAMILY_COMPACT = 3
_FLAG_BIG_ENDIAN = 1 << 0
_FLAG_READ_ONLY = 1 << 1
_FLAG_EMPTY = 1 << 2
_FLAG_COMPACT = 1 << 3
_FLAG_ORDERED = 1 << 4
_WRITTEN_FLAGS = _FLAG_READ_ONLY | _FLAG_COMPACT | _FLAG_ORDERED

# preamble longs, serial version, family, lg_k and lg_arr (unused: 0), flags, seed hash
_HEADER = struct.Struct("<BBBBBBH")
_COUNT = struct.Struct("<II")  # the number of hashes and 4 unused bytes
_THETA = struct.Struct("<Q")


def compute_seed_hash(seed: int) -> int:
    """DataSketches' 16-bit fingerprint of an update seed, written in every sketch."""
    fingerprint = murmur3_x64_128_h1(struct.pack("<q", seed), 0) & 0xFFFF
    if fingerprint == 0:
        raise ValueError(f"seed {seed} has a seed hash of 0, which DataSketches refuses")
    return fingerprint


def _check_lg_k(lg_k: int) -> None:
    if not MIN_LG_K <= lg_k <= MAX_LG_K:
        raise ValueError(f"lg_k must be within {MIN_LG_K}..{MAX_LG_K}, not {lg_k}")


def _distinct(hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """The distinct hashes, ascending. Hashes have 63 bits, so they sort as int64, which
    NumPy sorts several times faster than uint64."""
    ordered = np.sort(hashes.view(np.int64)).view(np.uint64)
    keep = np.empty(ordered.shape[0], dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


@dataclass(frozen=True, eq=False)
class CompactThetaSketch:
    """A compact ordered theta sketch: the retained ``hashes`` (ascending, each below
    ``theta``), ``theta`` (MAX_THETA in exact mode), whether no value was ever seen."""

    hashes: npt.NDArray[np.uint64]
    theta: int
    empty: bool
    seed_hash: int

    @property
    def num_retained(self) -> int:
        return int(self.hashes.shape[0])

    @property
    def estimation_mode(self) -> bool:
        return self.theta < MAX_THETA and not self.empty

    @property
    def estimate(self) -> float:
        """The distinct count: the number of hashes over the fraction of the hash space
        below theta (DataSketches' arithmetic, in doubles)."""
        return self.num_retained / (self.theta / float(MAX_THETA))

    def to_bytes(self) -> bytes:
        """DataSketches' compact ordered serialization (serial version 3)."""
        count = self.num_retained
        preamble = 3 if self.estimation_mode else 1 if self.empty or count == 1 else 2
        flags = _WRITTEN_FLAGS | (_FLAG_EMPTY if self.empty else 0)
        parts = [
            _HEADER.pack(preamble, SERIAL_VERSION, FAMILY_COMPACT, 0, 0, flags, self.seed_hash)
        ]
        if preamble > 1:
            parts.append(_COUNT.pack(count, 0))
        if preamble > 2:
            parts.append(_THETA.pack(self.theta))
        parts.append(self.hashes.astype("<u8", copy=False).tobytes())
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes, seed: int = DEFAULT_SEED) -> CompactThetaSketch:
        """Read a compact theta sketch (serial version 3) written by DataSketches or
        :meth:`to_bytes`; SketchFormatError in one line for anything else."""
        if len(data) < _HEADER.size:
            raise SketchFormatError(f"a theta sketch has 8 bytes at least, not {len(data)}")
        preamble, version, family, _, _, flags, fingerprint = _HEADER.unpack_from(data)
        preamble &= 0x3F  # the top two bits hold the resize factor of update sketches
        if version != SERIAL_VERSION:
            raise SketchFormatError(
                f"theta sketch of serial version {version}; only version 3 is read"
            )
        if family != FAMILY_COMPACT or not flags & _FLAG_COMPACT:
            raise SketchFormatError(f"not a compact theta sketch (family {family})")
        if flags & _FLAG_BIG_ENDIAN:
            raise SketchFormatError("big-endian theta sketches are not read")
        if preamble not in (1, 2, 3):
            raise SketchFormatError(f"theta sketch with {preamble} preamble longs")
        expected = compute_seed_hash(seed)
        empty = bool(flags & _FLAG_EMPTY)
        if empty:  # Java writes the seed hash of an empty sketch as 0
            return cls(np.empty(0, dtype=np.uint64), MAX_THETA, True, expected)
        if fingerprint != expected:
            raise SketchFormatError(
                f"theta sketch of another seed (seed hash {fingerprint:#06x}, "
                f"expected {expected:#06x})"
            )
        count, theta = 1, MAX_THETA
        if preamble > 1:
            _check_size(data, 16)
            count = _COUNT.unpack_from(data, 8)[0]
        if preamble > 2:
            _check_size(data, 24)
            theta = _THETA.unpack_from(data, 16)[0]
            if not 0 < theta <= MAX_THETA:
                raise SketchFormatError(f"theta sketch with theta {theta}")
        _check_size(data, preamble * 8 + count * 8)
        hashes = np.frombuffer(data, dtype="<u8", count=count, offset=preamble * 8)
        hashes = np.sort(hashes.astype(np.uint64))  # a copy: the result owns its array
        if count and (hashes[0] == 0 or int(hashes[-1]) >= theta):
            raise SketchFormatError("theta sketch with a hash of 0 or not below its theta")
        return cls(hashes, theta, False, fingerprint)


def _check_size(data: bytes, size: int) -> None:
    if len(data) < size:
        raise SketchFormatError(f"theta sketch truncated: {len(data)} bytes of {size}")


def _empty_hashes() -> npt.NDArray[np.uint64]:
    return np.empty(0, dtype=np.uint64)


def _compact(
    hashes: npt.NDArray[np.uint64], theta: int, empty: bool, seed_hash: int
) -> CompactThetaSketch:
    empty = empty or (hashes.shape[0] == 0 and theta == MAX_THETA)
    return CompactThetaSketch(hashes.copy(), MAX_THETA if empty else theta, empty, seed_hash)


class ThetaUnion:
    """DataSketches' theta union of compact sketches, their bytes, and values or hashes."""

    def __init__(self, lg_k: int = DEFAULT_LG_K, seed: int = DEFAULT_SEED) -> None:
        _check_lg_k(lg_k)
        self.seed = seed
        self.seed_hash = compute_seed_hash(seed)
        self._k = 1 << lg_k
        self._hashes = _empty_hashes()  # the distinct hashes below theta, ascending
        self._theta = MAX_THETA
        self._empty = True
        # 16 slots a nominal entry: few retained hashes share a slot.
        self._slot_shift = np.uint64(63 - (lg_k + 4))
        self._slot_table: npt.NDArray[np.uint64] | None = None

    def update_values(self, values: pa.Array | pa.ChunkedArray) -> None:
        """Add the non-null values of an Arrow array (see :func:`theta_hashes`)."""
        self.update_hashes(theta_hashes(values, self.seed))

    def update_hashes(self, hashes: npt.NDArray[np.uint64]) -> None:
        """Add 63-bit hashes: the union with the exact sketch of them (zero hashes count as
        seen but are not kept).

        Only the hashes below theta matter, and after the first few thousand distinct ones
        theta is small, so most rows are dropped by one comparison. Hashes already retained
        are dropped by a direct-mapped table (most rows of a column with few distinct
        values). Of many hashes left, the 2k+1 smallest (duplicates included) bound the
        candidates, which then need not all be sorted; when that bound holds fewer than
        k+1 distinct ones (duplicates again), all are sorted.
        """
        if hashes.shape[0] == 0:
            return
        self._empty = False
        k = self._k
        # below theta and not zero, in one comparison: 0 - 1 wraps to the largest value
        fresh = hashes[(hashes - np.uint64(1)) < np.uint64(self._theta - 1)]
        if fresh.shape[0] > 2 * k and self._hashes.shape[0]:
            fresh = fresh[self._slots()[fresh >> self._slot_shift] != fresh]
        merged: npt.NDArray[np.uint64] | None = None
        if fresh.shape[0] > 4 * k:
            signed = fresh.view(np.int64)  # 63-bit hashes: NumPy partitions int64 faster
            cut = np.partition(signed, 2 * k)[2 * k]
            merged = _distinct(np.concatenate((self._hashes, fresh[signed <= cut])))
            if np.searchsorted(merged, np.uint64(cut), side="right") <= k:
                merged = None  # the k+1 smallest are not all below the bound
        if merged is None:
            merged = _distinct(np.concatenate((self._hashes, fresh)))
        self._keep(merged)

    def _slots(self) -> npt.NDArray[np.uint64]:
        """A direct-mapped table of the retained hashes by their top bits, rebuilt when
        they change (a hash whose slot another took is not found in it, and is sorted)."""
        if self._slot_table is None:
            self._slot_table = np.zeros(1 << (63 - int(self._slot_shift)), dtype=np.uint64)
            self._slot_table[self._hashes >> self._slot_shift] = self._hashes
        return self._slot_table

    def _keep(self, merged: npt.NDArray[np.uint64]) -> None:
        """Retain the k smallest of MERGED (distinct, ascending, below theta); theta becomes
        the (k+1)-th when there are more."""
        if merged.shape[0] > self._k:
            self._theta = int(merged[self._k])
            merged = merged[: self._k]
        if merged.shape[0] != self._hashes.shape[0] or not np.array_equal(merged, self._hashes):
            self._hashes = merged
            self._slot_table = None

    def update(self, sketch: CompactThetaSketch | bytes) -> None:
        """Add a compact sketch, or its bytes."""
        if isinstance(sketch, bytes):
            sketch = CompactThetaSketch.from_bytes(sketch, self.seed)
        if sketch.empty:
            return
        if sketch.seed_hash != self.seed_hash:
            raise ValueError(
                f"cannot union a theta sketch of seed hash {sketch.seed_hash:#06x} with "
                f"{self.seed_hash:#06x}"
            )
        self._theta = min(self._theta, sketch.theta)
        if self._empty:  # the first sketch: its hashes are distinct and ascending already
            merged = sketch.hashes
        else:
            merged = _distinct(np.concatenate((self._hashes, sketch.hashes)))
        self._empty = False
        self._keep(merged[: np.searchsorted(merged, np.uint64(self._theta))])

    def result(self) -> CompactThetaSketch:
        return _compact(self._hashes, self._theta, self._empty, self.seed_hash)
