"""How Hive (a JVM program) sees the values it puts into sketches.

Hive hashes Java objects, so reproducing its sketches needs a few JVM rules:
``HiveDecimal`` normalisation, ``String.hashCode``, ``Double.hashCode`` and
``HiveDecimal.hashCode`` (the latter three feed the old FM sketch).
"""

from __future__ import annotations

import decimal
import struct
from decimal import Decimal

#: HiveDecimal holds at most 38 significant digits and a scale of at most 38.
HIVE_DECIMAL_MAX_DIGITS = 38

_MASK32 = 0xFFFFFFFF
_CONTEXT = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)


def to_int32(value: int) -> int:
    """Wrap an integer to a Java ``int``."""
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def normalize_decimal(value: Decimal) -> Decimal | None:
    """Return the value ``HiveDecimal.create`` would hold, or None where Hive gives NULL.

    Hive rounds (HALF_UP) to 38 significant digits, keeps at most 38 digits after the
    point, strips trailing zeros after the point (``1.500`` -> ``1.5``, ``100`` stays) and
    rejects values with more than 38 integer digits. NaN and infinities are not decimals.
    """
    if not value.is_finite():
        return None
    if value.is_zero():
        return Decimal(0)
    int_digits = max(value.adjusted() + 1, 0)
    if int_digits > HIVE_DECIMAL_MAX_DIGITS:
        return None
    max_scale = HIVE_DECIMAL_MAX_DIGITS - int_digits
    if -value.as_tuple().exponent > max_scale:  # type: ignore[operator]
        value = value.quantize(Decimal(1).scaleb(-max_scale), context=_CONTEXT)
        if value.is_zero():
            return Decimal(0)
        if value.adjusted() + 1 > HIVE_DECIMAL_MAX_DIGITS:
            return None
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)  # a finite value
    kept = list(digits)
    while exponent < 0 and len(kept) > 1 and kept[-1] == 0:
        kept.pop()
        exponent += 1
    return Decimal((sign, tuple(kept), exponent))


def decimal_unscaled_scale(value: Decimal) -> tuple[int, int]:
    """Split a normalised decimal into Java's ``BigDecimal`` unscaled value and scale."""
    sign, digits, exponent = value.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0")
    scale = -int(exponent)
    if scale < 0:
        unscaled *= 10**-scale
        scale = 0
    return (-unscaled if sign else unscaled), scale


def java_biginteger_hash_code(value: int) -> int:
    """``java.math.BigInteger.hashCode``: 31-polynomial over big-endian 32-bit words."""
    magnitude = abs(value)
    h = 0
    for shift in range(32 * ((magnitude.bit_length() - 1) // 32), -1, -32):
        h = (31 * h + ((magnitude >> shift) & _MASK32)) & _MASK32
    h = to_int32(h)
    return to_int32(-h) if value < 0 else h


def hive_decimal_hash_code(value: Decimal) -> int | None:
    """``HiveDecimal.hashCode`` (equal to ``BigDecimal.hashCode`` of the normalised value)."""
    normalized = normalize_decimal(value)
    if normalized is None:
        return None
    unscaled, scale = decimal_unscaled_scale(normalized)
    return to_int32(31 * java_biginteger_hash_code(unscaled) + scale)


def hive_decimal_to_double(value: Decimal) -> float | None:
    """``HiveDecimal.doubleValue`` of the normalised value; None where Hive gives NULL."""
    normalized = normalize_decimal(value)
    return None if normalized is None else float(normalized)


def java_double_hash_code(value: float) -> int:
    """``Double.hashCode``: fold of the canonical IEEE bits (every NaN is 0x7ff8...)."""
    bits = (
        0x7FF8000000000000 if value != value else struct.unpack("<Q", struct.pack("<d", value))[0]
    )
    return to_int32(bits ^ (bits >> 32))


def java_string_hash_code(value: str) -> int:
    """``String.hashCode``: 31-polynomial over UTF-16 code units."""
    units = value.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _MASK32
    return to_int32(h)
