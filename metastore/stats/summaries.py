"""Summaries of one column's statistics over runs of partitions, which merge: the merge of
get_aggr_stats_for (metastore.stats.reads.aggregate_statistics) rebuilt from the summaries of
runs of partitions, so that after a change to one partition only its run is merged again.

A Summary holds what the merge of metastore.stats.aggregate needs of a run of consecutive
partitions (in the order of the answer: by partition name), such that the summary of two
adjacent runs is made from theirs (`combine`), and `finish` of the summary of every partition
gives exactly the row the merge of their rows gives. Why each part is exact:

* the sums are kept unbounded (Python integers), and kept at the largest count at the end;
* lows and highs: the builtin min and max keep the first of equal values (0.0 and -0.0, or
  decimals written with other scales), and so does a min of the runs' minima; a float NaN,
  which is not ordered, makes the column's summary `flat` (merged from its rows; a decimal
  NaN fails both merges alike, when compared);
* the weighted average length: the products and the averages are kept as lists in order, so
  that the final sums add the same floats in the same order;
* bit vectors: the union of readable sketches of one kind and size is a register-wise
  maximum (HyperLogLog, whose sparse form turns dense on the same union) or a bitwise or
  (FM): the same whatever the runs. HyperLogLogs of several precisions (folded by the merge)
  make the summary `flat`; an absent, unreadable or unmergeable one leaves none (the largest
  NDV then, as the merge of rows does);
* histograms: the present ones kept in order and merged at the end;
* statistics of several kinds in one column make it `flat`: the merge of rows keeps the
  newest kind, which only the whole column tells.

Rows are those of metastore.stats.queries' partition reads with row counts: PART_NAME, the
STATS_COLUMNS, NUM_ROWS (PARTITION_STATS_FIELDS).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from metastore.stats import aggregate
from metastore.stats import rows as r
from metastore.stats.queries import PARTITION_STATS_FIELDS
from metastore.stats.reads import aggregate_column, int_or_none
from metastore.stats.rows import STATS_COLUMNS, StatsRow
from metastore.vocabulary import Kind

if TYPE_CHECKING:  # the sketch library (NumPy) is imported when a merge first needs it
    from metastore.sketches.sketch import Sketch

_AT = 1
"""Where the statistics columns begin in a row (after PART_NAME)."""
NUM_ROWS = 1 + len(STATS_COLUMNS)
"""Where a row's NUM_ROWS is."""

_LARGEST_COUNT = 2**63 - 1


class Summary:
    """One column's statistics over a run of partitions (see the module docstring). Made
    by `summarize` or `combine`, and not changed afterwards."""

    __slots__ = (
        "avgs",
        "dec_high",
        "dec_low",
        "double_high",
        "double_low",
        "first",
        "flat",
        "histograms",
        "last",
        "long_high",
        "long_low",
        "max_len",
        "n",
        "ndv",
        "pending",
        "products",
        "sketch",
        "sums",
        "total",
        "weighed",
    )

    first: tuple[Any, ...]
    """The first row (its statistics columns): the fields that are not merged."""
    n: int
    flat: bool
    sums: tuple[int | None, int | None, int | None]
    long_low: int | None
    long_high: int | None
    double_low: float | None
    double_high: float | None
    dec_low: tuple[Decimal, str] | None
    dec_high: tuple[Decimal, str] | None
    max_len: int | None
    last: int | None
    products: list[float]
    """avg * max(rows - nulls, 0) of each row with an average and a row count, in order."""
    avgs: list[float]
    """The averages present, in order."""
    weighed: bool
    """Whether every row with an average has a row count."""
    total: int
    """The sum of max(rows - nulls, 0) of the rows in `products`."""
    ndv: int | None
    """The largest NUM_DISTINCTS."""
    sketch: Sketch | None
    """The union of the bit vectors, when every row has one and they merge."""
    pending: bytes | None
    """The bit vector of a run of one row, read when merged with another (a merge of one
    row reads none: a server that merges no sketch does not load the sketch library)."""
    histograms: list[bytes]


