"""Partition filters evaluated by the database (metastore/store/partition_filter), on
SQLite and PostgreSQL: HMS 2.3.10's observed answers, the values that are no integers or
dates, errors, order and limits, and 10,000 partitions in one statement."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import PG_ADMIN_URL, _postgres_or_skip
from filter_tables import insert_database, insert_table, partition_name, partition_names, selected
from sqlalchemy.orm import Session

from metastore.store import migrate
from metastore.store import models as m
from metastore.store.partition_filter import PartitionFilterError, filter_sql, parse_filter
from metastore.store.partition_filter.queries import (
    count_partitions_by_filter,
    partitions_by_filter,
)

DEF = "__HIVE_DEFAULT_PARTITION__"

# HMS 2.3.10's probe table (notes/spark/notes.md §4): p(ds string, hr int, d date).
PROBE_KEYS = [("ds", "string"), ("hr", "int"), ("d", "date")]
PROBE = [
    ("a", "1", "2024-01-01"),
    ("b", "2", "2024-01-15"),
    ("a.b", "10", "2024-02-01"),
    (DEF, DEF, DEF),
    ("A", "-1", "2023-12-31"),
    ("a%c", "3", "2024-01-02"),
    ("a_c", "4", "2024-01-03"),
]


@pytest.fixture(scope="module")
def engine(migrated_url: str) -> Iterator[sa.Engine]:
    eng = sa.create_engine(migrated_url)
    yield eng
    eng.dispose()


@pytest.fixture
def conn(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection in a transaction that is rolled back after the test."""
    with engine.connect() as connection:
        transaction = connection.begin()
        yield connection
        transaction.rollback()


@pytest.fixture
def session(conn: sa.Connection) -> Iterator[Session]:
    with Session(bind=conn) as s:
        yield s


@pytest.fixture
def probe(conn: sa.Connection) -> int:
    return insert_table(conn, insert_database(conn), PROBE_KEYS, PROBE)


def ds_of(names: list[str]) -> list[str]:
    """The ds values of partition names, in their order (names are escaped: %25 is %)."""
    return [n.split("/")[0].removeprefix("ds=").replace("%25", "%") for n in names]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # What HMS 2.3.10 answered (§3.5, §4); the order is the partition names' order.
        ('ds like "a.*"', ["a%c", "a", "a.b", "a_c"]),
        ('ds like "a.c"', ["a%c", "a_c"]),
        ('ds like "a..*"', ["a%c", "a.b", "a_c"]),
        ('ds like "A.*"', ["A"]),
        ('not ds like "a.*"', ["A", DEF, "b"]),
        ('ds like "a%.*"', ["a%c"]),  # a % next to .* is literal, as in HMS 2.3
        ('d = "2024-1-15"', ["b"]),
        ("hr > 1", ["a%c", "a.b", "a_c", "b"]),
        ('ds != "a"', ["A", DEF, "a%c", "a.b", "a_c", "b"]),
        ('ds < "b"', ["A", DEF, "a%c", "a", "a.b", "a_c"]),
        ('ds > "a"', ["a%c", "a.b", "a_c", "b"]),
        (f'ds = "{DEF}"', [DEF]),
        ('ds = ""', []),
        ("hr != 1", ["A", "a%c", "a.b", "a_c", "b"]),
        ("hr < 100", ["A", "a%c", "a", "a.b", "a_c", "b"]),
        ("(hr) in (1, 3)", ["a%c", "a"]),
        ("(hr) not in (1, 3)", ["A", "a.b", "a_c", "b"]),
        ('d != "2024-01-15"', ["A", "a%c", "a", "a.b", "a_c"]),
        ('DS = "a"', ["a"]),
        ("ds = 'a' and HR = 1 AND d = \"2024-01-01\"", ["a"]),
        ("1 = hr", ["a"]),
        ('"a" = ds', ["a"]),
        ("hr between 1 and 3", ["a%c", "a", "b"]),
        ("", ["A", DEF, "a%c", "a", "a.b", "a_c", "b"]),
        # Hive 4 (SQL) patterns: HMS 2.3 read % and _ literally and answered [] and [a_c]
        ('ds like "a%"', ["a%c", "a", "a.b", "a_c"]),
        ('ds like "a_c"', ["a%c", "a_c"]),
        ('ds like "a\\_c"', ["a_c"]),
        # the rest of the language
        ("hr not between 2 and 4", ["A", "a", "a.b"]),
        ("not hr = 1", ["A", "a%c", "a.b", "a_c", "b"]),
        (f'not ds = "{DEF}"', ["A", "a%c", "a", "a.b", "a_c", "b"]),
        ("(ds = \"a\" or hr = 10) and d < date '2024-02-01'", ["a"]),
        ('ds = "b" or ds = "a" and hr = 2', ["b"]),
        ('d >= 2024-01-02 and d <= date "2024-1-3"', ["a%c", "a_c"]),
        ("(d) in (\"2024-01-01\", date '2024-01-15')", ["a", "b"]),
        ('d between "2024-01-01" and "2024-01-02"', ["a%c", "a"]),
        ('ds between "a" and "a.b"', ["a%c", "a", "a.b"]),
        ('(ds) not in ("a", "b")', ["A", DEF, "a%c", "a.b", "a_c"]),
    ],
)
def test_probe_table(session: Session, probe: int, text: str, expected: list[str]) -> None:
    # Names sort byte by byte: ds=A < ds=__HIVE... < ds=a%25c < ds=a.b < ds=a/hr... < ds=a_c
    in_name_order = sorted(
        (row for row in PROBE if row[0] in expected),
        key=lambda row: partition_name(PROBE_KEYS, row),
    )
    assert ds_of(selected(session, probe, PROBE_KEYS, text)) == [row[0] for row in in_name_order]
    assert sorted(expected) == sorted(row[0] for row in in_name_order)


