"""The statistics vocabulary that the server and the job share: no database code here.

* :class:`Kind`: the kinds of column statistics, one per member of the Thrift
  ``ColumnStatisticsData`` union;
* the one table from Hive column types to the kinds of statistics that fit them;
* helpers for the union (which member is set, building one);
* exact conversions between Python decimals and Hive's Thrift ``Decimal``.

The job (a Spark driver and its executors) imports this module, so it must stay free of
SQLAlchemy and of the server's modules.
"""

from __future__ import annotations

import enum
import re
from decimal import Decimal
from typing import Any

from hive_metastore_thrift import ttypes as t

DEFAULT_ENGINE = "hive"
"""The statistics engine a request means when it names none (clients older than Hive 4)."""

MAX_DECIMAL_SCALE = 38
"""The largest scale (and precision) of Hive's decimal type."""


class Kind(enum.StrEnum):
    """A kind of column statistics: which member of ColumnStatisticsData carries them.

    The value is what the STATS_KIND column of the statistics tables stores.
    """

    BOOLEAN = "boolean"
    LONG = "long"
    DOUBLE = "double"
    STRING = "string"
    BINARY = "binary"
    DECIMAL = "decimal"
    DATE = "date"
    TIMESTAMP = "timestamp"

    @property
    def member(self) -> str:
        """The name of the ColumnStatisticsData field of this kind, e.g. 'longStats'."""
        return f"{self.value}Stats"

    @property
    def struct(self) -> type[Any]:
        """The Thrift struct of this kind, e.g. LongColumnStatsData."""
        return _STRUCTS[self]

    @property
    def has_ndv(self) -> bool:
        """Whether the statistics carry numDVs (and a bit vector with it)."""
        return self not in (Kind.BOOLEAN, Kind.BINARY)

    @property
    def has_range(self) -> bool:
        """Whether the statistics carry lowValue/highValue (and a histogram in Hive 4)."""
        return self not in (Kind.BOOLEAN, Kind.STRING, Kind.BINARY)

    @property
    def integral(self) -> bool:
        """Whether low and high are whole numbers (longs, days, seconds): NDV <= high-low+1."""
        return self in (Kind.LONG, Kind.DATE, Kind.TIMESTAMP)


_STRUCTS: dict[Kind, type[Any]] = {
    Kind.BOOLEAN: t.BooleanColumnStatsData,
    Kind.LONG: t.LongColumnStatsData,
    Kind.DOUBLE: t.DoubleColumnStatsData,
    Kind.STRING: t.StringColumnStatsData,
    Kind.BINARY: t.BinaryColumnStatsData,
    Kind.DECIMAL: t.DecimalColumnStatsData,
    Kind.DATE: t.DateColumnStatsData,
    Kind.TIMESTAMP: t.TimestampColumnStatsData,
}

# The kinds of statistics that fit a column of a Hive type, by the type's base name. The
# first is the one Hive's statistics task (and our job) writes; the server accepts all.
# Trino writes longStats for timestamp columns, so both fit there.
_KINDS_BY_TYPE: dict[str, tuple[Kind, ...]] = {
    "boolean": (Kind.BOOLEAN,),
    "tinyint": (Kind.LONG,),
    "smallint": (Kind.LONG,),
    "int": (Kind.LONG,),
    "integer": (Kind.LONG,),
    "bigint": (Kind.LONG,),
    "float": (Kind.DOUBLE,),
    "double": (Kind.DOUBLE,),
    "decimal": (Kind.DECIMAL,),
    "numeric": (Kind.DECIMAL,),
    "string": (Kind.STRING,),
    "varchar": (Kind.STRING,),
    "char": (Kind.STRING,),
    "binary": (Kind.BINARY,),
    "date": (Kind.DATE,),
    "timestamp": (Kind.TIMESTAMP, Kind.LONG),
}


def base_type(hive_type: str) -> str:
    """'decimal(10,2)' -> 'decimal', 'DOUBLE PRECISION' -> 'double', 'array<int>' -> 'array'."""
    return re.split(r"[\s(<]", hive_type.strip().lower(), maxsplit=1)[0]


def kinds_for_type(hive_type: str) -> tuple[Kind, ...]:
    """The kinds of statistics that fit a column of HIVE_TYPE; empty for types HMS keeps none
    for (arrays, maps, structs, unions)."""
    return _KINDS_BY_TYPE.get(base_type(hive_type), ())


def kind_of_type(hive_type: str) -> Kind | None:
    """The kind of statistics written for a column of HIVE_TYPE; None when there is none."""
    kinds = kinds_for_type(hive_type)
    return kinds[0] if kinds else None


# ------------------------------------------------------------------------------------------
# The ColumnStatisticsData union


def set_kinds(data: t.ColumnStatisticsData | None) -> list[Kind]:
    """The kinds whose member is set in DATA (a valid union has exactly one)."""
    if data is None:
        return []
    return [kind for kind in Kind if getattr(data, kind.member, None) is not None]


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
    """Hive's Thrift Decimal of VALUE: the minimal big-endian two's complement unscaled value
    (as Java's BigInteger.toByteArray writes it) and the scale (never negative)."""
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ValueError(f"{value} is not a finite decimal")
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    scale = -exponent
    if scale < 0:
        unscaled, scale = unscaled * 10**-scale, 0
    bits = unscaled.bit_length() if unscaled >= 0 else (-unscaled - 1).bit_length()
    return t.Decimal(unscaled=unscaled.to_bytes(bits // 8 + 1, "big", signed=True), scale=scale)


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
