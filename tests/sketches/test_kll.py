"""KLL histograms in DataSketches' KllFloatsSketch format."""

from __future__ import annotations

import datasketches
import numpy as np
import pytest

from metastore.sketches import (
    SketchFormatError,
    kll_build,
    kll_count,
    kll_equal_width_histogram,
    kll_histogram,
    kll_merge,
    kll_quantiles,
)


def test_build_is_the_datasketches_float_sketch() -> None:
    """Compaction is randomised, so compare content rather than bytes."""
    blob = kll_build(np.arange(1000, dtype=np.int64))
    sketch = datasketches.kll_floats_sketch.deserialize(blob)
    assert (sketch.k, sketch.n) == (200, 1000)
    assert (sketch.get_min_value(), sketch.get_max_value()) == (0.0, 999.0)
    assert kll_count(blob) == 1000
    small = datasketches.kll_floats_sketch(200)
    small.update(np.array([3, 1, 2], dtype=np.float32))
    assert kll_build([3, 1, 2]) == bytes(small.serialize())  # exact below k values


def test_values_are_cast_to_float32_and_nan_is_ignored() -> None:
    blob = kll_build([16777217, np.nan, 0.1])
    assert kll_count(blob) == 2
    assert kll_quantiles(blob, [1.0])[0] == float(np.float32(16777217))


def test_doubles_beyond_float32_become_infinities() -> None:
    """As Java's (float) cast does in Hive; no overflow warning escapes."""
    blob = kll_build(np.array([1e300, -1e300, 1.0]))
    sketch = datasketches.kll_floats_sketch.deserialize(blob)
    assert (sketch.get_min_value(), sketch.get_max_value()) == (-np.inf, np.inf)


def test_quantiles_and_histogram() -> None:
    blob = kll_build(np.arange(10_000))
    low, mid, high = kll_quantiles(blob, [0.0, 0.5, 1.0])
    assert low <= 100 and abs(mid - 5000) <= 200 and high == 9999
    histogram = kll_histogram(blob, 4)
    assert histogram.edges.tolist()[0] == 0 and histogram.edges.tolist()[-1] == 9999
    assert len(histogram.edges) == 5 and histogram.counts.sum() == 10_000
    assert all(abs(c - 2500) <= 250 for c in histogram.counts)


def test_small_exact_histogram() -> None:
    histogram = kll_histogram(kll_build([1, 2, 3, 4]), 2)
    assert histogram.edges.tolist() == [1.0, 2.0, 4.0]
    assert histogram.counts.tolist() == [1, 3]


def test_repeated_values_merge_bins() -> None:
    single = kll_histogram(kll_build([5, 5, 5]), 4)
    assert single.edges.tolist() == [5.0, 5.0] and single.counts.tolist() == [3]
    skewed = kll_histogram(kll_build([1] * 90 + list(range(2, 12))), 10)
    assert skewed.counts.sum() == 100 and len(skewed.edges) == len(skewed.counts) + 1
    assert len(skewed.counts) < 10


def test_empty_input() -> None:
    blob = kll_build([])
    assert kll_count(blob) == 0
    assert np.isnan(kll_quantiles(blob, [0.5, 0.9])).all()
    empty = kll_histogram(blob, 5)
    assert empty.edges.size == 0 and empty.counts.size == 0
    assert kll_count(kll_merge([blob, blob])) == 0


def test_merge() -> None:
    merged = kll_merge([kll_build(np.arange(500)), kll_build(np.arange(500, 1000))])
    assert kll_count(merged) == 1000
    assert kll_histogram(merged, 2).edges.tolist()[::2] == [0.0, 999.0]
    with pytest.raises(ValueError, match="different k"):
        kll_merge([kll_build([1], k=200), kll_build([2], k=100)])
    with pytest.raises(ValueError, match="at least one"):
        kll_merge([])


def test_bad_blobs_and_arguments() -> None:
    for bad in (b"", b"HLL\xa0\x01\x00", b"\x05\x01\x0f"):
        with pytest.raises(SketchFormatError):
            kll_count(bad)
    with pytest.raises(ValueError, match="bins"):
        kll_histogram(kll_build([1]), 0)


def test_equal_width_histogram() -> None:
    values = np.concatenate([np.arange(100, dtype=np.float64), np.full(50, 5.0)])
    edges, counts = kll_equal_width_histogram(kll_build(values), 5)
    assert edges.tolist() == pytest.approx([0.0, 19.8, 39.6, 59.4, 79.2, 99.0])
    assert counts.tolist() == [70, 20, 20, 20, 20]  # the fifty 5.0s are in the first bin
    edges, counts = kll_equal_width_histogram(kll_build(np.arange(1, 1001)), 4)
    assert counts.sum() == 1000 and all(abs(c - 250) <= 10 for c in counts.tolist())


def test_equal_width_histogram_of_one_value_and_of_nothing() -> None:
    edges, counts = kll_equal_width_histogram(kll_build([3.0, 3.0, 3.0]), 5)
    assert (edges.tolist(), counts.tolist()) == ([3.0, 3.0], [3])
    edges, counts = kll_equal_width_histogram(kll_build([]), 5)
    assert edges.size == 0 and counts.size == 0
    with pytest.raises(ValueError, match="bins must be at least 1"):
        kll_equal_width_histogram(kll_build([1.0]), 0)


@pytest.mark.parametrize("size", [201, 202, 401, 1000, 4097, 131_072, 500_001])
def test_a_sketch_built_from_sorted_values_is_one_the_library_keeps_using(size: int) -> None:
    """kll_build writes the bytes itself above k values: the library reads them, writes
    them back identical, updates and merges them; N, the minimum and the maximum are
    exact and every rank within the sketch's bound."""
    values = np.random.default_rng(size).normal(100, 15, size)
    blob = kll_build(values)
    sketch = datasketches.kll_floats_sketch.deserialize(blob)
    assert bytes(sketch.serialize()) == blob
    ordered = np.sort(values.astype(np.float32))
    assert (sketch.n, sketch.get_min_value(), sketch.get_max_value()) == (
        size,
        ordered[0],
        ordered[-1],
    )
    ranks = np.linspace(0.0, 1.0, 201)
    found = np.array(sketch.get_quantiles(ranks.tolist()), dtype=np.float32)
    assert (found[0], found[-1]) == (ordered[0], ordered[-1])
    errors = np.searchsorted(ordered, found, side="right") / size - ranks
    assert np.abs(errors).max() <= 0.0133
    sketch.update(np.arange(1000, dtype=np.float32))
    library = datasketches.kll_floats_sketch(200)
    library.update(values.astype(np.float32))
    sketch.merge(library)
    assert sketch.n == 2 * size + 1000
    assert kll_count(kll_merge([blob, blob])) == 2 * size


def test_repeated_values_in_a_built_sketch() -> None:
    values = np.concatenate([np.full(100_000, 7.0), np.arange(1000.0)])
    sketch = datasketches.kll_floats_sketch.deserialize(kll_build(values))
    assert sketch.get_rank(6.5) == pytest.approx(0.0, abs=0.01)
    assert sketch.get_rank(7.0, True) == pytest.approx(100_008 / 101_000, abs=0.01)
