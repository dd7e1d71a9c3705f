"""metastore.store.lists: a list of ids or text values is one bound parameter (JSON on
SQLite, an array's text on PostgreSQL) that `among`, `any_of` and `among_few` read, so that
one statement serves every length; the values come back as they were, whatever characters
they hold, and an empty list finds nothing."""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import pytest
import sqlalchemy as sa
from core_builders import rolled_back

from metastore.store import lists
from metastore.store import models as m
from metastore.store.driver import driver_rows

AWKWARD = ['a"b', "back\\slash", "{x,y}", "NULL", " spaced ", "ü/ds=2024", "", "it's", "%_"]


# -- the parameter's value -------------------------------------------------------------------


def test_values_are_sorted_json_on_sqlite_and_an_array_on_postgresql() -> None:
    assert lists.values("sqlite", [3, 1, 2]) == "[1, 2, 3]"
    assert json.loads(lists.values("sqlite", ["b", 'a"'])) == ['a"', "b"]
    assert lists.values("sqlite", []) == "[]"
    assert lists.values("postgresql", [3, 1, 2]) == "{1,2,3}"
    assert lists.values("postgresql", ["b", "a"]) == '{"a","b"}'
    assert lists.values("postgresql", []) == "{}"
    # Generators are taken as they come.
    assert lists.values("postgresql", (i for i in (2, 1))) == "{1,2}"


@pytest.mark.parametrize(
    ("items", "text"),
    [
        ([], "{}"),
        ([None], "{NULL}"),
        ([0, -1, 2**63 - 1, -(2**63)], "{0,-1,9223372036854775807,-9223372036854775808}"),
        ([True, False], "{1,0}"),  # as numbers, not True
        ([0.1 + 0.2, -2.5, 5e-324], "{0.30000000000000004,-2.5,5e-324}"),
        ([math.inf, -math.inf, math.nan], "{Infinity,-Infinity,NaN}"),
        (
            [b"", b"\x00\xff", bytearray(b"{,}"), memoryview(b"a")],
            '{"\\\\x","\\\\x00ff","\\\\x7b2c7d","\\\\x61"}',
        ),
        (['a"b', "c\\d", "{x,y}", "NULL", ""], '{"a\\"b","c\\\\d","{x,y}","NULL",""}'),
        (["b", None, "a"], '{"b",NULL,"a"}'),  # in their order, not sorted
    ],
)
def test_array_text(items: list[Any], text: str) -> None:
    assert lists.array_text(items) == text


def test_few_values_is_the_id_alone_or_the_list() -> None:
    assert lists.few_values("postgresql", [7]) == "7"
    assert lists.few_values("sqlite", [True]) == "1"
    assert lists.few_values("postgresql", [9, 7]) == "{7,9}"
    assert lists.few_values("sqlite", [9, 7]) == "[7, 9]"


# -- on the database ---------------------------------------------------------------------------


DBS = m.Database.__table__


@functools.cache
def _by_ids(dialect: str, kind: str, count: int = 0) -> sa.Select[int]:
    condition = {
        "among": lists.among(dialect, "ids"),
        "any_of": lists.any_of(dialect, "ids"),
        "among_few": lists.among_few(dialect, "ids", count),
    }[kind]
    return sa.select(DBS.c.DB_ID).where(condition(DBS.c.DB_ID)).order_by(DBS.c.DB_ID)


@functools.cache
def _by_names(dialect: str, kind: str) -> sa.Select[str]:
    among = lists.among if kind == "among" else lists.any_of
    return sa.select(DBS.c.NAME).where(among(dialect, "names", text=True)(DBS.c.NAME))


def _databases(s: Any, names: list[str]) -> list[int]:
    ids = s.execute(
        sa.insert(DBS).returning(DBS.c.DB_ID, sort_by_parameter_order=True),
        [{"NAME": name, "DB_LOCATION_URI": "file:/w"} for name in names],
    ).scalars()
    return list(ids)


@pytest.mark.parametrize("kind", ["among", "any_of"])
def test_ids_are_found_whatever_their_number(store: sa.Engine, kind: str) -> None:
    with rolled_back(store) as s:
        ids = _databases(s, ["a", "b", "c"])
        dialect = store.dialect.name
        statement = _by_ids(dialect, kind)
        for wanted in ([], ids[:1], ids, [ids[2], ids[0], ids[2]], [10**9, ids[1], 2**62]):
            found = driver_rows(s, statement, {"ids": lists.values(dialect, wanted)})
            assert [row[0] for row in found] == sorted(set(wanted) & set(ids))
            # SQLAlchemy runs the same statement with the same parameter.
            through = s.execute(statement, {"ids": lists.values(dialect, wanted)})
            assert [row[0] for row in through] == sorted(set(wanted) & set(ids))


def test_among_few_takes_one_id_alone_and_several_as_a_list(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        ids = _databases(s, ["a", "b", "c"])
        dialect = store.dialect.name
        one = driver_rows(
            s, _by_ids(dialect, "among_few", 1), {"ids": lists.few_values(dialect, ids[1:2])}
        )
        assert [row[0] for row in one] == [ids[1]]
        none = driver_rows(
            s, _by_ids(dialect, "among_few", 1), {"ids": lists.few_values(dialect, [10**12])}
        )
        assert none == []
        two = driver_rows(
            s, _by_ids(dialect, "among_few", 2), {"ids": lists.few_values(dialect, ids[:2])}
        )
        assert [row[0] for row in two] == ids[:2]


@pytest.mark.parametrize("kind", ["among", "any_of"])
def test_text_values_are_found_whatever_characters_they_hold(store: sa.Engine, kind: str) -> None:
    with rolled_back(store) as s:
        _databases(s, [*AWKWARD, "other", "a"])
        dialect = store.dialect.name
        statement = _by_names(dialect, kind)
        found = driver_rows(s, statement, {"names": lists.values(dialect, AWKWARD)})
        assert sorted(row[0] for row in found) == sorted(AWKWARD)
        # Values are compared exactly: no pattern, no case folding, no trimming.
        for wanted in (["A"], ["%"], ["spaced"], ['a\\"b'], []):
            assert driver_rows(s, statement, {"names": lists.values(dialect, wanted)}) == []
