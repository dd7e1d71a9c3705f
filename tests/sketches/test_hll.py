"""HyperLogLog: Hive 4's own outputs, derived goldens, format edge cases and properties."""

from __future__ import annotations

import base64
import json
import math
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.sketches import HyperLogLog, SketchFormatError, murmur3

DATA = Path(__file__).parent / "data"
HIVE4 = json.loads((DATA / "hive-hll-vectors.json").read_text())["vectors"]
DERIVED = json.loads((DATA / "hll-derived-golden.json").read_text())["vectors"]

HIVE4_INPUTS = {
    "long_range_10_p10": lambda h: h.add_longs(np.arange(10)),
    "long_range_1000_p10": lambda h: h.add_longs(np.arange(1000)),
    "string_v_10_p10": lambda h: h.add_strings([f"v{i}" for i in range(10)]),
    "double_half_5000_p10": lambda h: h.add_doubles(np.arange(5000) * 0.5),
}


def _decode_varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, position


def _hive_sparse_entries(blob: bytes) -> list[int]:
    """Decode sparse entries literally as Hive does (int deltas), keeping their order."""
    _, position = _decode_varint(blob, 4)
    count, position = _decode_varint(blob, position)
    entries, previous = [], 0
    for i in range(count):
        delta, position = _decode_varint(blob, position)
        previous = delta & 0xFFFFFFFF if i == 0 else (previous + delta) & 0xFFFFFFFF
        entries.append(previous)
    assert position == len(blob)
    return entries


def _encode_varint(value: int) -> bytes:
    value &= 2**64 - 1
    out = bytearray()
    while value > 0x7F:
        out.append(0x80 | value & 0x7F)
        value >>= 7
    out.append(value)
    return bytes(out)


def _sparse_blob(p: int, entries: list[int], count: int = 1) -> bytes:
    """A sparse blob with entries in the given order, deltas as Java ints (sign-extended)."""
    body = bytearray(b"HLL" + bytes([p << 4]) + _encode_varint(count))
    body += _encode_varint(len(entries))
    previous = 0
    for i, entry in enumerate(entries):
        delta = entry if i == 0 else entry - previous
        body += _encode_varint(delta if delta >= 0 else delta + 2**64)
        previous = entry
    return bytes(body)


# ------------------------------------------------------------------ Hive 4's own outputs


@pytest.mark.parametrize("vector", HIVE4, ids=lambda v: v["name"])
def test_matches_hive4_vectors(vector: dict[str, Any]) -> None:
    hive_bytes = base64.b64decode(vector["serialized_b64"])
    assert len(hive_bytes) == vector["serialized_len"]
    assert hive_bytes[3] == int(vector["header"]["byte3_hex"], 16)
    ours = HIVE4_INPUTS[vector["name"]](HyperLogLog(vector["p"]))
    theirs = HyperLogLog.from_bytes(hive_bytes)
    assert ours.encoding == theirs.encoding == vector["encoding"]
    assert ours.estimate() == theirs.estimate() == vector["count"]
    assert np.array_equal(ours.registers(), theirs.registers())
    assert ours == theirs
    ours_bytes = ours.to_bytes()
    assert ours_bytes[:4] == hive_bytes[:4]
    assert _decode_varint(ours_bytes, 4)[0] == vector["header"]["estimated_count_varint"]
    if vector["encoding"] == "DENSE":
        assert ours_bytes == hive_bytes
    else:
        assert sorted(_hive_sparse_entries(ours_bytes)) == sorted(_hive_sparse_entries(hive_bytes))
        assert theirs.to_bytes() == ours_bytes


def test_hive4_sparse_bytes_have_negative_deltas() -> None:
    """Hive 4's hash-map order gives 10-byte varints; they decode to the same entries."""
    blob = base64.b64decode(HIVE4[0]["serialized_b64"])
    entries = _hive_sparse_entries(blob)
    assert entries != sorted(entries)
    assert b"\xff\xff\xff\xff\x01" in blob
    assert HyperLogLog.from_bytes(blob).sparse_entries() == {e >> 6: e & 0x3F for e in entries}


@pytest.mark.parametrize("vector", HIVE4, ids=lambda v: v["name"])
def test_hive4_first_hashes_through_add_hash(vector: dict[str, Any]) -> None:
    by_hashes = HyperLogLog(10)
    for h in vector["first_hashes_signed"]:
        by_hashes.add_hash(h)
    values = {
        "long": lambda: HyperLogLog(10).add_longs(np.arange(5)),
        "stri": lambda: HyperLogLog(10).add_strings([f"v{i}" for i in range(5)]),
        "doub": lambda: HyperLogLog(10).add_doubles(np.arange(5) * 0.5),
    }[vector["name"][:4]]()
    assert by_hashes == values


