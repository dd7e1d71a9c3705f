"""The merge of get_aggr_stats_for from summaries of runs of partitions
(metastore.stats.summaries) gives exactly the merge of the rows (metastore.stats.reads), for
any split of the partitions into runs: every kind of statistics, counts past the largest,
equal lows of other spellings, NaN, bit vectors of every kind (readable, unreadable,
absent, of several precisions), histograms, unknown row counts, and columns of several
kinds. The KLL union, which DataSketches randomizes, is replaced by one that shows its
inputs."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metastore import sketches
from metastore.sketches.fm import FMSketch
from metastore.sketches.hll import HyperLogLog
from metastore.sketches.kll import kll_build
from metastore.stats import reads, summaries
from metastore.stats.rows import as_row

COLUMNS = ["a", "b", "c"]
BITS = [
    HyperLogLog(12).add_longs(np.arange(40)).to_bytes(),
    HyperLogLog(12).add_longs(np.arange(30, 3000)).to_bytes(),
    HyperLogLog(12, dense=True).add_longs(np.arange(5)).to_bytes(),
    HyperLogLog(13).add_longs(np.arange(100)).to_bytes(),
    FMSketch(16).add_longs(np.arange(50)).to_bytes(),
    FMSketch(8).add_longs(np.arange(50)).to_bytes(),
    b"HL",
    b"junk",
]
HISTOGRAMS = [kll_build(np.arange(n, dtype=np.float32)) for n in (10, 300)]

counts = st.one_of(st.none(), st.integers(-3, 10), st.just(2**62))
floats = st.one_of(st.none(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), -2.25, 1e300]))
decimals = st.one_of(st.none(), st.sampled_from(["1.0", "1.00", "-3.5", "10", "-0.00"]))


@st.composite
def row(draw: Any, name: str, column: str, num_rows: str | None) -> tuple[Any, ...]:
    kind = draw(st.sampled_from(["long", "long", "long", "double", "decimal", "string"]))
    return (
        name,
        column,
        "bigint",
        kind,
        "hive",
        draw(st.one_of(st.none(), st.integers(-5, 5))),
        draw(st.one_of(st.none(), st.integers(-5, 50))),
        draw(floats),
        draw(floats),
        draw(decimals),
        draw(decimals),
        draw(st.one_of(st.none(), st.integers(0, 100))),
        draw(st.one_of(st.none(), st.sampled_from(BITS))),
        draw(st.one_of(st.none(), st.none(), st.sampled_from(HISTOGRAMS))),
        draw(st.one_of(st.none(), st.sampled_from([0.5, 3.25, 7.0, 1.1]))),
        draw(st.one_of(st.none(), st.integers(0, 9))),
        draw(counts),
        draw(counts),
        draw(counts),
        draw(st.one_of(st.none(), st.integers(0, 10))),
        num_rows,
    )


@st.composite
def partitions(draw: Any) -> list[tuple[tuple[Any, ...], ...]]:
    out = []
    for i in range(draw(st.integers(1, 12))):
        name = f"p={i:02d}"
        num_rows = draw(st.one_of(st.none(), st.sampled_from(["10", "0", "x", "100"])))
        columns = draw(st.lists(st.sampled_from(COLUMNS), unique=True))
        out.append(tuple(draw(row(name, c, num_rows)) for c in sorted(columns)))
    return out


def _same(merged: tuple[list[Any], int]) -> tuple[str, int]:
    rows, found = merged
    return repr([as_row(r) for r in rows]), found


def _joined_histograms(blobs: list[bytes]) -> bytes:
    """A stand-in for the KLL union, which DataSketches randomizes: what it is given, in
    order."""
    return b"|".join(blobs)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=partitions(),
    cuts=st.lists(st.integers(1, 11), max_size=5),
    histograms=st.booleans(),
    extra=st.integers(0, 3),
)
def test_runs_merge_as_the_rows_do(
    monkeypatch: pytest.MonkeyPatch,
    parts: list[tuple[tuple[Any, ...], ...]],
    cuts: list[int],
    histograms: bool,
    extra: int,
) -> None:
    monkeypatch.setattr(sketches, "kll_merge", _joined_histograms)
    requested = len(parts) + extra
    rows = [r for part in parts for r in part]
    expected = reads.aggregate_rows(rows, len(COLUMNS), requested, "db.t", histograms)
    bounds = sorted({0, len(parts), *(c for c in cuts if c < len(parts))})
    runs = [
        summaries.run_of(parts[start:end], len(COLUMNS))
        for start, end in itertools.pairwise(bounds)
    ]
    got = summaries.merge_runs(runs, requested, "db.t", histograms)
    assert _same(got) == _same(expected)
    # Runs merged in two levels, as the answers cache them.
    middle = len(runs) // 2
    if 0 < middle < len(runs):
        halves = [_joined(runs[:middle]), _joined(runs[middle:])]
        assert _same(summaries.merge_runs(halves, requested, "db.t", histograms)) == _same(expected)


def _joined(runs: list[summaries.Run]) -> summaries.Run:
    """One run of the partitions of RUNS, from their summaries."""
    by_column: dict[str, list[summaries.Summary]] = {}
    for run in runs:
        for name, summary in run.columns.items():
            by_column.setdefault(name, []).append(summary)
    columns = {name: summaries.combine(parts) for name, parts in by_column.items()}
    parts = tuple(part for run in runs for part in run.parts)
    return summaries.Run(columns, sum(run.found for run in runs), parts)
