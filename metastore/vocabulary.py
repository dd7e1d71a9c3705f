"""The vocabulary that the core, the doors, the job and the Spark bridge share: no database
code and nothing generated from the IDL here.

* :class:`Kind`: the kinds of column statistics (one per member of the IDL's
  ColumnStatisticsData union; the STATS_KIND column of the statistics tables);
* Hive's column types: the one table of what colstats knows of each primitive type (the
  kinds of statistics that fit it, how partition keys of it compare, Spark's size of its
  values, the range of integers) and the one parser of type text (`base_type`,
  `type_parameters`, `check_type` and `parse_type` for Hive's whole grammar, as HMS refuses
  a table whose column types do not parse).

The job (a Spark driver and its executors) imports this module, so it must stay free of
SQLAlchemy and of the server's modules.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
from typing import Literal

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
        return UNION_MEMBERS[self]

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


UNION_MEMBERS: dict[Kind, str] = {kind: f"{kind.value}Stats" for kind in Kind}
"""The ColumnStatisticsData field of each kind (Kind.member): looked up, not formatted, as
a statistics write asks for every column's."""


# ------------------------------------------------------------------------------------------
# Hive's types

KeyKind = Literal["string", "integer", "date"]
"""How partition keys of a type compare in filters: as text, as numbers, as dates."""


@dataclasses.dataclass(frozen=True)
class PrimitiveType:
    """What colstats knows of a Hive primitive type."""

    name: str
    kinds: tuple[Kind, ...] = ()
    """The kinds of statistics that fit a column of the type: the first is the one Hive's
    statistics task (and the job) writes; the server accepts all. Trino writes longStats
    for timestamp columns, so both fit there. Empty: HMS keeps none."""
    key: KeyKind | None = None
    """How partition keys of the type compare (None: filters cannot compare them)."""
    spark_size: int | None = None
    """Spark's DataType.defaultSize: what Spark writes as avgLen and maxLen for fixed-width
    types and assumes per value when estimating row sizes (decimals: see spark_stats)."""
    integer_range: tuple[int, int] | None = None
    """The values an integral type holds."""
    parameters: tuple[int, int] = (0, 0)
    """How many parameters the type takes, at least and at most (varchar(n), decimal(p,s))."""