LIKE_VALUES = ["a*c", "a?c", "[a]", "a%c", "a_c", "a\\c", "abc", "a.c", "ABC", "ac", "a/c", "aéc"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        # SQL style (no "."): GLOB's and LIKE's own special characters are literal
        ("a*c", ["a*c"]),
        ("a?c", ["a?c"]),
        ("[a]", ["[a]"]),
        ("a\\%c", ["a%c"]),
        ("a\\_c", ["a_c"]),
        ("%\\\\%", ["a\\c"]),
        ("a_c", ["a*c", "a?c", "a%c", "a_c", "a\\c", "abc", "a.c", "a/c", "aéc"]),
        ("a%", ["a*c", "a?c", "a%c", "a_c", "a\\c", "abc", "a.c", "ac", "a/c", "aéc"]),
        ("A%", ["ABC"]),
        # Hive 2.x style: only . and .* are wildcards; backslash is literal
        (".*[a].*", ["[a]"]),
        ("a\\c.*", ["a\\c"]),
        ("a.*?.*", ["a?c"]),
        ("a%.*", ["a%c"]),
        ("a_.*", ["a_c"]),
        ("a.c", ["a*c", "a?c", "a%c", "a_c", "a\\c", "abc", "a.c", "a/c", "aéc"]),
        ("..", ["ac"]),
    ],
)
def test_like_pattern_characters(
    session: Session, conn: sa.Connection, pattern: str, expected: list[str]
) -> None:
    keys = [("s", "string")]
    tbl = insert_table(conn, insert_database(conn), keys, [(v,) for v in LIKE_VALUES])
    names = selected(session, tbl, keys, f"s like '{pattern}'")
    assert names == sorted(partition_name(keys, (v,)) for v in expected)


def test_max_parts_limits_after_ordering(session: Session, probe: int) -> None:
    assert ds_of(selected(session, probe, PROBE_KEYS, "", limit=2)) == ["A", DEF]
    assert ds_of(selected(session, probe, PROBE_KEYS, "hr >= 1", limit=3)) == ["a%c", "a.b", "a"]
    assert selected(session, probe, PROBE_KEYS, "", limit=0) == []
    assert len(selected(session, probe, PROBE_KEYS, "", limit=-1)) == len(PROBE)
    assert len(selected(session, probe, PROBE_KEYS, "", limit=100)) == len(PROBE)


INT_VALUES = {
    "1": 1,
    "01": 1,
    "-5": -5,
    "+3": 3,
    "-0": 0,
    "00": 0,
    "+0": 0,
    "-007": -7,
    "9223372036854775807": 2**63 - 1,
    "-9223372036854775808": -(2**63),
    # no integers:
    "1e3": None,
    "": None,
    " 5": None,
    "5 ": None,
    "1.0": None,
    "+": None,
    "1٣": None,
    "9223372036854775808": None,
    "99999999999999999999999": None,
    DEF: None,
}


