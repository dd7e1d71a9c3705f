"""The report of rpc_bench: one table per backend, ratios and verdicts."""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

from hms_process import HMS_CONF
from raw_sql import RawTimings
from rpc_workload import CALLS, HMS_TARGETS, RAW_TARGET, WRITE, Workload
from timing import Timing

# Benchmark the checkout this script lives in, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


# ------------------------------------------------------------------------------------------
# Output


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.2f}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def backend_table(result: BackendResult, hms: dict[str, Timing] | None) -> list[str]:
    header = (
        "call",
        "p50 ms",
        "p99 ms",
        "calls/s",
        "n",
        "handler p50",
        "raw p50 ms",
        "ours/raw",
        "HMS p50 ms",
        "HMS/ours",
        f"<= {RAW_TARGET:g}x raw",
        "vs HMS (target)",
    )
    rows = [header]
    for call in CALLS:
        ours, raw = result.calls[call], result.raw.by_call[call]
        handler = result.handler.get(call)
        over_raw = ours.p50 / raw.p50
        hms_timing = hms.get(call) if hms else None
        speedup = hms_timing.p50 / ours.p50 if hms_timing else None
        target = HMS_TARGETS[call]
        rows.append(
            (
                call,
                _ms(ours.p50),
                _ms(ours.p99),
                f"{ours.per_second:.1f}",
                str(ours.n),
                _ms(handler.p50 if handler else None),
                _ms(raw.p50),
                _ratio(over_raw),
                _ms(hms_timing.p50 if hms_timing else None),
                _ratio(speedup),
                _verdict(over_raw <= RAW_TARGET),
                "-" if speedup is None else f"{_verdict(speedup >= target)} (>= {target:g}x)",
            )
        )
    return format_table(rows)


def write_forms_line(result: BackendResult) -> str:
    forms = ", ".join(
        f"{form} {_ms(timing.p50)} ms" for form, timing in result.raw.write_forms.items()
    )
    return f"raw {WRITE} p50: {forms} (the fastest is in the table)"


def hms_table(hms: dict[str, Timing]) -> list[str]:
    rows = [("call", "p50 ms", "p99 ms", "calls/s", "n")]
    for call in CALLS:
        timing = hms[call]
        rows.append(
            (call, _ms(timing.p50), _ms(timing.p99), f"{timing.per_second:.2f}", str(timing.n))
        )
    return format_table(rows)


def format_table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        cells = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * width for width in widths))
    return lines


def print_header(args: argparse.Namespace, w: Workload, with_hms: bool) -> None:
    rows = w.parts * w.cols
    print(
        f"colstats RPC benchmark: {w.parts} partitions x {w.cols} bigint columns "
        f"({rows:,} statistics rows); Python {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"at most {args.repeat} timed calls or {args.budget:g} s per measurement"
    )
    notes = [
        "Our server runs in a process of its own with Settings() defaults (fetch_bitvector "
        "off); the "
        "generated client calls it over TBufferedTransport + TBinaryProtocolAccelerated on "
        "loopback.",
        "p50/p99/calls/s are per call as the client sees them (request encoding and answer "
        "decoding included); p99 is nearest-rank, i.e. the maximum when n < 100.",
        "handler p50 = time inside the server's handler method for the same calls (no "
        "socket, no Thrift encoding or decoding).",
        "raw = the call's SQL with SQLAlchemy Core, rows fetched as tuples; for "
        f"{WRITE}: partition-id lookup + INSERT ... ON CONFLICT DO UPDATE of {rows:,} rows "
        "in one transaction, the fastest of the forms listed under each table. Ratios "
        "compare p50s.",
        "Before each measurement PostgreSQL tables are vacuumed and analyzed (each upsert "
        "leaves dead rows) and SQLite's WAL is checkpointed.",
    ]
    if with_hms:
        conf = ", ".join(f"{k}={v}" for k, v in HMS_CONF.items())
        notes += [
            "HMS = Hive Metastore 2.3.10 from pyspark's jars with embedded Derby in a temp "
            f"dir, log level WARN; {conf}.",
            "HMS's aggregate stats cache is DISABLED, so its get_aggr_stats_for computes "
            "every answer, as ours does.",
        ]
    for note in notes:
        print(f"  - {note}")


def print_report(
    args: argparse.Namespace,
    w: Workload,
    results: list[BackendResult],
    hms: dict[str, Timing] | None,
    skipped: dict[str, str],
    load_at_start: float,
) -> None:
    print()
    print_header(args, w, hms is not None)
    print(f"  - load average (1 min) at start {load_at_start:.2f}, at end {load()[0]:.2f}")
    for result in results:
        print()
        print(f"== {result.name} ({result.description}) ==")
        for line in backend_table(result, hms):
            print(line)
        print(write_forms_line(result))
    if hms is not None:
        print()
        print("== Hive Metastore 2.3.10 (embedded Derby) ==")
        for line in hms_table(hms):
            print(line)
    for name, reason in skipped.items():
        print(f"\n{name}: skipped ({reason})")


@dataclasses.dataclass(frozen=True)
class BackendResult:
    name: str
    description: str
    calls: dict[str, Timing]
    handler: dict[str, Timing]
    raw: RawTimings


def load() -> tuple[float, float, float]:
    """The machine's load averages: other work on it skews the timings."""
    return os.getloadavg()
