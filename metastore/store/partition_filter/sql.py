"""HMS partition filters as SQL over PARTITIONS and PARTITION_KEY_VALS, on PostgreSQL and
SQLite. metastore/partition_filter/__init__.py describes what each comparison means."""

from __future__ import annotations

import dataclasses
import functools
import operator
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVarTuple

from sqlalchemy import (
    BigInteger,
    Integer,
    String,
    and_,
    any_,
    case,
    cast,
    collate,
    func,
    literal_column,
    or_,
    select,
    true,
)
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import NamedFromClause

from metastore.names import DEFAULT_PARTITION_VALUE
from metastore.store import models as m
from metastore.store.partition_filter.syntax import (
    INT64_MAX,
    INT64_MIN,
    And,
    Between,
    Compare,
    CompareOp,
    DateValue,
    Everything,
    Filter,
    In,
    IntValue,
    Like,
    LikePart,
    Not,
    Or,
    PartitionFilterError,
    StringValue,
    Value,
    Wildcard,
    like_parts,
    parse_date,
    parse_integer,
)
from metastore.vocabulary import KeyKind, key_kind


def _sql_text(text: str) -> ColumnElement[str]:
    """A constant of our own as SQL text (never user input: that is bound)."""
    return literal_column("'" + text.replace("'", "''") + "'", String)


def _sql_int(number: int) -> ColumnElement[int]:
    """An integer constant inlined, so that PostgreSQL types function arguments as integer."""
    return literal_column(str(number), Integer)


# The ASCII digits, and the class of one in a PostgreSQL regular expression, whatever the
# collation ([0-9] is a range, which the PostgreSQL manual calls collation-dependent).
_DIGITS = "0123456789"
_DIGIT = f"[{_DIGITS}]"


class Dialect:
    """What PostgreSQL and SQLite spell differently."""

    def __init__(self, name: str) -> None:
        if name not in ("postgresql", "sqlite"):
            raise NotImplementedError(f"partition filters are not implemented for {name}")
        self.name = name
        self.postgres = name == "postgresql"

    def byte_order(self, text: ColumnElement[str]) -> ColumnElement[str]:
        """TEXT compared byte by byte (SQLite always does; PostgreSQL with collation "C")."""
        return collate(text, "C") if self.postgres else text

    def is_integer_text(self, text: ColumnElement[str]) -> ColumnElement[bool]:
        """TEXT is an optional sign and one or more ASCII digits (SQLite has no regular
        expressions without a user function: GLOB checks the first character, then that
        no later one is a non-digit)."""
        if self.postgres:
            return _test(text, "~", _sql_text(f"^[+-]?{_DIGIT}+$"))
        first = or_(
            _test(text, "GLOB", _sql_text("[0-9]*")), _test(text, "GLOB", _sql_text("[+-][0-9]*"))
        )
        rest = func.substr(text, _sql_int(2))
        return and_(first, _test(rest, "NOT GLOB", _sql_text("*[^0-9]*")))

    def is_short_digits(self, text: ColumnElement[str]) -> ColumnElement[bool]:
        """TEXT is 1 to 18 ASCII digits, as most integral key values are: a number that
        fits in 64 bits, told in one test before the full checks of the rarer spellings.
        On PostgreSQL, TEXT with its digits removed is empty: the test runs for every
        partition a filter reads, and a regular expression took seven times as long (10.5
        against 1.5 ms for 10,000 hours)."""
        if self.postgres:
            return and_(
                func.translate(text, _sql_text(_DIGITS), _sql_text("")) == _sql_text(""),
                func.length(text).between(_sql_int(1), _sql_int(18)),
            )
        return and_(
            _test(text, "NOT GLOB", _sql_text("*[^0-9]*")),
            func.length(text).between(_sql_int(1), _sql_int(18)),
        )

    def is_date_text(self, text: ColumnElement[str]) -> ColumnElement[bool]:
        """TEXT is yyyy-mm-dd in ASCII digits. On PostgreSQL, TEXT with every digit made a
        9 is 9999-99-99: half the time of a regular expression (see is_short_digits)."""
        if self.postgres:
            nines = func.translate(text, _sql_text(_DIGITS), _sql_text("9" * len(_DIGITS)))
            return nines == _sql_text("9999-99-99")
        return _test(text, "GLOB", _sql_text("[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"))

    def matches(self, text: ColumnElement[str], parts: Sequence[LikePart]) -> ColumnElement[bool]:
        """TEXT matches the pattern PARTS, case-sensitively: LIKE on PostgreSQL, GLOB on
        SQLite (whose LIKE ignores the case of ASCII letters)."""
        if self.postgres:
            like = "".join(
                "%" if p is Wildcard.ANY_RUN else "_" if p is Wildcard.ONE_CHAR else _like_escape(p)
                for p in parts
            )
            return text.like(like, escape="\\")
        glob = "".join(
            "*" if p is Wildcard.ANY_RUN else "?" if p is Wildcard.ONE_CHAR else _glob_escape(p)
            for p in parts
        )
        return _test(text, "GLOB", glob)