def _first_min(pairs: Sequence[tuple[Decimal, str] | None]) -> tuple[Decimal, str] | None:
    if pairs.count(None) == len(pairs):
        return None
    present = [p for p in pairs if p is not None]
    return min(present, key=lambda p: p[0]) if present else None


def _first_max(pairs: Sequence[tuple[Decimal, str] | None]) -> tuple[Decimal, str] | None:
    if pairs.count(None) == len(pairs):
        return None
    present = [p for p in pairs if p is not None]
    return max(present, key=lambda p: p[0]) if present else None


def _ordered(values: Sequence[Any]) -> bool:
    """Whether VALUES (floats) hold no NaN."""
    return all(v == v for v in values)


def _decimals(texts: Sequence[str | None]) -> list[tuple[Decimal, str]]:
    """The present TEXTS with their values."""
    return [(Decimal(text), text) for text in texts if text is not None]


def _union(sketches: Sequence[Sketch]) -> tuple[Sketch | None, bool]:
    """The union of SKETCHES, in order (copied: none is changed), and whether they must be
    merged from their rows instead (HyperLogLogs of several precisions)."""
    from metastore.sketches.fm import FMSketch
    from metastore.sketches.hll import HyperLogLog

    first = sketches[0]
    if all(isinstance(s, HyperLogLog) for s in sketches):
        hlls = cast(Sequence[HyperLogLog], sketches)
        if len({s.p for s in hlls}) != 1:
            return None, True
        merged_hll = hlls[0].copy()
        for hll in hlls[1:]:
            merged_hll.merge(hll)
        return merged_hll, False
    if isinstance(first, FMSketch) and all(isinstance(s, FMSketch) for s in sketches):
        fms = cast(Sequence[FMSketch], sketches)
        if len({s.num_bit_vectors for s in fms}) != 1:
            return None, False
        merged_fm = fms[0].copy()
        for fm in fms[1:]:
            merged_fm.merge(fm)
        return merged_fm, False
    return None, False


def summarize(rows: Sequence[Sequence[Any]], counts: Sequence[int | None]) -> Summary:
    """The Summary of ROWS, one column's rows of a run of partitions in order, whose
    partitions have COUNTS rows (numRows, or None)."""
    s = Summary()
    stats = [row[_AT:NUM_ROWS] for row in rows]
    columns = list(zip(*stats, strict=True))
    s.first, s.n = tuple(stats[0]), len(stats)
    s.flat = len(set(columns[r.STATS_KIND])) != 1
    nulls = columns[r.NUM_NULLS]
    s.sums = (_sum(nulls), _sum(columns[r.NUM_TRUES]), _sum(columns[r.NUM_FALSES]))
    s.long_low = _lo(columns[r.LONG_LOW_VALUE])
    s.long_high = _hi(columns[r.LONG_HIGH_VALUE])
    double_lows = [v for v in columns[r.DOUBLE_LOW_VALUE] if v is not None]
    double_highs = [v for v in columns[r.DOUBLE_HIGH_VALUE] if v is not None]
    if not (_ordered(double_lows) and _ordered(double_highs)):
        s.flat = True
    s.double_low = min(double_lows) if double_lows else None
    s.double_high = max(double_highs) if double_highs else None
    s.dec_low = _first_min(_decimals(columns[r.BIG_DECIMAL_LOW_VALUE]))
    s.dec_high = _first_max(_decimals(columns[r.BIG_DECIMAL_HIGH_VALUE]))
    s.max_len = _hi(columns[r.MAX_COL_LEN])
    s.last = _hi(columns[r.LAST_ANALYZED])
    s.avgs, s.products, s.weighed, s.total = [], [], True, 0
    for avg, count, null in zip(columns[r.AVG_COL_LEN], counts, nulls, strict=True):
        if avg is None:
            continue
        s.avgs.append(avg)
        if count is None:
            s.weighed = False
            continue
        weight = max(count - (null or 0), 0)
        s.products.append(avg * weight)
        s.total += weight
    s.ndv = _hi(columns[r.NUM_DISTINCTS])
    s.sketch, s.pending = None, None
    blobs = columns[r.BIT_VECTOR]
    if len(blobs) == 1:
        s.pending = blobs[0]
    elif all(b is not None for b in blobs):
        from metastore.sketches.sketch import try_read_sketch

        sketches = [try_read_sketch(b) for b in blobs]
        if all(sketch is not None for sketch in sketches):
            sketch, flat = _union(cast("list[Sketch]", sketches))
            s.sketch, s.flat = sketch, s.flat or flat
    s.histograms = [h for h in columns[r.HISTOGRAM] if h is not None]
    return s


