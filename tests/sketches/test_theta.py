"""Theta sketches against Apache DataSketches' own (the C++ library's Python package): the
hashes of Iceberg's single-value serialization, the union's bytes, and the compact format
both ways."""

from __future__ import annotations

import math
import struct
import uuid
from collections.abc import Iterable
from datetime import date, datetime, time
from decimal import Decimal
from itertools import pairwise

import datasketches
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.sketches.errors import SketchFormatError
from metastore.sketches.theta import (
    MAX_THETA,
    CompactThetaSketch,
    ThetaUnion,
    compute_seed_hash,
)
from metastore.sketches.theta_hashes import theta_hash, theta_hashes

K = 4096
# DataSketches' relative standard error of an estimate with k = 4096: 1 / sqrt(k - 1).
RSE = 1 / math.sqrt(K - 1)


def reference(values: Iterable[str | int | float]) -> datasketches.update_theta_sketch:
    sketch = datasketches.update_theta_sketch(lg_k=12, seed=9001)
    for value in values:
        sketch.update(value)
    return sketch


def reference_bytes(values: Iterable[str | int | float]) -> bytes:
    serialized: bytes = reference(values).compact(ordered=True).serialize()
    return serialized


def reference_hash(value: str | int | float) -> int:
    """The hash the library keeps for one value: a single-item sketch's only entry."""
    single = reference_bytes([value])
    assert len(single) == 16
    return int.from_bytes(single[8:], "little")


def reference_union(values: Iterable[str | int | float], lg_k: int = 12) -> bytes:
    """The library's union of the exact sketch of VALUES (an update sketch large enough to
    keep every hash: 2^20 nominal entries never rebuild below a million values)."""
    exact = datasketches.update_theta_sketch(lg_k=20, seed=9001)
    for value in values:
        exact.update(value)
    union = datasketches.theta_union(lg_k=lg_k, seed=9001)
    union.update(exact)
    serialized: bytes = union.get_result().serialize()
    return serialized


def ours(values: pa.Array | pa.ChunkedArray, lg_k: int = 12) -> CompactThetaSketch:
    union = ThetaUnion(lg_k=lg_k)
    union.update_values(values)
    return union.result()


