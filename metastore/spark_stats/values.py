"""Spark's text for statistics values, and the column types both sides know.

Spark keeps min and max as text in table parameters (apache/spark
``sql/catalyst/.../catalog/interface.scala``, ``CatalogColumnStat.toExternalString`` and
``fromExternalString``): integers and doubles as Java's ``toString`` (``1.0E10``, ``1.0E-4``,
``Infinity``, ``NaN``), floats as ``Float.toString``, decimals as ``BigDecimal.toString``,
dates ``yyyy-MM-dd``, timestamps ``yyyy-MM-dd HH:mm:ss.SSSSSS`` in UTC, booleans
``true``/``false``. This module writes that text and parses it the way the JVM does (Java's
``Long.parseLong``, ``Double.parseDouble``, ``new BigDecimal``), refusing what Java refuses
with ValueError.

Python's float repr and Java 19+'s ``Double.toString`` both print the shortest digits that
read back as the same double; Java's ``FloatingDecimal`` before 19 (the JVM of Spark on Java
17) sometimes prints a longer text for the same double, which parses to the same value.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import struct
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal, InvalidOperation

from metastore.vocabulary import LONG_RANGE, PRIMITIVES, Kind, decimal_precision_scale, primitive

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
MICROS_PER_SECOND = 1_000_000
SECONDS_PER_DAY = 86_400

UNKNOWN_TYPE_SIZE = 20
"""What colstats assumes per value of a type Spark sizes from its parts (arrays, maps,
structs): a row-size estimate only."""

_DECIMAL_DIGITS = 4000  # exact arithmetic on any decimal text HMS keeps (<= 4,000 characters)
MAX_LONG_DIGITS = 18
"""Spark's Decimal.MAX_LONG_DIGITS: decimals up to this precision are 8 bytes, others 16."""


@dataclass(frozen=True)
class ColumnType:
    """A Hive column type as statistics see it on both sides."""

    base: str
    """The base name: 'int', 'decimal', 'varchar', ..."""
    kind: Kind
    """The kind of Hive statistics written for it."""
    default_size: int
    """Spark's defaultSize: avgLen and maxLen of fixed-width types."""
    precision: int = 0
    scale: int = 0
    """Precision and scale of decimals."""

    @property
    def integer_range(self) -> tuple[int, int] | None:
        """The values a Spark integral type holds; None for other types."""
        return PRIMITIVES[self.base].integer_range

    @property
    def fixed_width(self) -> bool:
        return self.kind not in (Kind.STRING, Kind.BINARY)


@functools.lru_cache(maxsize=1024)
def column_type(hive_type: str) -> ColumnType | None:
    """The ColumnType of HIVE_TYPE, None for types without statistics (arrays, maps, ...);
    kept for the types seen last (every table read asks for each of its columns')."""
    found = primitive(hive_type)
    if found is None or not found.kinds:
        return None
    kind = found.kinds[0]
    if kind is Kind.DECIMAL:
        precision, scale = decimal_precision_scale(hive_type)
        size = 8 if precision <= MAX_LONG_DIGITS else 16
        return ColumnType(found.name, kind, size, precision, scale)
    assert found.spark_size is not None
    return ColumnType(found.name, kind, found.spark_size)


def default_size(hive_type: str) -> int:
    """Spark's defaultSize of a column of HIVE_TYPE (UNKNOWN_TYPE_SIZE for nested types)."""
    ctype = column_type(hive_type)
    return ctype.default_size if ctype is not None else UNKNOWN_TYPE_SIZE


# ------------------------------------------------------------------------------------------
# Java's number text