def _sum(values: Sequence[Any]) -> Any:
    """The sum of the present VALUES (None: none is). These three are aggregate's _sum,
    _min and _max, unbounded, and faster where every value or none is present."""
    absent = values.count(None)
    if not absent:
        return sum(values)
    return None if absent == len(values) else sum(v for v in values if v is not None)


def _lo(values: Sequence[Any]) -> Any:
    absent = values.count(None)
    if not absent:
        return min(values)
    return None if absent == len(values) else min(v for v in values if v is not None)


def _hi(values: Sequence[Any]) -> Any:
    absent = values.count(None)
    if not absent:
        return max(values)
    return None if absent == len(values) else max(v for v in values if v is not None)


def combine(parts: Sequence[Summary]) -> Summary:
    """The Summary of adjacent runs whose summaries are PARTS, in order."""
    if len(parts) == 1:
        return parts[0]
    s = Summary()
    head = parts[0]
    s.first, s.n = head.first, sum(p.n for p in parts)
    kind = head.first[r.STATS_KIND]
    s.flat = any(p.flat or p.first[r.STATS_KIND] != kind for p in parts)
    (nulls, trues, falses, long_low, long_high, double_low, double_high, max_len, last, ndv) = zip(
        *[
            (
                *p.sums,
                p.long_low,
                p.long_high,
                p.double_low,
                p.double_high,
                p.max_len,
                p.last,
                p.ndv,
            )
            for p in parts
        ],
        strict=True,
    )
    s.sums = (_sum(nulls), _sum(trues), _sum(falses))
    s.long_low, s.long_high = _lo(long_low), _hi(long_high)
    s.double_low, s.double_high = _lo(double_low), _hi(double_high)
    s.dec_low = _first_min([p.dec_low for p in parts])
    s.dec_high = _first_max([p.dec_high for p in parts])
    s.max_len, s.last, s.ndv = _hi(max_len), _hi(last), _hi(ndv)
    s.avgs = list(itertools.chain.from_iterable(p.avgs for p in parts))
    s.products = list(itertools.chain.from_iterable(p.products for p in parts))
    s.weighed = all(p.weighed for p in parts)
    s.total = sum(p.total for p in parts)
    s.sketch, s.pending = None, None
    if all(p.sketch is not None or p.pending is not None for p in parts):
        from metastore.sketches.sketch import try_read_sketch

        sketches = [p.sketch if p.pending is None else try_read_sketch(p.pending) for p in parts]
        if all(sketch is not None for sketch in sketches):
            sketch, flat = _union(cast("list[Sketch]", sketches))
            s.sketch, s.flat = sketch, s.flat or flat
    s.histograms = list(itertools.chain.from_iterable(p.histograms for p in parts))
    return s


def _capped(value: int | None) -> int | None:
    return None if value is None else min(value, _LARGEST_COUNT)


