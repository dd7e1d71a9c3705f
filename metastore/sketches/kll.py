"""KLL histograms as Hive 4 stores them (``ColumnStatisticsData.*.histogram``).

Hive 4 keeps the serialized bytes of an Apache DataSketches ``KllFloatsSketch`` (k = 200
by default) for long, double, decimal, date and timestamp columns; values are cast to
32-bit floats (dates and timestamps as epoch seconds). The metastore stores the bytes
opaquely and needs the library only to merge them: Hive merges histograms only when
their k is equal. NaN inputs are ignored by the sketch.

``kll_build`` writes the sketch bytes itself for more than k values. DataSketches' own
update costs 40-90 ns a value (it was the statistics job's largest cost); a KLL sketch is
a set of levels of sorted values, a value on level h standing for 2**h input values, and
the library builds them by halving full levels, keeping every other value from a random
start. On a batch whose values are all known, the same halvings can run on the whole sorted
batch at once (numpy's sort costs a few ns a value). The result is a sketch the library
reads, updates, merges and serializes back byte for byte (tests/sketches/test_kll.py checks
this), with a smaller rank error than the streaming update's: a halving of a sorted run
moves any rank by at most the run's weight, so the error stays below the top level's
weight, and measured ranks are off by 0.1-0.5% of N against the library's 0.5-0.9% (its
bound for k = 200 is 1.33% at 99% confidence).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import NamedTuple

import datasketches
import numpy as np
import numpy.typing as npt

from metastore.sketches.errors import SketchFormatError

DEFAULT_K = 200

# The serialized layout of a KllFloatsSketch holding more than one value (DataSketches'
# serial version 1, the one Java and C++ read and write): 5 preamble ints, family 15, the
# minimum level width m = 8.
_PREAMBLE = struct.Struct("<BBBBHBBQHBB")
_PREAMBLE_INTS = 5
_SERIAL_VERSION = 1
_FAMILY = 15
_MIN_WIDTH = 8

_random = np.random.default_rng()


class EquiHeightHistogram(NamedTuple):
    """Bins ``[edges[i], edges[i + 1])`` (the last one closed) holding ``counts[i]`` values.

    Edges are quantiles, so every bin holds about the same number of values; repeated
    values can merge bins, giving fewer than requested. Empty arrays for an empty sketch.
    """

    edges: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]


class EqualWidthHistogram(NamedTuple):
    """Bins of equal width between the smallest and the largest value, ``[edges[i],
    edges[i + 1])`` (the last one closed), holding about ``counts[i]`` values: the shape of
    the distribution, for people. Empty arrays for an empty sketch."""

    edges: npt.NDArray[np.float64]
    counts: npt.NDArray[np.int64]


def _read(blob: bytes) -> datasketches.kll_floats_sketch:
    try:
        return datasketches.kll_floats_sketch.deserialize(bytes(blob))
    except Exception as exc:  # the library raises IndexError, RuntimeError, ValueError
        raise SketchFormatError(f"not a KLL float sketch: {exc}") from exc


def kll_build(values: npt.ArrayLike, k: int = DEFAULT_K) -> bytes:
    """Serialized KLL float sketch of ``values`` (cast to float32; NaN ignored).

    Doubles beyond the float32 range become +/-infinity, as Java's ``(float)`` cast in
    Hive makes them.
    """
    with np.errstate(over="ignore"):
        array = np.ascontiguousarray(values, dtype=np.float32).ravel()
    array = array[~np.isnan(array)]
    if array.size > k:
        return _compacted_sketch(np.sort(array), k)
    sketch = datasketches.kll_floats_sketch(k)
    if array.size:
        sketch.update(array)
    return bytes(sketch.serialize())


def _compacted_sketch(ordered: npt.NDArray[np.float32], k: int) -> bytes:
    """The serialized sketch of ORDERED (sorted, no NaN, more than K values), its levels
    made by halving the whole array as the module docstring describes: as few halvings as
    the sketch's capacity allows (the top level's weight bounds the error), then the room
    left filled from level 0 up with values evenly spread over each level (its first and
    last among them), as the streaming sketch's lower levels hold values, so quantiles have
    as many distinct values to come from; the minimum and the maximum stay on level 0, so
    the quantiles at ranks 0 and 1 are exact."""
    halvings = 1
    while sum(_kept(ordered.size, k, halvings, 0)) > _capacity(k, halvings + 1):
        halvings += 1
    room = _capacity(k, halvings + 1) - sum(_kept(ordered.size, k, halvings, 0))
    plan = _kept(ordered.size, k, halvings, room)
    if sum(plan) > _capacity(k, halvings + 1):
        plan = _kept(ordered.size, k, halvings, 0)
    levels: list[npt.NDArray[np.float32]] = []
    items = ordered
    for keep in plan[:-1]:
        kept = np.zeros(items.size, dtype=bool)
        kept[(np.arange(keep) * (items.size - 1)) // max(keep - 1, 1)] = True
        levels.append(items[kept])
        rest = items[~kept]
        items = rest[int(_random.integers(2)) :: 2]
    levels.append(items)
    offsets = [_capacity(k, len(levels)) - sum(level.size for level in levels)]
    for level in levels[:-1]:
        offsets.append(offsets[-1] + level.size)
    flags, unused, min_k = 0, 0, k
    header = _PREAMBLE.pack(
        _PREAMBLE_INTS,
        _SERIAL_VERSION,
        _FAMILY,
        flags,
        k,
        _MIN_WIDTH,
        unused,
        ordered.size,
        min_k,
        len(levels),
        unused,
    )
    return b"".join(
        [
            header,
            np.array(offsets, dtype="<u4").tobytes(),
            np.array([ordered[0], ordered[-1]], dtype="<f4").tobytes(),
            *(level.astype("<f4", copy=False).tobytes() for level in levels),
        ]
    )


def _kept(size: int, k: int, halvings: int, room: int) -> list[int]:
    """How many of SIZE values each level keeps when they are halved HALVINGS times: a
    level below the top keeps what it can hold as long as ROOM lasts, and one more or one
    fewer so that an even number is left to halve; the top keeps the rest, which may be more
    than it holds as long as the sketch's total is within its capacity (the streaming
    sketch halves a level only when the whole sketch is full)."""
    kept = []
    for height in range(halvings):
        keep = min(_level_capacity(k, halvings + 1, height), size, room)
        if (size - keep) % 2:
            keep += -1 if keep else 1
        room = max(room - keep, 0)
        kept.append(keep)
        size = (size - keep) // 2
    return [*kept, size]


def _capacity(k: int, num_levels: int) -> int:
    """How many values a sketch of NUM_LEVELS levels holds in all."""
    return sum(_level_capacity(k, num_levels, height) for height in range(num_levels))


def _level_capacity(k: int, num_levels: int, height: int) -> int:
    """How many values level HEIGHT of a sketch of NUM_LEVELS levels holds before it is
    halved: k on the top level, two thirds of that one level down, and so on, at least m
    (DataSketches' kll_helper::level_capacity, rounded as it does)."""
    depth = num_levels - height - 1
    return max(_MIN_WIDTH, (((2 * k) << depth) // int(3**depth) + 1) >> 1)


def kll_merge(blobs: Iterable[bytes]) -> bytes:
    """Union of serialized KLL sketches; ValueError if their k differ or there are none."""
    sketches = [_read(blob) for blob in blobs]
    if not sketches:
        raise ValueError("kll_merge needs at least one sketch")
    ks = sorted({sketch.k for sketch in sketches})
    if len(ks) > 1:
        raise ValueError(f"cannot merge KLL sketches with different k: {ks}")
    merged = datasketches.kll_floats_sketch(ks[0])
    for sketch in sketches:
        merged.merge(sketch)
    return bytes(merged.serialize())


def kll_count(blob: bytes) -> int:
    """Number of values the sketch has seen."""
    return int(_read(blob).n)


def kll_quantiles(
    blob: bytes, ranks: Sequence[float], inclusive: bool = True
) -> npt.NDArray[np.float64]:
    """Approximate quantiles at normalized ranks in [0, 1]; NaN for an empty sketch.

    With ``inclusive`` the quantile at rank r is the smallest value v with
    ``rank(v) >= r`` where rank counts values <= v.
    """
    sketch = _read(blob)
    if sketch.is_empty():
        return np.full(len(ranks), np.nan)
    return np.array(sketch.get_quantiles(list(ranks), inclusive), dtype=np.float64)


def kll_histogram(blob: bytes, bins: int) -> EquiHeightHistogram:
    """An equi-height histogram of at most ``bins`` bins, from the sketch's quantiles."""
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    sketch = _read(blob)
    if sketch.is_empty():
        return EquiHeightHistogram(np.empty(0), np.empty(0, dtype=np.int64))
    quantiles = np.array(
        sketch.get_quantiles(np.linspace(0.0, 1.0, bins + 1).tolist(), True), dtype=np.float64
    )
    quantiles[0], quantiles[-1] = sketch.get_min_value(), sketch.get_max_value()
    edges = np.unique(quantiles)
    n = int(sketch.n)
    if edges.shape[0] == 1:
        return EquiHeightHistogram(np.repeat(edges, 2), np.array([n], dtype=np.int64))
    interior = edges[1:-1].tolist()
    cumulative = np.array(sketch.get_cdf(interior) if interior else [1.0], dtype=np.float64)
    totals = np.rint(cumulative * n).astype(np.int64)
    totals[-1] = n
    return EquiHeightHistogram(edges, np.diff(totals, prepend=0))


def kll_equal_width_histogram(blob: bytes, bins: int) -> EqualWidthHistogram:
    """``bins`` bins of equal width from the sketch's CDF (one bin when all values are equal)."""
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    sketch = _read(blob)
    if sketch.is_empty():
        return EqualWidthHistogram(np.empty(0), np.empty(0, dtype=np.int64))
    low, high, n = float(sketch.get_min_value()), float(sketch.get_max_value()), int(sketch.n)
    if low == high or not np.isfinite(high - low):
        return EqualWidthHistogram(np.array([low, high]), np.array([n], dtype=np.int64))
    edges = np.linspace(low, high, bins + 1)
    # Fractions of values below each interior edge (exclusive), so a value on an edge falls
    # in the bin that starts there.
    below = np.array(sketch.get_cdf(edges[1:-1].tolist(), False), dtype=np.float64)[:-1]
    totals = np.rint(np.append(below, 1.0) * n).astype(np.int64)
    return EqualWidthHistogram(edges, np.diff(totals, prepend=0))
