"""Merging statistics rows: of one column across partitions, or old with new.

Rows are StatsRows (metastore.stats.rows), the statistics columns of TAB_COL_STATS and
PART_COL_STATS. The rules
(the same for set_aggr_stats_for with needMerge and for get_aggr_stats_for):

* low values: the minimum, high values: the maximum (decimals compared exactly);
* NUM_NULLS, NUM_TRUES, NUM_FALSES: the sum;
* MAX_COL_LEN: the maximum; AVG_COL_LEN: the average weighted by each side's number of
  non-null values when the row counts are known, otherwise the plain average;
* NUM_DISTINCTS: the estimate of the union of the bit vectors when every side has a
  readable, mergeable one (the union is kept as the new bit vector); otherwise the largest
  NDV (HMS's fallback with metastore.stats.ndv.tuner = 0), capped at high - low + 1 for
  integer-like columns, and no bit vector;
* HISTOGRAM: the union of the KLL sketches that are present.

The sketch library (NumPy, DataSketches) is imported when a merge first needs it, so that a
server that never merges sketches does not load it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, cast

from metastore.stats.rows import STATS_COLUMNS, StatsRow
from metastore.vocabulary import Kind

log = logging.getLogger(__name__)

_SUMS = ("NUM_NULLS", "NUM_TRUES", "NUM_FALSES")
_LARGEST_COUNT = 2**63 - 1
"""The largest count a Thrift i64 and the BIGINT columns hold."""


def _present(values: Sequence[Any]) -> list[Any]:
    return [v for v in values if v is not None]


def _min(values: Sequence[Any]) -> Any:
    present = _present(values)
    return min(present) if present else None


def _max(values: Sequence[Any]) -> Any:
    present = _present(values)
    return max(present) if present else None


def _sum(values: Sequence[Any]) -> Any:
    """The sum of the counts VALUES, at most the largest count: counts that a client gave
    may add up past it (only nonsense does: 9.2e18 rows), and such a sum is kept at the
    largest, which an answer and the database can hold, rather than failing the merged write
    or the aggregate read with an error of the database or of the encoding."""
    present = _present(values)
    return min(sum(present), _LARGEST_COUNT) if present else None


def _decimal_extreme(texts: Sequence[str | None], pick: Any) -> str | None:
    present = [t for t in texts if t is not None]
    return pick(present, key=Decimal) if present else None


def _weighted_average(
    averages: Sequence[float | None],
    row_counts: Sequence[int | None],
    nulls: Sequence[int | None],
) -> float | None:
    triples = [
        (avg, n, null)
        for avg, n, null in zip(averages, row_counts, nulls, strict=True)
        if avg is not None
    ]
    if not triples:
        return None
    weighed = [(avg, n - (null or 0)) for avg, n, null in triples if n is not None]
    if len(weighed) == len(triples):
        total = sum(max(w, 0) for _, w in weighed)
        if total > 0:
            return sum(avg * max(w, 0) for avg, w in weighed) / total
    return sum(avg for avg, _, _ in triples) / len(triples)


def merge_rows(
    rows: Sequence[StatsRow],
    row_counts: Sequence[int | None] | None = None,
    what: str = "",
    merge_histograms: bool = True,
) -> StatsRow:
    """One row that describes the union of the data described by ROWS (all of one kind).

    ROW_COUNTS, when given, are the rows (numRows) of each side's partition, used to weigh
    average lengths. WHAT names the column in the log line that says how NDV was obtained.
    Without MERGE_HISTOGRAMS the result has no histogram (for reads that will not return
    it).
    """
    if not rows:
        raise ValueError("nothing to merge")
    plain: Sequence[Mapping[str, Any]] = rows
    columns = {key: [r[key] for r in plain] for key in STATS_COLUMNS}
    return merge_columns(columns, row_counts, what, merge_histograms)


def merge_columns(
    columns: Mapping[str, Sequence[Any]],
    row_counts: Sequence[int | None] | None = None,
    what: str = "",
    merge_histograms: bool = True,
) -> StatsRow:
    """merge_rows of rows given column by column: COLUMNS maps each statistics column to its
    values, one per row (other keys are left out). (get_aggr_stats_for has its rows as
    tuples: transposing them is far cheaper than making a mapping of each.)"""
    kinds = set(columns["STATS_KIND"])
    if not kinds:
        raise ValueError("nothing to merge")
    if len(kinds) != 1:
        raise ValueError(f"cannot merge statistics of different kinds {sorted(kinds)}")
    kind = Kind(next(iter(kinds)))
    size = len(columns["STATS_KIND"])
    counts = list(row_counts) if row_counts is not None else [None] * size
    merged: dict[str, Any] = {key: columns[key][0] for key in STATS_COLUMNS}
    for key in _SUMS:
        merged[key] = _sum(columns[key])
    for key in ("LONG_LOW_VALUE", "DOUBLE_LOW_VALUE"):
        merged[key] = _min(columns[key])
    for key in ("LONG_HIGH_VALUE", "DOUBLE_HIGH_VALUE"):
        merged[key] = _max(columns[key])
    merged["BIG_DECIMAL_LOW_VALUE"] = _decimal_extreme(columns["BIG_DECIMAL_LOW_VALUE"], min)
    merged["BIG_DECIMAL_HIGH_VALUE"] = _decimal_extreme(columns["BIG_DECIMAL_HIGH_VALUE"], max)
    merged["MAX_COL_LEN"] = _max(columns["MAX_COL_LEN"])
    merged["AVG_COL_LEN"] = _weighted_average(columns["AVG_COL_LEN"], counts, columns["NUM_NULLS"])
    merged["LAST_ANALYZED"] = _max(columns["LAST_ANALYZED"])

    if size > 1:
        _merge_ndv(merged, columns, kind, what)
    merged["HISTOGRAM"] = (
        _merge_histograms(columns["HISTOGRAM"], what) if merge_histograms else None
    )
    return cast(StatsRow, merged)


def _merge_histograms(blobs: Sequence[bytes | None], what: str) -> bytes | None:
    present = [b for b in blobs if b is not None]
    if len(present) <= 1:
        return present[0] if present else None
    from metastore.sketches import kll_merge

    try:
        return kll_merge(present)
    except ValueError as e:  # unreadable, or of different k: keep the largest, like HMS
        log.warning("histograms of %s do not merge (%s); keeping the largest", what, e)
        return max(present, key=len)


def _merge_ndv(
    merged: dict[str, Any], columns: Mapping[str, Sequence[Any]], kind: Kind, what: str
) -> None:
    bit_vectors = columns["BIT_VECTOR"]
    sketch = None
    if all(b is not None for b in bit_vectors):
        from metastore.sketches import merge_sketch_blobs

        sketch = merge_sketch_blobs(bit_vectors)
    if sketch is not None:
        merged["BIT_VECTOR"] = sketch.to_bytes()
        merged["NUM_DISTINCTS"] = sketch.ndv()
        log.debug(
            "NDV of %s: %d, from the union of %d bit vectors",
            what,
            merged["NUM_DISTINCTS"],
            len(bit_vectors),
        )
        return
    merged["BIT_VECTOR"] = None
    ndv = _max(columns["NUM_DISTINCTS"])
    low, high = merged["LONG_LOW_VALUE"], merged["LONG_HIGH_VALUE"]
    if ndv is not None and kind.integral and low is not None and high is not None:
        ndv = min(ndv, high - low + 1)
    merged["NUM_DISTINCTS"] = ndv
    log.debug(
        "NDV of %s: %s, the largest of %d NDVs (%d without a bit vector, or the bit "
        "vectors do not merge)",
        what,
        ndv,
        len(bit_vectors),
        sum(1 for b in bit_vectors if b is None),
    )


def scale_sums(row: StatsRow, requested: int, found: int) -> None:
    """Extrapolate the sums of ROW from FOUND partitions to REQUESTED ones (HMS does this
    when 2 <= found < requested); low/high and NDV are left as observed."""
    if 2 <= found < requested:
        fields = cast("dict[str, Any]", row)
        for key in _SUMS:
            if fields[key] is not None:
                fields[key] = round(fields[key] * requested / found)
