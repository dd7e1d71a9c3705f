"""The --schema of csv and json files, 'a INT, b STRING', read without Spark.

Spark's DDL (as `StructType.fromDDL` takes it) needs a running JVM; the job checks the
schema before Spark starts, so it reads it here: comma-separated `name type` pairs, names
plain or in backticks, Spark's and Hive's type names (INT or INTEGER, BIGINT or LONG,
DECIMAL(p,s), VARCHAR(n), ARRAY<...>, MAP<k,v>, STRUCT<a: t, ...>, ...), with an optional
NOT NULL and COMMENT '...'. Types come out in Hive's spelling, as the metastore keeps them.
"""

from __future__ import annotations

import re

from metastore import spark_properties
from metastore.job.errors import OptionsError

_PRIMITIVES = frozenset(
    {"boolean", "tinyint", "smallint", "int", "bigint", "float", "double"}
    | {"string", "binary", "date", "timestamp"}
)
"""Hive's primitive types without parameters, which a --schema may name (in Spark's spelling
too: metastore.spark_properties.hive_name)."""
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|'(?:[^'\\]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:])")


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[str] = []
        position = 0
        while position < len(text):
            if not text[position:].strip():
                break
            found = _TOKEN.match(text, position)
            if found is None:
                raise self.error(f"unexpected {text[position:].strip()[:20]!r}")
            self.items.append(found.group(1))
            position = found.end()
        self.index = 0

    def error(self, what: str) -> OptionsError:
        return OptionsError(
            f"cannot read the schema {self.text!r}: {what}; give it as 'a INT, b STRING' "
            "(Spark's DDL)"
        )

    def peek(self) -> str | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None:
            raise self.error(f"it ends where {expected or 'more'} was expected")
        if expected is not None and token.lower() != expected:
            raise self.error(f"{token!r} where {expected!r} was expected")
        self.index += 1
        return token

    def name(self) -> str:
        token = self.take()
        if token.startswith("`"):
            return token[1:-1].replace("``", "`")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|\d+", token):
            raise self.error(f"{token!r} is not a column name")
        return token

    def number(self) -> int:
        token = self.take()
        if not token.isdigit():
            raise self.error(f"{token!r} is not a number")
        return int(token)


def parse_schema(text: str) -> list[tuple[str, str]]:
    """(name, Hive type) of each column of the DDL TEXT; OptionsError when it does not read."""
    tokens = _Tokens(text)
    columns: list[tuple[str, str]] = []
    while True:
        name = tokens.name()
        if tokens.peek() == ":":
            tokens.take()
        columns.append((name, _type(tokens)))
        _column_options(tokens)
        if tokens.peek() is None:
            break
        tokens.take(",")
    seen: set[str] = set()
    for name, _ in columns:
        if name.lower() in seen:
            raise tokens.error(f"column {name} is given twice")
        seen.add(name.lower())
    return columns


def _column_options(tokens: _Tokens) -> None:
    while (token := tokens.peek()) is not None and token.lower() in ("not", "comment"):
        if tokens.take().lower() == "not":
            tokens.take("null")
        else:
            comment = tokens.take()
            if not comment.startswith("'"):
                raise tokens.error("COMMENT needs a quoted text")


def _type(tokens: _Tokens) -> str:
    word = tokens.take()
    lowered = word.lower()
    if lowered in ("decimal", "dec", "numeric") and tokens.peek() == "(":
        tokens.take("(")
        precision = tokens.number()
        scale = 0
        if tokens.peek() == ",":
            tokens.take(",")
            scale = tokens.number()
        tokens.take(")")
        if not 1 <= precision <= 38 or scale > precision:
            raise tokens.error(f"decimal({precision},{scale}) is not a decimal type Hive keeps")
        return f"decimal({precision},{scale})"
    if lowered in ("varchar", "char"):
        tokens.take("(")
        length = tokens.number()
        tokens.take(")")
        return f"{lowered}({length})"
    if lowered == "array":
        tokens.take("<")
        inner = _type(tokens)
        tokens.take(">")
        return f"array<{inner}>"
    if lowered == "map":
        tokens.take("<")
        key = _type(tokens)
        tokens.take(",")
        value = _type(tokens)
        tokens.take(">")
        return f"map<{key},{value}>"
    if lowered == "struct":
        tokens.take("<")
        fields = []
        while True:
            name = tokens.name()
            if tokens.peek() == ":":
                tokens.take()
            fields.append(f"{name}:{_type(tokens)}")
            _column_options(tokens)
            if tokens.peek() != ",":
                break
            tokens.take(",")
        tokens.take(">")
        return f"struct<{','.join(fields)}>"
    hive = spark_properties.hive_name(lowered)
    if hive == "decimal":  # Hive's bare decimal
        return "decimal(10,0)"
    if hive in _PRIMITIVES:
        return hive
    raise tokens.error(f"unknown type {word}")


_SPARK_NAMES = {
    "tinyint": "byte",
    "smallint": "short",
    "int": "integer",
    "bigint": "long",
}


def spark_type(hive_type: str) -> object:
    """The JSON form of Spark's type for HIVE_TYPE (as Spark keeps a data source table's
    schema in the metastore)."""
    tokens = _Tokens(hive_type)
    found = _spark(tokens)
    if tokens.peek() is not None:
        raise tokens.error(f"{tokens.peek()!r} after the type")
    return found


def _spark(tokens: _Tokens) -> object:
    word = tokens.take().lower()
    if word == "array":
        tokens.take("<")
        element = _spark(tokens)
        tokens.take(">")
        return {"type": "array", "elementType": element, "containsNull": True}
    if word == "map":
        tokens.take("<")
        key = _spark(tokens)
        tokens.take(",")
        value = _spark(tokens)
        tokens.take(">")
        return {"type": "map", "keyType": key, "valueType": value, "valueContainsNull": True}
    if word == "struct":
        tokens.take("<")
        fields = []
        while True:
            name = tokens.name()
            tokens.take(":")
            fields.append(spark_field(name, _spark(tokens)))
            if tokens.peek() != ",":
                break
            tokens.take(",")
        tokens.take(">")
        return {"type": "struct", "fields": fields}
    if word in ("decimal", "varchar", "char") and tokens.peek() == "(":
        tokens.take("(")
        numbers = [str(tokens.number())]
        if tokens.peek() == ",":
            tokens.take(",")
            numbers.append(str(tokens.number()))
        tokens.take(")")
        return f"{word}({','.join(numbers)})"
    return _SPARK_NAMES.get(word, word)


def spark_field(name: str, spark: object) -> dict[str, object]:
    """A field of Spark's schema JSON; CHAR and VARCHAR are strings that remember their type."""
    metadata: dict[str, object] = {}
    if isinstance(spark, str) and spark.startswith(("varchar(", "char(")):
        metadata["__CHAR_VARCHAR_TYPE_STRING"] = spark
        spark = "string"
    return {"name": name, "type": spark, "nullable": True, "metadata": metadata}