@pytest.mark.parametrize("hive_type", ["tinyint", "smallint", "int", "bigint", "INT"])
def test_integral_keys_compare_numbers_and_skip_what_is_no_integer(
    session: Session, conn: sa.Connection, hive_type: str
) -> None:
    keys = [("i", hive_type)]
    values = list(INT_VALUES)
    tbl = insert_table(conn, insert_database(conn), keys, [(v,) for v in values])
    numbers = {v: n for v, n in INT_VALUES.items() if n is not None}

    def expect(test: Any) -> list[str]:
        return sorted(f"i={v}" for v, n in numbers.items() if test(n))

    def got(text: str) -> list[str]:
        return sorted(n.replace("%2B", "+") for n in selected(session, tbl, keys, text))

    assert got("i = 1") == expect(lambda n: n == 1) == ["i=01", "i=1"]
    assert got('i = "+1"') == ["i=01", "i=1"]
    assert got("i != 1") == expect(lambda n: n != 1)
    assert got("i >= -5") == expect(lambda n: n >= -5)
    assert got("i < 0") == expect(lambda n: n < 0)
    assert got("(i) not in (1, 3)") == expect(lambda n: n not in (1, 3))
    assert got("i not between -1 and 1") == expect(lambda n: not -1 <= n <= 1)
    assert got("not i = 1") == expect(lambda n: n != 1)
    # = and in are also answered from the stored text (the index copy): every spelling
    assert got("i = 0") == expect(lambda n: n == 0) == ["i=+0", "i=-0", "i=00"]
    assert got("(i) in (3, -7, 0)") == expect(lambda n: n in (3, -7, 0))
    assert got("i = 3 and i = 3") == ["i=+3"]
    assert got("i = 9223372036854775807") == ["i=9223372036854775807"]
    assert got("i <= -9223372036854775808") == ["i=-9223372036854775808"]
    assert len(got("")) == len(values)


def test_date_keys_compare_days_and_skip_what_is_no_date(
    session: Session, conn: sa.Connection
) -> None:
    keys = [("d", "date")]
    days = ["2024-01-15", "2024-02-29", "0001-01-01", "9999-12-31", "2023-12-31"]
    no_days = ["2024-1-5", "2024-02-30", "2023-02-29", "2024-13-01", "0000-01-01", "", "x", DEF]
    no_days += ["2024-01-0٣", "2024/01/05", "2024-01-05\n"]
    tbl = insert_table(conn, insert_database(conn), keys, [(v,) for v in [*days, *no_days]])

    def got(text: str) -> list[str]:
        return [n.removeprefix("d=") for n in selected(session, tbl, keys, text)]

    assert got('d != "2024-01-15"') == ["0001-01-01", "2023-12-31", "2024-02-29", "9999-12-31"]
    assert got('d > "2024-1-15"') == ["2024-02-29", "9999-12-31"]
    assert got("d <= 2023-12-31") == ["0001-01-01", "2023-12-31"]
    assert got('(d) not in ("2024-01-15")') == got('d != "2024-01-15"')
    assert got('not d between "2000-01-01" and "2030-01-01"') == ["0001-01-01", "9999-12-31"]
    assert len(got("")) == len(days) + len(no_days)


