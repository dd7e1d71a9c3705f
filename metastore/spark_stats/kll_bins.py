"""Conversions between Hive's KLL sketches and Spark's equi-height histograms: estimates.

Spark's ``ANALYZE ... FOR COLUMNS`` (apache/spark ``CommandUtils.computeColumnStats`` and
``rowToColumnStat``) always makes ``spark.sql.statistics.histogram.numBins`` bins (254 by
default), even for a table of four rows: the edges are the column's approximate percentiles
at ranks i/numBins, height is non-null rows / numBins, and each bin's ndv is counted by
``ApproxCountDistinctForIntervals``. colstats makes the same shape from a KLL sketch, whose
values are float32 (Hive's units: epoch seconds for dates and timestamps).

This module needs NumPy and DataSketches: a server imports it only when a histogram is to be
converted.
"""

from __future__ import annotations

import math

import datasketches
import numpy as np
import numpy.typing as npt

from metastore.sketches import SketchFormatError, kll_build, kll_merge
from metastore.spark_stats.histogram import DEFAULT_BINS, MAX_KLL_VALUES, Histogram, HistogramBin
from metastore.spark_stats.values import MICROS_PER_SECOND, SECONDS_PER_DAY
from metastore.vocabulary import Kind


def _spark_units(values: npt.NDArray[np.float64], kind: Kind) -> npt.NDArray[np.float64]:
    """Hive's KLL values (epoch seconds for dates and timestamps) in Spark's units. A float32
    of epoch seconds is off by up to 64 s around today, so days are rounded."""
    if kind is Kind.DATE:
        return np.rint(values / SECONDS_PER_DAY)
    if kind is Kind.TIMESTAMP:
        return values * MICROS_PER_SECOND
    return values


def histogram_from_kll(
    blob: bytes,
    kind: Kind,
    *,
    non_null_rows: int | None = None,
    distinct: int | None = None,
    low: float | None = None,
    high: float | None = None,
    num_bins: int = DEFAULT_BINS,
) -> Histogram | None:
    """Spark's histogram of a column from its Hive KLL sketch; None for an empty sketch.

    * Bins: NUM_BINS, as Spark makes them. Edges are the sketch's quantiles at ranks
      i/num_bins (within the sketch's rank error, about 1.3% for k=200), the first and last
      replaced by the column's LOW and HIGH (Spark units) when known, since the sketch holds
      float32 values; the edges are kept within [low, high].
    * Height: NON_NULL_ROWS / num_bins (the sketch's count when not given).
    * Per-bin NDV, an estimate from DISTINCT (the column's NDV without NULL; the sketch's
      count when not given): a bin whose lo equals its hi holds one value; the other bins
      share the distinct values not used by those single values, evenly as far as their
      caps allow (what a capped bin cannot hold goes to the others). A bin's cap is
      ceil(height) rows, and for long, date and timestamp columns the whole numbers in its
      range; each holds at least one.
    """
    if num_bins < 1:
        raise ValueError(f"num_bins must be at least 1, got {num_bins}")
    sketch = _read_kll(blob)
    if sketch.is_empty():
        return None
    ranks = np.linspace(0.0, 1.0, num_bins + 1)
    quantiles = np.array(sketch.get_quantiles(ranks.tolist(), True), dtype=np.float64)
    quantiles[0], quantiles[-1] = sketch.get_min_value(), sketch.get_max_value()
    edges = _spark_units(quantiles, kind)
    if low is not None:
        edges[0] = low
    if high is not None:
        edges[-1] = high
    edges = np.maximum.accumulate(np.clip(edges, edges[0], edges[-1]))
    rows = int(sketch.n) if non_null_rows is None else non_null_rows
    height = rows / num_bins
    ndvs = _bin_ndvs(edges, kind, height, rows if distinct is None else distinct)
    bins = tuple(
        HistogramBin(float(lo), float(hi), int(ndv))
        for lo, hi, ndv in zip(edges[:-1], edges[1:], ndvs, strict=True)
    )
    return Histogram(height, bins)


def _read_kll(blob: bytes) -> datasketches.kll_floats_sketch:
    try:
        return datasketches.kll_floats_sketch.deserialize(bytes(blob))
    except Exception as exc:  # the library raises IndexError, RuntimeError, ValueError
        raise SketchFormatError(f"not a KLL float sketch: {exc}") from exc


