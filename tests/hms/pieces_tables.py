"""The table, statistics and counts the tests of answers rebuilt by the partitions that
changed share (tests/hms/test_pieces.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from conftest import RunningServer
from metadata_builders import EVERY_TYPE, Client, column_stats, database, fields, partition, table

from hive_metastore_thrift import ttypes as t
from metastore.hms import pieces, stats_wire
from metastore.sketches.hll import HyperLogLog
from metastore.stats import summaries

COLUMNS = EVERY_TYPE
KEYS = fields(("ds", "string"))
VALUES = ["2024-01-01", "2024-01-02", "2024-01-03", "é ü x", "2024-01-05", "2024-01-06"]


def _decimal(unscaled: int) -> t.Decimal:
    return t.Decimal(scale=2, unscaled=unscaled.to_bytes(4, "big", signed=True))


def every_kind(n: int, sketches: bool = True) -> list[t.ColumnStatisticsObj]:
    """Statistics of every kind for COLUMNS, varied by N; with SKETCHES, bit vectors."""
    readable = HyperLogLog(12).add_longs(np.arange(n, n * 3 + 2)).to_bytes()
    bits = (readable if n % 3 else b"HL" + bytes([n % 256]) * 6) if sketches else None
    d: Any = t.ColumnStatisticsData  # generated, untyped
    data = [
        d(booleanStats=t.BooleanColumnStatsData(numTrues=n, numFalses=n + 1, numNulls=2)),
        d(longStats=t.LongColumnStatsData(-n, n, 1, n + 1, bits)),
        d(doubleStats=t.DoubleColumnStatsData(-n / 3, n * 1.5, 0, n + 2, bits)),
        d(stringStats=t.StringColumnStatsData(n + 3, 4.25, 1, n + 1, bits)),
        d(binaryStats=t.BinaryColumnStatsData(n + 7, 3.5, 0)),
        d(decimalStats=t.DecimalColumnStatsData(_decimal(-n), _decimal(n * 100), 0, n + 1, bits)),
        d(dateStats=t.DateColumnStatsData(t.Date(19000 - n), t.Date(19000 + n), 0, n + 1, bits)),
        d(
            timestampStats=t.TimestampColumnStatsData(
                t.Timestamp(1_700_000_000 - n), t.Timestamp(1_700_000_000 + n), 0, n + 1, bits
            )
        ),
    ]
    return [
        t.ColumnStatisticsObj(f.name, f.type, value) for f, value in zip(COLUMNS, data, strict=True)
    ]


def make_table(client: Client, db: str) -> None:
    client.create_database(database(db))
    client.create_table(table(db, "t", keys=KEYS, cols=COLUMNS))
    client.add_partitions([partition(db, "t", [v]) for v in VALUES])
    for n, v in enumerate(VALUES[:-1]):  # the last partition has no statistics
        client.update_partition_column_statistics(column_stats(db, "t", every_kind(n), f"ds={v}"))


def every_partition(db: str) -> t.PartitionsStatsRequest:
    """The statistics request of every column and partition of make_table's table in DB."""
    return t.PartitionsStatsRequest(db, "t", [f.name for f in COLUMNS], [f"ds={v}" for v in VALUES])


def cache_counts(server: RunningServer, name: str) -> tuple[int, int]:
    cache = server.server.cache
    assert cache is not None
    return cache.counters.hits[name], cache.counters.misses[name]


class Built:
    """The partitions whose parts of an answer of get_partitions_statistics_req the servers
    of this test encode (ENTRIES, by name), and the number of partitions of each run of
    partitions whose statistics they merge for get_aggr_stats_for (RUNS)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entries: list[str] = []
        self.runs: list[int] = []
        entry, run_of = stats_wire.partition_entry, summaries.run_of

        def counted_entry(name: str, objs: list[bytes]) -> bytes:
            self.entries.append(name)
            return entry(name, objs)

        def counted_run(parts: Any, asked: int) -> summaries.Run:
            self.runs.append(len(parts))
            return run_of(parts, asked)

        monkeypatch.setattr(pieces, "partition_entry", counted_entry)
        monkeypatch.setattr(summaries, "run_of", counted_run)

    def clear(self) -> None:
        self.entries.clear()
        self.runs.clear()
