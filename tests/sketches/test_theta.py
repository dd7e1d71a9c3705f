"""Theta sketches against Apache DataSketches' own (the C++ library's Python package): the
hashes of Iceberg's single-value serialization, the update sketch's and the union's bytes,
and the compact format both ways."""

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
    UpdateThetaSketch,
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


def ours(values: pa.Array | pa.ChunkedArray) -> UpdateThetaSketch:
    sketch = UpdateThetaSketch()
    sketch.update(values)
    return sketch


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
    assert ours(pa.array(["", None], pa.string())).compact().to_bytes() == reference_bytes([""])
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


# ----------------------------------------------------------------------- update sketch


@pytest.mark.parametrize("count", [0, 1, 2, 100, 7680, 7681, 100_000])
def test_sketch_of_distinct_strings_is_the_librarys(count: int) -> None:
    values = [f"value-{i}" for i in range(count)]
    assert ours(pa.array(values, pa.string())).compact().to_bytes() == reference_bytes(values)


@pytest.mark.parametrize(("rows", "distinct"), [(100, 100), (100_000, 100_000), (300_000, 3000)])
def test_sketch_of_longs_is_the_librarys(rows: int, distinct: int) -> None:
    """Duplicates, and the order of the values, which decides when the library rebuilds."""
    values = np.random.default_rng(rows).integers(-(2**40), 2**40, distinct)
    if rows > distinct:
        values = values[np.random.default_rng(1).integers(0, distinct, rows)]
    assert ours(pa.array(values)).compact().to_bytes() == reference_bytes(values.tolist())


def test_batches_in_any_slicing_give_the_same_sketch() -> None:
    values = np.random.default_rng(3).integers(0, 2**62, 250_000)
    whole = ours(pa.array(values)).compact().to_bytes()
    cuts = [0, 1, 70_000, 70_001, 200_000, 250_000]
    chunked = pa.chunked_array([pa.array(values[a:b]) for a, b in pairwise(cuts)])
    assert ours(chunked).compact().to_bytes() == whole
    by_calls = UpdateThetaSketch()
    for a, b in pairwise(cuts):
        by_calls.update(pa.array(values[a:b]))
    assert by_calls.compact().to_bytes() == whole == reference_bytes(values.tolist())


@pytest.mark.parametrize("distinct", [50_000, 1_000_000])
def test_estimates_are_within_three_standard_errors(distinct: int) -> None:
    sketch = ours(pa.array(np.arange(distinct, dtype=np.int64) * 7919)).compact()
    assert sketch.estimation_mode
    assert abs(sketch.estimate - distinct) <= 3 * RSE * distinct
    library = datasketches.compact_theta_sketch.deserialize(sketch.to_bytes())
    assert library.get_estimate() == sketch.estimate
    assert library.theta64 == sketch.theta


def test_the_empty_sketch() -> None:
    empty = UpdateThetaSketch().compact()
    assert empty.empty and not empty.estimation_mode and empty.estimate == 0
    assert empty.to_bytes() == reference_bytes([]) == bytes.fromhex("01030300001ecc93")
    assert datasketches.compact_theta_sketch.deserialize(empty.to_bytes()).is_empty()


# -------------------------------------------------------------------------------- union


def update_sketches(parts: list[np.ndarray]) -> tuple[list[bytes], list[bytes]]:
    mine = [ours(pa.array(part)).compact().to_bytes() for part in parts]
    theirs = [reference_bytes(part.tolist()) for part in parts]
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
    mine, theirs = update_sketches(parts)
    assert mine == theirs
    union = ThetaUnion()
    for blob in mine:
        union.update(blob)
    result = union.result()
    assert result.to_bytes() == library_union(theirs)
    truth = len(np.unique(np.concatenate(parts)))
    assert abs(result.estimate - truth) <= 3 * RSE * truth
    if not result.estimation_mode:
        assert result.to_bytes() == ours(pa.array(np.concatenate(parts))).compact().to_bytes()


def test_union_takes_update_sketches_compact_ones_and_bytes_alike() -> None:
    a = ours(pa.array(np.arange(10_000, dtype=np.int64)))
    b = ours(pa.array(np.arange(5_000, 30_000, dtype=np.int64)))
    by_objects, by_bytes = ThetaUnion(), ThetaUnion()
    by_objects.update(a)
    by_objects.update(b.compact())
    by_bytes.update(a.compact().to_bytes())
    by_bytes.update(b.compact().to_bytes())
    assert by_objects.result().to_bytes() == by_bytes.result().to_bytes()
    assert by_objects.result().num_retained == K


def test_union_of_nothing_or_of_empty_sketches_is_empty() -> None:
    union = ThetaUnion()
    assert union.result().to_bytes() == reference_bytes([])
    union.update(UpdateThetaSketch())
    union.update(bytes.fromhex("01030300001e0000"))  # Java's empty sketch: seed hash 0
    assert union.result().empty


def test_union_refuses_another_seed() -> None:
    other = UpdateThetaSketch(seed=42)
    other.update(pa.array([1, 2], pa.int64()))
    with pytest.raises(ValueError, match="seed hash"):
        ThetaUnion().update(other)


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
    single = ours(pa.array(["only"])).compact()
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
    sketch = ours(pa.array(np.arange(100_000, dtype=np.int64))).compact()
    blob = sketch.to_bytes()
    preamble, version, family, _, _, flags, seed_hash = struct.unpack_from("<BBBBBBH", blob)
    count, _, theta = struct.unpack_from("<IIQ", blob, 8)
    assert (preamble, version, family, flags, seed_hash) == (3, 3, 3, 0x1A, 0x93CC)
    assert count == sketch.num_retained and K <= count <= 15 * K // 8
    assert theta == sketch.theta < MAX_THETA
    assert len(blob) == 24 + 8 * count


@pytest.mark.parametrize("lg_k", [5, 9])
def test_other_nominal_entries_are_the_librarys(lg_k: int) -> None:
    values = [f"v{i}" for i in range(20_000)]
    library = datasketches.update_theta_sketch(lg_k=lg_k, seed=9001)
    for value in values:
        library.update(value)
    sketch = UpdateThetaSketch(lg_k=lg_k)
    sketch.update(pa.array(values))
    assert sketch.compact().to_bytes() == library.compact().serialize()
    union = ThetaUnion(lg_k=lg_k)
    union.update(sketch)
    library_union = datasketches.theta_union(lg_k=lg_k, seed=9001)
    library_union.update(library.compact())
    assert union.result().to_bytes() == library_union.get_result().serialize()
    with pytest.raises(ValueError, match="lg_k"):
        UpdateThetaSketch(lg_k=4)
