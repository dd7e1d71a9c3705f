"""The IDL's column statistics structs, shared by the Thrift door, the job and the CLI: the
struct of each kind of statistics, which member of the ColumnStatisticsData union is set,
building one, and Hive's Thrift Decimal.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hive_metastore_thrift import ttypes as t
from metastore.vocabulary import MAX_DECIMAL_SCALE, UNION_MEMBERS, Kind

STRUCTS: dict[Kind, type[Any]] = {
    Kind.BOOLEAN: t.BooleanColumnStatsData,
    Kind.LONG: t.LongColumnStatsData,
    Kind.DOUBLE: t.DoubleColumnStatsData,
    Kind.STRING: t.StringColumnStatsData,
    Kind.BINARY: t.BinaryColumnStatsData,
    Kind.DECIMAL: t.DecimalColumnStatsData,
    Kind.DATE: t.DateColumnStatsData,
    Kind.TIMESTAMP: t.TimestampColumnStatsData,
}
"""The statistics struct of each kind, e.g. LongColumnStatsData."""


# ------------------------------------------------------------------------------------------
# The ColumnStatisticsData union


def set_kinds(data: t.ColumnStatisticsData | None) -> list[Kind]:
    """The kinds whose member is set in DATA (a valid union has exactly one)."""
    if data is None:
        return []
    return [
        kind for kind, member in UNION_MEMBERS.items() if getattr(data, member, None) is not None
    ]


def union_member(data: t.ColumnStatisticsData | None) -> Any:
    """The statistics struct held by a ColumnStatisticsData union (None when empty)."""
    kinds = set_kinds(data)
    return getattr(data, kinds[0].member) if kinds else None


def make_union(kind: Kind, stats: Any) -> t.ColumnStatisticsData:
    """A ColumnStatisticsData with STATS as its member of KIND."""
    return t.ColumnStatisticsData(**{kind.member: stats})


# ------------------------------------------------------------------------------------------
# Decimals


def thrift_decimal(value: Decimal) -> t.Decimal:
    """Hive's Thrift Decimal of VALUE (see decimal_parts)."""
    unscaled, scale = decimal_parts(value)
    return t.Decimal(unscaled=unscaled, scale=scale)


def decimal_parts(value: Decimal) -> tuple[bytes, int]:
    """The fields of Hive's Thrift Decimal of VALUE: the minimal big-endian two's complement
    unscaled value (as Java's BigInteger.toByteArray writes it) and the scale (never
    negative)."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValueError(f"{value} is not a finite decimal")
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    scale = -exponent
    if scale < 0:
        unscaled, scale = unscaled * 10**-scale, 0
    return unscaled_bytes(unscaled), scale


def unscaled_bytes(unscaled: int) -> bytes:
    """The minimal big-endian two's complement of UNSCALED (BigInteger.toByteArray)."""
    bits = unscaled.bit_length() if unscaled >= 0 else (-unscaled - 1).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def python_decimal(value: t.Decimal) -> Decimal:
    """The exact value of a Thrift Decimal, keeping its scale (-1050, scale 2 -> -10.50).

    Raises ValueError when the unscaled bytes or the scale are missing or the scale is
    outside 0..38.
    """
    if not value.unscaled or value.scale is None:
        raise ValueError("a decimal needs both unscaled bytes and a scale")
    if not 0 <= value.scale <= MAX_DECIMAL_SCALE:
        raise ValueError(f"decimal scale {value.scale} is outside 0..{MAX_DECIMAL_SCALE}")
    unscaled = int.from_bytes(value.unscaled, "big", signed=True)
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return Decimal((int(unscaled < 0), digits, -value.scale))


def decimal_text(value: t.Decimal) -> str:
    """The exact text of a Thrift Decimal, keeping its scale ('-10.50'); see python_decimal."""
    return format(python_decimal(value), "f")
