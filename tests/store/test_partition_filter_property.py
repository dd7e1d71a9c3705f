"""Partition filters on SQLite and PostgreSQL agree with a reference written here, in plain
Python, from the rules (metastore/partition_filter/__init__.py): random tables of string,
integral and date keys with awkward values, random filters from the whole grammar."""

from __future__ import annotations

import dataclasses
import datetime
import operator
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import pytest
import sqlalchemy as sa
from filter_tables import insert_database, insert_table, partition_name, selected
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

DEF = "__HIVE_DEFAULT_PARTITION__"
Stored = str | None  # None: a NULL PART_KEY_VAL, which is the default partition
Truth = bool | None  # SQL's three-valued logic: None is unknown
T = TypeVar("T")

# -- the reference ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Key:
    name: str
    kind: str  # "string", "int" or "date"
    hive_type: str


def typed(kind: str, stored: Stored) -> object:
    """The value a stored text compares as, or None when it is no integer or date."""
    text = DEF if stored is None else stored
    if kind == "string":
        return text
    if kind == "int":
        if re.fullmatch(r"[+-]?[0-9]+", text) and -(2**63) <= int(text) < 2**63:
            return int(text)
        return None
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        try:
            return datetime.date.fromisoformat(text)
        except ValueError:
            return None
    return None


def typed_row(keys: Sequence[Key], row: Sequence[Stored]) -> list[object]:
    return [typed(k.kind, v) for k, v in zip(keys, row, strict=True)]


def like(pattern: str, text: str) -> bool:
    """Hive 2.x style when the pattern has a '.', (.* any run, . one character), else SQL
    style (% any run, _ one character, backslash escapes)."""
    regex: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if "." in pattern:
            if pattern[i : i + 2] == ".*":
                regex.append(".*")
                i += 1
            else:
                regex.append("." if c == "." else re.escape(c))
        elif c == "%":
            regex.append(".*")
        elif c == "_":
            regex.append(".")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            regex.append(re.escape(pattern[i]))
        else:
            regex.append(re.escape(c))
        i += 1
    return re.fullmatch("".join(regex), text, re.DOTALL) is not None


OPS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclasses.dataclass(frozen=True)
class Lit:
    value: object  # as the key compares it: str, int or datetime.date
    text: str


@dataclasses.dataclass(frozen=True)
class Leaf:
    """One comparison, rendered as TEXT, true of a typed VALUE when TEST says so."""

    index: int  # the key's
    text: str
    test: Callable[[object], bool]
    wrap: bool = False

    def truth(self, row: Sequence[object]) -> Truth:
        value = row[self.index]
        return None if value is None else self.test(value)


@dataclasses.dataclass(frozen=True)
class Junction:
    word: str  # and / or, in some case
    operands: tuple[Node, ...]
    wrap: bool = False

    def truth(self, row: Sequence[object]) -> Truth:
        truths = [o.truth(row) for o in self.operands]
        decisive = self.word.lower() == "or"
        if decisive in truths:
            return decisive
        return None if None in truths else not decisive


@dataclasses.dataclass(frozen=True)
class Negation:
    word: str
    operand: Node
    wrap: bool = False

    def truth(self, row: Sequence[object]) -> Truth:
        truth = self.operand.truth(row)
        return None if truth is None else not truth


Node = Leaf | Junction | Negation


def render(node: Node) -> str:
    """The filter text; parentheses where precedence needs them, and where WRAP says."""
    if isinstance(node, Leaf):
        return node.text
    if isinstance(node, Negation):
        inner = render(node.operand)
        needs = isinstance(node.operand, Junction) or node.operand.wrap
        return f"{node.word} ({inner})" if needs else f"{node.word} {inner}"
    parts = []
    for o in node.operands:
        needs = o.wrap or (isinstance(o, Junction) and o.word.lower() == "or")
        parts.append(f"({render(o)})" if needs else render(o))
    return f" {node.word} ".join(parts)


# -- strategies ---------------------------------------------------------------------------
# Filters are drawn by plain functions that share DRAW and only use the module-level
# strategies below: strategies built per example cost more than the database does.

