"""The targets of bench/planner_bench.py and its printed report: each call's p50 on every
backend, the ratios of each HMS to each of ours, whether the targets are met, and the floors.

The targets are judged against HMS 2.3.10 on PostgreSQL (`hms-postgresql`) when it ran, as
sites run it, on the same server as ours; else against HMS on its embedded Derby (`hms`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from planner_floors import COMMIT, READ, ROWS

ROUND_JVM = "planner round, 4 JVM threads (rounds/s)"
ROUND_THREADS = "planner round, 4 threads (rounds/s)"
ROUND_PROCESSES = "planner round, 4 processes (rounds/s)"
NO_OP = "a call that does nothing (set_ugi)"
ICEBERG_COMMIT = "iceberg commit (lock, get_table, alter, unlock)"
WRITES = ("update_partition_column_statistics", "add_partition")
FLOOR_TARGETS = {"update_partition_column_statistics": 1.5, "add_partition": 2.0}
"""Each write's target over its floor: a call that does nothing plus a durable commit."""

# Targets: HMS's p50 / ours (throughput: ours / HMS's), cold and warm.
TARGETS: dict[str, tuple[float | None, float | None]] = {
    "get_table": (3.0, 10.0),
    "get_partition_names": (None, 5.0),
    "get_partitions_by_filter (a day)": (None, 5.0),
    ROUND_JVM: (None, 10.0),
    ROUND_THREADS: (None, 10.0),
    ROUND_PROCESSES: (None, 10.0),
    "update_partition_column_statistics": (10.0, 10.0),
    "add_partition": (5.0, 5.0),
}

DECODING = "its answer decoded by this script's client, no server"
"""The floor a read's answer sets with this script's client: the accelerated binary
protocol's decoding of the answer's bytes, in process (partition_bench.decoding)."""

RAW = "its answer read as bytes, not decoded"
"""The server's part of a read and the transfer of its answer: the request's bytes sent and
the reply's read whole on a connection of their own, nothing decoded
(raw_calls.RawCaller)."""

AFTER_WRITE_TARGET = 5.0
"""HMS's p50 / ours of the statistics reads of the table right after a write (warm)."""

HMS_LABELS = {"hms": "HMS-Derby", "hms-postgresql": "HMS-PostgreSQL"}
"""The HMS backends (their keys in the results) and their names in the report."""
HMS_DESCRIPTIONS = {
    "hms": "HMS 2.3.10 on its embedded Derby",
    "hms-postgresql": "HMS 2.3.10 on PostgreSQL (Hive's schema, direct SQL on)",
}
JUDGED_FIRST = ("hms-postgresql", "hms")
"""The HMS the targets are judged against: the first of these that ran."""


def beside(write: str, floor: str) -> str:
    """The name of a part of WRITE's floor timed in turns with it."""
    return f"{write}, in turns with it: {floor}"


def judged_hms(results: dict[str, dict[str, float]]) -> str | None:
    """The HMS backend in RESULTS that the targets are judged against, or None."""
    return next((hms for hms in JUDGED_FIRST if hms in results), None)


def report_adopted(
    adopted: dict[str, dict[str, float]], results: dict[str, dict[str, float]]
) -> None:
    """Each call on the adopted database against the same call on a database colstats made."""
    print("\non a database adopted from HMS, against one colstats made (PostgreSQL; target 1.2x):")
    for mode, result in adopted.items():
        ours = results.get(f"postgresql {mode}")
        if ours is None:
            continue
        for name, value in result.items():
            if name not in ours or name in (COMMIT, READ):
                continue
            throughput_ = name.endswith("(rounds/s)")
            ratio = ours[name] / value if throughput_ else value / ours[name]
            flag = "" if ratio <= 1.2 else "  MISSED"
            print(f"  {mode:<5} {name:<48} {ratio:5.2f}x{flag}")


