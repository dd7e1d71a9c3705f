"""Spark's text of statistics values: Java's number text, BigDecimal, dates, timestamps."""

from __future__ import annotations

import math
import struct
from decimal import Decimal

import pytest

from metastore.spark_stats.values import (
    big_decimal_text,
    column_type,
    date_text,
    decimal_at_scale,
    default_size,
    java_double_text,
    java_float_text,
    parse_big_decimal,
    parse_date,
    parse_java_double,
    parse_java_float,
    parse_java_long,
    parse_timestamp,
    timestamp_text,
)
from metastore.vocabulary import Kind

# Java 19+ Double.toString, from its specification (and Java 17 agrees on all of these).
DOUBLES = [
    (0.0, "0.0"),
    (-0.0, "-0.0"),
    (1.0, "1.0"),
    (-1.5, "-1.5"),
    (100.0, "100.0"),
    (0.001, "0.001"),
    (0.00099, "9.9E-4"),
    (1e-4, "1.0E-4"),
    (1.25e-5, "1.25E-5"),
    (9999999.0, "9999999.0"),
    (1e7, "1.0E7"),
    (1.2345678e7, "1.2345678E7"),
    (1e10, "1.0E10"),
    (-1e10, "-1.0E10"),
    (1e23, "1.0E23"),
    (123456.789, "123456.789"),
    (0.1, "0.1"),
    (1 / 3, "0.3333333333333333"),
    (2**53, "9.007199254740992E15"),
    (1.7976931348623157e308, "1.7976931348623157E308"),
    (2.2250738585072014e-308, "2.2250738585072014E-308"),
    (5e-324, "4.9E-324"),  # Double.MIN_VALUE: two digits at least, the closest
    (math.nan, "NaN"),
    (math.inf, "Infinity"),
    (-math.inf, "-Infinity"),
]

FLOATS = [
    (1.100000023841858, "1.1"),  # the double of 1.1f, as Hive stores a float's statistics
    (0.1, "0.1"),
    (1e10, "1.0E10"),
    (1e-4, "1.0E-4"),
    (16777217.0, "1.6777216E7"),  # rounded to a float first
    (3.4028234663852886e38, "3.4028235E38"),  # Float.MAX_VALUE
    (1e39, "Infinity"),  # (float) of a larger double
    (1.401298464324817e-45, "1.4E-45"),  # Float.MIN_VALUE
    (-0.0, "-0.0"),
    (math.nan, "NaN"),
]


@pytest.mark.parametrize(("value", "text"), DOUBLES)
def test_java_double_text(value: float, text: str) -> None:
    assert java_double_text(value) == text
    parsed = parse_java_double(text)
    assert (math.isnan(parsed) and math.isnan(value)) or (
        parsed == value and math.copysign(1, parsed) == math.copysign(1, value)
    )


@pytest.mark.parametrize(("value", "text"), FLOATS)
def test_java_float_text(value: float, text: str) -> None:
    assert java_float_text(value) == text


def test_every_double_text_reads_back_as_the_same_double() -> None:
    for bits in range(0, 2**64, 2**64 // 20011):
        (value,) = struct.unpack(">d", bits.to_bytes(8, "big"))
        if not math.isnan(value):
            assert float(java_double_text(value).replace("Infinity", "inf")) == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.0E10", 1e10),
        ("  2.5  ", 2.5),
        ("-Infinity", -math.inf),
        ("+1", 1.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("1e3d", 1000.0),
        ("2F", 2.0),
    ],
)
def test_parse_java_double_accepts_what_java_accepts(text: str, value: float) -> None:
    assert parse_java_double(text) == value


@pytest.mark.parametrize("text", ["inf", "nan", "1_000", "", "1.0E", "0x1p3", "1,5", "infinity"])
def test_parse_java_double_refuses_what_java_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_java_double(text)


def test_parse_java_float_gives_the_double_of_the_float() -> None:
    assert parse_java_float("1.1") == 1.100000023841858
    assert parse_java_float("1e39") == math.inf


def test_parse_java_long() -> None:
    assert parse_java_long("-42") == -42
    assert parse_java_long("+7") == 7
    assert parse_java_long(str(2**63 - 1)) == 2**63 - 1
    for bad in [str(2**63), "1.0", " 1", "1_0", "", "0x10"]:
        with pytest.raises(ValueError):
            parse_java_long(bad)
    with pytest.raises(ValueError):
        parse_java_long("128", (-128, 127))


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Decimal("1.25"), "1.25"),
        (Decimal("-10.50"), "-10.50"),
        (Decimal("0.0000001"), "1E-7"),  # adjusted exponent < -6: scientific, as BigDecimal
        (Decimal("0.000001"), "0.000001"),
        (Decimal("0E-10"), "0E-10"),  # zero at scale 10, as Spark's decimal(38,10) holds it
        (Decimal("-0.00"), "0.00"),  # BigDecimal has no negative zero
        (Decimal("1E+3"), "1E+3"),
        (Decimal("12345678901234567890.1234567890"), "12345678901234567890.1234567890"),
    ],
)
def test_big_decimal_text(value: Decimal, text: str) -> None:
    assert big_decimal_text(value) == text
    assert parse_big_decimal(text) == value