@functools.lru_cache(maxsize=256)
def _key_value(idx: int, kind: KeyKind, dialect: str) -> tuple[NamedFromClause, ColumnElement[Any]]:
    """The alias of PARTITION_KEY_VALS joined for key INTEGER_IDX IDX, and the SQL of the
    key's value (see SqlBuilder._key). Made once: these expressions are immutable, and
    building the guarded casts took a third of the time of a small call."""
    kv = m.PartitionKeyValue.__table__.alias(f"kv{idx}")
    text: ColumnElement[str] = kv.c.PART_KEY_VAL
    d = Dialect(dialect)
    if kind == "string":
        return kv, d.byte_order(func.coalesce(text, _sql_text(DEFAULT_PARTITION_VALUE)))
    if kind == "integer":
        number = cast(text, BigInteger)
        return kv, case(
            (d.is_short_digits(text), number),
            (and_(d.is_integer_text(text), _fits_int64(d, text)), number),
        )
    return kv, d.byte_order(case((d.is_date_text(text), case((_is_real_day(text), text)))))


def _test(left: ColumnElement[str], op: str, right: Any) -> ColumnElement[bool]:
    """LEFT OP RIGHT for an operator SQLAlchemy does not know, as a boolean (so that it can
    be negated and combined)."""
    return left.op(op, is_comparison=True)(right)


def _like_escape(text: str) -> str:
    return re.sub(r"([\\%_])", r"\\\1", text)


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


Ts = TypeVarTuple("Ts")


@dataclasses.dataclass(frozen=True)
class FilterSql:
    """A filter as SQL: CONDITION over PARTITIONS and the PARTITION_KEY_VALS aliases in
    KEY_VALUES (by INTEGER_IDX), which `apply` joins to a query over PARTITIONS."""

    condition: ColumnElement[bool]
    key_values: dict[int, NamedFromClause]
    index_terms: tuple[ColumnElement[bool], ...] = ()

    def apply(self, query: Select[*Ts]) -> Select[*Ts]:
        """QUERY (over PARTITIONS) restricted to the partitions the filter selects.

        Each key the filter names is one outer join on PARTITION_KEY_VALS's primary key
        (PART_ID, INTEGER_IDX): one index lookup per partition and key. A missing row reads
        as the default partition."""
        partitions = m.Partition.__table__
        for idx, kv in sorted(self.key_values.items()):
            query = query.outerjoin_from(
                partitions,
                kv,
                and_(kv.c.PART_ID == partitions.c.PART_ID, kv.c.INTEGER_IDX == _sql_int(idx)),
            )
        return query.where(self.condition, *self.index_terms)


def filter_sql(flt: Filter, keys: Sequence[tuple[str, str]], dialect: str) -> FilterSql:
    """FLT as SQL for a table whose partition KEYS are (name, Hive type) in INTEGER_IDX
    order, for the database DIALECT ("postgresql" or "sqlite").

    Raises PartitionFilterError for a key the table does not have, a key type that cannot be
    filtered, or a literal that does not fit its key's type."""
    return _filter_sql(flt, tuple(keys), dialect)


@functools.lru_cache(maxsize=256)
def _filter_sql(flt: Filter, keys: tuple[tuple[str, str], ...], dialect: str) -> FilterSql:
    """filter_sql, kept for the filters planners repeat (the same day or hour for every
    query): building the SQL of a filter was a fifth of a day's get_partitions_by_filter on
    PostgreSQL, cold. A FilterSql is never changed once built."""
    builder = SqlBuilder(keys, Dialect(dialect))
    condition = builder.condition(flt)
    return FilterSql(condition, builder.key_values, tuple(builder.index_terms(flt)))


