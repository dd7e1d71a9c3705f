"""Spark's histogram text (HistogramSerializer in lz4-java's block framing), and the estimates
between Spark's equi-height histograms and Hive's KLL sketches."""

from __future__ import annotations

import base64
import itertools
import math
import struct

import datasketches
import lz4.block
import numpy as np
import pytest
import xxhash

from metastore.sketches import kll_build, kll_count, kll_quantiles
from metastore.spark_stats.histogram import (
    DEFAULT_BINS,
    Histogram,
    HistogramBin,
    HistogramFormatError,
    decode_histogram,
    encode_histogram,
    histogram_payload,
    lz4_blocks,
    read_lz4_blocks,
)
from metastore.spark_stats.kll_bins import histogram_from_kll, kll_from_histogram
from metastore.vocabulary import Kind

# What Spark 4.1 wrote for column a (int: 1, 2, 3, 4) with histogram.enabled=true
# (/work/notes/spark/py4j/py4j_stats.py): 254 bins of height 4/254.
SPARK_TEXT = (
    "TFo0QmxvY2smWQAAAOAXAACHsMcP8QA/kCBAgQIECAAAAP4/8AABAA8IAP/mEUD+AQ8IAP/pEAj+AQ8IAP/hEBD2"
    "AQ8IAP/gD/AH/+YP6Af//////+IE4AkDAgAfAQgA/////////9tQAf////9MWjRCbG9jaxYAAAAAAAAAAAAAAAA="
)


def example(n: int = DEFAULT_BINS) -> Histogram:
    edges = np.linspace(-5.5, 1e6, n + 1)
    return Histogram(
        1234.5,
        tuple(
            HistogramBin(float(a), float(b), i + 1)
            for i, (a, b) in enumerate(itertools.pairwise(edges))
        ),
    )


def test_decodes_what_spark_wrote() -> None:
    histogram = decode_histogram(SPARK_TEXT)
    assert histogram.height == 4 / 254
    assert len(histogram.bins) == 254
    assert histogram.bins[0] == HistogramBin(1.0, 1.0, 1)
    assert histogram.bins[-1] == HistogramBin(4.0, 4.0, 1)
    assert sorted({b.hi for b in histogram.bins}) == [1.0, 2.0, 3.0, 4.0]
    assert all(b.ndv == 1 for b in histogram.bins)


def test_payload_is_a_big_endian_data_output_stream() -> None:
    histogram = Histogram(2.5, (HistogramBin(1.0, 2.0, 3), HistogramBin(2.0, 4.0, 5)))
    assert histogram_payload(histogram) == (
        struct.pack(">d", 2.5)
        + struct.pack(">i", 2)
        + struct.pack(">dd", 1.0, 2.0)
        + struct.pack(">dd", 2.0, 4.0)
        + struct.pack(">qq", 3, 5)
        + struct.pack(">i", -1)
    )


def test_framing_is_lz4_javas_block_stream() -> None:
    data = histogram_payload(example())
    framed = lz4_blocks(data)
    magic, token, packed, raw, check = struct.unpack_from("<8sBiii", framed)
    assert magic == b"LZ4Block"
    assert token == 0x20 | 6  # LZ4, 64 KiB blocks
    assert raw == len(data) == 16 + 24 * DEFAULT_BINS
    assert check == xxhash.xxh32_intdigest(data, seed=0x9747B28C) & 0x0FFFFFFF
    assert lz4.block.decompress(framed[21 : 21 + packed], uncompressed_size=raw) == data
    assert framed[21 + packed :] == b"LZ4Block\x16" + bytes(12)  # the closing empty block
    assert read_lz4_blocks(framed) == data


def test_incompressible_data_stays_raw_and_large_data_takes_several_blocks() -> None:
    noise = np.random.default_rng(7).bytes(100)
    framed = lz4_blocks(noise)
    assert framed[8] == 0x10 | 6
    assert struct.unpack_from("<ii", framed, 9) == (100, 100)
    assert framed[21:121] == noise
    big = np.random.default_rng(8).bytes(150_000)
    assert read_lz4_blocks(lz4_blocks(big)) == big
    assert lz4_blocks(big).count(b"LZ4Block") == 4  # 3 blocks of at most 64 KiB, and the end


@pytest.mark.parametrize("n", [0, 1, 254, 3000])
def test_round_trip(n: int) -> None:
    histogram = example(n)
    assert decode_histogram(encode_histogram(histogram)) == histogram


def test_special_values_round_trip() -> None:
    histogram = Histogram(
        0.0, (HistogramBin(-math.inf, -0.0, 0), HistogramBin(5e-324, math.inf, 2**63 - 1))
    )
    decoded = decode_histogram(encode_histogram(histogram))
    assert decoded == histogram
    assert math.copysign(1, decoded.bins[0].hi) == -1


def test_decoder_skips_what_commons_codec_skips() -> None:
    text = encode_histogram(example(3))
    assert decode_histogram("\n".join(text[i : i + 76] for i in range(0, len(text), 76))) == (
        example(3)
    )
    assert decode_histogram(text.rstrip("=")) == example(3)


