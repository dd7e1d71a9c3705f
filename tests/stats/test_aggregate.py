"""The merge rules of metastore.stats.aggregate, row by row (get_aggr_stats_for and
set_aggr_stats_for with needMerge use them through the server; this checks each rule)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from metastore.sketches import HyperLogLog, kll_build, kll_count
from metastore.stats import aggregate
from metastore.stats.rows import STATS_COLUMNS, StatsRow


def row(kind: str, **fields: Any) -> StatsRow:
    out: dict[str, Any] = dict.fromkeys(STATS_COLUMNS)
    out.update(COLUMN_NAME="c", COLUMN_TYPE="bigint", STATS_KIND=kind, ENGINE="hive")
    out.update(NUM_NULLS=0, LAST_ANALYZED=1)
    out.update(fields)
    return cast(StatsRow, out)


def hll(*values: int) -> bytes:
    return HyperLogLog().add_longs(list(values)).to_bytes()


def test_extremes_sums_and_lengths() -> None:
    merged = aggregate.merge_rows(
        [
            row("long", LONG_LOW_VALUE=5, LONG_HIGH_VALUE=10, NUM_NULLS=1, LAST_ANALYZED=7),
            row("long", LONG_LOW_VALUE=-3, LONG_HIGH_VALUE=8, NUM_NULLS=2, LAST_ANALYZED=9),
            row("long", LONG_LOW_VALUE=None, LONG_HIGH_VALUE=None, NUM_NULLS=4),
        ]
    )
    assert (merged["LONG_LOW_VALUE"], merged["LONG_HIGH_VALUE"]) == (-3, 10)
    assert merged["NUM_NULLS"] == 7
    assert merged["LAST_ANALYZED"] == 9

    booleans = aggregate.merge_rows(
        [row("boolean", NUM_TRUES=3, NUM_FALSES=1), row("boolean", NUM_TRUES=2, NUM_FALSES=None)]
    )
    assert (booleans["NUM_TRUES"], booleans["NUM_FALSES"]) == (5, 1)

    doubles = aggregate.merge_rows(
        [
            row("double", DOUBLE_LOW_VALUE=-0.5, DOUBLE_HIGH_VALUE=2.5),
            row("double", DOUBLE_LOW_VALUE=-1e300, DOUBLE_HIGH_VALUE=float("inf")),
        ]
    )
    assert (doubles["DOUBLE_LOW_VALUE"], doubles["DOUBLE_HIGH_VALUE"]) == (-1e300, float("inf"))


def test_decimals_are_compared_exactly_and_keep_their_text() -> None:
    merged = aggregate.merge_rows(
        [
            row("decimal", BIG_DECIMAL_LOW_VALUE="-10.50", BIG_DECIMAL_HIGH_VALUE="9.99"),
            row("decimal", BIG_DECIMAL_LOW_VALUE="-9.999", BIG_DECIMAL_HIGH_VALUE="10.0"),
            row(
                "decimal",
                BIG_DECIMAL_LOW_VALUE="0.12345678901234567890123456789012345678",
                BIG_DECIMAL_HIGH_VALUE="0.12345678901234567890123456789012345679",
            ),
        ]
    )
    assert merged["BIG_DECIMAL_LOW_VALUE"] == "-10.50"
    assert merged["BIG_DECIMAL_HIGH_VALUE"] == "10.0"


def test_string_lengths_max_and_average_weighted_by_non_null_rows() -> None:
    rows = [
        row("string", MAX_COL_LEN=4, AVG_COL_LEN=2.0, NUM_NULLS=10),
        row("string", MAX_COL_LEN=9, AVG_COL_LEN=5.0, NUM_NULLS=0),
    ]
    weighted = aggregate.merge_rows(rows, row_counts=[40, 10])
    assert weighted["MAX_COL_LEN"] == 9
    assert weighted["AVG_COL_LEN"] == pytest.approx((2.0 * 30 + 5.0 * 10) / 40)
    # A side without a row count: the plain average.
    assert aggregate.merge_rows(rows, row_counts=[40, None])["AVG_COL_LEN"] == 3.5
    assert aggregate.merge_rows(rows)["AVG_COL_LEN"] == 3.5


def test_ndv_is_the_estimate_of_the_union_of_the_bit_vectors() -> None:
    merged = aggregate.merge_rows(
        [
            row("long", NUM_DISTINCTS=3, BIT_VECTOR=hll(1, 2, 3)),
            row("long", NUM_DISTINCTS=3, BIT_VECTOR=hll(3, 4, 5)),
        ]
    )
    assert merged["NUM_DISTINCTS"] == 5
    assert merged["BIT_VECTOR"] is not None
    assert HyperLogLog.from_bytes(merged["BIT_VECTOR"]).estimate() == 5


def test_ndv_without_every_bit_vector_is_the_largest_capped_by_the_range() -> None:
    rows = [
        row("long", NUM_DISTINCTS=50, LONG_LOW_VALUE=0, LONG_HIGH_VALUE=9, BIT_VECTOR=hll(1)),
        row("long", NUM_DISTINCTS=8, LONG_LOW_VALUE=2, LONG_HIGH_VALUE=5, BIT_VECTOR=None),
    ]
    merged = aggregate.merge_rows(rows)
    assert merged["NUM_DISTINCTS"] == 10  # max 50, but only 0..9 fit
    assert merged["BIT_VECTOR"] is None
    # Doubles have no such cap; unreadable sketches count as missing.
    doubles = [
        row("double", NUM_DISTINCTS=50, DOUBLE_LOW_VALUE=0.0, DOUBLE_HIGH_VALUE=1.0),
        row("double", NUM_DISTINCTS=7, BIT_VECTOR=b"HL"),
    ]
    assert aggregate.merge_rows(doubles)["NUM_DISTINCTS"] == 50


def test_histograms_are_merged_or_left_out() -> None:
    rows = [
        row("long", HISTOGRAM=kll_build([1, 2, 3])),
        row("long", HISTOGRAM=None),
        row("long", HISTOGRAM=kll_build([4, 5])),
    ]
    histogram = aggregate.merge_rows(rows)["HISTOGRAM"]
    assert histogram is not None and kll_count(histogram) == 5
    assert aggregate.merge_rows(rows, merge_histograms=False)["HISTOGRAM"] is None
    # Of different k they do not merge: the largest is kept, as HMS does.
    small, large = kll_build([1.0], k=100), kll_build(list(range(500)), k=200)
    kept = aggregate.merge_rows([row("long", HISTOGRAM=small), row("long", HISTOGRAM=large)])
    assert kept["HISTOGRAM"] == large


def test_only_one_kind_merges() -> None:
    with pytest.raises(ValueError, match="different kinds"):
        aggregate.merge_rows([row("long"), row("double")])
    with pytest.raises(ValueError, match="nothing to merge"):
        aggregate.merge_rows([])


@pytest.mark.parametrize(
    ("requested", "found", "nulls"), [(10, 5, 14), (10, 1, 7), (10, 10, 7), (3, 2, 10)]
)
def test_sums_are_extrapolated_from_two_or_more_found_partitions(
    requested: int, found: int, nulls: int
) -> None:
    merged = row("long", NUM_NULLS=7, NUM_TRUES=None, LONG_LOW_VALUE=1)
    aggregate.scale_sums(merged, requested, found)
    assert merged["NUM_NULLS"] == nulls
    assert merged["NUM_TRUES"] is None and merged["LONG_LOW_VALUE"] == 1