def text_in_byte_order(text: ColumnElement[str], dialect: str) -> ColumnElement[str]:
    """TEXT ordered and compared byte by byte on DIALECT (as HMS orders partition names)."""
    return Dialect(dialect).byte_order(text)


class SqlBuilder:
    """Filters as SQL over a table's partitions. `_key` gives the SQL of a key's value;
    table_sql.TableFilterBuilder overrides it for HMS's table filters."""

    def __init__(self, keys: Sequence[tuple[str, str]], dialect: Dialect) -> None:
        self.keys = {name.lower(): (i, hive_type) for i, (name, hive_type) in enumerate(keys)}
        self.dialect = dialect
        self.key_values: dict[int, NamedFromClause] = {}

    def condition(self, flt: Filter) -> ColumnElement[bool]:
        match flt:
            case Everything():
                return true()
            case And(operands):
                return and_(*(self.condition(o) for o in operands))
            case Or(operands):
                return or_(*(self.condition(o) for o in operands))
            case Not(operand):
                return ~self.condition(operand)
            case Compare(key, op, value):
                kind, column = self._key(key)
                return _compare(column, op, self._value(key, kind, value))
            case Between(key, low, high, negated):
                kind, column = self._key(key)
                between = column.between(self._value(key, kind, low), self._value(key, kind, high))
                return ~between if negated else between
            case In(key, values, negated):
                kind, column = self._key(key)
                listed = [self._value(key, kind, v) for v in values]
                return column.not_in(listed) if negated else column.in_(listed)
            case Like(key, pattern):
                return self._like(key, pattern)
        raise AssertionError(f"not a filter: {flt!r}")

    def index_terms(self, flt: Filter) -> list[ColumnElement[bool]]:
        """A condition that FLT implies and an index on PARTITION_KEY_VALS (INTEGER_IDX,
        PART_KEY_VAL) serves, where FLT requires comparisons of a key (at its top, alone or
        under AND) that the stored text can answer: a string key compared with literals
        (or matched with a pattern, with the range of its literal prefix), an integral key
        equal to, or in a list of, numbers. Redundant with the condition, it lets the
        database start from the matching key values instead of every partition of the
        table.

        The copies of one key's comparisons form a semi-join, PART_ID IN (SELECT PART_ID
        FROM PARTITION_KEY_VALS WHERE INTEGER_IDX = i AND copies), rather than conditions
        on the outer-joined key values of `condition`: SQLite starts a query from the index
        of an outer-joined table for a plain equality only, not for IN, OR or a range. On
        PostgreSQL it is PART_ID = ANY(ARRAY(SELECT ...)): the ids are gathered first and
        the partitions found by their primary key, where the planner made the semi-join a
        hash join over all the table's partitions (a week of one hour out of 10,000: 4.6
        against 1.6 ms of execution). Only the first key (in the table's order) with copies
        gets one: tables are partitioned from coarse to fine (a day, then an hour), so the
        first key's values hold the fewest partitions each, and a second semi-join costs
        more to build and run than it saves.

        The condition reads a NULL value as the default partition's name, the copies do
        not: a key's comparisons are copied only when one of them fails for the default
        partition's name, so that the condition drops the NULLs too. Equality is the same
        in any deterministic collation; the other comparisons are in byte order, which
        indexes serve on SQLite. Call after `condition` (which checks FLT)."""
        conjuncts = flt.operands if isinstance(flt, And) else (flt,)
        by_key: dict[int, list[Compare | In | Like | Between]] = {}
        for conjunct in conjuncts:
            if isinstance(conjunct, Compare | In | Like | Between):
                by_key.setdefault(self.keys[conjunct.key.lower()][0], []).append(conjunct)
        kinds = {idx: key_kind(hive_type) for idx, hive_type in self.keys.values()}
        for idx in sorted(by_key):
            stored = m.PartitionKeyValue.__table__.alias(f"ix{idx}")
            copies = [self._copy(c, kinds[idx], stored.c.PART_KEY_VAL) for c in by_key[idx]]
            found = [c for c in copies if c is not None]
            if any(not takes_default for _, takes_default in found):
                semi_join = select(stored.c.PART_ID).where(
                    stored.c.INTEGER_IDX == _sql_int(idx), *(copy for copy, _ in found)
                )
                part_id = m.Partition.__table__.c.PART_ID
                if self.dialect.postgres:
                    return [part_id == any_(func.array(semi_join.scalar_subquery()))]
                return [part_id.in_(semi_join)]
        return []

    def _copy(
        self, flt: Compare | In | Like | Between, kind: KeyKind | None, text: ColumnElement[str]
    ) -> tuple[ColumnElement[bool], bool] | None:
        """For a comparison that the stored text of its key (of KIND) answers: the
        comparison on TEXT (that key's PART_KEY_VAL) and whether the default partition's
        name passes it (an integral key's never does)."""
        default = DEFAULT_PARTITION_VALUE
        if kind == "integer":
            match flt:
                case Compare(key, "=", literal):
                    return self._spells_integer(text, key, [literal]), False
                case In(key, values, False):
                    return self._spells_integer(text, key, values), False
            return None
        if kind != "string":
            return None
        match flt:
            case Compare(_, op, StringValue(value)) if op != "!=":
                ordered = text if op == "=" else self.dialect.byte_order(text)
                return _compare(ordered, op, value), _compare_texts(default, op, value)
            case In(_, values, False) if all(isinstance(v, StringValue) for v in values):
                listed = [v.value for v in values if isinstance(v, StringValue)]
                return text.in_(listed), default in listed
            case Like(_, StringValue(pattern)):
                parts = like_parts(pattern)
                copy = self.dialect.matches(text, parts)
                prefix = parts[0] if parts and isinstance(parts[0], str) else ""
                if _after(prefix) is not None:  # a range the index serves
                    ordered = self.dialect.byte_order(text)
                    copy = and_(copy, ordered >= prefix, ordered < _after(prefix))
                return copy, _like_matches(default, parts)
            case Between(_, StringValue(low), StringValue(high), False):
                return self.dialect.byte_order(text).between(low, high), low <= default <= high
        return None

    def _spells_integer(
        self, text: ColumnElement[str], key: str, values: Sequence[Value]
    ) -> ColumnElement[bool]:
        """TEXT may be one of the integers VALUES: their canonical spelling, or a spelling
        with a plus sign or leading zeros ("+7", "07", "-0"), which the condition compares
        by value like any other. Each alternative is an exact text or a prefix, which an
        index serves."""
        numbers = [self._value(key, "integer", v) for v in values]
        d = self.dialect
        return or_(
            text.in_([str(n) for n in numbers]),
            d.matches(text, ["+", Wildcard.ANY_RUN]),
            d.matches(text, ["-0", Wildcard.ANY_RUN]),
            d.matches(text, ["0", Wildcard.ONE_CHAR, Wildcard.ANY_RUN]),
        )

    def _key(self, name: str) -> tuple[KeyKind, ColumnElement[Any]]:
        """The kind of key NAME and the SQL of its value in a partition: text for string
        keys, a BIGINT for integral keys, yyyy-mm-dd text for date keys; NULL where the
        stored text is no integer or date. The casts are guarded by CASE, which PostgreSQL
        evaluates in order, so that a bad value is never cast (it would raise)."""
        found = self.keys.get(name.lower())
        if found is None:
            raise PartitionFilterError(
                f"Specified key <{name}> is not a partitioning key for the table"
            )
        idx, hive_type = found
        kind = key_kind(hive_type)
        if kind is None:
            raise PartitionFilterError(
                f"Filtering on partition key {name} of type {hive_type} is not supported: "
                "only keys of types string, varchar, char, tinyint, smallint, int, bigint "
                "and date can be filtered"
            )
        kv, column = _key_value(idx, kind, self.dialect.name)
        self.key_values[idx] = kv
        return kind, column

    def _value(self, key: str, kind: KeyKind, value: Value) -> object:
        """VALUE as the Python value compared with key KEY of KIND, or an error."""
        if kind == "string":
            if isinstance(value, StringValue):
                return value.value
            raise PartitionFilterError(
                f"Partition key {key} is a string: compare it with a quoted string, "
                f"not {_shown(value)}"
            )
        if kind == "integer":
            number = value.value if isinstance(value, IntValue) else None
            if isinstance(value, StringValue):
                number = parse_integer(value.value)
            if number is None:
                raise PartitionFilterError(
                    f"Partition key {key} is an integer: {_shown(value)} is not an integer"
                )
            return number
        day = value.value if isinstance(value, DateValue) else None
        if isinstance(value, StringValue):
            day = parse_date(value.value)
        if day is None:
            raise PartitionFilterError(
                f"Partition key {key} is a date: {_shown(value)} is not a date (yyyy-mm-dd)"
            )
        return day.isoformat()

    def _like(self, key: str, pattern: Value) -> ColumnElement[bool]:
        kind, column = self._key(key)
        if kind != "string":
            raise PartitionFilterError(f"'like' needs a string partition key; {key} is not")
        if not isinstance(pattern, StringValue):
            raise PartitionFilterError(f"'like' needs a quoted pattern, not {_shown(pattern)}")
        return self.dialect.matches(column, like_parts(pattern.value))