def java_bytes_of_decimal(unscaled: int) -> bytes:
    """``BigInteger.toByteArray``: bitLength() / 8 + 1 bytes, bitLength without the sign."""
    bit_length = (unscaled if unscaled >= 0 else ~unscaled).bit_length()
    return unscaled.to_bytes(bit_length // 8 + 1, "big", signed=True)


# ------------------------------------------------------------------------------ hashing


def test_the_seed_hash_of_9001_is_the_librarys() -> None:
    assert compute_seed_hash(9001) == 0x93CC
    assert reference_bytes([])[6:8] == b"\xcc\x93"


STRINGS = [
    "a",
    "ab",
    "abcdefg",
    "abcdefgh",
    "abcdefghi",
    "x" * 15,
    "y" * 16,
    "z" * 17,
    "w" * 31,
    "q" * 32,
    "v" * 33,
    "héllo wörld ✓",
    "日本語のテキスト",
    "p" * 1000,
]


def test_string_hashes_match_the_library() -> None:
    expected = [reference_hash(s) for s in STRINGS]
    assert [theta_hash(s.encode()) for s in STRINGS] == expected
    assert theta_hashes(pa.array(STRINGS)).tolist() == expected
    assert theta_hashes(pa.array(STRINGS, pa.large_string())).tolist() == expected
    assert theta_hashes(pa.array(STRINGS, pa.string_view())).tolist() == expected
    assert theta_hashes(pa.array([s.encode() for s in STRINGS], pa.binary())).tolist() == expected


def test_long_values_among_short_ones_are_finished_one_by_one() -> None:
    """Fewer than 16 rows with many 16-byte blocks left leave the vectorized rounds."""
    values = [f"s{i}" for i in range(100)] + ["L" * (200 + 37 * i) for i in range(5)]
    got = theta_hashes(pa.array(values)).tolist()
    assert got == [theta_hash(v.encode()) for v in values]
    assert got[-5:] == [reference_hash(v) for v in values[-5:]]


LONGS = [0, 1, -1, 42, 2**31, -(2**31) - 1, 2**62, 2**63 - 1, -(2**63), 123456789012345]


def test_long_hashes_match_the_library() -> None:
    """The library's update(int) hashes an int64's 8 little-endian bytes, as Iceberg's long."""
    expected = [reference_hash(v) for v in LONGS]
    assert theta_hashes(pa.array(LONGS, pa.int64())).tolist() == expected
    assert [theta_hash(struct.pack("<q", v)) for v in LONGS] == expected


def test_doubles_hash_their_raw_bits() -> None:
    """Iceberg writes a double's raw bits (-0.0 and NaN payloads kept): the library's update
    of those bits as a long hashes the same 8 bytes."""
    values = [0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan, 1e-300, 6.02e23]
    bits = [struct.unpack("<q", struct.pack("<d", v))[0] for v in values]
    assert theta_hashes(pa.array(values, pa.float64())).tolist() == [
        reference_hash(b) for b in bits
    ]
    # For values the library does not canonicalize, its update(float) agrees too.
    assert theta_hashes(pa.array([1.5, -2.25], pa.float64())).tolist() == [
        reference_hash(1.5),
        reference_hash(-2.25),
    ]


@pytest.mark.parametrize(
    ("array", "serialized"),
    [
        (pa.array([True, False]), [b"\x01", b"\x00"]),
        (pa.array([7, -7], pa.int32()), [struct.pack("<i", 7), struct.pack("<i", -7)]),
        (pa.array([7, -7], pa.int16()), [struct.pack("<i", 7), struct.pack("<i", -7)]),
        (pa.array([1.5, -0.0], pa.float32()), [struct.pack("<f", 1.5), struct.pack("<f", -0.0)]),
        (
            pa.array([date(1970, 1, 2), date(1969, 12, 31)], pa.date32()),
            [struct.pack("<i", 1), struct.pack("<i", -1)],
        ),
        (
            pa.array([date(1970, 1, 2), date(1969, 12, 31)], pa.date64()),
            [struct.pack("<i", 1), struct.pack("<i", -1)],
        ),
        (pa.array([time(0, 0, 1)], pa.time64("us")), [struct.pack("<q", 1_000_000)]),
        (pa.array([time(0, 0, 1)], pa.time32("ms")), [struct.pack("<q", 1_000_000)]),
        (
            pa.array([datetime(1970, 1, 1, 0, 0, 2)], pa.timestamp("ms", tz="UTC")),
            [struct.pack("<q", 2_000_000)],
        ),
        (
            pa.array([datetime(1970, 1, 1, 0, 0, 2)], pa.timestamp("us")),
            [struct.pack("<q", 2_000_000)],
        ),
        (pa.array([2_000_000_000], pa.timestamp("ns")), [struct.pack("<q", 2_000_000_000)]),
        (pa.array([b"\x01\x02\x03"], pa.binary(3)), [b"\x01\x02\x03"]),
    ],
    ids=lambda x: str(x.type) if isinstance(x, pa.Array) else "",
)
def test_iceberg_single_value_serialization(array: pa.Array, serialized: list[bytes]) -> None:
    assert theta_hashes(array).tolist() == [theta_hash(b) for b in serialized]


def test_uuids_hash_their_16_big_endian_bytes() -> None:
    ids = [uuid.UUID(int=0x0123456789ABCDEF0011223344556677), uuid.uuid4()]
    array = pa.array([u.bytes for u in ids], pa.uuid())
    assert theta_hashes(array).tolist() == [theta_hash(u.bytes) for u in ids]


UNSCALED = [0, 1, -1, 127, 128, -128, -129, 255, 256, -32768, 10**37, -(10**37), 2**63, -(2**64)]


@pytest.mark.parametrize("kind", [pa.decimal128(38, 2), pa.decimal256(38, 2)], ids=str)
def test_decimals_hash_the_unscaled_value_as_java_writes_it(kind: pa.DataType) -> None:
    values = [Decimal(u).scaleb(-2) for u in UNSCALED]
    assert theta_hashes(pa.array(values, kind)).tolist() == [
        theta_hash(java_bytes_of_decimal(u)) for u in UNSCALED
    ]


def test_small_decimals_are_read_as_decimal128() -> None:
    values = [Decimal("1.25"), Decimal("-3.00")]
    assert (
        theta_hashes(pa.array(values, pa.decimal64(9, 2))).tolist()
        == theta_hashes(pa.array(values, pa.decimal128(9, 2))).tolist()
    )


def test_nulls_and_empty_byte_strings_are_skipped() -> None:
    """update(ByteBuffer) rejects an empty buffer: '' leaves a sketch empty."""
    assert theta_hashes(pa.array(["a", None, "", "b"])).tolist() == [
        reference_hash("a"),
        reference_hash("b"),
    ]
    assert ours(pa.array(["", None], pa.string())).to_bytes() == reference_bytes([""])
    assert theta_hashes(pa.array([None, 5], pa.int64())).tolist() == [reference_hash(5)]
    dictionary = pa.array(["b", None, "a", "b"]).dictionary_encode()
    assert theta_hashes(dictionary).tolist() == theta_hashes(pa.array(["b", "a", "b"])).tolist()


def test_types_iceberg_does_not_have_are_refused() -> None:
    with pytest.raises(TypeError, match="uint32"):
        theta_hashes(pa.array([1], pa.uint32()))
    with pytest.raises(TypeError, match="time64"):
        theta_hashes(pa.array([1], pa.time64("ns")))
    with pytest.raises(TypeError, match="38 digits"):
        theta_hashes(pa.array([Decimal(1)], pa.decimal256(40, 0)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=80), max_size=40))