STRING_SPECIALS = [DEF, "", "a", "A", "a%c", "a_c", "a.b", "a/b", "it's", 'a"b', " ", "é", "😀"]
STRING_SPECIALS += ["a*", "a?c", "[a]", "a\\c"]
INT_SPECIALS = [
    "0",
    "01",
    "-5",
    "+3",
    "-0",
    "007",
    "00",
    "+0",
    "-007",
    "1e3",
    "",
    " 5",
    "5 ",
    "5\n",
    "x",
    "+",
    "-",
]
INT_SPECIALS += ["٣", "1٣", DEF, str(2**63 - 1), str(-(2**63)), str(2**63), "99999999999999999999"]
DATE_SPECIALS = ["2024-02-29", "2023-02-29", "2024-02-30", "2024-1-5", "0000-01-01", "0001-01-01"]
DATE_SPECIALS += ["9999-12-31", "2024-13-01", "2024-00-10", "", DEF, "2024-01-05x", "2024-01-05\n"]
DATE_SPECIALS += ["2024-01-0٣", "2024/01/05", "99999-1-05"]
ALPHABET = "aAbZ09 .%_/*?[]\\'\"-=\t\néß€😀"
DAYS = st.dates(datetime.date(2023, 12, 28), datetime.date(2024, 1, 6))
TYPES = {
    "string": ["string", "varchar(20)", "char(8)"],
    "int": ["int", "bigint", "smallint", "tinyint"],
    "date": ["date"],
}
STORED: dict[str, st.SearchStrategy[Stored]] = {
    "string": st.none()
    | st.sampled_from(STRING_SPECIALS)
    | st.text("ab*?[%_.\\'\" é", max_size=3)  # few characters: values alike, near misses
    | st.text(ALPHABET, max_size=6),
    "int": st.none() | st.sampled_from(INT_SPECIALS) | st.integers(-12, 12).map(str),
    "date": st.none() | st.sampled_from(DATE_SPECIALS) | DAYS.map(datetime.date.isoformat),
}
SOME_TEXT = st.sampled_from(STRING_SPECIALS) | st.text(ALPHABET, max_size=5)
SOME_INT = st.integers(-12, 12) | st.sampled_from([2**63 - 1, -(2**63)])
PATTERN_TEXT = st.text("ab.*%_\\A?[]é-", max_size=5)
BOOLS = st.booleans()


def pick(draw: st.DrawFn, options: Sequence[T]) -> T:
    return options[draw(st.integers(0, len(options) - 1))]


def quotable(text: str) -> str:
    """TEXT without ' when it also has " (no literal can hold both)."""
    return text.replace("'", "") if '"' in text else text


def quoted(draw: st.DrawFn, text: str) -> str:
    if '"' in text:
        return f"'{text}'"
    if "'" in text:
        return f'"{text}"'
    return pick(draw, ['"{}"', "'{}'"]).format(text)


def keyword(draw: st.DrawFn, word: str) -> str:
    return pick(draw, [word, word.upper(), word.title()])


def literal(draw: st.DrawFn, kind: str, pool: Sequence[object]) -> Lit:
    """A literal for a key of KIND, often one of the values of the table (POOL)."""
    known = [v for v in pool if v is not None]
    from_table = bool(known) and draw(BOOLS)
    if kind == "string":
        text = quotable(str(pick(draw, known) if from_table else draw(SOME_TEXT)))
        return Lit(text, quoted(draw, text))
    if kind == "int":
        number = pick(draw, known) if from_table else draw(SOME_INT)
        assert isinstance(number, int)
        sign = "-" if number < 0 else pick(draw, ["", "+"])
        written = quoted(draw, pick(draw, [str(number), f"{sign}0{abs(number)}"]))
        return Lit(number, pick(draw, [str(number), written]))
    day = pick(draw, known) if from_table else draw(DAYS)
    assert isinstance(day, datetime.date)
    iso, short = day.isoformat(), f"{day.year:04d}-{day.month}-{day.day}"
    forms = [f'"{iso}"', f"'{short}'", f"date '{iso}'", f'DATE "{short}"', iso, f"date {iso}"]
    return Lit(day, pick(draw, forms))


