"""A column's statistics as the core handles them: a row of TAB_COL_STATS or PART_COL_STATS.

`StatsRow` names every statistics column of the two tables (STATS_COLUMNS, in the order the
queries select them); None means "not known" (or, in a write, "left unset by the caller":
metastore.stats.queries.upsert_stats keeps the stored value then). STATS_KIND records which
kind of statistics the row holds (metastore.vocabulary.Kind); the fields that kind does not
use are None.

Reads return result rows whose fields are STATS_COLUMNS in that order (so that a door can
read them by position, several times cheaper than by name for the 20,000 rows of a call);
the positions are named below, and `as_row` gives a StatsRow the same shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict, cast


class StatsRow(TypedDict):
    """The statistics of one column (of a table or a partition), for one engine."""

    COLUMN_NAME: str
    COLUMN_TYPE: str
    STATS_KIND: str
    ENGINE: str
    LONG_LOW_VALUE: int | None
    """Integers; dates as days and timestamps as seconds since 1970-01-01."""
    LONG_HIGH_VALUE: int | None
    DOUBLE_LOW_VALUE: float | None
    DOUBLE_HIGH_VALUE: float | None
    BIG_DECIMAL_LOW_VALUE: str | None
    """The exact decimal text, its scale kept ('-10.50')."""
    BIG_DECIMAL_HIGH_VALUE: str | None
    NUM_DISTINCTS: int | None
    BIT_VECTOR: bytes | None
    """The NDV sketch (Hive's HyperLogLog, or its older FM sketches)."""
    HISTOGRAM: bytes | None
    """A KLL float sketch, as Hive 4 stores it."""
    AVG_COL_LEN: float | None
    MAX_COL_LEN: int | None
    NUM_TRUES: int | None
    NUM_FALSES: int | None
    NUM_NULLS: int | None
    LAST_ANALYZED: int | None
    """Seconds since 1970-01-01; a write without one is stamped with the time of the write."""


# Columns an update may leave unset: a NULL in the new row keeps the stored value when the
# stored row holds the same kind of statistics (HMS keeps fields the caller did not set).
KEPT_WHEN_UNSET = (
    "LONG_LOW_VALUE",
    "LONG_HIGH_VALUE",
    "DOUBLE_LOW_VALUE",
    "DOUBLE_HIGH_VALUE",
    "BIG_DECIMAL_LOW_VALUE",
    "BIG_DECIMAL_HIGH_VALUE",
    "NUM_DISTINCTS",
    "BIT_VECTOR",
    "HISTOGRAM",
    "AVG_COL_LEN",
    "MAX_COL_LEN",
    "NUM_TRUES",
    "NUM_FALSES",
)

STATS_COLUMNS = (
    "COLUMN_NAME",
    "COLUMN_TYPE",
    "STATS_KIND",
    "ENGINE",
    *KEPT_WHEN_UNSET,
    "NUM_NULLS",
    "LAST_ANALYZED",
)
assert set(STATS_COLUMNS) == set(StatsRow.__annotations__)


_UNKNOWN: dict[str, Any] = dict.fromkeys(STATS_COLUMNS)


def empty_row(column: str, column_type: str, kind: str, engine: str) -> StatsRow:
    """A row of KIND for COLUMN with every statistic unknown. A copy of one made once: it
    is made for every column written, and building the TypedDict from its twenty names
    costs five times as much."""
    row = cast(StatsRow, _UNKNOWN.copy())
    row["COLUMN_NAME"] = column
    row["COLUMN_TYPE"] = column_type
    row["STATS_KIND"] = kind
    row["ENGINE"] = engine
    return row


def as_row(mapping: Mapping[str, Any]) -> tuple[Any, ...]:
    """A mapping of statistics columns (a StatsRow) in the shape of a result row."""
    return tuple(mapping[name] for name in STATS_COLUMNS)


def as_stats_row(row: Sequence[Any]) -> StatsRow:
    """The StatsRow of a result row (STATS_COLUMNS in that order)."""
    return cast(StatsRow, dict(zip(STATS_COLUMNS, row, strict=True)))


# Positions of the statistics columns in a result row (and in `as_row`).
COLUMN_NAME = STATS_COLUMNS.index("COLUMN_NAME")
COLUMN_TYPE = STATS_COLUMNS.index("COLUMN_TYPE")
STATS_KIND = STATS_COLUMNS.index("STATS_KIND")
ENGINE = STATS_COLUMNS.index("ENGINE")
LONG_LOW_VALUE = STATS_COLUMNS.index("LONG_LOW_VALUE")
LONG_HIGH_VALUE = STATS_COLUMNS.index("LONG_HIGH_VALUE")
DOUBLE_LOW_VALUE = STATS_COLUMNS.index("DOUBLE_LOW_VALUE")
DOUBLE_HIGH_VALUE = STATS_COLUMNS.index("DOUBLE_HIGH_VALUE")
BIG_DECIMAL_LOW_VALUE = STATS_COLUMNS.index("BIG_DECIMAL_LOW_VALUE")
BIG_DECIMAL_HIGH_VALUE = STATS_COLUMNS.index("BIG_DECIMAL_HIGH_VALUE")
NUM_DISTINCTS = STATS_COLUMNS.index("NUM_DISTINCTS")
BIT_VECTOR = STATS_COLUMNS.index("BIT_VECTOR")
HISTOGRAM = STATS_COLUMNS.index("HISTOGRAM")
AVG_COL_LEN = STATS_COLUMNS.index("AVG_COL_LEN")
MAX_COL_LEN = STATS_COLUMNS.index("MAX_COL_LEN")
NUM_TRUES = STATS_COLUMNS.index("NUM_TRUES")
NUM_FALSES = STATS_COLUMNS.index("NUM_FALSES")
NUM_NULLS = STATS_COLUMNS.index("NUM_NULLS")
LAST_ANALYZED = STATS_COLUMNS.index("LAST_ANALYZED")
