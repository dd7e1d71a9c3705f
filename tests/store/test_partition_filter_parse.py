"""The partition filter language (metastore/partition_filter): parsing and like patterns."""

from __future__ import annotations

import datetime

import pytest

from metastore.store.partition_filter import (
    And,
    Between,
    Compare,
    DateValue,
    Everything,
    In,
    IntValue,
    Like,
    Not,
    Or,
    PartitionFilterError,
    StringValue,
    Wildcard,
    like_parts,
    parse_date,
    parse_filter,
    parse_integer,
)

ANY, ONE = Wildcard.ANY_RUN, Wildcard.ONE_CHAR


def s(value: str) -> StringValue:
    return StringValue(value)


def i(value: int) -> IntValue:
    return IntValue(value)


def d(text: str) -> DateValue:
    return DateValue(datetime.date.fromisoformat(text))


# The filters Spark 4.1 sent to HMS 2.3.10 (notes/spark/notes.md §3.5), and their trees.
SPARK_FILTERS = [
    ('ds = "2024-01-01"', Compare("ds", "=", s("2024-01-01"))),
    ('ds < "2024-01-02"', Compare("ds", "<", s("2024-01-02"))),
    ('ds >= "2024-01-02"', Compare("ds", ">=", s("2024-01-02"))),
    ('ds != "2024-01-01"', Compare("ds", "!=", s("2024-01-01"))),
    ('"2024-01-02" < ds', Compare("ds", ">", s("2024-01-02"))),
    ("hr = 1", Compare("hr", "=", i(1))),
    ("hr != 1", Compare("hr", "!=", i(1))),
    ("2 > hr", Compare("hr", "<", i(2))),
    ('(ds) in ("2024-01-01", "2024-01-10")', In("ds", (s("2024-01-01"), s("2024-01-10")))),
    ("(hr) in (1, 12)", In("hr", (i(1), i(12)))),
    ("(hr) not in (1, 2)", In("hr", (i(1), i(2)), negated=True)),
    ("(hr) in (37, 1, 33)", In("hr", (i(37), i(1), i(33)))),
    (
        "(hr >= 1 and hr <= 1001)",
        And((Compare("hr", ">=", i(1)), Compare("hr", "<=", i(1001)))),
    ),
    (
        '(d >= "2024-01-01" and d <= "2024-01-15")',
        And((Compare("d", ">=", s("2024-01-01")), Compare("d", "<=", s("2024-01-15")))),
    ),
    ('ds like "2024-01.*"', Like("ds", s("2024-01.*"))),
    ('ds like ".*-01"', Like("ds", s(".*-01"))),
    ('ds like ".*01-0.*"', Like("ds", s(".*01-0.*"))),
    ('s like "a*.*"', Like("s", s("a*.*"))),
    (
        'ds = "2024-01-01" and hr = 1',
        And((Compare("ds", "=", s("2024-01-01")), Compare("hr", "=", i(1)))),
    ),
    (
        '(ds = "2024-01-01" or hr = 3)',
        Or((Compare("ds", "=", s("2024-01-01")), Compare("hr", "=", i(3)))),
    ),
    (
        '((ds = "2024-01-01" and hr = 1) or (ds = "2024-01-02" and hr = 3))',
        Or(
            (
                And((Compare("ds", "=", s("2024-01-01")), Compare("hr", "=", i(1)))),
                And((Compare("ds", "=", s("2024-01-02")), Compare("hr", "=", i(3)))),
            )
        ),
    ),
    (
        'ds > "2024-01-01" and ds < "2024-01-10" and (hr) in (1, 3)',
        And(
            (
                Compare("ds", ">", s("2024-01-01")),
                Compare("ds", "<", s("2024-01-10")),
                In("hr", (i(1), i(3))),
            )
        ),
    ),
    ('ds = "it\'s"', Compare("ds", "=", s("it's"))),
    ("ds = 'a\"b'", Compare("ds", "=", s('a"b'))),
    ('ds = "a\\b"', Compare("ds", "=", s("a\\b"))),
    ('d = "2024-01-15"', Compare("d", "=", s("2024-01-15"))),
    (
        'dt > "2024-01-01" and hr < 3',
        And((Compare("dt", ">", s("2024-01-01")), Compare("hr", "<", i(3)))),
    ),
]