def test_a_null_or_missing_value_reads_as_the_default_partition(
    session: Session, conn: sa.Connection
) -> None:
    keys = [("s", "string"), ("i", "int"), ("d", "date")]
    tbl = insert_table(
        conn, insert_database(conn), keys, [(None, None, None), ("x", "1", "2024-01-01")]
    )
    kv = m.PartitionKeyValue.__table__
    part_id = conn.scalar(
        sa.select(m.Partition.PART_ID).where(
            m.Partition.TBL_ID == tbl, m.Partition.PART_NAME.like("s=x/%")
        )
    )
    conn.execute(sa.delete(kv).where(kv.c.PART_ID == part_id, kv.c.INTEGER_IDX == 0))
    default = f"s={DEF}/i={DEF}/d={DEF}"
    missing = "s=x/i=1/d=2024-01-01"  # its value of s is missing
    assert selected(session, tbl, keys, f's = "{DEF}"') == [default, missing]
    assert selected(session, tbl, keys, 's != "x"') == [default, missing]
    assert selected(session, tbl, keys, "i != 5 or d != '2000-01-01'") == [missing]
    assert selected(session, tbl, keys, "not i = 1") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('x = "a"', "Specified key <x> is not a partitioning key for the table"),
        ("V = 1", "Specified key <V> is not a partitioning key for the table"),
        ('hr = "x"', "Partition key hr is an integer: 'x' is not an integer"),
        (f'hr = "{DEF}"', f"Partition key hr is an integer: '{DEF}' is not an integer"),
        ("hr = date '2024-01-01'", "Partition key hr is an integer: date '2024-01-01'"),
        ("ds = 5", "Partition key ds is a string: compare it with a quoted string, not 5"),
        ("(ds) in ('a', 5)", "Partition key ds is a string: compare it with a quoted string"),
        ("ds = 2024-01-01", "Partition key ds is a string"),
        ('d = "2024-02-30"', "Partition key d is a date: '2024-02-30' is not a date"),
        ('d = "x"', "Partition key d is a date: 'x' is not a date"),
        ("d = 20240101", "Partition key d is a date: 20240101 is not a date"),
        ('hr like "1.*"', "'like' needs a string partition key; hr is not"),
        ("d like '2024.*'", "'like' needs a string partition key; d is not"),
        ("ds like 1", "'like' needs a quoted pattern, not 1"),
        ("x between 1 and 2", "Specified key <x>"),
        ("dec = 1", "Filtering on partition key dec of type decimal(10,2) is not supported"),
        ("ts = '2024-01-01 00:00:00'", "Filtering on partition key ts of type timestamp is not"),
    ],
)
def test_errors_other_than_parsing(text: str, message: str) -> None:
    keys = [*PROBE_KEYS, ("dec", "decimal(10,2)"), ("ts", "timestamp")]
    for dialect in ("sqlite", "postgresql"):
        with pytest.raises(PartitionFilterError, match="^" + re.escape(message)) as e:
            filter_sql(parse_filter(text), keys, dialect)
        assert not str(e.value).startswith("Error parsing")


def test_keys_of_other_types_do_not_matter_until_named(
    session: Session, conn: sa.Connection
) -> None:
    keys = [("ds", "varchar(10)"), ("dec", "decimal(10,2)"), ("c", "char(3)")]
    tbl = insert_table(conn, insert_database(conn), keys, [("a", "1.5", "x"), ("b", "2.0", "y")])
    assert selected(session, tbl, keys, 'ds = "a" or c = "y"') == [
        "ds=a/dec=1.5/c=x",
        "ds=b/dec=2.0/c=y",
    ]


@pytest.mark.postgres
def test_byte_order_whatever_the_database_collation() -> None:
    """On a PostgreSQL database whose collation is ICU's en-US ("a" < "B"), strings still
    compare and sort byte by byte ("B" < "a"), as on SQLite and in HMS."""
    admin = _postgres_or_skip()
    name = f"colstats_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as c:
        c.exec_driver_sql(
            f'CREATE DATABASE "{name}" TEMPLATE template0 LOCALE_PROVIDER icu '
            "ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
        )
    url = sa.make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    try:
        migrate.upgrade(url)
        engine = sa.create_engine(url)
        with engine.connect() as conn, Session(bind=conn) as s:
            keys = [("s", "string"), ("i", "int")]
            rows = [("a", "1"), ("B", "-2"), ("é", "x"), ("Z", "٣")]
            tbl = insert_table(conn, insert_database(conn), keys, rows)
            assert conn.scalar(sa.text("SELECT 'a' < 'B'")) is True  # the collation is en-US

            def got(text: str) -> list[str]:
                return [n.split("/")[0] for n in selected(s, tbl, keys, text)]

            assert got("") == ["s=B", "s=Z", "s=a", "s=é"]
            assert got('s < "a"') == ["s=B", "s=Z"]
            assert got('s between "B" and "a"') == ["s=B", "s=Z", "s=a"]
            assert got('s like "a.*"') == ["s=a"]
            assert got("i >= -2") == ["s=B", "s=a"]  # "٣" is no (ASCII) integer
        engine.dispose()
    finally:
        with admin.connect() as c:
            c.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


# -- 10,000 partitions ------------------------------------------------------------------------