# ------------------------------------------------------------------ derived goldens


@pytest.mark.parametrize("vector", DERIVED, ids=lambda v: v["name"])
def test_derived_golden_round_trip(vector: dict[str, Any]) -> None:
    blob = base64.b64decode(vector["serialized_b64"])
    sketch = HyperLogLog.from_bytes(blob)
    assert (sketch.p, sketch.encoding) == (vector["p"], vector["encoding"])
    assert (sketch.estimate(), sketch.ndv()) == (vector["count"], vector["ndv"])
    assert sketch.to_bytes() == blob


def _golden(name: str) -> HyperLogLog:
    vector = next(v for v in DERIVED if v["name"] == name)
    return HyperLogLog.from_bytes(base64.b64decode(vector["serialized_b64"]))


def test_derived_golden_recomputed() -> None:
    cases = {
        "long_range_1000_p14": HyperLogLog(14).add_longs(np.arange(1000)),
        "long_range_10000_p14": HyperLogLog(14).add_longs(np.arange(10000)),
        "long_range_14000_p14": HyperLogLog(14).add_longs(np.arange(14000)),
        "long_range_50000_p14": HyperLogLog(14).add_longs(np.arange(50000)),
        "long_range_1000000_p14": HyperLogLog(14).add_longs(np.arange(1_000_000)),
        "string_v_20000_p14": HyperLogLog(14).add_strings([f"v{i}" for i in range(20000)]),
        "switch_p10_last_sparse": HyperLogLog(10).add_longs(np.arange(153)),
        "switch_p10_first_dense": HyperLogLog(10).add_longs(np.arange(154)),
        "switch_p14_first_dense": HyperLogLog(14).add_longs(np.arange(2458)),
        "merge_sparse_sparse_p10": HyperLogLog(10)
        .add_longs(np.arange(100))
        .merge(HyperLogLog(10).add_longs(np.arange(50, 150))),
        "merge_sparse_sparse_to_dense_p10": HyperLogLog(10)
        .add_longs(np.arange(100))
        .merge(HyperLogLog(10).add_longs(np.arange(100, 200))),
        "merge_dense_dense_p10": HyperLogLog(10)
        .add_longs(np.arange(1000))
        .merge(HyperLogLog(10).add_longs(np.arange(500, 1500))),
        "merge_sparse_dense_p10": HyperLogLog(10)
        .add_longs(np.arange(100))
        .merge(HyperLogLog(10).add_longs(np.arange(1000, 3000))),
        "fold_p14_dense_into_p10": HyperLogLog(10).merge(
            HyperLogLog(14).add_longs(np.arange(100_000))
        ),
        "fold_p14_sparse_into_p10": HyperLogLog(10)
        .add_longs(np.arange(10))
        .merge(HyperLogLog(14).add_longs(np.arange(5, 505))),
    }
    for name, sketch in cases.items():
        assert sketch == _golden(name), name


def test_empty_sketch_bytes_and_counts() -> None:
    empty = HyperLogLog()
    assert empty.p == 10 and empty.encoding == "SPARSE"
    assert empty.to_bytes() == b"HLL\xa0\x01\x00"  # header count 1, as Hive writes it
    assert (empty.estimate(), empty.ndv()) == (0, 1)
    assert HyperLogLog(14).to_bytes() == b"HLL\xe0\x01\x00"
    assert HyperLogLog.from_bytes(b"HLL\xa0\x01\x00") == empty
    assert not empty.registers().any()


def test_switch_thresholds() -> None:
    assert HyperLogLog(10).switch_threshold == 153
    assert HyperLogLog(14).switch_threshold == 2457
    assert HyperLogLog(10).add_longs(np.arange(153)).encoding == "SPARSE"
    assert HyperLogLog(10).add_longs(np.arange(154)).encoding == "DENSE"
    assert HyperLogLog(14).add_longs(np.arange(2457)).encoding == "SPARSE"
    assert HyperLogLog(14).add_longs(np.arange(2458)).encoding == "DENSE"


def test_switch_point_with_duplicates_matches_per_hash_adds() -> None:
    values = np.concatenate([np.arange(150), np.arange(100), np.arange(150, 400), np.arange(50)])
    hashes = murmur3.hash_longs(values)
    one_by_one = HyperLogLog(10)
    for h in hashes.tolist():
        one_by_one.add_hash(h)
    assert HyperLogLog(10).add_hashes(hashes) == one_by_one
    assert one_by_one.encoding == "DENSE"


