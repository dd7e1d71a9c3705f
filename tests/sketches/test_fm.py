"""FM sketch: outputs of Hive 2.3.10's own estimator, the binary layout and properties."""

from __future__ import annotations

import json
import math
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metastore.sketches import FMSketch, SketchFormatError
from metastore.sketches.fm import JavaRandom, _coefficients
from metastore.sketches.hive_values import (
    hive_decimal_hash_code,
    java_double_hash_code,
    java_string_hash_code,
    normalize_decimal,
)

GOLDEN = json.loads((Path(__file__).parent / "data" / "hive2-golden.json").read_text())

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
BUILDERS = {
    "empty_16": lambda: FMSketch(16),
    "long_range_1000": lambda: FMSketch().add_longs(np.arange(1000)),
    "long_stride_10000": lambda: FMSketch().add_longs(np.arange(10000) * 1000003),
    "long_negative_2000": lambda: FMSketch().add_longs(
        np.r_[-np.arange(2000) * 7919, LONG_MIN, LONG_MAX]
    ),
    "long_range_10000_v64": lambda: FMSketch(64).add_longs(np.arange(10000)),
    "double_half_5000": lambda: FMSketch().add_doubles(
        np.r_[np.arange(5000) * 0.5, np.nan, -0.0, np.inf]
    ),
    "string_v_3000": lambda: FMSketch().add_strings(
        [f"v{i}" for i in range(3000)] + ["\u00e9", "\U0001f600", ""]
    ),
    "decimal_cents_1000": lambda: FMSketch().add_decimals(
        [Decimal(i).scaleb(-2) for i in range(1000)]
        + [Decimal(v) for v in ("1.500", "-2.25", "100", "12345678901234567890.123456789")]
    ),
    "merge_0_1000_with_500_1500": lambda: (
        FMSketch().add_longs(np.arange(1000)).merge(FMSketch().add_longs(np.arange(500, 1500)))
    ),
}


@pytest.mark.parametrize("vector", GOLDEN["fm"], ids=lambda v: v["name"])
def test_matches_hive_2_3_10_estimator(vector: dict[str, Any]) -> None:
    from_text = FMSketch.from_text(vector["text"])
    assert from_text.num_bit_vectors == vector["num_bit_vectors"]
    assert from_text.estimate() == vector["estimate"]
    if vector["name"] in BUILDERS:
        built = BUILDERS[vector["name"]]()
        assert built == from_text
        assert built.estimate() == vector["estimate"]
        assert FMSketch.from_bytes(built.to_bytes()) == built


def test_coefficients_match_hive() -> None:
    a, b = _coefficients(16)
    assert a.tolist() == GOLDEN["fm_coefficients_16"]["a"]
    assert b.tolist() == GOLDEN["fm_coefficients_16"]["b"]
    assert all(x % 2 == 1 for x in a.tolist() + b.tolist())


def test_java_random_lcg() -> None:
    assert JavaRandom(42).next_int() == -1170105035
    assert JavaRandom(0).next_int() == -1155484576


def test_java_hash_codes() -> None:
    assert java_string_hash_code("hello") == 99162322
    assert java_string_hash_code("") == 0
    assert java_double_hash_code(1.5) == 1073217536
    assert java_double_hash_code(-0.0) == -(2**31)
    assert java_double_hash_code(float("nan")) == 2146959360
    assert hive_decimal_hash_code(Decimal("1.500")) == 466  # 31 * 15 + scale 1
    assert hive_decimal_hash_code(Decimal("-1.5")) == -464
    assert hive_decimal_hash_code(Decimal("100")) == 3100
    assert hive_decimal_hash_code(Decimal("12345678901234567890.123456789")) == 354583187
    assert hive_decimal_hash_code(Decimal("1E+40")) is None


def test_hive_decimal_normalisation() -> None:
    """Values seen from HiveDecimal.create in Hive's storage-api 2.8.1."""
    cases = {
        "1.500": "1.5",
        "100": "100",
        "-0.0": "0",
        "1E-40": "0",
        "1234567890123456789012345678901234567.89": "1234567890123456789012345678901234567.9",
        "1.00000000000000000000000000000000000005": "1.0000000000000000000000000000000000001",
    }
    for given_text, hive_text in cases.items():
        assert str(normalize_decimal(Decimal(given_text))) == hive_text
    assert normalize_decimal(Decimal("123456789012345678901234567890123456789")) is None
    assert normalize_decimal(Decimal("Infinity")) is None


