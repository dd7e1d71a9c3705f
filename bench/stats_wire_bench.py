"""Statistics answers from their rows to their bytes: through the generated structs
(stats_obj, then the accelerated protocol) against straight from the rows
(metastore.hms.stats_wire), in process, without a database or a server.

    python bench/stats_wire_bench.py [--partitions 200] [--cols 20] [--repeat 30]

For each answer the median of REPEAT runs of each way (after one untimed run), the ratio,
and whether the bytes are the same; the machine's load average last.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive_metastore_thrift import ttypes as t
from metastore.hms.stats_wire import StatsEncoder
from metastore.hms.structs.statistics import stats_obj
from metastore.stats.rows import StatsRow, as_row, empty_row
from metastore.vocabulary import Kind

SKETCH = bytes(range(256)) * 3
"""A bit vector of the size of Hive's HyperLogLog of a few thousand values."""


def _values(kind: Kind, n: int, c: int) -> dict[str, Any]:
    bounds: dict[Kind, dict[str, Any]] = {
        Kind.BOOLEAN: {"NUM_TRUES": n, "NUM_FALSES": c},
        Kind.LONG: {"LONG_LOW_VALUE": -n - c, "LONG_HIGH_VALUE": n + c},
        Kind.DOUBLE: {"DOUBLE_LOW_VALUE": -n / 3, "DOUBLE_HIGH_VALUE": c * 1.5},
        Kind.STRING: {"MAX_COL_LEN": 20 + c, "AVG_COL_LEN": 7.5},
        Kind.BINARY: {"MAX_COL_LEN": 20 + c, "AVG_COL_LEN": 7.5},
        Kind.DECIMAL: {"BIG_DECIMAL_LOW_VALUE": f"-{n}.25", "BIG_DECIMAL_HIGH_VALUE": f"{c}.50"},
        Kind.DATE: {"LONG_LOW_VALUE": 19_000 - n, "LONG_HIGH_VALUE": 19_000 + c},
        Kind.TIMESTAMP: {"LONG_LOW_VALUE": 1_700_000_000, "LONG_HIGH_VALUE": 1_800_000_000},
    }
    return {**bounds[kind], "NUM_NULLS": n % 7, "NUM_DISTINCTS": 100 + c}


def rows(partitions: int, cols: int, kinds: Sequence[Kind], sketches: bool) -> list[Any]:
    """Rows as metastore.stats.reads.partition_statistics returns them: PART_NAME, then
    the statistics columns; column C of kind KINDS[C % len(KINDS)]."""
    out = []
    for n in range(partitions):
        for c in range(cols):
            kind = kinds[c % len(kinds)]
            row: StatsRow = empty_row(f"c{c}", kind.value, kind.value, "hive")
            row.update(_values(kind, n, c))  # type: ignore[typeddict-item]
            row["BIT_VECTOR"] = SKETCH if sketches else None
            out.append((f"ds=2024-01-{n // 24 + 1:02d}/hr={n % 24}", *as_row(row)))
    return out


def _encoded(obj: Any) -> bytes:
    buffer = TMemoryBuffer()
    obj.write(TBinaryProtocolAccelerated(buffer))
    value: bytes = buffer.getvalue()
    return value


def through_structs(sketches: bool) -> dict[str, Callable[[list[Any]], bytes]]:
    def obj(row: Sequence[Any]) -> t.ColumnStatisticsObj:
        return stats_obj(row, fetch_bitvector=sketches, fetch_histogram=sketches)

    def partitions(rows: list[Any]) -> bytes:
        by_name: dict[str, list[t.ColumnStatisticsObj]] = {}
        for row in rows:
            by_name.setdefault(row[0], []).append(obj(row[1:]))
        return _encoded(t.PartitionsStatsResult(partStats=by_name))

    def table(rows: list[Any]) -> bytes:
        return _encoded(t.TableStatsResult(tableStats=[obj(row[1:]) for row in rows]))

    return {"partitions": partitions, "table": table}


def straight(sketches: bool) -> dict[str, Callable[[list[Any]], bytes]]:
    encoder = StatsEncoder(fetch_bitvector=sketches, fetch_histogram=sketches)
    return {
        "partitions": encoder.partitions_result,
        "table": lambda rows: encoder.table_result([row[1:] for row in rows]),
    }


def median_s(run: Callable[[], bytes], repeat: int) -> float:
    run()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=200)
    parser.add_argument("--cols", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args(argv)
    p, c = args.partitions, args.cols
    cases = [
        (f"partitions {p} x {c} bigint", "partitions", [Kind.LONG], False, p),
        (f"partitions {p} x {c} of every kind", "partitions", list(Kind), False, p),
        (f"partitions {p} x {c} of every kind, bit vectors", "partitions", list(Kind), True, p),
        (f"one partition x {c} bigint", "partitions", [Kind.LONG], False, 1),
        (f"table {c} bigint", "table", [Kind.LONG], False, 1),
        (f"table {c} of every kind, bit vectors", "table", list(Kind), True, 1),
        ("table 1 bigint", "table", [Kind.LONG], False, 1),
    ]
    print(f"{'answer':<46} {'structs':>10} {'straight':>10} {'ratio':>7}  same")
    for label, answer, kinds, sketches, partitions in cases:
        data = rows(partitions, 1 if label.endswith("1 bigint") else c, kinds, sketches)
        before, after = through_structs(sketches)[answer], straight(sketches)[answer]
        same = before(data) == after(data)
        slow = median_s(lambda b=before, d=data: b(d), args.repeat)  # type: ignore[misc]
        fast = median_s(lambda a=after, d=data: a(d), args.repeat)  # type: ignore[misc]
        print(f"{label:<46} {slow * 1e3:8.3f}ms {fast * 1e3:8.3f}ms {slow / fast:6.2f}x  {same}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