def test_oversized_sparse_blob_switches_after_the_next_add() -> None:
    """Hive reads any number of sparse entries and only checks the size when adding."""
    blob = _sparse_blob(10, [(key << 6) | 1 for key in range(200)])
    hashes = murmur3.hash_longs(np.arange(5))
    vectorized = HyperLogLog.from_bytes(blob)
    assert vectorized.encoding == "SPARSE" and vectorized.estimate() == 200
    vectorized.add_hashes(hashes)
    one_by_one = HyperLogLog.from_bytes(blob)
    for h in hashes.tolist():
        one_by_one.add_hash(h)
    assert vectorized == one_by_one and vectorized.encoding == "DENSE"


def test_dense_all_zero_is_written_as_empty_sparse() -> None:
    folded = HyperLogLog(14).fold(10)
    assert folded.encoding == "DENSE" and not folded.registers().any()
    assert folded.to_bytes() == b"HLL\xa0\x01\x00"
    assert HyperLogLog(10, dense=True).to_bytes() == b"HLL\xa0\x01\x00"


def test_encoding_7_is_read_and_kept() -> None:
    registers = HyperLogLog(10).add_longs(np.arange(5000)).registers()
    blob = b"HLL\xa7" + bytes([0x85, 0x27]) + registers.tobytes()
    sketch = HyperLogLog.from_bytes(blob)
    assert np.array_equal(sketch.registers(), registers)
    assert sketch.to_bytes()[3] == 0xA7  # Hive keeps bit packing off for such a sketch
    assert len(sketch.to_bytes()) == len(blob)
    packed = HyperLogLog(10).add_longs(np.arange(5000))
    assert packed.to_bytes()[3] & 7 < 7
    assert packed.merge(sketch).to_bytes()[3] == 0xA7


def test_register_above_63_uses_one_byte_per_register() -> None:
    sketch = HyperLogLog(4).add_hash(0)  # hash >>> p == 0: rank 65 (trailing zeros of 0 = 64)
    assert sketch.sparse_entries() == {0: 1}  # Hive's sparse encoding keeps 6 bits: 65 -> 1
    dense = HyperLogLog(4, dense=True).add_hash(0)
    assert dense.registers()[0] == 65
    blob = dense.to_bytes()
    assert blob[3] == 0x47 and len(blob) == 4 + 1 + 16
    assert HyperLogLog.from_bytes(blob) == dense


def test_unsorted_sparse_entries_and_int_wrapping_deltas() -> None:
    entries = [(5 << 6) | 3, (1 << 6) | 2, ((2**25 - 1) << 6) | 7, (1 << 6) | 4]
    sketch = HyperLogLog.from_bytes(_sparse_blob(10, entries))
    assert sketch.sparse_entries() == {5: 3, 1: 4, 2**25 - 1: 7}
    assert HyperLogLog.from_bytes(_sparse_blob(10, sorted(entries))) == sketch


def test_sparse_bytes_layout() -> None:
    sketch = HyperLogLog(10)
    sketch.add_hash((3 << 10) | 7)  # key 3079, rank 3 (hash >>> 10 == 3 -> tz 0 + 1 = 1)
    blob = sketch.to_bytes()
    key = ((3 << 10) | 7) & (2**25 - 1)
    assert blob == b"HLL\xa0\x01\x01" + _encode_varint(key << 6 | 1)


def test_dense_bit_packing_is_msb_first() -> None:
    sketch = HyperLogLog(4, dense=True)
    for index, rank in enumerate([1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7, 1, 2]):
        sketch.add_hash(((1 << (rank - 1)) << 4) | index)
    blob = sketch.to_bytes()
    assert blob[3] == 0x43  # width 3
    bits = "".join(format(b, "08b") for b in blob[5:])
    assert [int(bits[i : i + 3], 2) for i in range(0, 48, 3)] == sketch.registers().tolist()


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"", "not an HLL"),
        (b"HL", "not an HLL"),
        (b"HLL", "not an HLL"),
        (b"HLX\xa0\x01\x00", "not an HLL"),
        (b"HLL\x30\x01\x00", "p=3"),
        (b"HLL\xa0\x01", "truncated"),
        (b"HLL\xa0\x01\x05\x01", "claims 5"),
        (b"HLL\xa4\x01" + bytes(100), "truncated"),
        (b"HLL\xa0\x01\x00\x00", "trailing"),
        (b"HLL\xa0" + b"\xff" * 11, "longer than 10"),
        (b"HLL\xa0\x01\x01\xff\xff\xff\xff\x0f", "wider than 25"),
        (b"HLL\x47\x01" + bytes([200]) + bytes(15), "above 127"),
    ],
)
def test_corrupt_blobs_raise_sketch_format_error(blob: bytes, message: str) -> None:
    with pytest.raises(SketchFormatError, match=message):
        HyperLogLog.from_bytes(blob)


