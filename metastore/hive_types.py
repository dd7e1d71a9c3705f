"""Hive column types as HMS accepts them: parsing and checking type text.

The grammar is Hive's TypeInfoUtils: primitive names (with `varchar(n)`, `char(n)`,
`decimal(p[,s])`), `array<T>`, `map<K,V>`, `struct<name:T,...>` and `uniontype<T,...>`,
case-insensitive, with optional spaces. HMS refuses a table whose column types do not
parse (InvalidObjectException); so does colstats.
"""

from __future__ import annotations

import re

PRIMITIVES = frozenset(
    {
        "void",
        "boolean",
        "tinyint",
        "smallint",
        "int",
        "integer",
        "bigint",
        "float",
        "double",
        "double precision",
        "string",
        "binary",
        "date",
        "timestamp",
        "timestamp with local time zone",
        "interval_year_month",
        "interval_day_time",
        "decimal",
        "numeric",
        "varchar",
        "char",
    }
)
# Types that take parameters, and how many (at least, at most).
_PARAMETERS = {"varchar": (1, 1), "char": (1, 1), "decimal": (0, 2), "numeric": (0, 2)}
_TOKEN = re.compile(r"\s*(?:([A-Za-z_][A-Za-z0-9_ ]*[A-Za-z0-9_]|[A-Za-z_])|(\d+)|(.))")
MAX_DECIMAL_PRECISION = 38
MAX_VARCHAR_LENGTH = 65535
MAX_CHAR_LENGTH = 255


class HiveTypeError(ValueError):
    """Type text that is not a Hive type; the message says where and why."""


def check_type(text: str | None) -> str:
    """TEXT if it is a Hive type (raises HiveTypeError otherwise)."""
    if not text or not text.strip():
        raise HiveTypeError("the type is empty")
    parser = _Parser(text)
    parser.parse_type()
    parser.expect_end()
    return text


def integral(text: str) -> bool:
    return _base(text) in ("tinyint", "smallint", "int", "integer", "bigint")


def textual(text: str) -> bool:
    return _base(text) in ("string", "varchar", "char")


def _base(text: str) -> str:
    return re.split(r"[(<]", text.strip().lower(), maxsplit=1)[0].strip()


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

    def parse_type(self) -> None:
        kind, name = self._next()
        if kind != "word":
            raise self._fail(f"expected a type name, found {name!r}")
        if name in ("array", "map", "struct", "uniontype"):
            self._symbol("<")
            if name == "struct":
                self._fields()
            else:
                self.parse_type()
                count = 1
                while self._peek() == ("symbol", ","):
                    self._next()
                    self.parse_type()
                    count += 1
                if (name == "array" and count != 1) or (name == "map" and count != 2):
                    raise self._fail(f"{name} takes {1 if name == 'array' else 2} type(s)")
            self._symbol(">")
            return
        if name not in PRIMITIVES:
            raise self._fail(f"unknown type {name!r}")
        self._parameters(name)

    def _fields(self) -> None:
        while True:
            kind, field = self._next()
            if kind not in ("word", "number"):
                raise self._fail(f"expected a field name, found {field!r}")
            self._symbol(":")
            self.parse_type()
            if self._peek() != ("symbol", ","):
                return
            self._next()

    def _parameters(self, name: str) -> None:
        low, high = _PARAMETERS.get(name, (0, 0))
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
        if name in ("decimal", "numeric") and values:
            precision = values[0]
            scale = values[1] if len(values) > 1 else 0
            if not 1 <= precision <= MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
                raise self._fail(f"decimal({precision},{scale}) is out of range")
        if name == "varchar" and not 1 <= values[0] <= MAX_VARCHAR_LENGTH:
            raise self._fail(f"varchar length {values[0]} is out of range")
        if name == "char" and not 1 <= values[0] <= MAX_CHAR_LENGTH:
            raise self._fail(f"char length {values[0]} is out of range")