# The comparisons, for SQL expressions and Python values alike.
_OPERATORS: dict[CompareOp, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _compare(column: ColumnElement[Any], op: CompareOp, value: object) -> ColumnElement[bool]:
    compared: ColumnElement[bool] = _OPERATORS[op](column, value)
    return compared


def _after(prefix: str) -> str | None:
    """The least text after every text that starts with PREFIX, in byte order (its last
    character's successor); None when there is none to give (an empty PREFIX, or a last
    character whose successor is no character)."""
    if not prefix or ord(prefix[-1]) in (0xD7FF, 0x10FFFF):
        return None
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _like_matches(text: str, parts: Sequence[LikePart]) -> bool:
    """Whether TEXT matches the pattern PARTS, case-sensitively (as Dialect.matches)."""
    regex = "".join(
        ".*" if p is Wildcard.ANY_RUN else "." if p is Wildcard.ONE_CHAR else re.escape(p)
        for p in parts
    )
    return re.fullmatch(regex, text, re.DOTALL) is not None


def _compare_texts(left: str, op: CompareOp, right: str) -> bool:
    """LEFT OP RIGHT in byte order (Python orders str by code point, as UTF-8 bytes are)."""
    return bool(_OPERATORS[op](left, right))


def _fits_int64(d: Dialect, text: ColumnElement[str]) -> ColumnElement[bool]:
    """Integer TEXT is within the 64-bit range: at most 19 significant digits, and at most
    9223372036854775807 (or ...808 after a minus) when there are 19. Compares digit strings
    of equal length, so the cast that follows never overflows."""
    digits = func.ltrim(func.ltrim(text, _sql_text("+-")), _sql_text("0"))
    most = case(
        (func.substr(text, _sql_int(1), _sql_int(1)) == _sql_text("-"), _sql_text(str(-INT64_MIN))),
        else_=_sql_text(str(INT64_MAX)),
    )
    return or_(
        func.length(digits) < _sql_int(19),
        and_(func.length(digits) == _sql_int(19), d.byte_order(digits) <= most),
    )


def _is_real_day(text: ColumnElement[str]) -> ColumnElement[bool]:
    """yyyy-mm-dd TEXT (digits checked before) names a day of the Gregorian calendar."""
    year = cast(func.substr(text, _sql_int(1), _sql_int(4)), Integer)
    month = cast(func.substr(text, _sql_int(6), _sql_int(2)), Integer)
    day = cast(func.substr(text, _sql_int(9), _sql_int(2)), Integer)
    leap = or_(
        and_(year % _sql_int(4) == _sql_int(0), year % _sql_int(100) != _sql_int(0)),
        year % _sql_int(400) == _sql_int(0),
    )
    days = case(
        (month.in_([_sql_int(4), _sql_int(6), _sql_int(9), _sql_int(11)]), _sql_int(30)),
        (month == _sql_int(2), case((leap, _sql_int(29)), else_=_sql_int(28))),
        else_=_sql_int(31),
    )
    return and_(
        year >= _sql_int(1),
        month.between(_sql_int(1), _sql_int(12)),
        day.between(_sql_int(1), days),
    )


def _shown(value: Value) -> str:
    if isinstance(value, StringValue):
        return repr(value.value)
    if isinstance(value, DateValue):
        return f"date '{value.value.isoformat()}'"
    return str(value.value)
