"""Hive's naming rules: lower-case identifiers, catalog prefixes and partition names."""

from __future__ import annotations

import functools
from collections.abc import Sequence

DEFAULT_CATALOG = "hive"
DEFAULT_PARTITION_VALUE = "__HIVE_DEFAULT_PARTITION__"

# Characters Hive escapes in partition keys and values (FileUtils.escapePathName on Unix).
_ESCAPED = frozenset(
    [chr(c) for c in range(0x20)]
    + ["\x7f", '"', "#", "%", "'", "*", "/", ":", "=", "?"]
    + ["\\", "{", "[", "]", "^"]
)
_HEX = "0123456789ABCDEFabcdef"
# For str.translate: a name's characters are mapped in C, not one by one in Python (a read of
# a day's statistics escapes and unescapes every name it is given).
_ESCAPES = {ord(c): f"%{ord(c):02X}" for c in _ESCAPED}


class InvalidNameError(ValueError):
    """A name that Hive's rules reject; the message says which and why."""


def identifier(name: str) -> str:
    """A database, table or column name as HMS stores and looks it up: lower-cased."""
    return name.lower()


def split_catalog(db_name: str | None) -> tuple[str, str | None]:
    """Split Hive 3+'s '@catalog#db' form of a database argument into (catalog, db).

    '@cat#' means no database, '@cat#!' the empty one; without a leading '@' the name is a
    plain database name in the default catalog.
    """
    if db_name is None:
        return DEFAULT_CATALOG, None
    if not db_name.startswith("@"):
        return DEFAULT_CATALOG, db_name
    catalog, sep, db = db_name[1:].partition("#")
    if not sep:
        raise InvalidNameError(f"database name {db_name!r} has a catalog prefix '@' without '#'")
    if db == "":
        return identifier(catalog), None
    if db == "!":
        return identifier(catalog), ""
    return identifier(catalog), db


def escape_path_name(value: str) -> str:
    """Escape a partition key or value the way Hive does in partition names and paths."""
    return value.translate(_ESCAPES)


def unescape_path_name(value: str) -> str:
    """Undo escape_path_name; a '%' not followed by two hex digits stays as it is."""
    if "%" not in value:
        return value
    out: list[str] = []
    i = 0
    while i < len(value):
        c = value[i]
        if c == "%" and _is_hex_pair(value, i + 1):
            out.append(chr(int(value[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_hex_pair(value: str, start: int) -> bool:
    return start + 2 <= len(value) and all(c in _HEX for c in value[start : start + 2])


def make_partition_name(keys: Sequence[str], values: Sequence[str | None]) -> str:
    """'k1=v1/k2=v2' with keys lower-cased, both sides escaped, and empty values defaulted."""
    if len(keys) != len(values):
        raise InvalidNameError(
            f"{len(values)} partition values given for {len(keys)} partition keys"
        )
    parts = []
    for key, value in zip(keys, values, strict=True):
        shown = DEFAULT_PARTITION_VALUE if value is None or value == "" else value
        parts.append(f"{escape_path_name(identifier(key))}={escape_path_name(shown)}")
    return "/".join(parts)


def parse_partition_name(name: str) -> list[tuple[str, str]]:
    """Split 'k1=v1/k2=v2' into unescaped (lower-cased key, value) pairs, in name order."""
    if not name:
        raise InvalidNameError("partition name is empty")
    pairs = []
    for part in name.split("/"):
        key, sep, value = part.rpartition("=")
        if not sep or not key or not value:
            raise InvalidNameError(
                f"partition name {name!r}: {part!r} is not of the form key=value"
            )
        pairs.append((identifier(unescape_path_name(key)), unescape_path_name(value)))
    return pairs


@functools.lru_cache(maxsize=65536)
def stored_partition_name(keys: tuple[str, ...], name: str) -> str:
    """Partition name NAME as stored for a table of partition KEYS: parsed, checked against
    them and escaped again (raises InvalidNameError as `partition_values` does). Kept for
    the names asked again: a planner names the same partitions in every query, hundreds at
    a time."""
    return make_partition_name(keys, partition_values(name, keys))


def partition_values(name: str, keys: Sequence[str]) -> list[str]:
    """The values of partition name NAME in the order of the table's KEYS.

    Raises InvalidNameError when a key of the table is missing or the name has a key the table
    does not have.
    """
    pairs = dict(parse_partition_name(name))
    lowered = [identifier(k) for k in keys]
    missing = [k for k in lowered if k not in pairs]
    extra = [k for k in pairs if k not in lowered]
    if missing or extra:
        problems = []
        if missing:
            problems.append(f"missing key(s) {', '.join(missing)}")
        if extra:
            problems.append(f"unknown key(s) {', '.join(extra)}")
        raise InvalidNameError(
            f"partition name {name!r} does not match the table's partition keys "
            f"({', '.join(lowered)}): {'; '.join(problems)}"
        )
    return [pairs[k] for k in lowered]


@functools.lru_cache(maxsize=4096)
def normalize_partition_name(name: str) -> str:
    """NAME in stored form (keys lower-cased, both sides re-escaped), keeping its key order.

    For reads that must not look up the table's keys first; a name whose keys are in another
    order than the table's simply matches nothing. Kept for the names planners ask about
    again and again (a day's 25 names took 76 us to normalize, 2 us once kept)."""
    return "/".join(
        f"{escape_path_name(k)}={escape_path_name(v)}" for k, v in parse_partition_name(name)
    )