@pytest.mark.parametrize(("text", "tree"), SPARK_FILTERS, ids=[t for t, _ in SPARK_FILTERS])
def test_the_filters_spark_sends(text: str, tree: object) -> None:
    assert parse_filter(text) == tree


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        # both quote styles; no escapes: the text between the quotes is the value
        ("ds = 'a'", Compare("ds", "=", s("a"))),
        ("ds = ''", Compare("ds", "=", s(""))),
        ("ds = 'a\\'", Compare("ds", "=", s("a\\"))),
        ('ds = " a  b "', Compare("ds", "=", s(" a  b "))),
        ('ds = "été=x/y%z"', Compare("ds", "=", s("été=x/y%z"))),
        ('ds = "and or not ("', Compare("ds", "=", s("and or not ("))),
        # every operator; <> is !=
        ('ds <> "a"', Compare("ds", "!=", s("a"))),
        ('ds <= "a"', Compare("ds", "<=", s("a"))),
        ('ds > "a"', Compare("ds", ">", s("a"))),
        # literal first, mirrored
        ('"a" = ds', Compare("ds", "=", s("a"))),
        ('"a" <> ds', Compare("ds", "!=", s("a"))),
        ("1 <= hr", Compare("hr", ">=", i(1))),
        ("1 >= hr", Compare("hr", "<=", i(1))),
        ("-3 < hr", Compare("hr", ">", i(-3))),
        ("date '2024-01-15' < d", Compare("d", ">", d("2024-01-15"))),
        # integers
        ("hr = -5", Compare("hr", "=", i(-5))),
        ("hr = 007", Compare("hr", "=", i(7))),
        ("hr = 9223372036854775807", Compare("hr", "=", i(2**63 - 1))),
        ("hr = -9223372036854775808", Compare("hr", "=", i(-(2**63)))),
        ('hr = "1"', Compare("hr", "=", s("1"))),
        # dates: date '...' (either quotes), unquoted as in Filter.g, with or without "date"
        ("d = date '2024-01-15'", Compare("d", "=", d("2024-01-15"))),
        ('d = DATE "2024-1-5"', Compare("d", "=", d("2024-01-05"))),
        ("d = 2024-01-15", Compare("d", "=", d("2024-01-15"))),
        ("d = date 2024-01-15", Compare("d", "=", d("2024-01-15"))),
        ('date = "x"', Compare("date", "=", s("x"))),
        ("date = date '2024-01-15'", Compare("date", "=", d("2024-01-15"))),
        ("(date) in (1)", In("date", (i(1),))),
        # keywords and key names in any case
        ('DS = "a" AnD Hr = 1', And((Compare("DS", "=", s("a")), Compare("Hr", "=", i(1))))),
        ('ds LIKE "a.*"', Like("ds", s("a.*"))),
        ("hr BETWEEN 1 AND 3", Between("hr", i(1), i(3))),
        ("(hr) NOT IN (1)", In("hr", (i(1),), negated=True)),
        # in and between
        ("hr in (1)", In("hr", (i(1),))),
        ("hr not in (1, -2)", In("hr", (i(1), i(-2)), negated=True)),
        ("ds in (\"a\", 'b')", In("ds", (s("a"), s("b")))),
        ("(hr)in(1,2)", In("hr", (i(1), i(2)))),
        ('hr between 1 and "3"', Between("hr", i(1), s("3"))),
        ("hr not between -1 and 3", Between("hr", i(-1), i(3), negated=True)),
        (
            'hr between 1 and 3 and ds = "a"',
            And((Between("hr", i(1), i(3)), Compare("ds", "=", s("a")))),
        ),
        # precedence: not, then and, then or
        (
            'a = "1" or b = "2" and c = "3"',
            Or(
                (
                    Compare("a", "=", s("1")),
                    And((Compare("b", "=", s("2")), Compare("c", "=", s("3")))),
                )
            ),
        ),
        (
            'a = "1" and b = "2" or c = "3"',
            Or(
                (
                    And((Compare("a", "=", s("1")), Compare("b", "=", s("2")))),
                    Compare("c", "=", s("3")),
                )
            ),
        ),
        (
            'not a = "1" and b = "2"',
            And((Not(Compare("a", "=", s("1"))), Compare("b", "=", s("2")))),
        ),
        (
            'not (a = "1" or b = "2")',
            Not(Or((Compare("a", "=", s("1")), Compare("b", "=", s("2"))))),
        ),
        ("not not hr = 1", Not(Not(Compare("hr", "=", i(1))))),
        ("not (hr) in (1)", Not(In("hr", (i(1),)))),
        ("((((hr = 1))))", Compare("hr", "=", i(1))),
        # whitespace
        ("hr=1", Compare("hr", "=", i(1))),
        ("\t hr\n=\r1 ", Compare("hr", "=", i(1))),
        # identifiers as in Filter.g: letters, digits, underscores
        ("_c0 = 1", Compare("_c0", "=", i(1))),
        ("1x = 1", Compare("1x", "=", i(1))),
    ],
)
def test_parse(text: str, tree: object) -> None:
    assert parse_filter(text) == tree


@pytest.mark.parametrize("text", ["", " ", "\t\n\r "])
def test_an_empty_filter_selects_everything(text: str) -> None:
    assert parse_filter(text) == Everything()


