"""Merging statistics rows: of one column across partitions, or old with new.

Rows are mappings with the statistics columns of TAB_COL_STATS / PART_COL_STATS. The rules
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
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from metastore.stats import kll_merge, merge_sketch_blobs

log = logging.getLogger(__name__)

_SUMS = ("NUM_NULLS", "NUM_TRUES", "NUM_FALSES")
_INTEGER_KINDS = ("long", "date", "timestamp")


def _present(values: Sequence[Any]) -> list[Any]:
    return [v for v in values if v is not None]


def _min(values: Sequence[Any]) -> Any:
    present = _present(values)
    return min(present) if present else None


def _max(values: Sequence[Any]) -> Any:
    present = _present(values)
    return max(present) if present else None


def _sum(values: Sequence[Any]) -> Any:
    present = _present(values)
    return sum(present) if present else None


def _decimal_extreme(texts: Sequence[str | None], pick: Any) -> str | None:
    present = [t for t in texts if t is not None]
    return pick(present, key=Decimal) if present else None


def _weighted_average(
    rows: Sequence[Mapping[str, Any]], row_counts: Sequence[int | None]
) -> float | None:
    pairs = [
        (r["AVG_COL_LEN"], n, r["NUM_NULLS"])
        for r, n in zip(rows, row_counts, strict=True)
        if r["AVG_COL_LEN"] is not None
    ]
    if not pairs:
        return None
    if all(n is not None for _, n, _ in pairs):
        weights = [max(n - (nulls or 0), 0) for _, n, nulls in pairs]
        total = sum(weights)
        if total > 0:
            return sum(avg * w for (avg, _, _), w in zip(pairs, weights, strict=True)) / total
    return sum(avg for avg, _, _ in pairs) / len(pairs)


def merge_rows(
    rows: Sequence[Mapping[str, Any]],
    row_counts: Sequence[int | None] | None = None,
    what: str = "",
    merge_histograms: bool = True,
) -> dict[str, Any]:
    """One row that describes the union of the data described by ROWS (all of one kind).

    ROW_COUNTS, when given, are the rows (numRows) of each side's partition, used to weigh
    average lengths. WHAT names the column in the log line that says how NDV was obtained.
    Without MERGE_HISTOGRAMS the result has no histogram (for reads that will not return
    it).
    """
    if not rows:
        raise ValueError("nothing to merge")
    first = rows[0]
    kinds = {r["STATS_KIND"] for r in rows}
    if len(kinds) != 1:
        raise ValueError(f"cannot merge statistics of different kinds {sorted(kinds)}")
    kind = first["STATS_KIND"]
    counts = list(row_counts) if row_counts is not None else [None] * len(rows)
    merged: dict[str, Any] = dict(first)
    for key in _SUMS:
        merged[key] = _sum([r[key] for r in rows])
    for key in ("LONG_LOW_VALUE", "DOUBLE_LOW_VALUE"):
        merged[key] = _min([r[key] for r in rows])
    for key in ("LONG_HIGH_VALUE", "DOUBLE_HIGH_VALUE"):
        merged[key] = _max([r[key] for r in rows])
    merged["BIG_DECIMAL_LOW_VALUE"] = _decimal_extreme(
        [r["BIG_DECIMAL_LOW_VALUE"] for r in rows], min
    )
    merged["BIG_DECIMAL_HIGH_VALUE"] = _decimal_extreme(
        [r["BIG_DECIMAL_HIGH_VALUE"] for r in rows], max
    )
    merged["MAX_COL_LEN"] = _max([r["MAX_COL_LEN"] for r in rows])
    merged["AVG_COL_LEN"] = _weighted_average(rows, counts)
    merged["LAST_ANALYZED"] = _max([r["LAST_ANALYZED"] for r in rows])

    if len(rows) > 1:
        _merge_ndv(merged, rows, kind, what)
    merged["HISTOGRAM"] = (
        _merge_histograms([r["HISTOGRAM"] for r in rows], what) if (merge_histograms) else None
    )
    return merged


def _merge_histograms(blobs: Sequence[bytes | None], what: str) -> bytes | None:
    present = [b for b in blobs if b is not None]
    if len(present) <= 1:
        return present[0] if present else None
    try:
        return kll_merge(present)
    except ValueError as e:  # unreadable, or of different k: keep the largest, like HMS
        log.warning("histograms of %s do not merge (%s); keeping the largest", what, e)
        return max(present, key=len)


def _merge_ndv(
    merged: dict[str, Any], rows: Sequence[Mapping[str, Any]], kind: str, what: str
) -> None:
    sketch = merge_sketch_blobs(r["BIT_VECTOR"] for r in rows)
    if sketch is not None:
        merged["BIT_VECTOR"] = sketch.to_bytes()
        merged["NUM_DISTINCTS"] = sketch.ndv()
        log.debug(
            "NDV of %s: %d, from the union of %d bit vectors",
            what,
            merged["NUM_DISTINCTS"],
            len(rows),
        )
        return
    merged["BIT_VECTOR"] = None
    ndv = _max([r["NUM_DISTINCTS"] for r in rows])
    low, high = merged["LONG_LOW_VALUE"], merged["LONG_HIGH_VALUE"]
    if ndv is not None and kind in _INTEGER_KINDS and low is not None and high is not None:
        ndv = min(ndv, high - low + 1)
    merged["NUM_DISTINCTS"] = ndv
    missing = sum(1 for r in rows if r["BIT_VECTOR"] is None)
    log.debug(
        "NDV of %s: %s, the largest of %d NDVs (%d without a bit vector, or the bit "
        "vectors do not merge)",
        what,
        ndv,
        len(rows),
        missing,
    )


def scale_sums(row: dict[str, Any], requested: int, found: int) -> None:
    """Extrapolate the sums of ROW from FOUND partitions to REQUESTED ones (HMS does this
    when 2 <= found < requested); low/high and NDV are left as observed."""
    if 2 <= found < requested:
        for key in _SUMS:
            if row[key] is not None:
                row[key] = round(row[key] * requested / found)
