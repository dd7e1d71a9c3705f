"""The syntax of HMS partition filters: tokens, the parser, the tree it builds, and the
reading of literals and `like` patterns. metastore/partition_filter/__init__.py describes the
language and its meaning."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal

PARSE_ERROR = "Error parsing partition filter"
MAX_NESTING = 100
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class PartitionFilterError(ValueError):
    """A filter that cannot be answered; the server turns it into MetaException."""


# ------------------------------------------------------------------------------------------
# The tree


@dataclasses.dataclass(frozen=True)
class StringValue:
    value: str


@dataclasses.dataclass(frozen=True)
class IntValue:
    value: int


@dataclasses.dataclass(frozen=True)
class DateValue:
    value: datetime.date


Value = StringValue | IntValue | DateValue
CompareOp = Literal["=", "!=", "<", "<=", ">", ">="]


@dataclasses.dataclass(frozen=True)
class Compare:
    """KEY OP VALUE; a literal-first comparison is stored with the operator mirrored."""

    key: str
    op: CompareOp
    value: Value


@dataclasses.dataclass(frozen=True)
class Like:
    key: str
    pattern: Value


@dataclasses.dataclass(frozen=True)
class Between:
    key: str
    low: Value
    high: Value
    negated: bool = False


@dataclasses.dataclass(frozen=True)
class In:
    key: str
    values: tuple[Value, ...]
    negated: bool = False


@dataclasses.dataclass(frozen=True)
class Not:
    operand: Filter


@dataclasses.dataclass(frozen=True)
class And:
    operands: tuple[Filter, ...]


@dataclasses.dataclass(frozen=True)
class Or:
    operands: tuple[Filter, ...]


@dataclasses.dataclass(frozen=True)
class Everything:
    """The empty filter: every partition."""


Filter = Compare | Like | Between | In | Not | And | Or | Everything

# ------------------------------------------------------------------------------------------
# Tokens

TokenKind = Literal["word", "keyword", "string", "int", "date", "op", "(", ")", ",", "end"]
KEYWORDS = frozenset({"and", "or", "not", "like", "between", "in"})
_OPERATORS = ("<=", ">=", "<>", "!=", "=", "<", ">")  # longest first
_MIRRORED: dict[CompareOp, CompareOp] = {
    "=": "=",
    "!=": "!=",
    "<": ">",
    "<=": ">=",
    ">": "<",
    ">=": "<=",
}
_WHITESPACE = " \t\r\n"
_WORD = re.compile(r"[A-Za-z0-9_]+")
_NEGATIVE_INT = re.compile(r"-[0-9]+")
_UNQUOTED_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?![A-Za-z0-9_])")
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+")
_DATE_TEXT = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")


@dataclasses.dataclass(frozen=True)
class _Token:
    kind: TokenKind
    text: str  # keywords lower-cased, strings without their quotes
    pos: int


def _parse_error(text: str, pos: int, detail: str) -> PartitionFilterError:
    return PartitionFilterError(
        f"{PARSE_ERROR}: {detail} at character {pos + 1} of the filter {text!r}"
    )


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in _WHITESPACE:
            i += 1
        elif c in "(),":
            out.append(_Token(c, c, i))  # type: ignore[arg-type]  # c is one of the three
            i += 1
        elif c in "\"'":
            end = text.find(c, i + 1)
            if end < 0:
                raise _parse_error(text, i, f"unterminated string (no closing {c})")
            out.append(_Token("string", text[i + 1 : end], i))
            i = end + 1
        elif op := next((o for o in _OPERATORS if text.startswith(o, i)), None):
            out.append(_Token("op", op, i))
            i += len(op)
        elif date := _UNQUOTED_DATE.match(text, i):
            out.append(_Token("date", date.group(), i))
            i = date.end()
        elif c == "-":
            number = _NEGATIVE_INT.match(text, i)
            if number is None or _WORD.match(text, number.end()):
                raise _parse_error(text, i, "'-' is not followed by an integer")
            out.append(_Token("int", number.group(), i))
            i = number.end()
        elif word := _WORD.match(text, i):
            w = word.group()
            if w.isdigit():  # ASCII digits only: _WORD allows no others
                out.append(_Token("int", w, i))
            elif w.lower() in KEYWORDS:
                out.append(_Token("keyword", w.lower(), i))
            else:
                out.append(_Token("word", w, i))
            i = word.end()
        else:
            raise _parse_error(text, i, f"unexpected character {c!r}")
    out.append(_Token("end", "", len(text)))
    return out


# ------------------------------------------------------------------------------------------
# Parser


def parse_filter(text: str) -> Filter:
    """The tree of filter TEXT; raises PartitionFilterError("Error parsing ...")."""
    return _Parser(text).parse()


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    def parse(self) -> Filter:
        if self._peek().kind == "end":
            return Everything()
        tree = self._or()
        if self._peek().kind != "end":
            raise self._error("expected 'and', 'or' or the end of the filter")
        return tree

    # -- helpers

    def _peek(self, ahead: int = 0) -> _Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def _next(self) -> _Token:
        token = self._peek()
        self.i += 1
        return token

    def _error(self, detail: str, token: _Token | None = None) -> PartitionFilterError:
        token = token or self._peek()
        found = "the end" if token.kind == "end" else repr(self.text[token.pos :][:20])
        return _parse_error(self.text, token.pos, f"{detail}, found {found}")

    def _is(self, kind: TokenKind, text: str | None = None, ahead: int = 0) -> bool:
        token = self._peek(ahead)
        return token.kind == kind and (text is None or token.text == text)

    def _accept_keyword(self, word: str) -> bool:
        if self._is("keyword", word):
            self.i += 1
            return True
        return False

    def _expect(self, kind: TokenKind, text: str, what: str) -> None:
        if not self._is(kind, text):
            raise self._error(f"expected {what}")
        self.i += 1

    @contextmanager
    def _nested(self) -> Iterator[None]:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self._error(f"more than {MAX_NESTING} nested parentheses or 'not'")
        yield
        self.depth -= 1

    # -- rules

    def _or(self) -> Filter:
        operands = [self._and()]
        while self._accept_keyword("or"):
            operands.append(self._and())
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def _and(self) -> Filter:
        operands = [self._unary()]
        while self._accept_keyword("and"):
            operands.append(self._unary())
        return operands[0] if len(operands) == 1 else And(tuple(operands))

    def _unary(self) -> Filter:
        if self._accept_keyword("not"):
            with self._nested():
                return Not(self._unary())
        return self._primary()

    def _primary(self) -> Filter:
        if self._is("("):
            if self._is_parenthesized_key():
                self.i += 1
                key = self._key()
                self.i += 1
                negated = self._accept_keyword("not")
                self._expect("keyword", "in", "'in'")
                return In(key, self._value_list(), negated)
            self.i += 1
            with self._nested():
                tree = self._or()
            self._expect(")", ")", "')'")
            return tree
        if self._at_literal():
            value = self._literal()
            if self._is("keyword", "like"):
                raise self._error("the pattern of 'like' must follow the key")
            op = self._operator()
            return Compare(self._key(), _MIRRORED[op], value)
        key = self._key()
        negated = self._accept_keyword("not")
        if self._accept_keyword("in"):
            return In(key, self._value_list(), negated)
        if self._accept_keyword("between"):
            low = self._literal()
            self._expect("keyword", "and", "'and' between the bounds of 'between'")
            return Between(key, low, self._literal(), negated)
        if negated:
            raise self._error("expected 'in' or 'between' after 'not'")
        if self._accept_keyword("like"):
            return Like(key, self._literal())
        op = self._operator()
        return Compare(key, op, self._literal())

    def _is_parenthesized_key(self) -> bool:
        """At "( KEY ) in" or "( KEY ) not in" (rather than a parenthesized expression)."""
        return (
            self._is("word", ahead=1)
            and self._is(")", ahead=2)
            and (
                self._is("keyword", "in", ahead=3)
                or (self._is("keyword", "not", ahead=3) and self._is("keyword", "in", ahead=4))
            )
        )

    def _at_literal(self) -> bool:
        token = self._peek()
        if token.kind in ("string", "int", "date"):
            return True
        # "date" starts a date literal when a date follows; otherwise it is a key's name.
        return (
            token.kind == "word"
            and token.text.lower() == "date"
            and self._peek(1).kind in ("string", "date")
        )

    def _key(self) -> str:
        token = self._peek()
        if token.kind != "word":
            raise self._error("expected a partition key")
        self.i += 1
        return token.text

    def _operator(self) -> CompareOp:
        token = self._peek()
        if token.kind != "op":
            raise self._error("expected a comparison operator (= != <> < <= > >= like)")
        self.i += 1
        return "!=" if token.text == "<>" else token.text  # type: ignore[return-value]

    def _literal(self) -> Value:
        token = self._next()
        if token.kind == "string":
            return StringValue(token.text)
        if token.kind == "int":
            number = int(token.text)
            if not INT64_MIN <= number <= INT64_MAX:
                raise self._error("integer out of the 64-bit range", token)
            return IntValue(number)
        if token.kind == "date":
            return self._date(token.text, token)
        if (
            token.kind == "word"
            and token.text.lower() == "date"
            and self._peek().kind in ("string", "date")
        ):
            inner = self._next()
            return self._date(inner.text, inner)
        raise self._error("expected a quoted string, an integer or a date", token)

    def _date(self, text: str, token: _Token) -> DateValue:
        day = parse_date(text)
        if day is None:
            raise self._error(f"{text!r} is not a date (yyyy-mm-dd)", token)
        return DateValue(day)

    def _value_list(self) -> tuple[Value, ...]:
        self._expect("(", "(", "'(' to open the list of 'in'")
        values = [self._literal()]
        while self._is(",", ","):
            self.i += 1
            values.append(self._literal())
        self._expect(")", ")", "',' or ')' in the list of 'in'")
        return tuple(values)


def parse_date(text: str) -> datetime.date | None:
    """The day TEXT names, written yyyy-m-d (one or two digits for month and day), or None."""
    match = _DATE_TEXT.fullmatch(text)
    if match is None:
        return None
    try:
        return datetime.date(*(int(g) for g in match.groups()))
    except ValueError:
        return None


def parse_integer(text: str) -> int | None:
    """The 64-bit integer TEXT is (optional sign, ASCII digits), or None."""
    if _INTEGER_TEXT.fullmatch(text) is None:
        return None
    number = int(text)
    return number if INT64_MIN <= number <= INT64_MAX else None


# ------------------------------------------------------------------------------------------
# Like patterns


class Wildcard(enum.Enum):
    ANY_RUN = "any run of characters"
    ONE_CHAR = "one character"


LikePart = str | Wildcard


def like_parts(pattern: str) -> list[LikePart]:
    """PATTERN as literal text and wildcards. Clients send two styles:

    * Hive 2.x/3.x clients (Spark 4.1 among them) send Java-regex-looking patterns: `.*` is
      any run of characters and `.` one character (HMS 2.3 turned them into SQL's `%` and
      `_`); everything else is literal, `%`, `_`, `*` and `\\` included. Spark writes every
      LIKE, startswith, endswith and contains it pushes down with `.*`.
    * Hive 4 clients send SQL patterns: `%` is any run, `_` one character, and `\\` makes the
      next character literal (HMS 4 runs LIKE ... ESCAPE '\\'); `.` is literal.

    A pattern with a `.` is of the first style, any other of the second. The two agree on
    patterns that have none of `.`, `%`, `_` and `\\`. Where they disagree the choice errs
    towards more partitions for clients that filter the answer again, as Spark does:
    a Hive 2.x-style `a%` (a literal `%`, which HMS 2.3 matched as such) is read as
    "starts with a", and `a_c` matches `a%c` too. A Hive 4 pattern with a literal `.`
    and a wildcard (`v1.%`) is misread (`.` any character, `%` literal); Hive 4 writes
    such patterns rarely, and HMS 4.x itself has come to treat `.` as a wildcard.
    """
    parts: list[LikePart] = []
    text: list[str] = []

    def wildcard(w: Wildcard) -> None:
        if text:
            parts.append("".join(text))
            text.clear()
        parts.append(w)

    i = 0
    regex_style = "." in pattern
    while i < len(pattern):
        c = pattern[i]
        if regex_style and c == ".":
            if pattern.startswith(".*", i):
                wildcard(Wildcard.ANY_RUN)
                i += 2
                continue
            wildcard(Wildcard.ONE_CHAR)
        elif not regex_style and c == "%":
            wildcard(Wildcard.ANY_RUN)
        elif not regex_style and c == "_":
            wildcard(Wildcard.ONE_CHAR)
        elif not regex_style and c == "\\" and i + 1 < len(pattern):
            i += 1
            text.append(pattern[i])
        else:
            text.append(c)
        i += 1
    if text:
        parts.append("".join(text))
    return parts