def test_constructor_validates_p() -> None:
    for p in (3, 17, 10.0):
        with pytest.raises(ValueError, match="p must be"):
            HyperLogLog(p)  # type: ignore[arg-type]


# ------------------------------------------------------------------ merge and fold


def test_merge_smaller_p_into_larger_is_refused_like_hive() -> None:
    with pytest.raises(ValueError, match="smaller p"):
        HyperLogLog(14).merge(HyperLogLog(10))
    with pytest.raises(TypeError):
        HyperLogLog().merge("HLL")  # type: ignore[arg-type]


def test_fold_equals_building_at_the_smaller_p() -> None:
    values = np.random.default_rng(7).integers(-(2**63), 2**63 - 1, 200_000, dtype=np.int64)
    big = HyperLogLog(14).add_longs(values)
    assert ((14 + big.registers().astype(int) - 1) < 32).all()  # no int-shift wrap here
    assert np.array_equal(big.fold(10).registers(), HyperLogLog(10).add_longs(values).registers())
    small = HyperLogLog(14).add_longs(values[:500])
    assert small.encoding == "SPARSE"
    assert np.array_equal(
        small.fold(10).registers(), HyperLogLog(10).add_longs(values[:500]).registers()
    )
    assert big.fold(14) == big and big.fold(14) is not big
    with pytest.raises(ValueError, match="fold"):
        big.fold(15)


def test_fold_keeps_hives_32_bit_shift_for_dense_registers() -> None:
    """Hive's dense squash computes ``(1 << (p + lr - 1)) | idx`` in Java int arithmetic."""
    sketch = HyperLogLog(14, dense=True)
    sketch.add_hash((1 << (14 + 19 - 1)) | 5)  # register 5 gets rank 19: shift 32 wraps to 0
    assert sketch.registers()[5] == 19
    folded = sketch.fold(10).registers()
    # Hive adds hash 1 | 5 == 5 at p=10: register 5, trailing zeros of (5 >>> 10) == 0 -> 65
    assert folded[5] == 65 and np.count_nonzero(folded) == 1


def test_merge_does_not_modify_the_other_sketch() -> None:
    a = HyperLogLog(10).add_longs(np.arange(100))
    b = HyperLogLog(14).add_longs(np.arange(50, 5000))
    b_bytes = b.to_bytes()
    a.merge(b)
    assert b.to_bytes() == b_bytes


# ------------------------------------------------------------------ accuracy


def _relative_error(sketch: HyperLogLog, true: int) -> float:
    return abs(sketch.estimate() - true) / true


@pytest.mark.parametrize("p", [4, 10, 14, 16])
def test_estimates_within_three_standard_errors(p: int) -> None:
    bound = 3 * 1.04 / math.sqrt(2**p)
    for true in (1, 2, 3, 10, 100, 1000, 2000, 5000, 10_000, 30_000, 100_000, 300_000):
        sketch = HyperLogLog(p).add_longs(np.arange(true) * 7919 + p)
        assert _relative_error(sketch, true) <= bound, (p, true, sketch.estimate())


def test_tiny_sets_are_exact() -> None:
    for true in range(1, 154):
        assert HyperLogLog(10).add_longs(np.arange(true)).estimate() == true


def test_ten_million_distinct_values() -> None:
    sketch = HyperLogLog(10)
    for start in range(0, 10_000_000, 2_000_000):
        sketch.add_longs(np.arange(start, start + 2_000_000))
    assert _relative_error(sketch, 10_000_000) <= 3 * 1.04 / 32
    strings = HyperLogLog(10).add_strings([f"v{i}" for i in range(1_000_000)])
    assert _relative_error(strings, 1_000_000) <= 3 * 1.04 / 32


def test_duplicates_do_not_count() -> None:
    values = np.tile(np.arange(3000), 20)
    once = HyperLogLog(10).add_longs(np.arange(3000))
    assert HyperLogLog(10).add_longs(values) == once


