"""KLL histograms as Hive 4 stores them (``ColumnStatisticsData.*.histogram``).

Hive 4 keeps the serialized bytes of an Apache DataSketches ``KllFloatsSketch`` (k = 200
by default) for long, double, decimal, date and timestamp columns; values are cast to
32-bit floats (dates and timestamps as epoch seconds). The metastore stores the bytes
opaquely and needs the library only to merge them: Hive merges histograms only when
their k is equal. NaN inputs are ignored by the sketch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import datasketches
import numpy as np
import numpy.typing as npt

from metastore.sketches.errors import SketchFormatError

DEFAULT_K = 200


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
    sketch = datasketches.kll_floats_sketch(k)
    with np.errstate(over="ignore"):
        array = np.ascontiguousarray(values, dtype=np.float32).ravel()
    if array.size:
        sketch.update(array)
    return bytes(sketch.serialize())


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