def _int_range(bits: int) -> tuple[int, int]:
    return (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


LONG_RANGE = _int_range(64)
"""The values of Hive's bigint (Java's long), which statistics' longs hold."""
_TIMESTAMP = (Kind.TIMESTAMP, Kind.LONG)
PRIMITIVES: dict[str, PrimitiveType] = {
    p.name: p
    for p in (
        PrimitiveType("void"),
        PrimitiveType("boolean", (Kind.BOOLEAN,), spark_size=1),
        PrimitiveType("tinyint", (Kind.LONG,), "integer", 1, _int_range(8)),
        PrimitiveType("smallint", (Kind.LONG,), "integer", 2, _int_range(16)),
        PrimitiveType("int", (Kind.LONG,), "integer", 4, _int_range(32)),
        PrimitiveType("bigint", (Kind.LONG,), "integer", 8, LONG_RANGE),
        PrimitiveType("float", (Kind.DOUBLE,), spark_size=4),
        PrimitiveType("double", (Kind.DOUBLE,), spark_size=8),
        PrimitiveType("decimal", (Kind.DECIMAL,), parameters=(0, 2)),
        # Spark reads char and varchar columns of Hive tables as strings.
        PrimitiveType("string", (Kind.STRING,), "string", 20),
        PrimitiveType("varchar", (Kind.STRING,), "string", 20, parameters=(1, 1)),
        PrimitiveType("char", (Kind.STRING,), "string", 20, parameters=(1, 1)),
        PrimitiveType("binary", (Kind.BINARY,), spark_size=100),
        PrimitiveType("date", (Kind.DATE,), "date", 4),
        PrimitiveType("timestamp", _TIMESTAMP, spark_size=8),
        PrimitiveType("timestamp with local time zone", _TIMESTAMP, spark_size=8),
        PrimitiveType("interval_year_month"),
        PrimitiveType("interval_day_time"),
    )
}
ALIASES = {"integer": "int", "numeric": "decimal", "double precision": "double"}
"""Other names Hive accepts for a primitive type."""
COMPLEX = frozenset({"array", "map", "struct", "uniontype"})
"""Types made of other types, which HMS keeps no statistics for."""

MAX_DECIMAL_PRECISION = 38
MAX_VARCHAR_LENGTH = 65535
MAX_CHAR_LENGTH = 255

_BASE = re.compile(r"\s*([a-z_][a-z0-9_]*(?:\s+[a-z_][a-z0-9_]*)*)")
_PARAMETERS = re.compile(r"\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*$")


@functools.lru_cache(maxsize=4096)  # a table's few types, asked for every statistics row
def base_type(hive_type: str) -> str:
    """The base name of a type, lower case, aliases resolved: 'DECIMAL(10,2)' -> 'decimal',
    'double  precision' -> 'double', 'INTEGER' -> 'int', 'array<int>' -> 'array'; '' for
    text that does not start with a type name."""
    match = _BASE.match(hive_type.lower())
    if match is None:
        return ""
    name = " ".join(match.group(1).split())
    return ALIASES.get(name, name)


def type_parameters(hive_type: str) -> tuple[int, ...]:
    """The parameters of a primitive type: (10, 2) for 'decimal(10,2)', (20,) for
    'varchar(20)', () for 'int' or a type whose parameters do not parse."""
    match = _BASE.match(hive_type.lower())
    if match is None:
        return ()
    found = _PARAMETERS.fullmatch(hive_type.lower(), match.end())
    if found is None:
        return ()
    return tuple(int(g) for g in found.groups() if g is not None)


def primitive(hive_type: str) -> PrimitiveType | None:
    """The row of PRIMITIVES for a column of HIVE_TYPE; None for complex or unknown types."""
    return PRIMITIVES.get(base_type(hive_type))


def kinds_for_type(hive_type: str) -> tuple[Kind, ...]:
    """The kinds of statistics that fit a column of HIVE_TYPE; empty for types HMS keeps none
    for (arrays, maps, structs, unions)."""
    found = primitive(hive_type)
    return found.kinds if found is not None else ()


def kind_of_type(hive_type: str) -> Kind | None:
    """The kind of statistics written for a column of HIVE_TYPE; None when there is none."""
    kinds = kinds_for_type(hive_type)
    return kinds[0] if kinds else None


def key_kind(hive_type: str) -> KeyKind | None:
    """How partition keys of HIVE_TYPE compare ("varchar(10)" is a string), or None."""
    found = primitive(hive_type)
    return found.key if found is not None else None


def decimal_precision_scale(hive_type: str) -> tuple[int, int]:
    """The precision and scale of a decimal type (Hive's bare `decimal` is decimal(10,0))."""
    parameters = type_parameters(hive_type)
    precision = parameters[0] if parameters else 10
    scale = parameters[1] if len(parameters) > 1 else 0
    return precision, scale


class HiveTypeError(ValueError):
    """Type text that is not a Hive type; the message says where and why."""


@dataclasses.dataclass(frozen=True)
class TypeTree:
    """A Hive type parsed: NAME (a primitive's canonical name, or array, map, struct,
    uniontype), its PARAMETERS (varchar(n), decimal(p,s) as written) and the types it is
    made of, named for a struct's fields ('' otherwise)."""

    name: str
    parameters: tuple[int, ...] = ()
    children: tuple[tuple[str, TypeTree], ...] = ()


@functools.lru_cache(maxsize=4096)
def parse_type(text: str | None) -> TypeTree:
    """The tree of Hive type TEXT (the grammar of `check_type`); HiveTypeError otherwise.
    Kept for the types seen last: a call that adds a thousand partitions checks the same few
    column types a thousand times (the trees are frozen, so sharing them is safe)."""
    if not text or not text.strip():
        raise HiveTypeError("the type is empty")
    parser = _Parser(text)
    tree = parser.parse_type()
    parser.expect_end()
    return tree


def check_type(text: str | None) -> str:
    """TEXT if it is a Hive type in Hive's grammar (TypeInfoUtils: primitive names with
    `varchar(n)`, `char(n)`, `decimal(p[,s])`, `array<T>`, `map<K,V>`,
    `struct<name:T,...>` and `uniontype<T,...>`, case-insensitive, with optional spaces);
    raises HiveTypeError otherwise."""
    if not text or not text.strip():
        raise HiveTypeError("the type is empty")
    parse_type(text)
    return text


_TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_ ]*[A-Za-z0-9_]|[A-Za-z_])|(\d+)|(.))")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []
        for match in _TOKEN.finditer(text):
            word, number, symbol = match.groups()
            if word is not None:
                self.tokens.append(("word", " ".join(word.lower().split())))
            elif number is not None:
                self.tokens.append(("number", number))
            elif symbol is not None and not symbol.isspace():
                self.tokens.append(("symbol", symbol))
        self.position = 0

    def _fail(self, problem: str) -> HiveTypeError:
        return HiveTypeError(f"{self.text!r} is not a Hive type: {problem}")

    def _next(self) -> tuple[str, str]:
        if self.position >= len(self.tokens):
            raise self._fail("it ends too early")
        token = self.tokens[self.position]
        self.position += 1
        return token

    def _peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def _symbol(self, symbol: str) -> None:
        kind, value = self._next()
        if (kind, value) != ("symbol", symbol):
            raise self._fail(f"expected {symbol!r}, found {value!r}")

    def expect_end(self) -> None:
        extra = self._peek()
        if extra is not None:
            raise self._fail(f"unexpected {extra[1]!r}")

    def parse_type(self) -> TypeTree:
        kind, name = self._next()
        if kind != "word":
            raise self._fail(f"expected a type name, found {name!r}")
        if name in COMPLEX:
            self._symbol("<")
            if name == "struct":
                children = self._fields()
            else:
                children = [("", self.parse_type())]
                while self._peek() == ("symbol", ","):
                    self._next()
                    children.append(("", self.parse_type()))
                count = len(children)
                if (name == "array" and count != 1) or (name == "map" and count != 2):
                    raise self._fail(f"{name} takes {1 if name == 'array' else 2} type(s)")
            self._symbol(">")
            return TypeTree(name, (), tuple(children))
        if ALIASES.get(name, name) not in PRIMITIVES:
            raise self._fail(f"unknown type {name!r}")
        return TypeTree(ALIASES.get(name, name), self._parameters(name))

    def _fields(self) -> list[tuple[str, TypeTree]]:
        fields = []
        while True:
            kind, field = self._next()
            if kind not in ("word", "number"):
                raise self._fail(f"expected a field name, found {field!r}")
            self._symbol(":")
            fields.append((field, self.parse_type()))
            if self._peek() != ("symbol", ","):
                return fields
            self._next()

    def _parameters(self, name: str) -> tuple[int, ...]:
        """The parameters of primitive type NAME (as written: an alias names itself)."""
        canonical = ALIASES.get(name, name)
        low, high = PRIMITIVES[canonical].parameters
        values: list[int] = []
        if self._peek() == ("symbol", "("):
            self._next()
            while True:
                kind, number = self._next()
                if kind != "number":
                    raise self._fail(f"expected a number, found {number!r}")
                values.append(int(number))
                if self._peek() != ("symbol", ","):
                    break
                self._next()
            self._symbol(")")
        if not low <= len(values) <= high:
            raise self._fail(f"{name} takes {low}..{high} parameters, not {len(values)}")
        if canonical == "decimal" and values:
            precision = values[0]
            scale = values[1] if len(values) > 1 else 0
            if not 1 <= precision <= MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
                raise self._fail(f"decimal({precision},{scale}) is out of range")
        if name == "varchar" and not 1 <= values[0] <= MAX_VARCHAR_LENGTH:
            raise self._fail(f"varchar length {values[0]} is out of range")
        if name == "char" and not 1 <= values[0] <= MAX_CHAR_LENGTH:
            raise self._fail(f"char length {values[0]} is out of range")
        return tuple(values)
