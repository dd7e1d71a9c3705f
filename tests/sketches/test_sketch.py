"""Recognising stored bit vectors and merging them as a server does."""

from __future__ import annotations

import numpy as np
import pytest

from metastore.sketches import (
    FMSketch,
    HyperLogLog,
    SketchFormatError,
    merge_sketch_blobs,
    merge_sketches,
    read_sketch,
    try_read_sketch,
)

HLL_BLOB = HyperLogLog().add_longs(np.arange(1000)).to_bytes()
FM_BLOB = FMSketch().add_longs(np.arange(1000)).to_bytes()


def test_recognises_each_kind() -> None:
    assert read_sketch(HLL_BLOB) == HyperLogLog.from_bytes(HLL_BLOB)
    assert read_sketch(bytearray(FM_BLOB)) == FMSketch.from_bytes(FM_BLOB)
    assert read_sketch(memoryview(FM_BLOB)) == FMSketch.from_bytes(FM_BLOB)
    assert read_sketch(b"{0, 1}{2}") == FMSketch.from_text("{0, 1}{2}")
    assert read_sketch("{0, 1}{2}") == FMSketch.from_text("{0, 1}{2}")
    assert read_sketch(HLL_BLOB.decode("latin-1")) == HyperLogLog.from_bytes(HLL_BLOB)


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (None, "None"),
        (b"", "empty"),
        (b"HL", "placeholder"),
        (b"\x00\x01\x02", "unrecognised"),
        (b"PK\x03\x04", "unrecognised"),
        (HLL_BLOB[:-3], "truncated"),
        (FM_BLOB[:-1], "bytes"),
        (b"{0, 1", "FM text"),
        ("\u20ac", "Latin-1"),
        (12, "expected bytes"),
    ],
)
def test_bad_blobs(blob: bytes | None, message: str) -> None:
    with pytest.raises(SketchFormatError, match=message):
        read_sketch(blob)
    assert try_read_sketch(blob) is None
    assert issubclass(SketchFormatError, ValueError)


def test_merge_blobs_of_one_kind() -> None:
    parts = [HyperLogLog().add_longs(np.arange(i * 500, i * 500 + 1000)) for i in range(4)]
    merged = merge_sketch_blobs([p.to_bytes() for p in parts])
    assert isinstance(merged, HyperLogLog)
    assert merged == HyperLogLog().add_longs(np.arange(2500))
    fms = [FMSketch().add_longs(np.arange(i, i + 100)) for i in range(3)]
    assert merge_sketch_blobs([f.to_bytes() for f in fms]) == FMSketch().add_longs(np.arange(102))


def test_merge_blobs_across_p_folds_to_the_smallest() -> None:
    p14 = HyperLogLog(14).add_longs(np.arange(20_000))
    p10 = HyperLogLog(10).add_longs(np.arange(10_000, 30_000))
    merged = merge_sketch_blobs([p14.to_bytes(), p10.to_bytes()])
    assert isinstance(merged, HyperLogLog) and merged.p == 10
    assert merged == HyperLogLog(10).add_longs(np.arange(30_000))
    assert p14 == HyperLogLog(14).add_longs(np.arange(20_000))  # inputs untouched


def test_merge_blobs_gives_none_when_not_mergeable() -> None:
    assert merge_sketch_blobs([]) is None
    assert merge_sketch_blobs([HLL_BLOB, None]) is None
    assert merge_sketch_blobs([HLL_BLOB, b"HL"]) is None
    assert merge_sketch_blobs([HLL_BLOB, FM_BLOB]) is None
    assert merge_sketch_blobs([FM_BLOB, FMSketch(32).to_bytes()]) is None
    assert merge_sketches([]) is None


def test_single_blob_merge_is_a_copy() -> None:
    merged = merge_sketch_blobs([HLL_BLOB])
    assert merged == HyperLogLog.from_bytes(HLL_BLOB)
    assert merged is not None and merged.ndv() == merged.estimate() == 985
