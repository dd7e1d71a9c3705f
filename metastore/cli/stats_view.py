"""Column statistics for people and for scripts: Hive's field names, values in their own
notation (dates as dates, decimals exact), and a histogram drawn in text from a KLL sketch.

Field names are those of Hive's `describe formatted TABLE COLUMN` (min, max, num_nulls,
distinct_count, avg_col_len, max_col_len, num_trues, num_falses, bit_vector).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from hive_metastore_thrift import ttypes as t
from metastore.thrift_stats import decimal_text, set_kinds, union_member
from metastore.vocabulary import Kind

FIELDS = (
    "min",
    "max",
    "num_nulls",
    "distinct_count",
    "avg_col_len",
    "max_col_len",
    "num_trues",
    "num_falses",
    "bit_vector",
)

_FROM_THRIFT = {
    "min": "lowValue",
    "max": "highValue",
    "num_nulls": "numNulls",
    "distinct_count": "numDVs",
    "avg_col_len": "avgColLen",
    "max_col_len": "maxColLen",
    "num_trues": "numTrues",
    "num_falses": "numFalses",
}

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def kind_of(obj: t.ColumnStatisticsObj) -> Kind | None:
    kinds = set_kinds(obj.statsData)
    return kinds[0] if kinds else None


def statistics(obj: t.ColumnStatisticsObj) -> dict[str, Any]:
    """FIELDS of OBJ with JSON values (None where the kind has no such field): numbers as
    numbers, decimals as exact text, dates as ISO dates, timestamps as ISO UTC times; the
    bit vector as its format's name (HL or FM)."""
    stats = union_member(obj.statsData)
    out: dict[str, Any] = {}
    for field in FIELDS:
        if field == "bit_vector":
            blob = getattr(stats, "bitVectors", None)
            out[field] = _sketch_format(blob) if blob else None
        else:
            out[field] = _json_value(getattr(stats, _FROM_THRIFT[field], None))
    return out


def histogram_blob(obj: t.ColumnStatisticsObj) -> bytes | None:
    blob = getattr(union_member(obj.statsData), "histogram", None)
    return bytes(blob) if blob else None


def _sketch_format(blob: bytes | str) -> str:
    head = blob[:2] if isinstance(blob, bytes) else blob[:2].encode()
    return head.decode("ascii", "replace") if head in (b"HL", b"FM") else "unknown"


def _json_value(value: Any) -> Any:
    if isinstance(value, t.Decimal):
        return decimal_text(value)
    if isinstance(value, t.Date):
        return (_EPOCH + dt.timedelta(days=value.daysSinceEpoch)).date().isoformat()
    if isinstance(value, t.Timestamp):
        return timestamp_text(value.secondsSinceEpoch)
    return value


def timestamp_text(seconds: float) -> str:
    """Epoch seconds as 'YYYY-MM-DD HH:MM:SS' (UTC)."""
    return (_EPOCH + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S")


def text(value: Any) -> str:
    """A JSON value of `statistics` for a terminal: blank for None, floats without noise."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def value_at(kind: Kind, value: float) -> str:
    """A histogram edge (a float of the KLL sketch) in the column's notation: dates and
    timestamps are epoch seconds there."""
    if kind is Kind.DATE:
        return timestamp_text(value)[:10]
    if kind is Kind.TIMESTAMP:
        return timestamp_text(value)
    return f"{value:.6g}"


@dataclass(frozen=True)
class Histogram:
    """Bins of equal width, as drawn: their lower and upper edges and their counts."""

    kind: Kind
    edges: list[float]
    counts: list[int]

    def as_json(self) -> dict[str, Any]:
        return {"edges": self.edges, "counts": self.counts}

    def lines(self, width: int = 40) -> list[str]:
        """A bar per bin, the longest WIDTH characters, with its range and count."""
        if not self.counts:
            return ["  (no values)"]
        ranges = []
        for i in range(len(self.counts)):
            closing = "]" if i == len(self.counts) - 1 else ")"
            low, high = value_at(self.kind, self.edges[i]), value_at(self.kind, self.edges[i + 1])
            ranges.append(f"[{low}, {high}{closing}")
        pad = max(len(r) for r in ranges)
        top = max(self.counts) or 1
        out = []
        for label, count in zip(ranges, self.counts, strict=True):
            bar = "#" * round(width * count / top) if count else ""
            out.append(f"  {label.ljust(pad)}  {bar.ljust(width)}  {count}")
        return out


def histogram(obj: t.ColumnStatisticsObj, bins: int) -> Histogram | None:
    """BINS bins of equal width from the column's KLL sketch, None without one."""
    from metastore.sketches import SketchFormatError, kll_equal_width_histogram

    blob, kind = histogram_blob(obj), kind_of(obj)
    if blob is None or kind is None:
        return None
    try:
        edges, counts = kll_equal_width_histogram(blob, bins)
    except SketchFormatError:  # a blob some other writer stored: no histogram to draw
        return None
    return Histogram(kind, [float(e) for e in edges], [int(c) for c in counts])