def test_add_methods_and_copy() -> None:
    sketch = HyperLogLog(10).add_bytes([b"a", None, b"bc"]).add_decimals([None])
    assert sketch.estimate() == 2
    clone = sketch.copy()
    clone.add_longs([1, 2, 3])
    assert sketch.estimate() == 2 and clone.estimate() == 5
    assert sketch != clone and sketch != "HLL"
    assert "SPARSE" in repr(sketch)
    with pytest.raises(TypeError):
        sketch.add_longs(np.array([1.5]))
    with pytest.raises(TypeError):
        sketch.add_hashes(np.array([1.5]))


# ------------------------------------------------------------------ properties

distinct_longs = st.lists(
    st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=600, unique=True
)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([4, 10, 14]), distinct_longs, distinct_longs)
def test_merge_equals_sketch_of_union(p: int, left: list[int], right: list[int]) -> None:
    merged = HyperLogLog(p).add_longs(np.array(left, dtype=np.int64))
    merged.merge(HyperLogLog(p).add_longs(np.array(right, dtype=np.int64)))
    union = np.array(left + right, dtype=np.int64)
    direct = HyperLogLog(p).add_longs(union)
    assert np.array_equal(merged.registers(), direct.registers())
    if merged.encoding == direct.encoding:
        assert merged == direct
        assert merged.estimate() == direct.estimate()


def test_p16_cannot_be_serialized() -> None:
    """Hive's header has 4 bits for p: Hive writes p=16 as 0 and cannot read it back."""
    sketch = HyperLogLog(16).add_longs(np.arange(100_000))
    assert sketch.estimate() > 0
    with pytest.raises(ValueError, match="up to 15"):
        sketch.to_bytes()
    with pytest.raises(SketchFormatError, match="p=0"):
        HyperLogLog.from_bytes(b"HLL\x00\x01\x00")


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=4, max_value=15), distinct_longs)
def test_bytes_round_trip(p: int, values: list[int]) -> None:
    sketch = HyperLogLog(p).add_longs(np.array(values, dtype=np.int64))
    blob = sketch.to_bytes()
    again = HyperLogLog.from_bytes(blob)
    assert again == sketch
    assert again.to_bytes() == blob
    assert again.estimate() == sketch.estimate()


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([10, 14]), st.lists(st.integers(0, 2**64 - 1), max_size=3000))
def test_vectorized_adds_equal_per_hash_adds(p: int, hashes: list[int]) -> None:
    one_by_one = HyperLogLog(p)
    for h in hashes:
        one_by_one.add_hash(h)
    assert HyperLogLog(p).add_hashes(np.array(hashes, dtype=np.uint64)) == one_by_one


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([10, 14]), distinct_longs)
def test_sparse_and_dense_views_agree(p: int, values: list[int]) -> None:
    """Hive's definitions agree on the registers, not on the count.

    The sparse register projects onto exactly the dense registers. Its count, though,
    is linear counting over 2^25 buckets (exact for small sets), while a dense sketch
    counts over 2^p registers, so the two counts differ by the dense sketch's error.
    """
    array = np.array(values, dtype=np.int64)
    sparse = HyperLogLog(p).add_longs(array)
    dense = HyperLogLog(p, dense=True).add_longs(array)
    assert np.array_equal(sparse.registers(), dense.registers())
    if sparse.encoding == "SPARSE" and values:
        assert sparse.estimate() == len(values)
        bound = 3 * 1.04 / math.sqrt(2**p) * len(values) + 2
        assert abs(dense.estimate() - sparse.estimate()) <= bound


def test_pickle_keeps_every_encoding() -> None:
    """The job moves sketches between processes by pickle: sparse, dense, empty, the p
    that Hive's bytes cannot hold, and a sketch read in encoding 7 come back equal and
    serialize to the same bytes."""
    sparse = HyperLogLog().add_longs(np.arange(100))
    dense = HyperLogLog().add_longs(np.arange(100_000))
    one_byte = HyperLogLog.from_bytes(HyperLogLog(4, dense=True).add_hash(0).to_bytes())
    sketches = [sparse, dense, one_byte, HyperLogLog(), HyperLogLog(16).add_longs(np.arange(50))]
    for sketch in [*sketches, HyperLogLog(dense=True)]:
        back = pickle.loads(pickle.dumps(sketch))
        assert back == sketch and back.estimate() == sketch.estimate()
        back.add_longs(np.arange(200, 300))  # still a working sketch
    for sketch in [sparse, dense, one_byte]:
        assert pickle.loads(pickle.dumps(sketch)).to_bytes() == sketch.to_bytes()
    assert len(pickle.dumps(sparse)) < 600  # keys and ranks as arrays, not a dict
