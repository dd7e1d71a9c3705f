"""COLUMN_STATS_ACCURATE: the table or partition parameter that says which statistics are
current, maintained as HMS does.

The value is compact JSON with BASIC_STATS first (only when true) and then COLUMN_STATS with
the column names sorted, e.g. {"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}. A legacy
bare "true" means basic statistics only; text that does not parse means nothing is accurate.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any

KEY = "COLUMN_STATS_ACCURATE"
NUM_ROWS = "numRows"


@functools.lru_cache(maxsize=1024)
def _parse(value: str | None) -> tuple[bool, frozenset[str]]:
    """Whether VALUE says the basic statistics are accurate, and the columns it says are.
    Kept for the texts seen last: every table read parses its table's value a few times."""
    if not value:
        return False, frozenset()
    if value.strip().lower() == "true":
        return True, frozenset()
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        return False, frozenset()
    if not isinstance(parsed, dict):
        return False, frozenset()
    basic = str(parsed.get("BASIC_STATS", "")).lower() == "true"
    columns = parsed.get("COLUMN_STATS")
    accurate = (
        frozenset(k for k, v in columns.items() if str(v).lower() == "true")
        if isinstance(columns, dict)
        else frozenset()
    )
    return basic, accurate


def _render(basic: bool, columns: AbstractSet[str]) -> str | None:
    out: dict[str, Any] = {}
    if basic:
        out["BASIC_STATS"] = "true"
    if columns:
        out["COLUMN_STATS"] = dict.fromkeys(sorted(columns), "true")
    return json.dumps(out, separators=(",", ":")) if out else None


def accurate_columns(value: str | None) -> frozenset[str]:
    return _parse(value)[1]


def basic_accurate(value: str | None) -> bool:
    """Whether VALUE says the basic statistics (numRows, totalSize, ...) are current."""
    return _parse(value)[0]


def row_count(parameters: Mapping[str, str]) -> int | None:
    """The numRows of a table's or partition's PARAMETERS, read leniently, as every reader
    here reads it: None when absent, not a whole number, or negative (Hive's -1: unknown)."""
    text = parameters.get(NUM_ROWS)
    if not text:
        return None
    try:
        count = int(text.strip())
    except ValueError:
        return None
    return count if count >= 0 else None


def current_row_count(parameters: Mapping[str, str]) -> int | None:
    """row_count, when the parameters' COLUMN_STATS_ACCURATE says the basic statistics are
    current; else None."""
    return row_count(parameters) if basic_accurate(parameters.get(KEY)) else None


def with_basic(value: str | None) -> str:
    """VALUE with BASIC_STATS true; the accurate columns are kept."""
    rendered = _render(True, _parse(value)[1])
    assert rendered is not None
    return rendered


def without_basic(value: str | None) -> str | None:
    """VALUE with BASIC_STATS no longer true; the accurate columns are kept (None when
    nothing is left)."""
    return _render(False, _parse(value)[1])


def with_columns(value: str | None, columns: Iterable[str]) -> str | None:
    """VALUE with COLUMNS marked accurate; BASIC_STATS is kept."""
    basic, accurate = _parse(value)
    return _render(basic, accurate | set(columns))


def without_columns(value: str | None, columns: Iterable[str] | None) -> str | None:
    """VALUE with COLUMNS (all when None) no longer accurate; None when nothing is left."""
    basic, accurate = _parse(value)
    return _render(basic, frozenset() if columns is None else accurate - set(columns))
