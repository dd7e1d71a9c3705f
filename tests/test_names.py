"""Hive's naming rules (metastore/names.py): identifiers, catalog prefixes, partition names."""

from __future__ import annotations

import re
import string

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from metastore import names
from metastore.names import (
    DEFAULT_PARTITION_VALUE,
    InvalidNameError,
    escape_path_name,
    make_partition_name,
    parse_partition_name,
    partition_values,
    split_catalog,
    unescape_path_name,
)

# FileUtils.escapePathName on Unix: the control characters, DEL and these.
HIVE_ESCAPED = {chr(c) for c in range(0x20)} | set("\x7f\"#%'*/:=?\\{[]^")

# Characters that matter most in partition values, mixed with anything else.
SPECIALS = "/=:% \t\n\x00\x7f#?*'\"\\{}[]^é€😀"
tricky_text = st.text(alphabet=st.sampled_from(SPECIALS) | st.characters(), max_size=30)
key_text = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + "_" + SPECIALS),
    min_size=1,
    max_size=12,
)
identifier_text = st.text(
    alphabet=string.ascii_letters + string.digits + "_", min_size=1, max_size=20
)

FAST = settings(max_examples=300, deadline=None)


# -- identifiers and catalog prefixes -----------------------------------------------------------


def test_identifier_lower_cases() -> None:
    assert names.identifier("Sales_DB_2024") == "sales_db_2024"
    assert names.identifier("already_lower") == "already_lower"


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        (None, ("hive", None)),
        ("sales", ("hive", "sales")),
        ("", ("hive", "")),
        ("@hive#sales", ("hive", "sales")),
        ("@Spark#sales", ("spark", "sales")),
        ("@cat#", ("cat", None)),
        ("@cat#!", ("cat", "")),
        ("@cat#a#b", ("cat", "a#b")),
        ("sales@x#y", ("hive", "sales@x#y")),
    ],
)
def test_split_catalog(argument: str | None, expected: tuple[str, str | None]) -> None:
    assert split_catalog(argument) == expected


@pytest.mark.parametrize("argument", ["@cat", "@", "@catalog_without_separator"])
def test_split_catalog_rejects_a_prefix_without_separator(argument: str) -> None:
    with pytest.raises(InvalidNameError, match="'#'"):
        split_catalog(argument)


def test_split_catalog_keeps_the_database_name_for_the_caller_to_normalise() -> None:
    catalog, db = split_catalog("@HIVE#Sales")
    assert catalog == "hive"
    assert db is not None and names.identifier(db) == "sales"


@FAST
@given(catalog=identifier_text, db=identifier_text)
def test_split_catalog_round_trips_prefixed_names(catalog: str, db: str) -> None:
    assert split_catalog(f"@{catalog}#{db}") == (catalog.lower(), db)
    assert split_catalog(db) == (names.DEFAULT_CATALOG, db)


# -- escaping ---------------------------------------------------------------------------------


def test_exactly_hives_characters_are_escaped_among_ascii() -> None:
    for code in range(0x80):
        c = chr(code)
        if c in HIVE_ESCAPED:
            assert escape_path_name(c) == f"%{code:02X}", repr(c)
        else:
            assert escape_path_name(c) == c, repr(c)


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a/b", "a%2Fb"),
        ("a=b", "a%3Db"),
        ("12:30:00", "12%3A30%3A00"),
        ("100%", "100%25"),
        ("%2F", "%252F"),
        ("a b", "a b"),
        ("x\ty\nz", "x%09y%0Az"),
        ("\x00\x1f\x7f", "%00%1F%7F"),
        ("what?*", "what%3F%2A"),
        ("{a}[b]^c", "%7Ba}%5Bb%5D%5Ec"),
        ("'q'\"", "%27q%27%22"),
        ("back\\slash#1", "back%5Cslash%231"),
        ("<a>|b~!@$&()+,;", "<a>|b~!@$&()+,;"),
        ("é€😀\u0085\u00a0", "é€😀\u0085\u00a0"),
        ("", ""),
    ],
)
def test_escape_path_name(raw: str, escaped: str) -> None:
    assert escape_path_name(raw) == escaped
    assert unescape_path_name(escaped) == raw


def test_escapes_use_upper_case_hex() -> None:
    assert escape_path_name("\x1a\x1b\x1c\x1d\x1e\x1f:?^") == "%1A%1B%1C%1D%1E%1F%3A%3F%5E"


@FAST
@given(tricky_text)
@example("%")
@example("%%41")
@example("%2F/")
def test_unescape_inverts_escape(value: str) -> None:
    assert unescape_path_name(escape_path_name(value)) == value


@FAST
@given(tricky_text)
def test_escaped_text_has_no_escaped_character_left(value: str) -> None:
    escaped = escape_path_name(value)
    assert not (set(escaped) & (HIVE_ESCAPED - {"%"}))
    # Every '%' starts an escape of two upper-case hex digits.
    assert re.fullmatch(r"(?:[^%]|%[0-9A-F]{2})*", escaped, flags=re.DOTALL)


@pytest.mark.parametrize(
    ("escaped", "raw"),
    [
        ("%2f", "/"),
        ("%2F", "/"),
        ("%41%42", "AB"),
        ("100%", "100%"),
        ("%", "%"),
        ("%4", "%4"),
        ("a%4", "a%4"),
        ("%G1", "%G1"),
        ("%1G", "%1G"),
        ("%%41", "%A"),
        ("%-1x", "%-1x"),
        ("%%", "%%"),
        ("50% off", "50% off"),
        ("é%C3%A9", "é\xc3\xa9"),
    ],
)
def test_percent_without_two_hex_digits_stays_literal(escaped: str, raw: str) -> None:
    assert unescape_path_name(escaped) == raw