def test_binary_layout() -> None:
    sketch = FMSketch(2).add_longs([1, 2, 3])
    blob = sketch.to_bytes()
    assert blob[:4] == b"FM\x02\x00" and len(blob) == 12
    words = struct.unpack("<2I", blob[4:])
    assert words == tuple(sketch.bit_vectors().tolist())
    assert FMSketch.from_bytes(blob) == sketch


def test_bit_31_is_kept_in_memory_but_never_written() -> None:
    sketch = FMSketch.from_text("{0, 1, 31}")
    assert sketch.bit_vectors()[0] == 0x80000003
    assert sketch.to_bytes() == b"FM\x01\x00" + struct.pack("<I", 3)
    full = FMSketch.from_text("{" + ", ".join(map(str, range(32))) + "}")
    assert full.estimate() == int(math.pow(2.0, 32 - math.log(0.77351) / math.log(2.0)))


def test_text_form() -> None:
    sketch = FMSketch.from_text(b"{0, 1, 2}{0, 3}")
    assert sketch.bit_vectors().tolist() == [0b111, 0b1001]
    assert FMSketch.from_text("{}{0}").bit_vectors().tolist() == [0, 1]
    for bad in ("", "{0, 1", "{a}", "0, 1", "{32}", "{0}{1}x", "\u00e9"):
        with pytest.raises(SketchFormatError):
            FMSketch.from_text(bad)
    with pytest.raises(SketchFormatError):
        FMSketch.from_text(b"{\xff}")


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (b"FM", "not an FM"),
        (b"FX\x01\x00\x00\x00\x00\x00", "not an FM"),
        (b"FM\x00\x00", "0 bit vectors"),
        (b"FM\x01\x04" + bytes(4), "1025 bit vectors"),
        (b"FM\x02\x00" + bytes(4), "must be 12 bytes"),
        (b"FM\x01\x00" + bytes(5), "must be 8 bytes"),
    ],
)
def test_corrupt_blobs(blob: bytes, message: str) -> None:
    with pytest.raises(SketchFormatError, match=message):
        FMSketch.from_bytes(blob)


def test_merge_needs_equal_vector_counts() -> None:
    with pytest.raises(ValueError, match="16 and 32"):
        FMSketch(32).merge(FMSketch(16))
    with pytest.raises(TypeError):
        FMSketch().merge(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        FMSketch(0)


def test_inputs_with_nulls_and_arrow() -> None:
    strings = FMSketch().add_strings(pa.array(["a", None, "b"]))
    assert strings == FMSketch().add_strings(["a", "b"])
    assert FMSketch().add_decimals([None, Decimal("1")]) == FMSketch().add_decimals([Decimal(1)])
    with pytest.raises(ValueError, match="not a Hive decimal"):
        FMSketch().add_decimals([Decimal("NaN")])
    with pytest.raises(TypeError):
        FMSketch().add_longs([0.5])
    sketch = FMSketch().add_longs([7])
    clone = sketch.copy().add_longs([8])
    assert sketch != clone and sketch != "FM"
    assert sketch.ndv() == sketch.estimate() and "FMSketch" in repr(sketch)


longs = st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=300)


@settings(max_examples=50, deadline=None)
@given(longs, longs)
def test_merge_equals_sketch_of_union(left: list[int], right: list[int]) -> None:
    merged = FMSketch().add_longs(np.array(left, dtype=np.int64))
    merged.merge(FMSketch().add_longs(np.array(right, dtype=np.int64)))
    assert merged == FMSketch().add_longs(np.array(left + right, dtype=np.int64))


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 64), longs)
def test_bytes_round_trip(vectors: int, values: list[int]) -> None:
    sketch = FMSketch(vectors).add_longs(np.array(values, dtype=np.int64))
    assert FMSketch.from_bytes(sketch.to_bytes()) == sketch
    assert FMSketch.from_bytes(sketch.to_bytes()).to_bytes() == sketch.to_bytes()