@pytest.mark.parametrize(
    "text",
    [
        'ds == "a"',
        "ds = a",
        "ds is null",
        'ds = "a" and',
        'ds = "a" or',
        'and ds = "a"',
        '(ds = "a"',
        'ds = "a")',
        '((ds = "a")',
        "()",
        'ds = "a',
        "ds = 'a",
        "ds = 'a\"",
        "hr = 1.5",
        "hr = 1.0",
        "hr = 1e3",
        "hr = -",
        "hr = - 1",
        "hr = -1a",
        "hr = 99999999999999999999",
        "hr = 9223372036854775808",
        "ds",
        '= "a"',
        '"a"',
        '"a" = "b"',
        "hr = hr",
        '"a" like ds',
        'ds not = "a"',
        'ds not like "a"',
        "not",
        "hr in ()",
        "hr in (1,)",
        "hr in 1",
        "(hr) in ()",
        "(hr) between 1 and 2",
        "hr between 1",
        "hr between 1 or 2",
        'ds = "a" "b"',
        "ds = 'a''b'",
        "ds like",
        "d = date 'x'",
        "d = date '2024-02-30'",
        "d = 2024-02-30",
        "d = date",
        'ds = "a";',
        'ds = "a" or or ds = "b"',
        'ds = "a" !',
        'ds ! "a"',
        "hr = 1 hr = 2",
        'ds = "a"\u00a0',
        "ds.x = 1",
        "`ds` = 1",
        "(" * 101 + "hr = 1" + ")" * 101,
        "not " * 101 + "hr = 1",
    ],
)
def test_bad_filters_are_parse_errors(text: str) -> None:
    with pytest.raises(PartitionFilterError) as error:
        parse_filter(text)
    assert str(error.value).startswith("Error parsing partition filter")


def test_a_parse_error_says_where() -> None:
    with pytest.raises(PartitionFilterError, match=r"'\.' at character 7 of the filter"):
        parse_filter("hr = 1.5")
    with pytest.raises(PartitionFilterError, match=r"expected a quoted string.*found 'a'"):
        parse_filter("ds = a")


def test_deep_nesting_within_the_limit_parses() -> None:
    assert parse_filter("(" * 100 + "hr = 1" + ")" * 100) == Compare("hr", "=", i(1))
    tree = parse_filter("not " * 100 + "hr = 1")
    for _ in range(100):
        assert isinstance(tree, Not)
        tree = tree.operand
    assert tree == Compare("hr", "=", i(1))


def test_long_chains_stay_flat() -> None:
    tree = parse_filter(" or ".join(f"hr = {n}" for n in range(2000)))
    assert isinstance(tree, Or)
    assert len(tree.operands) == 2000


@pytest.mark.parametrize(
    ("pattern", "parts"),
    [
        # Hive 2.x/3.x style (a "." in the pattern): .* and . are wildcards, the rest literal
        ("2024-01.*", ["2024-01", ANY]),
        (".*-01", [ANY, "-01"]),
        (".*01-0.*", [ANY, "01-0", ANY]),
        ("a.c", ["a", ONE, "c"]),
        ("a..*", ["a", ONE, ANY]),
        ("a.**", ["a", ANY, "*"]),
        ("a%.*", ["a%", ANY]),
        ("a_.*", ["a_", ANY]),
        ("a\\b.*", ["a\\b", ANY]),
        ("a*.*", ["a*", ANY]),
        ("2024.01.*", ["2024", ONE, "01", ANY]),
        # Hive 4 (SQL) style: % and _ are wildcards, backslash escapes
        ("a%", ["a", ANY]),
        ("%a%", [ANY, "a", ANY]),
        ("a_c", ["a", ONE, "c"]),
        ("a\\%b\\_c\\\\", ["a%b_c\\"]),
        ("a\\", ["a\\"]),
        # no wildcard at all
        ("abc", ["abc"]),
        ("", []),
    ],
)
def test_like_parts(pattern: str, parts: list[object]) -> None:
    assert like_parts(pattern) == parts


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("0", 0),
        ("01", 1),
        ("-5", -5),
        ("+3", 3),
        ("-0", 0),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("00009223372036854775807", 2**63 - 1),
        ("9223372036854775808", None),
        ("-9223372036854775809", None),
        ("1e3", None),
        ("", None),
        (" 5", None),
        ("5 ", None),
        ("5\n", None),
        ("+", None),
        ("+-1", None),
        ("1.0", None),
        ("٣", None),
        ("__HIVE_DEFAULT_PARTITION__", None),
    ],
)
def test_what_counts_as_an_integer(text: str, number: int | None) -> None:
    assert parse_integer(text) == number


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("2024-01-15", datetime.date(2024, 1, 15)),
        ("2024-1-5", datetime.date(2024, 1, 5)),
        ("2024-02-29", datetime.date(2024, 2, 29)),
        ("0001-01-01", datetime.date(1, 1, 1)),
        ("2023-02-29", None),
        ("2024-02-30", None),
        ("2024-13-01", None),
        ("0000-01-01", None),
        ("24-01-01", None),
        ("2024-01-015", None),
        ("2024-01-15 ", None),
        ("2024/01/15", None),
        ("__HIVE_DEFAULT_PARTITION__", None),
    ],
)
def test_what_counts_as_a_date_literal(text: str, day: datetime.date | None) -> None:
    assert parse_date(text) == day
