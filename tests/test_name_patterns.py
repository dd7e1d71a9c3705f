"""Name patterns as HMS reads them (metastore/name_patterns.py): `*` any text, `|`
alternatives, `.` one character, everything else literal, case-insensitive. The answers
HMS 2.3.10 itself gives are compared in tests/test_name_patterns_hms.py."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from metastore.name_patterns import InvalidPatternError, filter_names, like_pattern

NAMES = ["a", "a_c", "aa", "ab", "abc", "abd", "av", "axc", "b1", "ba", "v_a", "xay", "xy"]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        # '*' is any text, '|' separates alternatives, case does not matter.
        ("*", NAMES),
        ("a*", ["a", "a_c", "aa", "ab", "abc", "abd", "av", "axc"]),
        ("A*|b*", ["a", "a_c", "aa", "ab", "abc", "abd", "av", "axc", "b1", "ba"]),
        ("x*y", ["xay", "xy"]),
        ("*_*", ["a_c", "v_a"]),
        ("AB", ["ab"]),
        # '.' is one character, so '.*' is any text and 'a.*' needs one after the 'a'.
        (".*", NAMES),
        ("a.c", ["a_c", "abc", "axc"]),
        (".", ["a"]),
        ("a.*", ["a_c", "aa", "ab", "abc", "abd", "av", "axc"]),
        # '_' is itself, not any character.
        ("a_c", ["a_c"]),
        # Nothing else is a regex: these are literal text that no name has.
        ("ab?", []),
        ("[ab]*", []),
        ("(a|b).*", []),
        ("(", []),
        ("a+", []),
        ("^a", []),
        ("a$", []),
        ("a{2}", []),
        ("\\w*", []),
        ("a%", []),
        ("a\\.c", []),
        ("a\\_c", []),
        # The pattern is trimmed, its alternatives are not; empty ones match nothing, trailing
        # ones are dropped.
        (" a* ", ["a", "a_c", "aa", "ab", "abc", "abd", "av", "axc"]),
        ("a* | b*", []),
        ("a|", ["a"]),
        ("|a", ["a"]),
        ("", []),
        ("   ", []),
    ],
)
def test_patterns_match_as_in_hms(pattern: str, expected: list[str]) -> None:
    assert filter_names(NAMES, pattern) == expected


def test_no_pattern_matches_every_name_in_the_given_order() -> None:
    assert filter_names(["b", "a", "c"], None) == ["b", "a", "c"]
    assert filter_names(iter(["b", "a"]), "*") == ["b", "a"]


def test_names_are_matched_whatever_their_case() -> None:
    assert filter_names(["Orders", "ORDERS_2024", "other"], "orders*") == ["Orders", "ORDERS_2024"]


@pytest.mark.parametrize("pattern", ["|", "||", " | ", "\t|\n"])
def test_a_pattern_of_nothing_but_bars_is_refused(pattern: str) -> None:
    with pytest.raises(InvalidPatternError, match=r"has no alternatives .*use '\*'"):
        filter_names(NAMES, pattern)


@pytest.mark.parametrize(
    ("alternative", "like"),
    [
        ("a*", "a%"),
        ("*", "%"),
        (".*", "_%"),
        ("a.c", "a_c"),
        ("a_c", "a\\_c"),
        ("a%", "a\\%"),
        ("ab?", "ab?"),
        ("[ab]*", "[ab]%"),
        ("a\\.c", "a.c"),
        ("a\\_c", "a\\\\_c"),
        ("a\\*", "a.*"),
        ("a\\d", "a\\\\d"),
        ("a\\\\", "a\\\\\\\\"),
        ("a\\", "a\\\\"),
    ],
)
def test_like_pattern_is_datanucleus_translation(alternative: str, like: str) -> None:
    assert like_pattern(alternative) == like


def test_special_characters_in_names_are_matched_as_hms_matches_them() -> None:
    """Hive 3+ can allow special characters in table names: '%' and '_' stay literal,
    '\\.' is a literal dot, and any other backslash is a literal backslash."""
    names = ["a%c", "abc", "a.c", "a.*", "a\\xc", "a_c"]
    assert filter_names(names, "a%c") == ["a%c"]
    assert filter_names(names, "a\\.c") == ["a.c"]
    assert filter_names(names, "a\\*") == ["a.*"]
    assert filter_names(names, "a\\_c") == ["a\\xc"]


def test_many_stars_cost_no_backtracking() -> None:
    """A backtracking regex takes hours over these names; one match is a few thousand steps."""
    names = ["a" * 120, "a" * 119 + "b"]
    assert filter_names(names, "*a" * 40 + "*b") == ["a" * 119 + "b"]
    assert filter_names(names, "*a" * 40 + "*c|" + ".*" * 60 + "b") == ["a" * 119 + "b"]


# Without regex metacharacters other than '.' and '*', HMS's reading is the one its
# documentation suggests: '*' made '.*', then a case-insensitive regex per alternative.
plain_patterns = st.text(alphabet="abAB_.*|", max_size=12).filter(lambda p: p.strip("|"))
plain_names = st.text(alphabet="abAB_", min_size=1, max_size=8)


@given(plain_patterns, st.lists(plain_names, max_size=8))
def test_plain_patterns_read_as_regexes_with_star_as_any_text(
    pattern: str, names: list[str]
) -> None:
    alternatives = re.split(r"\|", pattern.rstrip("|"))
    regex = "|".join(f"(?:{a.replace('*', '.*')})" for a in alternatives)
    expected = [n for n in names if re.fullmatch(regex, n, re.IGNORECASE | re.DOTALL)]
    assert filter_names(names, pattern) == expected