# -- partition names --------------------------------------------------------------------------


def test_make_partition_name_escapes_keys_and_values_and_lower_cases_keys() -> None:
    assert make_partition_name(["DS", "Region"], ["2024-01-01", "a/b"]) == (
        "ds=2024-01-01/region=a%2Fb"
    )
    assert make_partition_name(["k=x"], ["v:1"]) == "k%3Dx=v%3A1"
    assert make_partition_name(["k"], ["a b"]) == "k=a b"


@pytest.mark.parametrize("empty", ["", None])
def test_empty_values_become_the_default_partition(empty: str | None) -> None:
    assert make_partition_name(["a", "b"], ["x", empty]) == f"a=x/b={DEFAULT_PARTITION_VALUE}"


@pytest.mark.parametrize(("keys", "values"), [(["a"], []), (["a"], ["1", "2"]), ([], ["1"])])
def test_make_partition_name_needs_one_value_per_key(keys: list[str], values: list[str]) -> None:
    with pytest.raises(InvalidNameError, match=rf"{len(values)} partition values.*{len(keys)}"):
        make_partition_name(keys, values)


@FAST
@given(st.lists(st.tuples(key_text, tricky_text.filter(bool)), min_size=1, max_size=4))
@example([("k", "a/b=c:d%e f")])
@example([("K", "%2F"), ("Ü", "\x00")])
def test_partition_names_round_trip(pairs: list[tuple[str, str]]) -> None:
    keys = [k for k, _ in pairs]
    values = [v for _, v in pairs]
    name = make_partition_name(keys, values)
    assert parse_partition_name(name) == [(k.lower(), v) for k, v in pairs]
    assert name.count("/") == len(pairs) - 1
    assert name.count("=") == len(pairs)


@FAST
@given(st.lists(tricky_text.filter(bool), min_size=1, max_size=4, unique=True))
def test_partition_values_round_trip(values: list[str]) -> None:
    keys = [f"k{i}" for i in range(len(values))]
    assert partition_values(make_partition_name(keys, values), keys) == values


def test_parse_partition_name_unescapes_and_lower_cases_keys() -> None:
    assert parse_partition_name("DS=2024%2D01/Re%3Dgion=a%2Fb") == [
        ("ds", "2024-01"),
        ("re=gion", "a/b"),
    ]


def test_parse_partition_name_gives_a_stray_equals_sign_to_the_key() -> None:
    assert parse_partition_name("a=b=c") == [("a=b", "c")]


def test_parse_keeps_unescaped_special_characters_and_literal_percent() -> None:
    assert parse_partition_name("k=12:30 ok?/p=100%") == [("k", "12:30 ok?"), ("p", "100%")]


@pytest.mark.parametrize("name", ["", "ds", "ds=", "=1", "ds=1/", "/ds=1", "ds=1//r=2", "ds=1/r"])
def test_parse_partition_name_rejects_malformed_names(name: str) -> None:
    with pytest.raises(InvalidNameError):
        parse_partition_name(name)


def test_partition_values_follow_the_tables_key_order() -> None:
    assert partition_values("region=eu/ds=2024", ["ds", "region"]) == ["2024", "eu"]
    assert partition_values("DS=2024/REGION=eu", ["Ds", "Region"]) == ["2024", "eu"]


def test_partition_values_name_a_missing_key() -> None:
    with pytest.raises(InvalidNameError, match=r"missing key.*region") as info:
        partition_values("ds=2024", ["ds", "region"])
    assert "unknown" not in str(info.value)


def test_partition_values_name_an_extra_key() -> None:
    with pytest.raises(InvalidNameError, match=r"unknown key.*hour") as info:
        partition_values("ds=2024/hour=1", ["ds"])
    assert "missing" not in str(info.value)


def test_partition_values_name_missing_and_extra_keys_together() -> None:
    with pytest.raises(InvalidNameError) as info:
        partition_values("ds=2024/hour=1", ["ds", "region", "zone"])
    message = str(info.value)
    assert re.search(r"missing key\(s\) region, zone", message)
    assert re.search(r"unknown key\(s\) hour", message)
    assert "ds=2024/hour=1" in message


def test_partition_values_reject_malformed_names() -> None:
    with pytest.raises(InvalidNameError):
        partition_values("ds", ["ds"])


def test_normalize_partition_name_gives_the_stored_form_keeping_the_key_order() -> None:
    assert names.normalize_partition_name("DS=2024-01-05/Hr=7") == "ds=2024-01-05/hr=7"
    assert names.normalize_partition_name("hr=7/ds=a%2Fb") == "hr=7/ds=a%2Fb"
    assert names.normalize_partition_name("ds=a:b") == "ds=a%3Ab"
    # Asked again (the answers are kept): the same answers, and a bad name fails every time.
    assert names.normalize_partition_name("DS=2024-01-05/Hr=7") == "ds=2024-01-05/hr=7"
    for _ in range(2):
        with pytest.raises(InvalidNameError, match="not of the form key=value"):
            names.normalize_partition_name("ds=1/hr")


@FAST
@given(pairs=st.lists(st.tuples(key_text, tricky_text.filter(bool)), min_size=1, max_size=3))
def test_a_made_partition_name_is_its_own_normal_form(pairs: list[tuple[str, str]]) -> None:
    keys = [k for k, _ in pairs]
    assume(len({names.identifier(k) for k in keys}) == len(keys))  # a key twice: no name
    name = make_partition_name(keys, [v for _, v in pairs])
    assert names.normalize_partition_name(name) == name