def _framed(data: bytes, token: int = 0x16, check: int | None = None) -> str:
    check = xxhash.xxh32_intdigest(data, seed=0x9747B28C) & 0x0FFFFFFF if check is None else check
    header = struct.pack("<8sBiii", b"LZ4Block", token, len(data), len(data), check)
    return base64.b64encode(header + data).decode()


@pytest.mark.parametrize(
    "text",
    [
        base64.b64encode(b"LZ4Blockx" + bytes(12)).decode(),  # bad method
        base64.b64encode(b"NOTBlock\x16" + bytes(12)).decode(),  # bad magic
        _framed(histogram_payload(example(2)), check=1),  # checksum
        _framed(histogram_payload(example(2))[:20]),  # shorter than its bins
        _framed(struct.pack(">di", 1.0, -1)),  # negative bin count
        _framed(b"\x00" * 4),  # no bin count
        _framed(histogram_payload(example(2)))[:40],  # ends inside a block
        encode_histogram(example(2))[:-30] + "A" * 30,  # corrupted LZ4 data
        "",  # empty
    ],
)
def test_decoder_refuses_what_spark_cannot_read(text: str) -> None:
    with pytest.raises(HistogramFormatError):
        decode_histogram(text)


# ------------------------------------------------------------------------------------------
# KLL -> Spark histogram


def _rank_error(data: np.ndarray, histogram: Histogram) -> float:
    """The largest distance between an edge's rank in DATA and the rank it stands for."""
    ordered = np.sort(data)
    n, bins = len(data), len(histogram.bins)
    edges = [histogram.bins[0].lo] + [b.hi for b in histogram.bins]
    worst = 0.0
    for i, edge in enumerate(edges):
        below = np.searchsorted(ordered, edge, side="left") / n
        upto = np.searchsorted(ordered, edge, side="right") / n
        target = i / bins
        worst = max(worst, below - target, target - upto)
    return worst


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("normal", np.random.default_rng(1).normal(50, 10, 200_000)),
        ("skewed", np.random.default_rng(2).exponential(1000, 100_000)),
        ("few values", np.random.default_rng(3).integers(0, 5, 50_000).astype(float)),
    ],
)
def test_edges_are_the_datas_quantiles_within_the_sketch_error(name: str, data: np.ndarray) -> None:
    blob = kll_build(data)
    distinct = len(np.unique(data.astype(np.float32)))
    histogram = histogram_from_kll(blob, Kind.DOUBLE, non_null_rows=len(data), distinct=distinct)
    assert histogram is not None
    assert len(histogram.bins) == DEFAULT_BINS
    bound = datasketches.kll_floats_sketch.get_normalized_rank_error(200, False)  # 1.3%
    assert _rank_error(data.astype(np.float32), histogram) < bound
    assert histogram.height * len(histogram.bins) == pytest.approx(len(data))
    assert histogram.bins[0].lo == float(np.float32(data.min()))
    assert histogram.bins[-1].hi == float(np.float32(data.max()))
    assert all(a.hi == b.lo for a, b in zip(histogram.bins, histogram.bins[1:], strict=False))


def test_bins_take_the_columns_exact_low_and_high() -> None:
    data = np.arange(1, 10_001, dtype=float) + 0.1
    histogram = histogram_from_kll(kll_build(data), Kind.DOUBLE, low=1.1, high=10000.1)
    assert histogram is not None
    assert histogram.bins[0].lo == 1.1  # not the float32 1.100000023841858
    assert histogram.bins[-1].hi == 10000.1
    assert all(1.1 <= b.lo <= b.hi <= 10000.1 for b in histogram.bins)


def test_per_bin_ndv_estimate_of_dense_integers() -> None:
    data = np.random.default_rng(4).integers(0, 1000, 100_000)
    histogram = histogram_from_kll(
        kll_build(data), Kind.LONG, non_null_rows=100_000, distinct=1000, low=0, high=999
    )
    assert histogram is not None
    for i, b in enumerate(histogram.bins):
        whole = math.floor(b.hi) - (math.ceil(b.lo) - 1 if i == 0 else math.floor(b.lo))
        assert 1 <= b.ndv <= max(whole, 1)  # no more than the whole numbers in the bin
        if b.lo == b.hi:
            assert b.ndv == 1
    assert sum(b.ndv for b in histogram.bins) == pytest.approx(1000, rel=0.05)


def test_per_bin_ndv_is_one_for_repeated_values_and_at_most_the_height() -> None:
    data = np.concatenate([np.full(50_000, 7.0), np.random.default_rng(5).normal(0, 1, 50_000)])
    histogram = histogram_from_kll(kll_build(data), Kind.DOUBLE, distinct=50_001)
    assert histogram is not None
    singles = [b for b in histogram.bins if b.lo == b.hi]
    assert len(singles) > 100  # 7.0 holds half of the rows
    assert all(b.ndv == 1 and b.lo == 7.0 for b in singles)
    cap = math.ceil(histogram.height)
    assert all(1 <= b.ndv <= cap for b in histogram.bins)
    assert sum(b.ndv for b in histogram.bins) <= 50_001 + len(singles)