def report(results: dict[str, dict[str, float]], args: argparse.Namespace) -> None:
    """The table of p50s (rounds per second for the planner rounds), with, when an HMS and
    one of ours ran, each HMS's ratio to each of ours and the targets judged against
    `judged_hms`; then the floors."""
    hms_backends = [b for b in results if b in HMS_LABELS]
    ours = [b for b in results if b not in HMS_LABELS]
    # Ratios and targets when an HMS and one of ours both ran.
    judged = judged_hms(results) if ours else None
    print(
        f"\nplanner calls on a table of {args.cols} columns and {args.days * args.hours} "
        "partitions, p50 in ms (rounds per second for the planner round):"
    )
    if judged is not None:
        print(
            f"targets (HMS's p50 / ours; rounds: ours / HMS's) judged against "
            f"{HMS_LABELS[judged]}: {HMS_DESCRIPTIONS[judged]}"
        )
    header = ["call", *(HMS_LABELS.get(b, b) for b in results)]
    if judged is not None:
        header += [f"{HMS_LABELS[hms]} / {b}" for hms in hms_backends for b in ours]
        header += ["target (cold, warm)", f"met against {HMS_LABELS[judged]}"]
    rows = [header]
    names = list(dict.fromkeys(name for result in results.values() for name in result))
    for name in names:
        throughput_ = name.endswith("(rounds/s)")
        row = [name, *(_cell(results[b].get(name), throughput_) for b in results)]
        if judged is not None:
            for hms in hms_backends:
                ratios = _ratios(results, hms, ours, name)
                row += [f"{ratios[b]:.1f}x" if b in ratios else "-" for b in ours]
            judged_ratios = _ratios(results, judged, ours, name)
            if judged_ratios:
                cold, warm = _target(name, args)
                row += [f"{cold or '-'}x, {warm or '-'}x", _met(judged_ratios, cold, warm)]
            else:
                row += ["-", "-"]
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, row in enumerate(rows):
        print(
            "  ".join(
                v.rjust(w) if i and j else v.ljust(w)
                for j, (v, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if i == 0:
            print("  ".join("-" * w for w in widths))
    if judged is not None:
        _report_floors(results, ours, judged, args)


def _ratios(
    results: dict[str, dict[str, float]], hms: str, ours: Sequence[str], name: str
) -> dict[str, float]:
    """HMS's p50 / ours of the call NAME (rounds per second: ours / HMS's), by backend of
    ours that measured it; none when HMS did not, or for a decoding in process (no server)."""
    if name not in results[hms] or name.endswith(DECODING):
        return {}
    theirs = results[hms][name]
    throughput_ = name.endswith("(rounds/s)")
    return {
        b: results[b][name] / theirs if throughput_ else theirs / results[b][name]
        for b in ours
        if name in results[b]
    }


def _target(name: str, args: argparse.Namespace) -> tuple[float | None, float | None]:
    """The targets of the call NAME (HMS / ours, cold and warm)."""
    after = f"after a write ({args.days * args.hours:,} x {args.cols})"
    if after in name and not name.startswith("get_partitions_by_names") and RAW not in name:
        return None, AFTER_WRITE_TARGET
    return TARGETS.get(name, (None, None))


def _cell(value: float | None, throughput_: bool) -> str:
    """VALUE as the table shows it: rounds per second, or ms; '-' when not measured."""
    if value is None:
        return "-"
    return f"{value:.0f}" if throughput_ else f"{value * 1e3:.2f}"


def _report_floors(
    results: dict[str, dict[str, float]],
    ours: Sequence[str],
    judged: str,
    args: argparse.Namespace,
) -> None:
    """For each write, the ratio to the HMS JUDGED against that our floor allows: a write
    through a server costs at least a call that does nothing plus a durable commit; the same
    for the warm reads, whose floor is a call that does nothing plus their least
    statements."""
    hms = results[judged]
    label = HMS_LABELS[judged]
    print(
        f"\nthe most a write can be faster than HMS here, against {label} "
        f"({label} / (no-op call + durable commit)):"
    )
    for write in WRITES:
        allowed = []
        for b in ours:
            floor = results[b][NO_OP] + results[b][COMMIT]
            allowed.append(f"{b} {hms[write] / floor:.1f}x")
        target = TARGETS[write][1]
        print(f"  {write} (target {target:g}x): " + ", ".join(allowed))
    print(
        "\neach write over its floor (ours / (no-op call + durable commit), timed in turns "
        "with it):"
    )
    for write in WRITES:
        over = []
        for b in ours:
            floor = results[b][beside(write, NO_OP)] + results[b][beside(write, COMMIT)]
            ratio = results[b][write] / floor
            flag = "" if ratio <= FLOOR_TARGETS[write] else " MISSED"
            over.append(f"{b} {ratio:.2f}x (floor {floor * 1e3:.2f} ms){flag}")
        print(f"  {write} (target {FLOOR_TARGETS[write]:g}x): " + ", ".join(over))
    write, rows, no_op = WRITES[0], beside(WRITES[0], ROWS), beside(WRITES[0], NO_OP)
    over = [
        f"{b} {results[b][write] / (results[b][no_op] + results[b][rows]):.2f}x "
        f"(the rows alone {results[b][rows] * 1e3:.2f} ms)"
        for b in ours
        if rows in results[b]
    ]
    if over:
        print(
            f"  {write} over a call that does nothing plus its rows' own upsert (a table "
            "of PART_COL_STATS's shape, the same rows, one statement, durable; none of the "
            "rest of the write): " + ", ".join(over)
        )
    print(
        f"\nthe most a warm read can be faster than HMS here, against {label} ({label} / "
        "(no-op call + its least statements: one, the versions, read with what changed after "
        "a write for the statistics reads; two for the partitions read after a write)):"
    )
    for name in hms:
        if name.endswith("(rounds/s)") or name in WRITES or name == ICEBERG_COMMIT:
            continue
        if name.endswith((DECODING, RAW)):
            continue
        statements = 2 if name.startswith("get_partitions_by_names") and "after" in name else 1
        target = _target(name, args)[1]
        allowed = []
        for b in (b for b in ours if b.endswith("warm")):
            floor = results[b][NO_OP] + statements * results[b][READ]
            allowed.append(f"{b} {hms[name] / floor:.1f}x (floor {floor * 1e3:.2f} ms)")
            # This script's client decodes the answer after the server sent it.
            decoded = results[b].get(f"{name}, {DECODING}")
            if decoded is not None:
                floor += decoded
                allowed.append(
                    f"with this script's client's decoding of the answer "
                    f"{hms[name] / floor:.1f}x (floor {floor * 1e3:.2f} ms)"
                )
        if allowed:
            print(f"  {name}, target {target or '-'}x: " + ", ".join(allowed))


def _met(ratios: dict[str, float], cold: float | None, warm: float | None) -> str:
    missed = [
        b
        for b, ratio in ratios.items()
        if (target := cold if b.endswith("cold") else warm) is not None and ratio < target
    ]
    if cold is None and warm is None:
        return ""
    return "yes" if not missed else "MISSED: " + ", ".join(missed)