def test_vectorized_hashes_equal_scalar_ones(values: list[bytes]) -> None:
    assert theta_hashes(pa.array(values, pa.binary())).tolist() == [theta_hash(v) for v in values]


# --------------------------------------------------------------------- sketch of values


@pytest.mark.parametrize("count", [0, 1, 2, 100, 4096, 4097, 100_000])
def test_sketch_of_distinct_strings_is_the_librarys(count: int) -> None:
    values = [f"value-{i}" for i in range(count)]
    assert ours(pa.array(values, pa.string())).to_bytes() == reference_union(values)


@pytest.mark.parametrize(("rows", "distinct"), [(100, 100), (100_000, 100_000), (300_000, 3000)])
def test_sketch_of_longs_is_the_librarys(rows: int, distinct: int) -> None:
    values = np.random.default_rng(rows).integers(-(2**40), 2**40, distinct)
    if rows > distinct:
        values = values[np.random.default_rng(1).integers(0, distinct, rows)]
    assert ours(pa.array(values)).to_bytes() == reference_union(values.tolist())


def test_batches_in_any_slicing_give_the_same_sketch() -> None:
    values = np.random.default_rng(3).integers(0, 2**62, 250_000)
    whole = ours(pa.array(values)).to_bytes()
    cuts = [0, 1, 70_000, 70_001, 200_000, 250_000]
    chunked = pa.chunked_array([pa.array(values[a:b]) for a, b in pairwise(cuts)])
    assert ours(chunked).to_bytes() == whole
    by_calls = ThetaUnion()
    for a, b in pairwise(cuts):
        by_calls.update_values(pa.array(values[a:b]))
    assert by_calls.result().to_bytes() == whole == reference_union(values.tolist())
    reversed_calls = ThetaUnion()
    for a, b in reversed(list(pairwise(cuts))):
        reversed_calls.update_values(pa.array(values[a:b]))
    assert reversed_calls.result().to_bytes() == whole


def k_smallest(hashes: np.ndarray, k: int) -> tuple[list[int], int]:
    """What a union keeps of HASHES: the k smallest distinct ones that are neither zero nor
    the largest (no hash is kept that is not below theta), and theta."""
    distinct = np.unique(hashes[(hashes != 0) & (hashes < MAX_THETA)])
    if distinct.shape[0] > k:
        return distinct[:k].tolist(), int(distinct[k])
    return distinct.tolist(), MAX_THETA


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.integers(0, 40),  # duplicates, the zero hash among them
                st.integers(0, MAX_THETA),
            ),
            max_size=600,
        ),
        max_size=6,
    )
)
def test_hashes_in_batches_keep_the_k_smallest(batches: list[list[int]]) -> None:
    """Every path of update_hashes (the slot table of retained hashes, the bound of the 2k+1
    smallest, the fallback when duplicates fill it) keeps exactly the k smallest."""
    union = ThetaUnion(lg_k=5)
    for values in batches:
        union.update_hashes(np.array(values, dtype=np.uint64))
    everything = np.array([v for values in batches for v in values], dtype=np.uint64)
    hashes, theta = k_smallest(everything, 32)
    result = union.result()
    assert (result.hashes.tolist(), result.theta) == (hashes, theta)
    assert result.empty == (len(everything) == 0 or (not hashes and theta == MAX_THETA))


