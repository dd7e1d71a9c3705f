"""The table level of a run that read some partitions only (--incremental, --partition):
every stored partition's statistics merged, so that it equals what a full run finds.

The basic statistics are the sums of the partitions'. The column statistics are the
metastore's merge of the stored partitions' (get_aggr_stats_for: the counts, extremes and
lengths, and an NDV), and the sketches of the union: a bit vector (from which the NDV is
taken) and a histogram. A metastore returns those only when it returns sketches at all
(colstats with --fetch-bitvector and --fetch-histogram; HMS never returns merged ones), so
the job merges the missing ones itself: the sketches of the partitions it read in this run
(the scan's table level) with those the metastore returns for the others
(get_partitions_statistics_req, a page at a time). A metastore that returns no sketches of
the stored partitions (the default of colstats and of HMS) leaves them unknown: the table
level is then written without them (see writer.clear_unset_fields), with a warning that
names the settings that would keep them.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from hive_metastore_thrift import ttypes as t
from metastore.job.client import MetastoreClient
from metastore.job.scan import Partial
from metastore.job.source import Plan
from metastore.job.writer import MEASURED
from metastore.sketches import Sketch, kll_merge, merge_sketches, try_read_sketch
from metastore.stats import accurate
from metastore.thrift_stats import union_member

log = logging.getLogger(__name__)
PAGE = 1000
"""Partitions per call that reads their parameters."""
SKETCH_PAGE = 100
"""Partitions per call that reads their sketches (a few KiB a column each)."""
FETCH_SETTINGS = (
    "colstats: metastore serve --fetch-bitvector --fetch-histogram; HMS: "
    "metastore.stats.fetch.bitvector and metastore.stats.fetch.kll"
)


def table_level(
    client: MetastoreClient, plan: Plan, engine: str, read: Partial, read_names: Collection[str]
) -> tuple[dict[str, str], list[t.ColumnStatisticsObj]]:
    """The basic and column statistics of the table from every stored partition's, once the
    partitions READ_NAMES (whose merged statistics are READ) are written."""
    parts: list[str] = client.call("get_partition_names", plan.db, plan.table, -1)
    basic = stored_basic(client, plan, parts)
    aggr = client.call(
        "get_aggr_stats_for",
        t.PartitionsStatsRequest(
            dbName=plan.db,
            tblName=plan.table,
            colNames=[c.name.lower() for c in plan.columns],
            partNames=parts,
            engine=engine,
        ),
    )
    objs: list[t.ColumnStatisticsObj] = aggr.colStats
    by_name = {o.colName: union_member(o.statsData) for o in objs}
    bits = {name for name, stats in by_name.items() if _lacks_bit_vector(stats)}
    histograms = {name for name, stats in by_name.items() if _lacks_histogram(stats)}
    already = set(read_names)
    others = [p for p in parts if p not in already]
    unions = _Unions(read, bits, histograms)
    if bits or histograms:
        unions.add_stored(client, plan, engine, others)
    for name, stats in by_name.items():
        if name in unions.bits:
            stats.bitVectors = unions.bits[name].to_bytes()
        if name in unions.histograms:
            stats.histogram = unions.histogram(name)
    rows = accurate.row_count(basic)
    for stats in by_name.values():
        # One partition without a bit vector: its own NDV, which counts NULL already.
        if getattr(stats, "numDVs", None) is not None and (stats.bitVectors or len(parts) > 1):
            stats.numDVs = _ndv(stats, rows)
    _warn_unknown(sorted(bits - set(unions.bits)), sorted(histograms - set(unions.histograms)))
    return basic, objs


def stored_basic(client: MetastoreClient, plan: Plan, parts: list[str]) -> dict[str, str]:
    """The sums of the basic statistics of the stored partitions PARTS (those every
    partition has)."""
    totals = dict.fromkeys(MEASURED, 0)
    for start in range(0, len(parts), PAGE):
        for partition in client.call(
            "get_partitions_by_names", plan.db, plan.table, parts[start : start + PAGE]
        ):
            params = partition.parameters or {}
            for key in list(totals):
                text = params.get(key, "")
                if text.isdigit():
                    totals[key] += int(text)
                else:
                    del totals[key]
    return {key: str(total) for key, total in totals.items()}


def _lacks_bit_vector(stats: Any) -> bool:
    return getattr(stats, "numDVs", None) is not None and not stats.bitVectors


def _lacks_histogram(stats: Any) -> bool:
    """Whether STATS of values (a low value) come without their histogram."""
    return getattr(stats, "lowValue", None) is not None and stats.histogram is None


def _ndv(stats: Any, rows: int | None) -> int:
    """The NDV of the job's convention: the estimate of the distinct non-null values (of the
    union's bit vector, else the metastore's), at most their count, plus one for NULL.

    The metastore's NDV without a bit vector is its union estimate, which counts non-null
    values only. (If some partition had no bit vector, it is HMS's fallback instead, the
    largest partition NDV, which already counts NULL: then this may be one too high.)"""
    sketch = try_read_sketch(stats.bitVectors) if stats.bitVectors else None
    distinct: int = sketch.estimate() if sketch is not None else stats.numDVs
    nulls = stats.numNulls or 0
    if rows is not None:
        distinct = min(distinct, max(rows - nulls, 0))
    return distinct + (1 if nulls else 0)


class _Unions:
    """The union of the sketches of each column over the partitions: from the scan's table
    level READ to begin with, then the stored partitions' (add_stored). A column leaves BITS
    or HISTOGRAMS when a partition's statistics lack the sketch the union needs."""

    def __init__(self, read: Partial, bits: set[str], histograms: set[str]) -> None:
        states = {name.lower(): state for name, state in read.states.items()}
        self.bits: dict[str, Sketch] = {}
        self.histograms: dict[str, list[bytes]] = {}
        self._bits_empty: set[str] = set()
        """Columns whose union has no sketch yet (none was read)."""
        for name in bits:
            state = states.get(name)
            if state is not None and state.sketch is not None:
                self.bits[name] = state.sketch.copy()
            else:
                self._bits_empty.add(name)
        for name in histograms:
            state = states.get(name)
            found = state.histogram if state is not None else None
            self.histograms[name] = [found] if found is not None else []

    def add_stored(
        self, client: MetastoreClient, plan: Plan, engine: str, parts: list[str]
    ) -> None:
        """Merge in the sketches of the stored partitions PARTS, a page at a time, until
        every union is done or unknown."""
        for start in range(0, len(parts), SKETCH_PAGE):
            columns = sorted(set(self.bits) | self._bits_empty | set(self.histograms))
            if not columns:
                return
            found = client.call(
                "get_partitions_statistics_req",
                t.PartitionsStatsRequest(
                    dbName=plan.db,
                    tblName=plan.table,
                    colNames=columns,
                    partNames=parts[start : start + SKETCH_PAGE],
                    engine=engine,
                ),
            ).partStats
            for objs in found.values():
                for obj in objs:
                    self._add(obj.colName, union_member(obj.statsData))
            for name, blobs in self.histograms.items():  # one sketch a column in memory
                if len(blobs) > 1:
                    self.histograms[name] = [kll_merge(blobs)]

    def _add(self, name: str, stats: Any) -> None:
        if name in self.bits or name in self._bits_empty:
            sketch = try_read_sketch(stats.bitVectors) if stats.bitVectors else None
            union = self.bits.pop(name, None)
            self._bits_empty.discard(name)
            if sketch is not None:
                merged = merge_sketches([union, sketch]) if union is not None else sketch
                if merged is not None:
                    self.bits[name] = merged
        if name in self.histograms:
            if stats.histogram is not None:
                self.histograms[name].append(stats.histogram)
            elif getattr(stats, "lowValue", None) is not None:
                del self.histograms[name]

    def histogram(self, name: str) -> bytes | None:
        blobs = self.histograms[name]
        return kll_merge(blobs) if len(blobs) > 1 else (blobs[0] if blobs else None)


def _warn_unknown(bits: list[str], histograms: list[str]) -> None:
    missing = []
    if bits:
        missing.append(f"bit vectors of {', '.join(bits)}")
    if histograms:
        missing.append(f"histograms of {', '.join(histograms)}")
    if missing:
        log.warning(
            "the metastore returned no %s in some stored partition's statistics (written "
            "without them, or its fetch of sketches is off: %s): the table level is written "
            "without them",
            " nor ".join(missing),
            FETCH_SETTINGS,
        )