def test_ten_thousand_partitions_in_one_statement_through_the_primary_key(
    session: Session, conn: sa.Connection
) -> None:
    keys = [("ds", "string"), ("hr", "int")]
    rows = [
        (f"2024-{1 + n // 2800:02d}-{1 + n // 100 % 28:02d}", str(n % 100)) for n in range(10_000)
    ]
    tbl = insert_table(conn, insert_database(conn), keys, rows)
    # Plans are made with statistics, as the server gathers them on both databases.
    for analyzed in ("PARTITIONS", "PARTITION_KEY_VALS"):  # one table a statement on SQLite
        conn.exec_driver_sql(f'ANALYZE "{analyzed}"')
    flt = parse_filter('ds >= "2024-02-01" and ds < "2024-03-01" and (hr) in (37, 1, 33)')
    expected = sorted(
        f"ds={ds}/hr={hr}"
        for ds, hr in rows
        if "2024-02" <= ds < "2024-03" and hr in ("37", "1", "33")
    )

    statements: list[tuple[str, Any]] = []

    def count(_c: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        statements.append((statement, parameters))

    sa.event.listen(conn, "before_cursor_execute", count)
    try:
        found = partition_names(session, partitions_by_filter(session, tbl, keys, flt))
        assert found == expected
        assert len(statements) == 1
        assert count_partitions_by_filter(session, tbl, keys, flt) == len(expected) > 0
        assert len(statements) == 2
        assert count_partitions_by_filter(session, tbl, keys, parse_filter("")) == 10_000
        assert len(statements) == 3
    finally:
        sa.event.remove(conn, "before_cursor_execute", count)

    statement, parameters = statements[0]
    if conn.dialect.name == "sqlite":
        plan = [
            row[3] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
        ]
        # Both keys joined for the condition, and the first looked up for the indexable
        # copy of its comparisons (ds's range).
        key_value_steps = [step for step in plan if "PARTITION_KEY_VALS" in step]
        assert len(key_value_steps) == 3, plan
        for step in key_value_steps:  # a lookup, never a SCAN of the table per partition:
            # by the primary key, or by the key-value index for the range of ds
            assert step.startswith("SEARCH") and (
                "INDEX sqlite_autoindex_PARTITION_KEY_VALS" in step
                or "INDEX PARTITION_KEY_VALS_INTEGER_IDX_PART_KEY_VAL_IDX" in step
            ), plan
        # An integral key's list starts from the key-value index too (its canonical
        # spellings, and the prefixes of the others), not from every partition.
        hours = partitions_by_filter(session, tbl, keys, parse_filter("(hr) in (37, 1, 33)"))
        sa.event.listen(conn, "before_cursor_execute", count)
        try:
            assert len(partition_names(session, hours)) == 300
        finally:
            sa.event.remove(conn, "before_cursor_execute", count)
        statement, parameters = statements[-1]
        plan = [
            row[3] for row in conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
        ]
        assert not [step for step in plan if step.startswith("SCAN")], plan
        assert any("PART_KEY_VAL=?" in step for step in plan), plan
    else:
        explained = conn.exec_driver_sql(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + statement, parameters
        ).scalar_one()
        nodes = list(_plan_nodes(explained[0]["Plan"]))
        scans = [n for n in nodes if n.get("Relation Name") == "PARTITION_KEY_VALS"]
        assert len(scans) == 3, nodes  # as on SQLite: two joins, one copy
        for scan in scans:  # by its primary key, or one pass for the whole query (a hash join)
            uses_key = (
                scan["Node Type"].startswith("Index")
                and scan["Index Name"] == "PARTITION_KEY_VALS_PK"
            )
            assert uses_key or scan["Actual Loops"] == 1, scan
        # The partitions are found by their ids, those the copy selects, not by a pass
        # over all of them: PostgreSQL turned the semi-join into a hash join over all
        # (a week of one hour: 4.6 against 1.6 ms).
        partitions = [n for n in nodes if n.get("Relation Name") == "PARTITIONS"]
        assert partitions and all(n["Node Type"].startswith("Index") for n in partitions), nodes


def _plan_nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)


def test_a_filter_repeated_for_the_same_keys_is_built_once() -> None:
    """The SQL of a filter is kept for its text's tree and the table's keys and types: a
    planner's repeated filter is not built again, another table's keys get their own."""
    keys = [("ds", "string"), ("hr", "int")]
    day = filter_sql(parse_filter('ds = "2024-01-01" and hr = 3'), keys, "postgresql")
    again = filter_sql(parse_filter('ds = "2024-01-01" and hr = 3'), list(keys), "postgresql")
    assert again is day
    assert filter_sql(parse_filter('ds = "2024-01-01" and hr = 3'), keys, "sqlite") is not day
    wider = [("ds", "string"), ("hr", "bigint")]
    other = filter_sql(parse_filter('ds = "2024-01-01" and hr = 3'), wider, "postgresql")
    assert other is not day
    with pytest.raises(PartitionFilterError, match="hr"):
        filter_sql(parse_filter('hr = "x"'), keys, "postgresql")
    with pytest.raises(PartitionFilterError, match="hr"):  # a failure is not kept either
        filter_sql(parse_filter('hr = "x"'), keys, "postgresql")
