"""Skewed values: the values of a column that each hold more than a share of its rows, found
with DataSketches' frequent-items sketch (mergeable, so each task sketches its rows and the
sketches merge per partition and per table like the other partial statistics).

The list bucketing design keeps "the list of skewed keys" of a table in its SkewedInfo
(skewedColNames, skewedColValues), "supplied by the client periodically": `--record-skew`
stores them there. Values are kept as Hive's text of them (as SkewedInfo stores them):
numbers and dates as SQL literals would print them, booleans as true/false; NULL is never a
skewed value, and binary columns are not sketched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from datasketches import frequent_items_error_type, frequent_strings_sketch

from metastore.vocabulary import Kind

LG_MAX_MAP_SIZE = 10
"""The sketch keeps up to 768 values; its error is at most 3.5/1024 of the rows (0.34%)."""
SEPARATOR = "\x00"
"""Between the values of several columns in a combined key (see combined())."""


def sketched(kind: Kind) -> bool:
    return kind is not Kind.BINARY


class FrequentValues:
    """A frequent-items sketch of the text of a column's non-null values."""

    def __init__(self, sketch: frequent_strings_sketch | None = None) -> None:
        self.sketch = sketch if sketch is not None else frequent_strings_sketch(LG_MAX_MAP_SIZE)

    def add(self, values: pa.Array) -> None:
        """Count the non-null VALUES (already text)."""
        counts = pc.value_counts(values.drop_null())
        for value, count in zip(
            counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True
        ):
            self.sketch.update(value, count)

    def merge(self, other: FrequentValues) -> FrequentValues:
        self.sketch.merge(other.sketch)
        return self

    def above(self, share: float, rows: int) -> list[tuple[str, int]]:
        """The values sure to hold more than SHARE of ROWS (no false positives), with their
        estimated counts, the most frequent first."""
        if rows == 0 or self.sketch.is_empty():
            return []
        threshold = int(share * rows)
        items = self.sketch.get_frequent_items(
            frequent_items_error_type.NO_FALSE_POSITIVES, threshold
        )
        chosen = [(value, estimate) for value, estimate, lower, _ in items if lower > share * rows]
        return sorted(chosen, key=lambda item: (-item[1], item[0]))

    def __getstate__(self) -> dict[str, Any]:
        return {"sketch": self.sketch.serialize()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.sketch = frequent_strings_sketch.deserialize(state["sketch"])


def as_text(kind: Kind, array: pa.Array) -> pa.Array:
    """The values of ARRAY as Hive writes them in SkewedInfo (NULL stays NULL)."""
    if kind is Kind.BOOLEAN:
        return pc.if_else(array, "true", "false")
    if kind is Kind.TIMESTAMP:
        return pc.strftime(array.cast(pa.timestamp("us")), format="%Y-%m-%d %H:%M:%S")
    if kind is Kind.DOUBLE and pa.types.is_floating(array.type):
        return pc.cast(array.cast(pa.float64()), pa.string())
    return pc.cast(array, pa.string())


def combined(texts: Sequence[pa.Array]) -> pa.Array:
    """One key per row of several columns' texts; NULL when any of them is NULL."""
    return pc.binary_join_element_wise(*texts, SEPARATOR, null_handling="emit_null")


def split_key(key: str) -> list[str]:
    return key.split(SEPARATOR)
