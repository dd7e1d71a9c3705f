"""Hive's Murmur3 variant: Hive's own outputs, and scalar versus vectorized paths."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.sketches import murmur3

DATA = Path(__file__).parent / "data"
HIVE4 = json.loads((DATA / "hive-hll-vectors.json").read_text())
HIVE2 = json.loads((DATA / "hive2-golden.json").read_text())


def _vector(name: str) -> dict[str, Any]:
    return next(v for v in HIVE4["vectors"] if v["name"] == name)


def test_seed_is_hives() -> None:
    assert murmur3.SEED == HIVE4["murmur3_seed"] == 104729


@pytest.mark.parametrize(
    ("name", "values", "scalar", "vectorized"),
    [
        ("long_range_10_p10", list(range(5)), murmur3.hash_long, murmur3.hash_longs),
        ("string_v_10_p10", [f"v{i}" for i in range(5)], murmur3.hash_string, murmur3.hash_strings),
        (
            "double_half_5000_p10",
            [i * 0.5 for i in range(5)],
            murmur3.hash_double,
            murmur3.hash_doubles,
        ),
    ],
)
def test_first_hashes_match_hive4(
    name: str, values: list[Any], scalar: Callable[[Any], int], vectorized: Any
) -> None:
    vector = _vector(name)
    assert [scalar(v) for v in values] == vector["first_hashes_signed"]
    assert vectorized(values).tolist() == vector["first_hashes_signed"]
    hexes = [format(h & (2**64 - 1), "016x") for h in vector["first_hashes_signed"]]
    assert hexes == vector["first_hashes_hex"]


def test_byte_arrays_match_hive_murmur3() -> None:
    rows = HIVE2["murmur3_bytes"]
    inputs = [bytes.fromhex(row["hex"]) for row in rows]
    expected = [row["hash"] for row in rows]
    assert [murmur3.hash64(b) for b in inputs] == expected
    assert murmur3.hash_binaries(inputs).tolist() == expected
    assert murmur3.hash_binaries(pa.array(inputs, type=pa.large_binary())).tolist() == expected


def test_strings_longs_doubles_match_hive_murmur3() -> None:
    strings = HIVE2["murmur3_strings"]
    assert [murmur3.hash_string(r["string"]) for r in strings] == [r["hash"] for r in strings]
    assert murmur3.hash_strings([r["string"] for r in strings]).tolist() == [
        r["hash"] for r in strings
    ]
    longs = HIVE2["murmur3_longs"]
    assert [murmur3.hash_long(r["long"]) for r in longs] == [r["hash"] for r in longs]
    assert murmur3.hash_longs([r["long"] for r in longs]).tolist() == [r["hash"] for r in longs]
    doubles = HIVE2["murmur3_doubles"]
    values = [struct.unpack(">d", bytes.fromhex(r["bits"]))[0] for r in doubles]
    assert [murmur3.hash_double(v) for v in values] == [r["hash"] for r in doubles]
    assert murmur3.hash_doubles(values).tolist() == [r["hash"] for r in doubles]


def test_long_is_its_big_endian_bytes() -> None:
    for value in (0, 1, -1, 2**63 - 1, -(2**63), 1234567):
        assert murmur3.hash_long(value) == murmur3.hash64(struct.pack(">q", value))


def test_double_canonical_nan_and_signed_zero() -> None:
    quiet = float("nan")
    other_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000001))[0]
    assert murmur3.hash_double(quiet) == murmur3.hash_double(other_nan)
    assert (
        murmur3.hash_doubles(np.array([quiet, other_nan])).tolist()
        == [murmur3.hash_double(quiet)] * 2
    )
    assert murmur3.hash_double(0.0) != murmur3.hash_double(-0.0)
    assert murmur3.hash_double(0.0) == murmur3.hash_long(0)


def test_float32_is_widened_to_double() -> None:
    values = np.array([0.1, 1.5, -3.25, np.inf], dtype=np.float32)
    expected = [murmur3.hash_double(float(v)) for v in values]
    assert murmur3.hash_doubles(values).tolist() == expected


def test_decimals_hash_as_their_double_value() -> None:
    values = [Decimal("1.50"), Decimal("-0.1"), Decimal("12345678901234567890.123456789")]
    expected = [murmur3.hash_double(float(v)) for v in values]
    assert [murmur3.hash_decimal(v) for v in values] == expected
    assert murmur3.hash_decimals([*values, None]).tolist() == expected
    with pytest.raises(ValueError, match="not a Hive decimal"):
        murmur3.hash_decimal(Decimal("1E+40"))
    with pytest.raises(ValueError, match="not a Hive decimal"):
        murmur3.hash_decimals([Decimal("NaN")])


def test_arrow_inputs_nulls_slices_and_chunks() -> None:
    words = ["a", None, "héllo wörld, a longer value", "", None, "v123456"]
    expected = [murmur3.hash_string(w) for w in words if w is not None]
    for array_type in (pa.string(), pa.large_string()):
        array = pa.array(words, type=array_type)
        assert murmur3.hash_strings(array).tolist() == expected
        assert murmur3.hash_strings(array.slice(2)).tolist() == expected[1:]
    chunked = pa.chunked_array([words[:3], words[3:]], type=pa.string())
    assert murmur3.hash_strings(chunked).tolist() == expected
    dictionary = pa.array(words, type=pa.string()).dictionary_encode()
    assert murmur3.hash_strings(dictionary).tolist() == expected
    assert murmur3.hash_strings(pa.array(words, type=pa.string_view())).tolist() == expected
    assert murmur3.hash_strings([]).tolist() == []
    assert murmur3.hash_strings([None, None]).tolist() == []


def test_unpaired_surrogates_become_question_marks_like_java() -> None:
    assert murmur3.hash_string("a\udc00b") == murmur3.hash64(b"a?b")
    assert murmur3.hash_strings(["a\udc00b", "c"]).tolist() == [
        murmur3.hash64(b"a?b"),
        murmur3.hash64(b"c"),
    ]


def test_one_very_long_row_among_short_ones() -> None:
    rows = [b"x" * 100_000, *(bytes([i % 256]) * (i % 40) for i in range(500))]
    assert murmur3.hash_binaries(rows).tolist() == [murmur3.hash64(r) for r in rows]


def test_rows_that_all_have_body_blocks_in_a_slice() -> None:
    """Every row long enough for the first blocks (mixed with no row index), then fewer."""
    rows = [bytes((i + j) % 256 for j in range(8 + i % 90)) for i in range(1, 400)]
    array = pa.array(rows, type=pa.binary()).slice(3)
    assert murmur3.hash_binaries(array).tolist() == [murmur3.hash64(r) for r in rows[3:]]


def test_type_errors() -> None:
    with pytest.raises(TypeError):
        murmur3.hash_longs(np.array([1.5]))
    with pytest.raises(TypeError):
        murmur3.hash_strings(pa.array([1, 2]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=200))
def test_longs_scalar_equals_vectorized(values: list[int]) -> None:
    array = np.array(values, dtype=np.int64)
    assert murmur3.hash_longs(array).tolist() == [murmur3.hash_long(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=200))
def test_doubles_scalar_equals_vectorized(values: list[float]) -> None:
    values = [*values, float("nan"), -0.0, 0.0, float("inf"), float("-inf")]
    array = np.array(values, dtype=np.float64)
    assert murmur3.hash_doubles(array).tolist() == [murmur3.hash_double(v) for v in values]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=70), max_size=100))
def test_strings_scalar_equals_vectorized(values: list[str]) -> None:
    expected = [murmur3.hash_string(v) for v in values]
    assert murmur3.hash_strings(values).tolist() == expected
    assert murmur3.hash_strings(pa.array(values, type=pa.large_string())).tolist() == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=70), max_size=100))
def test_binary_scalar_equals_vectorized(values: list[bytes]) -> None:
    expected = [murmur3.hash64(v) for v in values]
    assert murmur3.hash_binaries(values).tolist() == expected
    assert murmur3.hash_binaries(pa.array(values, type=pa.binary())).tolist() == expected