def to_float32(value: float) -> float:
    """VALUE rounded to the nearest float32, as Java's (float) cast: beyond its range,
    infinity."""
    try:
        single: float = _FLOAT32.unpack(_FLOAT32.pack(value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return single


_FLOAT32 = struct.Struct("<f")


def _shortest(value: float, single: bool) -> tuple[str, int]:
    """The significant digits Java 19+'s Double/Float.toString print for a finite VALUE != 0
    (a float32 when SINGLE), and the decimal exponent of the first one: the fewest digits,
    two at least, that read back as VALUE, the closest to it when several do (so
    Double.MIN_VALUE is 4.9E-324, not 5.0E-324)."""
    magnitude = abs(value)
    if not single:
        shortest = _digits(Decimal(repr(magnitude)))  # the fewest digits, the closest of those
        if len(shortest[0]) > 1:
            return shortest
    exact = Decimal(magnitude)
    for precision in range(2, 18):
        fits = [
            candidate
            for rounding in (ROUND_HALF_EVEN, ROUND_FLOOR, ROUND_CEILING)
            if _reads_back(
                candidate := Context(prec=precision, rounding=rounding).plus(exact),
                magnitude,
                single,
            )
        ]
        if fits:
            return _digits(min(fits, key=lambda d: abs(d - exact)))
    raise AssertionError(f"no decimal text reads back as {value!r}")


def _reads_back(text: Decimal, value: float, single: bool) -> bool:
    parsed = float(text)
    return (to_float32(parsed) if single else parsed) == value


def _digits(number: Decimal) -> tuple[str, int]:
    """The significant digits of NUMBER without trailing zeros, and the decimal exponent of
    the first one: Decimal('0.0125') -> ('125', -2)."""
    _, digits, exponent = number.normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    return text, exponent + len(text) - 1


def _java_text(value: float, single: bool) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    digits, exp = _shortest(value, single)
    if 1e-3 <= abs(value) < 1e7:
        if exp >= 0:
            whole = digits[: exp + 1].ljust(exp + 1, "0")
            fraction = digits[exp + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-exp - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp}"


def java_double_text(value: float) -> str:
    """Java's Double.toString: '1.0E10', '1.0E-4', '100.0', '-0.0', 'NaN', 'Infinity'."""
    return _java_text(value, single=False)


def java_float_text(value: float) -> str:
    """Java's Float.toString of VALUE rounded to a float32: 1.100000023841858 -> '1.1'."""
    return _java_text(to_float32(value), single=True)


# Java's FloatingDecimal.readJavaFormatString grammar, decimal forms (hexadecimal floats
# are left out: Spark never writes them).
_JAVA_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)")
_JAVA_LONG = re.compile(r"[+-]?\d+")
_BIG_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def parse_java_double(text: str) -> float:
    """Double.parseDouble: surrounding whitespace (<= U+0020) ignored, a 'd'/'f' suffix
    allowed; ValueError for what Java refuses (Python's 'inf', 'nan', '1_0', ...)."""
    stripped = text.strip("".join(map(chr, range(0x21))))
    if not _JAVA_DOUBLE.fullmatch(stripped):
        raise ValueError(f"not a Java double: {text!r}")
    return float(stripped.rstrip("fFdD").replace("Infinity", "inf"))


def parse_java_float(text: str) -> float:
    """Float.parseFloat, as the double of the float32 it gives (rounded through a double,
    which differs from Java's direct rounding only for texts halfway between two floats to
    about 17 digits)."""
    return to_float32(parse_java_double(text))


def parse_java_long(text: str, bounds: tuple[int, int] = LONG_RANGE) -> int:
    """Long.parseLong (Integer.parseInt, ... with BOUNDS): ValueError out of range."""
    if not _JAVA_LONG.fullmatch(text):
        raise ValueError(f"not a Java integer: {text!r}")
    value = int(text)
    if not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{text} is outside {bounds[0]}..{bounds[1]}")
    return value


# ------------------------------------------------------------------------------------------
# Decimals


def big_decimal_text(value: Decimal) -> str:
    """Java's BigDecimal.toString: plain while the exponent is <= 0 and the adjusted exponent
    >= -6, otherwise scientific ('1E-7', '1.5E+3'). Python's Decimal.__str__ follows the
    same rule; BigDecimal has no negative zero."""
    if value.is_zero():
        value = value.copy_abs()
    return str(value)


def parse_big_decimal(text: str) -> Decimal:
    """new BigDecimal(text): ValueError for anything but a finite decimal number."""
    if not _BIG_DECIMAL.fullmatch(text):
        raise ValueError(f"not a Java BigDecimal: {text!r}")
    try:
        return Decimal(text)
    except InvalidOperation:
        raise ValueError(f"not a decimal: {text!r}") from None


def decimal_at_scale(value: Decimal, ctype: ColumnType, upward: bool) -> Decimal | None:
    """VALUE at the column's scale, as Spark's Decimal of a decimal(p,s) column holds it:
    rounded down for a low, up (UPWARD) for a high, so the range still covers the data.
    None when it does not fit the precision."""
    rounding = ROUND_CEILING if upward else ROUND_FLOOR
    context = Context(prec=_DECIMAL_DIGITS, rounding=rounding)
    try:
        scaled = value.quantize(Decimal(1).scaleb(-ctype.scale), context=context)
    except InvalidOperation:
        return None
    if len(scaled.as_tuple().digits) > ctype.precision and not scaled.is_zero():
        return None
    return scaled


# ------------------------------------------------------------------------------------------
# Dates and timestamps


def date_text(days: int) -> str:
    """'yyyy-MM-dd' of days since 1970-01-01 (proleptic Gregorian, as Spark 3+); ValueError
    outside the years 1..9999."""
    try:
        return (_EPOCH_DATE + dt.timedelta(days=days)).isoformat()
    except OverflowError:
        raise ValueError(f"day {days} is outside the years 1..9999") from None


_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")


def parse_date(text: str) -> int:
    """Days since 1970-01-01 of Spark's 'yyyy-MM-dd' text."""
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a yyyy-MM-dd date: {text!r}")
    year, month, day = map(int, match.groups())
    return (dt.date(year, month, day) - _EPOCH_DATE).days


def timestamp_text(micros: int) -> str:
    """'yyyy-MM-dd HH:mm:ss.SSSSSS' in UTC of microseconds since the epoch, as
    CatalogColumnStat's timestamp formatter writes it; ValueError outside the years 1..9999."""
    try:
        moment = _EPOCH + dt.timedelta(microseconds=micros)
    except OverflowError:
        raise ValueError(f"timestamp {micros} us is outside the years 1..9999") from None
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f").rjust(26, "0")


def parse_timestamp(text: str) -> int:
    """Microseconds since the epoch of Spark's UTC text (fraction of 0 to 9 digits; digits
    beyond microseconds are dropped, as the formatter does)."""
    match = _TIMESTAMP.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a yyyy-MM-dd HH:mm:ss.SSSSSS timestamp: {text!r}")
    year, month, day, hour, minute, second = map(int, match.groups()[:6])
    fraction = (match.group(7) or "").ljust(6, "0")[:6]
    moment = dt.datetime(year, month, day, hour, minute, second, int(fraction))
    delta = moment - _EPOCH
    return (delta.days * SECONDS_PER_DAY + delta.seconds) * MICROS_PER_SECOND + delta.microseconds