def leaf(draw: st.DrawFn, keys: Sequence[Key], pools: Sequence[Sequence[object]]) -> Leaf:
    index = draw(st.integers(0, len(keys) - 1))
    key, pool = keys[index], pools[index]
    name = pick(draw, [key.name, key.name.upper()])
    wrap = draw(BOOLS)
    form = pick(draw, ["compare", "between", "in"] + (["like"] if key.kind == "string" else []))
    if form == "compare":
        op, value = pick(draw, sorted(OPS)), literal(draw, key.kind, pool)
        compare, right = OPS[op], value.value
        if draw(BOOLS):
            return Leaf(index, f"{value.text} {op} {name}", lambda v: compare(right, v), wrap)
        return Leaf(index, f"{name} {op} {value.text}", lambda v: compare(v, right), wrap)
    negated = draw(BOOLS)
    not_ = keyword(draw, "not") + " " if negated else ""
    if form == "between":
        low, high = literal(draw, key.kind, pool), literal(draw, key.kind, pool)
        between, and_ = keyword(draw, "between"), keyword(draw, "and")
        text = f"{name} {not_}{between} {low.text} {and_} {high.text}"
        lo, hi = low.value, high.value
        return Leaf(index, text, lambda v: (lo <= v <= hi) != negated, wrap)  # type: ignore[operator]
    if form == "in":
        values = [literal(draw, key.kind, pool) for _ in range(draw(st.integers(1, 4)))]
        listed = {v.value for v in values}
        subject = pick(draw, [name, f"({name})"])
        text = f"{subject} {not_}{keyword(draw, 'in')} ({', '.join(v.text for v in values)})"
        return Leaf(index, text, lambda v: (v in listed) != negated, wrap)
    if draw(BOOLS):  # a value of the table with a piece replaced: near misses and hits
        sample = str(pick(draw, [v for v in pool if isinstance(v, str)] or [""]))
        start = draw(st.integers(0, len(sample)))
        end = draw(st.integers(start, min(len(sample), start + 2)))
        middle = pick(draw, ["", "%", "_", ".", ".*", "*", "?", "[", "\\"])
        pattern = pick(draw, ["", ".*", "%"]) + sample[:start] + middle + sample[end:]
    else:
        pattern = draw(PATTERN_TEXT)
    pattern = quotable(pattern)
    text = f"{name} {keyword(draw, 'like')} {quoted(draw, pattern)}"
    return Leaf(index, text, lambda v: like(pattern, v), wrap)  # type: ignore[arg-type]


def node(
    draw: st.DrawFn, keys: Sequence[Key], pools: Sequence[Sequence[object]], depth: int
) -> Node:
    """A random filter: leaves, and/or of 2-3 operands, not; at most DEPTH levels."""
    shape = draw(st.integers(0, 3)) if depth > 0 else 0
    if shape <= 1:
        return leaf(draw, keys, pools)
    if shape == 2:
        operand = node(draw, keys, pools, depth - 1)
        return Negation(keyword(draw, "not"), operand, draw(BOOLS))
    word = keyword(draw, pick(draw, ["and", "or"]))
    count = draw(st.integers(2, 3))
    return Junction(
        word, tuple(node(draw, keys, pools, depth - 1) for _ in range(count)), draw(BOOLS)
    )


@dataclasses.dataclass
class Case:
    keys: list[Key]
    rows: list[tuple[Stored, ...]]
    filters: list[tuple[Node, int | None]]  # and a limit


@st.composite
def cases(draw: st.DrawFn) -> Case:
    count = draw(st.integers(1, 3))
    names = draw(st.permutations(["ds", "hr", "d", "region", "p_1"]))[:count]
    keys = []
    for name in names:
        kind = pick(draw, sorted(TYPES))
        keys.append(Key(name, kind, pick(draw, TYPES[kind])))
    pairs = [(k.name, k.hive_type) for k in keys]
    rows = draw(
        st.lists(
            st.tuples(*(STORED[k.kind] for k in keys)),
            max_size=25,
            unique_by=lambda row: partition_name(pairs, row),
        )
    )
    pools = [[typed(k.kind, row[i]) for row in rows] for i, k in enumerate(keys)]
    chosen = []
    for _ in range(draw(st.integers(1, 4))):
        limit = draw(st.integers(-1, 4)) if draw(st.integers(0, 2)) == 0 else None
        chosen.append((node(draw, keys, pools, depth=3), limit))
    return Case(keys, rows, chosen)


# -- the test -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def database(migrated_url: str) -> Iterator[tuple[sa.Engine, int]]:
    engine = sa.create_engine(migrated_url)
    with engine.begin() as conn:
        db_id = insert_database(conn)
    yield engine, db_id
    engine.dispose()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_the_database_agrees_with_the_reference(
    database: tuple[sa.Engine, int], case: Case
) -> None:
    engine, db_id = database
    pairs = [(k.name, k.hive_type) for k in case.keys]
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            tbl_id = insert_table(conn, db_id, pairs, case.rows)
            with Session(bind=conn) as session:
                for node, limit in case.filters:
                    matching = sorted(
                        partition_name(pairs, row)
                        for row in case.rows
                        if node.truth(typed_row(case.keys, row)) is True
                    )
                    share = len(matching) / len(case.rows) if case.rows else 0
                    event("selects " + ("none" if share == 0 else "all" if share == 1 else "some"))
                    expected = matching[:limit] if limit is not None and limit >= 0 else matching
                    text = render(node)
                    assert selected(session, tbl_id, pairs, text, limit) == expected, text
        finally:
            transaction.rollback()
