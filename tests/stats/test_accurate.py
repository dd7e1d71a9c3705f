"""COLUMN_STATS_ACCURATE as HMS writes and reads it."""

from __future__ import annotations

import pytest

from metastore.stats import accurate


@pytest.mark.parametrize(
    ("value", "columns"),
    [
        (None, set()),
        ("", set()),
        ("true", set()),  # legacy: basic statistics only
        ("TRUE", set()),
        ('{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true","b":"true"}}', {"a", "b"}),
        ('{"COLUMN_STATS":{"a":"true","b":"false"}}', {"a"}),
        ('{"COLUMN_STATS":["a"]}', set()),
        ("[1, 2]", set()),
        ("{not json", set()),  # nothing is accurate
    ],
)
def test_accurate_columns(value: str | None, columns: set[str]) -> None:
    assert accurate.accurate_columns(value) == columns


def test_marking_columns_keeps_basic_stats_and_sorts_compactly() -> None:
    value = accurate.with_columns('{"BASIC_STATS":"true"}', ["b", "a"])
    assert value == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true","b":"true"}}'
    assert accurate.with_columns("true", ["c"]) == (
        '{"BASIC_STATS":"true","COLUMN_STATS":{"c":"true"}}'
    )
    assert accurate.with_columns(value, ["a"]) == value
    assert accurate.with_columns(None, ["x"]) == '{"COLUMN_STATS":{"x":"true"}}'
    assert accurate.with_columns("{broken", ["x"]) == '{"COLUMN_STATS":{"x":"true"}}'


def test_unmarking_columns() -> None:
    value = '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true","b":"true"}}'
    assert accurate.without_columns(value, ["a"]) == (
        '{"BASIC_STATS":"true","COLUMN_STATS":{"b":"true"}}'
    )
    assert accurate.without_columns(value, None) == '{"BASIC_STATS":"true"}'
    assert accurate.without_columns(value, ["a", "b"]) == '{"BASIC_STATS":"true"}'
    # Nothing left: the key is removed (None).
    assert accurate.without_columns('{"COLUMN_STATS":{"a":"true"}}', ["a"]) is None
    assert accurate.without_columns(None, None) is None


def test_basic_statistics() -> None:
    assert accurate.basic_accurate('{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}')
    assert accurate.basic_accurate("true")
    assert not accurate.basic_accurate('{"COLUMN_STATS":{"a":"true"}}')
    assert not accurate.basic_accurate(None)
    assert accurate.with_basic('{"COLUMN_STATS":{"a":"true"}}') == (
        '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}'
    )
    assert accurate.with_basic(None) == '{"BASIC_STATS":"true"}'