def finish(s: Summary, requested: int, what: str, merge_histograms: bool) -> StatsRow:
    """The merged row of the column whose Summary over every partition read is S (not
    `flat`), for REQUESTED partitions: the row metastore.stats.reads' merge of their rows
    gives."""
    merged: dict[str, Any] = dict(zip(STATS_COLUMNS, s.first, strict=True))
    merged["NUM_NULLS"], merged["NUM_TRUES"], merged["NUM_FALSES"] = (
        _capped(s.sums[0]),
        _capped(s.sums[1]),
        _capped(s.sums[2]),
    )
    merged["LONG_LOW_VALUE"], merged["LONG_HIGH_VALUE"] = s.long_low, s.long_high
    merged["DOUBLE_LOW_VALUE"], merged["DOUBLE_HIGH_VALUE"] = s.double_low, s.double_high
    merged["BIG_DECIMAL_LOW_VALUE"] = s.dec_low[1] if s.dec_low is not None else None
    merged["BIG_DECIMAL_HIGH_VALUE"] = s.dec_high[1] if s.dec_high is not None else None
    merged["MAX_COL_LEN"], merged["LAST_ANALYZED"] = s.max_len, s.last
    average = None
    if s.avgs:
        if s.weighed and s.total > 0:
            average = sum(s.products) / s.total
        else:
            average = sum(s.avgs) / len(s.avgs)
    merged["AVG_COL_LEN"] = average
    if s.n > 1:
        if s.sketch is not None:
            merged["BIT_VECTOR"] = s.sketch.to_bytes()
            merged["NUM_DISTINCTS"] = s.sketch.ndv()
        else:
            merged["BIT_VECTOR"] = None
            ndv, low, high = s.ndv, s.long_low, s.long_high
            integral = Kind(s.first[r.STATS_KIND]).integral
            if ndv is not None and integral and low is not None and high is not None:
                ndv = min(ndv, high - low + 1)
            merged["NUM_DISTINCTS"] = ndv
    merged["HISTOGRAM"] = (
        aggregate._merge_histograms(s.histograms, what) if merge_histograms else None
    )
    row = cast(StatsRow, merged)
    aggregate.scale_sums(row, requested, s.n)
    return row


class Run:
    """The statistics of a run of consecutive partitions: a Summary per column, in the
    order the merge of rows meets the columns, the partitions' rows, and how many of the
    partitions have statistics for every column asked for."""

    __slots__ = ("columns", "found", "parts")

    def __init__(
        self, columns: dict[str, Summary], found: int, parts: tuple[tuple[Any, ...], ...]
    ) -> None:
        self.columns = columns
        self.found = found
        self.parts = parts
        """Each partition's rows (a tuple of rows), for the columns merged from their rows."""


def run_of(parts: Sequence[tuple[Any, ...]], asked: int) -> Run:
    """The Run of PARTS, each a partition's rows in order, for ASKED columns."""
    by_column: dict[str, list[Any]] = {}
    found = 0
    for rows in parts:
        found += len(rows) == asked
        for row in rows:
            by_column.setdefault(row[_AT + r.COLUMN_NAME], []).append(row)
    columns = {
        name: summarize(rows, [int_or_none(row[NUM_ROWS]) for row in rows])
        for name, rows in by_column.items()
    }
    return Run(columns, found, tuple(parts))


def merge_runs(
    runs: Sequence[Run], requested: int, where: str, merge_histograms: bool
) -> tuple[list[StatsRow], int]:
    """What metastore.stats.reads.aggregate_statistics answers for the partitions of RUNS
    (in order), of REQUESTED partitions asked for: a merged row per column, and how many
    partitions have statistics for every column."""
    by_column: dict[str, list[Summary]] = {}
    for run in runs:
        for name, summary in run.columns.items():
            by_column.setdefault(name, []).append(summary)
    merged = []
    for name, summaries in by_column.items():
        what = f"{where}.{name}"
        summary = combine(summaries)
        if not summary.flat:
            merged.append(finish(summary, requested, what, merge_histograms))
            continue
        rows = [
            row
            for run in runs
            for part in run.parts
            for row in part
            if row[_AT + r.COLUMN_NAME] == name
        ]
        fields = dict(zip(PARTITION_STATS_FIELDS, zip(*rows, strict=True), strict=True))
        merged.append(aggregate_column(fields, requested, what, merge_histograms))
    return merged, sum(run.found for run in runs)