def test_columns_with_few_distinct_values_are_exact() -> None:
    days = np.random.default_rng(5).integers(0, 365, 600_000).astype(np.int32)
    union = ThetaUnion()
    for start in range(0, days.shape[0], 65_536):
        union.update_values(pa.array(days[start : start + 65_536], pa.date32()))
    assert not union.result().estimation_mode and union.result().estimate == 365


@pytest.mark.parametrize("distinct", [50_000, 1_000_000])
def test_estimates_are_within_three_standard_errors(distinct: int) -> None:
    sketch = ours(pa.array(np.arange(distinct, dtype=np.int64) * 7919))
    assert sketch.estimation_mode
    assert abs(sketch.estimate - distinct) <= 3 * RSE * distinct
    library = datasketches.compact_theta_sketch.deserialize(sketch.to_bytes())
    assert library.get_estimate() == sketch.estimate
    assert library.theta64 == sketch.theta


def test_the_empty_sketch() -> None:
    empty = ThetaUnion().result()
    assert empty.empty and not empty.estimation_mode and empty.estimate == 0
    assert empty.to_bytes() == reference_bytes([]) == bytes.fromhex("01030300001ecc93")
    assert datasketches.compact_theta_sketch.deserialize(empty.to_bytes()).is_empty()


# -------------------------------------------------------------------------------- union


def sketches(parts: list[np.ndarray]) -> tuple[list[bytes], list[bytes]]:
    mine = [ours(pa.array(part)).to_bytes() for part in parts]
    theirs = [reference_union(part.tolist()) for part in parts]
    return mine, theirs


def library_union(serialized: list[bytes]) -> bytes:
    union = datasketches.theta_union(lg_k=12, seed=9001)
    for blob in serialized:
        union.update(datasketches.compact_theta_sketch.deserialize(blob))
    result: bytes = union.get_result().serialize()
    return result


@pytest.mark.parametrize(
    "sizes", [(100, 200), (3000, 3000), (60_000, 10), (100_000, 80_000, 5000), (0, 100)]
)
@pytest.mark.parametrize("overlap", [False, True])
def test_union_is_the_librarys(sizes: tuple[int, ...], overlap: bool) -> None:
    rng = np.random.default_rng(sum(sizes))
    span = 2 * sum(sizes) if overlap else 2**62
    parts = [rng.integers(0, span, size) for size in sizes]
    mine, theirs = sketches(parts)
    assert mine == theirs
    union = ThetaUnion()
    for blob in mine:
        union.update(blob)
    result = union.result()
    assert result.to_bytes() == library_union(theirs)
    truth = len(np.unique(np.concatenate(parts)))
    assert abs(result.estimate - truth) <= 3 * RSE * truth
    if not result.estimation_mode:
        assert result.to_bytes() == ours(pa.array(np.concatenate(parts))).to_bytes()


def test_union_takes_sketches_their_bytes_and_values_alike() -> None:
    a, b = np.arange(10_000, dtype=np.int64), np.arange(5_000, 30_000, dtype=np.int64)
    by_objects, by_bytes, by_values = ThetaUnion(), ThetaUnion(), ThetaUnion()
    by_objects.update(ours(pa.array(a)))
    by_objects.update(ours(pa.array(b)))
    by_bytes.update(ours(pa.array(a)).to_bytes())
    by_bytes.update(ours(pa.array(b)).to_bytes())
    by_values.update(ours(pa.array(a)))
    by_values.update_values(pa.array(b))
    assert by_objects.result().to_bytes() == by_bytes.result().to_bytes()
    assert by_values.result().to_bytes() == by_bytes.result().to_bytes()
    assert by_objects.result().num_retained == K