def test_few_rows_still_make_sparks_bin_count() -> None:
    histogram = histogram_from_kll(kll_build([1.0, 2.0, 3.0, 4.0]), Kind.LONG, distinct=4)
    assert histogram is not None
    assert len(histogram.bins) == 254
    assert histogram.height == 4 / 254
    assert all(b.ndv == 1 for b in histogram.bins)
    assert {b.hi for b in histogram.bins} == {1.0, 2.0, 3.0, 4.0}


def test_dates_and_timestamps_come_in_sparks_units() -> None:
    days = np.arange(19000, 19500)
    dates = histogram_from_kll(kll_build(days * 86400), Kind.DATE, num_bins=10)
    assert dates is not None
    assert dates.bins[0].lo == 19000.0 and dates.bins[-1].hi == 19499.0  # whole days
    assert all(b.lo == round(b.lo) for b in dates.bins)
    seconds = np.arange(1_700_000_000, 1_700_100_000, 10)
    stamps = histogram_from_kll(kll_build(seconds), Kind.TIMESTAMP, num_bins=10)
    assert stamps is not None
    assert stamps.bins[0].lo == pytest.approx(1.7e15, rel=1e-7)  # microseconds


def test_an_empty_sketch_has_no_histogram() -> None:
    assert histogram_from_kll(kll_build([]), Kind.DOUBLE) is None


# ------------------------------------------------------------------------------------------
# Spark histogram -> KLL


def test_kll_from_a_histogram_has_its_quantiles_and_counts_every_row() -> None:
    data = np.random.default_rng(6).normal(0, 1, 100_000)
    histogram = histogram_from_kll(kll_build(data), Kind.DOUBLE, distinct=100_000)
    assert histogram is not None
    for rows in (5_000, 100_000, 10**12 + 7):
        blob = kll_from_histogram(histogram, Kind.DOUBLE, non_null_rows=rows)
        assert blob is not None
        assert kll_count(blob) == rows
        # KLL sketches compact at random: judged by rank, as their error bound is (about
        # 1.7% for k=200, plus the histogram's bins), not by value, which in the tails of a
        # normal distribution moves far for a small error in rank.
        ranks = np.linspace(0.05, 0.95, 19)
        quantiles = kll_quantiles(blob, ranks.tolist())
        achieved = np.searchsorted(np.sort(data), quantiles) / len(data)
        assert np.abs(achieved - ranks).max() < 0.03


def test_kll_from_a_histogram_of_one_value_per_bin() -> None:
    histogram = decode_histogram(SPARK_TEXT)  # 1, 2, 3, 4
    blob = kll_from_histogram(histogram, Kind.LONG)
    assert blob is not None
    assert kll_count(blob) == 4
    assert sorted(set(kll_quantiles(blob, [0.0, 0.3, 0.6, 1.0]).tolist())) <= [1.0, 2.0, 3.0, 4.0]


def test_kll_from_a_histogram_in_hives_units() -> None:
    dates = Histogram(10.0, (HistogramBin(19723.0, 19724.0, 2),))
    blob = kll_from_histogram(dates, Kind.DATE)
    assert blob is not None
    assert set(kll_quantiles(blob, [0.0, 1.0]).tolist()) <= {19723.0 * 86400, 19724.0 * 86400}
    stamps = Histogram(4.0, (HistogramBin(1.5e15, 1.5e15 + 2e6, 2),))
    blob = kll_from_histogram(stamps, Kind.TIMESTAMP)
    assert blob is not None
    quantiles = kll_quantiles(blob, [0.0, 1.0])
    assert quantiles.min() >= np.float32(1.5e9) and quantiles.max() <= np.float32(1.5e9 + 2)


def test_infinite_bounds() -> None:
    histogram = Histogram(
        10.0,
        (
            HistogramBin(-math.inf, 1.0, 5),
            HistogramBin(1.0, math.inf, 5),
            HistogramBin(math.inf, math.inf, 1),
        ),
    )
    blob = kll_from_histogram(histogram, Kind.DOUBLE)
    assert blob is not None
    assert kll_count(blob) == 30
    assert kll_quantiles(blob, [0.0, 1.0]).tolist() == [-math.inf, math.inf]
    back = histogram_from_kll(kll_build([-math.inf, 1.0, 2.0, math.inf]), Kind.DOUBLE)
    assert back is not None
    assert (back.bins[0].lo, back.bins[-1].hi) == (-math.inf, math.inf)


def test_an_empty_histogram_makes_no_sketch() -> None:
    assert kll_from_histogram(Histogram(0.0, ()), Kind.LONG) is None
    assert kll_from_histogram(example(3), Kind.LONG, non_null_rows=0) is None