@pytest.mark.parametrize("text", ["NaN", "Infinity", "1_0", "", "1.2.3", "--1"])
def test_parse_big_decimal_refuses_what_java_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_big_decimal(text)


def test_decimals_take_the_column_scale_rounding_outwards() -> None:
    ctype = column_type("decimal(10,2)")
    assert ctype is not None
    assert decimal_at_scale(Decimal("1.5"), ctype, upward=False) == Decimal("1.50")
    assert str(decimal_at_scale(Decimal("1.5"), ctype, upward=False)) == "1.50"
    assert decimal_at_scale(Decimal("1.234"), ctype, upward=False) == Decimal("1.23")
    assert decimal_at_scale(Decimal("1.234"), ctype, upward=True) == Decimal("1.24")
    assert decimal_at_scale(Decimal("-1.234"), ctype, upward=False) == Decimal("-1.24")
    assert decimal_at_scale(Decimal("123456789.5"), ctype, upward=False) is None  # precision


@pytest.mark.parametrize(
    ("days", "text"),
    [(0, "1970-01-01"), (19723, "2024-01-01"), (-1, "1969-12-31"), (-719162, "0001-01-01")],
)
def test_dates(days: int, text: str) -> None:
    assert date_text(days) == text
    assert parse_date(text) == days


@pytest.mark.parametrize(
    ("micros", "text"),
    [
        (0, "1970-01-01 00:00:00.000000"),
        (1704103200 * 10**6, "2024-01-01 10:00:00.000000"),
        (-1, "1969-12-31 23:59:59.999999"),
        (-86399 * 10**6, "1969-12-31 00:00:01.000000"),
        (123456, "1970-01-01 00:00:00.123456"),
        (-62135596800 * 10**6, "0001-01-01 00:00:00.000000"),
    ],
)
def test_timestamps_in_utc_with_six_fraction_digits(micros: int, text: str) -> None:
    assert timestamp_text(micros) == text
    assert parse_timestamp(text) == micros


def test_dates_and_timestamps_outside_years_1_to_9999_have_no_text() -> None:
    with pytest.raises(ValueError):
        date_text(3_000_000)
    with pytest.raises(ValueError):
        timestamp_text(-(10**18))
    assert parse_timestamp("2024-01-01 10:00:00") == 1704103200 * 10**6
    assert parse_timestamp("2024-01-01 10:00:00.1234567") == (1704103200 * 10**6) + 123456
    for bad in ["2024-1-01", "2024-01-01T10:00:00.000000", "2024-13-01 00:00:00.000000"]:
        with pytest.raises(ValueError):
            parse_timestamp(bad)


@pytest.mark.parametrize(
    ("hive_type", "kind", "size"),
    [
        ("boolean", Kind.BOOLEAN, 1),
        ("tinyint", Kind.LONG, 1),
        ("smallint", Kind.LONG, 2),
        ("int", Kind.LONG, 4),
        ("bigint", Kind.LONG, 8),
        ("float", Kind.DOUBLE, 4),
        ("double", Kind.DOUBLE, 8),
        ("decimal(10,2)", Kind.DECIMAL, 8),
        ("decimal(18,0)", Kind.DECIMAL, 8),
        ("decimal(19,2)", Kind.DECIMAL, 16),
        ("DECIMAL(38, 10)", Kind.DECIMAL, 16),
        ("decimal", Kind.DECIMAL, 8),
        ("date", Kind.DATE, 4),
        ("timestamp", Kind.TIMESTAMP, 8),
        ("string", Kind.STRING, 20),
        ("varchar(10)", Kind.STRING, 20),
        ("binary", Kind.BINARY, 100),
    ],
)
def test_column_types_carry_sparks_default_sizes(hive_type: str, kind: Kind, size: int) -> None:
    ctype = column_type(hive_type)
    assert ctype is not None
    assert (ctype.kind, ctype.default_size) == (kind, size)
    assert default_size(hive_type) == size


def test_nested_types_have_no_statistics() -> None:
    assert column_type("array<int>") is None
    assert default_size("map<string,int>") == 20