def test_a_sketch_of_more_nominal_entries_is_cut_to_k() -> None:
    """A blob another writer made with 2^14 nominal entries, unioned first."""
    values = np.arange(100_000, dtype=np.int64)
    large = ours(pa.array(values), lg_k=14)
    union = ThetaUnion()
    union.update(large.to_bytes())
    assert union.result().to_bytes() == ours(pa.array(values)).to_bytes()


def test_union_of_nothing_or_of_empty_sketches_is_empty() -> None:
    union = ThetaUnion()
    assert union.result().to_bytes() == reference_bytes([])
    union.update(ThetaUnion().result())
    union.update(bytes.fromhex("01030300001e0000"))  # Java's empty sketch: seed hash 0
    assert union.result().empty


def test_union_refuses_another_seed() -> None:
    other = ThetaUnion(seed=42)
    other.update_values(pa.array([1, 2], pa.int64()))
    with pytest.raises(ValueError, match="seed hash"):
        ThetaUnion().update(other.result())


# ----------------------------------------------------------------------------- format


def test_library_sketches_read_back_to_the_same_bytes() -> None:
    for values in ([], ["one"], ["a", "b"], [f"s{i}" for i in range(20_000)]):
        blob = reference_bytes(values)
        sketch = CompactThetaSketch.from_bytes(blob)
        assert sketch.to_bytes() == blob
        assert sketch.estimate == reference(values).get_estimate()


def test_unordered_library_sketches_are_read_sorted() -> None:
    values = [f"s{i}" for i in range(300)]
    unordered = reference(values).compact(ordered=False).serialize()
    assert CompactThetaSketch.from_bytes(unordered).to_bytes() == reference_bytes(values)


def test_single_item_layout() -> None:
    single = ours(pa.array(["only"]))
    blob = single.to_bytes()
    assert blob[:8] == bytes.fromhex("01030300001acc93")
    assert int.from_bytes(blob[8:], "little") == reference_hash("only")


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"\x01\x03", "8 bytes at least"),
        (reference_bytes(["a", "b"])[:20], "truncated"),
        (bytes.fromhex("0304030000180000") + b"\x00" * 16, "serial version 4"),
        (bytes.fromhex("0303020000180000") + b"\x00" * 16, "not a compact theta sketch"),
        (bytes.fromhex("01030300001a0000") + b"\x01" * 8, "another seed"),
        (
            bytes.fromhex("03030300001acc93") + struct.pack("<IIQQ", 1, 0, 10, 20),
            "not below its theta",
        ),
    ],
)
def test_unreadable_sketches_are_refused_in_one_line(blob: bytes, message: str) -> None:
    with pytest.raises(SketchFormatError, match=message) as raised:
        CompactThetaSketch.from_bytes(blob)
    assert "\n" not in str(raised.value)


def test_compressed_library_sketches_are_refused() -> None:
    compressed = reference([f"s{i}" for i in range(100)]).compact().serialize(compress=True)
    with pytest.raises(SketchFormatError, match="serial version 4"):
        CompactThetaSketch.from_bytes(compressed)


def test_estimation_mode_header() -> None:
    sketch = ours(pa.array(np.arange(100_000, dtype=np.int64)))
    blob = sketch.to_bytes()
    preamble, version, family, _, _, flags, seed_hash = struct.unpack_from("<BBBBBBH", blob)
    count, _, theta = struct.unpack_from("<IIQ", blob, 8)
    assert (preamble, version, family, flags, seed_hash) == (3, 3, 3, 0x1A, 0x93CC)
    assert count == sketch.num_retained == K
    assert theta == sketch.theta < MAX_THETA
    assert len(blob) == 24 + 8 * count


@pytest.mark.parametrize("lg_k", [5, 9])
def test_other_nominal_entries_are_the_librarys(lg_k: int) -> None:
    values = [f"v{i}" for i in range(20_000)]
    assert ours(pa.array(values), lg_k=lg_k).to_bytes() == reference_union(values, lg_k)
    with pytest.raises(ValueError, match="lg_k"):
        ThetaUnion(lg_k=4)