def _bin_ndvs(
    edges: npt.NDArray[np.float64], kind: Kind, height: float, distinct: int
) -> npt.NDArray[np.int64]:
    """The per-bin NDV estimate of histogram_from_kll: one for bins of a single value, the
    rest of DISTINCT shared evenly by the other bins up to their caps (water-filling: what a
    capped bin cannot hold goes to the others), rounded so that the shares add up."""
    lo, hi = edges[:-1], edges[1:]
    single = lo == hi
    cap = np.full(len(lo), float(max(math.ceil(height), 1)))
    if kind.integral:
        whole = np.floor(hi) - np.floor(lo)
        whole[0] = np.floor(hi[0]) - np.ceil(lo[0]) + 1  # the first bin includes lo
        cap = np.minimum(cap, np.maximum(whole, 1.0))
    rest = max(distinct - len(np.unique(lo[single])), 0)
    shares = _water_fill(np.where(single, 0.0, cap), float(rest))
    rounded = np.diff(np.rint(np.cumsum(shares)), prepend=0.0)
    return np.where(single, 1, np.clip(rounded, 1.0, cap)).astype(np.int64)


def _water_fill(caps: npt.NDArray[np.float64], total: float) -> npt.NDArray[np.float64]:
    """Shares of TOTAL, as even as CAPS allow: min(cap, level) with the level that makes
    them add up to TOTAL (or every cap when they cannot)."""
    remaining, left = total, int((caps > 0).sum())
    for cap in np.sort(caps[caps > 0]):
        if cap * left >= remaining:
            break
        remaining -= cap
        left -= 1
    level = remaining / left if left else math.inf
    return np.minimum(caps, level)


# ------------------------------------------------------------------------------------------
# Spark histogram -> Hive KLL sketch


def kll_from_histogram(
    histogram: Histogram,
    kind: Kind,
    *,
    non_null_rows: int | None = None,
    max_values: int = MAX_KLL_VALUES,
) -> bytes | None:
    """A Hive KLL sketch (Hive's units: epoch seconds for dates and timestamps) estimated
    from a Spark histogram; None when it describes no rows.

    Each bin gets its share of the values (equal shares: the bins are equi-height), spread
    over ``ndv`` points evenly placed in (lo, hi] ([lo, hi] for the first bin; whole numbers
    for long and date columns), so a bin of one distinct value puts all its rows on hi (as
    does a bin with an infinite bound). At
    most MAX_VALUES values are fed; the sketch is then merged with itself until it counts
    NON_NULL_ROWS values (height x bins when not given), so that merging it with other
    partitions' sketches weighs it right. Quantiles are exact only at the bin edges, within
    the sketch's error; inside a bin they are an interpolation.
    """
    bins = histogram.bins
    rows = round(histogram.height * len(bins)) if non_null_rows is None else non_null_rows
    if rows <= 0 or not bins:
        return None
    fed = min(rows, max_values)
    sketch = kll_build(_hive_units(_spread(bins, fed, kind), kind))
    if fed == rows:
        return sketch
    times, rest = divmod(rows, fed)
    parts = [_multiplied(sketch, times)]
    if rest:
        parts.append(kll_build(_hive_units(_spread(bins, rest, kind), kind)))
    return kll_merge(parts)


def _spread(bins: tuple[HistogramBin, ...], count: int, kind: Kind) -> npt.NDArray[np.float64]:
    """COUNT values spread over the bins as kll_from_histogram describes."""
    shares = np.diff(np.rint(np.linspace(0, count, len(bins) + 1))).astype(np.int64)
    chunks = []
    for i, (b, share) in enumerate(zip(bins, shares, strict=True)):
        if share <= 0:
            continue
        points = max(1, min(b.ndv, int(share)))
        if b.lo == b.hi or not math.isfinite(b.hi - b.lo):  # one value, or infinite bounds
            positions = np.array([b.lo, b.hi] if i == 0 and b.lo != b.hi else [b.hi])
        elif i == 0:
            positions = np.linspace(b.lo, b.hi, points)
        else:
            positions = b.hi - (b.hi - b.lo) * np.arange(points) / points
        if kind in (Kind.LONG, Kind.DATE):
            positions = np.clip(np.rint(positions), b.lo, b.hi)
        chunks.append(positions[(np.arange(share) * len(positions)) // share])
    return np.concatenate(chunks) if chunks else np.empty(0)


def _hive_units(values: npt.NDArray[np.float64], kind: Kind) -> npt.NDArray[np.float64]:
    if kind is Kind.DATE:
        return values * SECONDS_PER_DAY
    if kind is Kind.TIMESTAMP:
        return np.floor(values / MICROS_PER_SECOND)
    return values


def _multiplied(sketch: bytes, times: int) -> bytes:
    """A sketch of TIMES copies of SKETCH's values, by doubling merges."""
    result: bytes | None = None
    power = sketch
    while times:
        if times & 1:
            result = power if result is None else kll_merge([result, power])
        times >>= 1
        if times:
            power = kll_merge([power, power])
    assert result is not None
    return result
