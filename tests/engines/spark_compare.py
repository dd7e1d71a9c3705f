"""What test_spark_metastore.py needs besides the runs: the call log of our server (every
Thrift call, unknown methods included), and the side-by-side report of the steps that differ
from HMS."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import itertools
import json
import logging
import re
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conftest import RunningServer

Record = dict[str, Any]
# What must be equal between two runs of a step; "started" and "ended" are wall clock.
COMPARED = ("sql", "result", "partitions_scanned")
COLUMN = 64  # characters per column of the side-by-side report
SHOWN_STEPS = 3  # differing steps shown in full per assertion

_LINE = re.compile(r"^(\d+\.\d+)\t([^\t]*)\t([A-Z]+)\t(.*)$")


@dataclasses.dataclass(frozen=True)
class Call:
    """A line of the server's call log."""

    at: float
    thread: str
    level: str
    message: str


@contextlib.contextmanager
def call_log(running: RunningServer, path: Path) -> Iterator[None]:
    """Log every call RUNNING receives to PATH: `call NAME` as it arrives (UNKNOWN_METHOD
    for a method the server does not serve), then the service's own lines (`NAME ok in`,
    `NAME failed: Exception: message`), each with its wall-clock time."""
    processor = running.server._processor
    served = set(processor._processMap)
    log = logging.getLogger("metastore")
    calls = logging.getLogger("metastore.calls")

    def arrived(name: str, _type: int, _seqid: int) -> None:
        if name in served:
            calls.debug("call %s", name)
        else:
            calls.warning("UNKNOWN_METHOD %s", name)

    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(
        logging.Formatter("%(created).6f\t%(threadName)s\t%(levelname)s\t%(message)s")
    )
    level, propagate = log.level, log.propagate
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False  # thousands of lines: to the file only, not to pytest's report
    processor.on_message_begin(arrived)
    try:
        yield
    finally:
        processor.on_message_begin(None)
        log.removeHandler(handler)
        log.setLevel(level)
        log.propagate = propagate
        handler.close()


def read_calls(path: Path) -> list[Call]:
    """The lines of a call log; a traceback continues the message of its line."""
    calls: list[Call] = []
    if not path.exists():
        return calls
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        match = _LINE.match(line)
        if match:
            at, thread, level, message = match.groups()
            calls.append(Call(float(at), thread, level, message))
        elif calls:
            last = calls[-1]
            calls[-1] = dataclasses.replace(last, message=f"{last.message}\n{line}")
    return calls


def calls_during(calls: Sequence[Call], record: Record) -> list[Call]:
    return [c for c in calls if record["started"] - 0.05 <= c.at <= record["ended"] + 0.05]


def method_of(call: Call) -> str:
    return call.message.split(" ", 2)[1] if call.message.startswith(("call ", "UNKNOWN")) else ""


def failures(calls: Sequence[Call]) -> list[str]:
    """The calls that did not succeed, first line only, in order; a call Spark makes to
    check that something does not exist (get_table, get_database, get_function,
    get_partition_with_auth answering NoSuchObjectException) is a failure too, but HMS
    answers the same."""
    out = []
    for call in calls:
        if call.level in ("WARNING", "ERROR"):
            out.append(call.message.splitlines()[0][:300])
    return out


def summary_of_calls(calls: Sequence[Call]) -> str:
    """One line: how many calls, the unknown methods, the first failed calls."""
    methods = [method_of(c) for c in calls if method_of(c)]
    unknown = [c.message.split()[1] for c in calls if c.message.startswith("UNKNOWN_METHOD")]
    failed = [f for f in failures(calls) if not f.startswith("UNKNOWN_METHOD")]
    parts = [f"{len(methods)} calls"]
    if unknown:
        parts.append("UNKNOWN_METHOD " + ", ".join(dict.fromkeys(unknown)))
    if failed:
        parts.append("failed: " + " | ".join(failed[:4]) + (" | ..." if len(failed) > 4 else ""))
    return "; ".join(parts)


def _result_lines(record: Record | None) -> list[str]:
    if record is None:
        return ["(step not run: the workload stopped before it)"]
    result = record["result"]
    if "error" in result:
        lines = ["ERROR " + json.dumps(result["error"], sort_keys=True)]
    else:
        rows = result["rows"]
        lines = [json.dumps(row) for row in rows] if rows else ["(no rows)"]
    if "partitions_scanned" in record:
        lines.append("scanned: " + json.dumps(record["partitions_scanned"]))
    return lines


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(text, COLUMN, break_long_words=True, replace_whitespace=False) or [""]


def side_by_side(left: list[str], right: list[str], titles: tuple[str, str]) -> list[str]:
    """LEFT and RIGHT in two columns; runs of equal lines are collapsed, differing lines are
    wrapped (never cut) and marked with `|`."""
    out = [f"    {titles[0]:<{COLUMN}}   {titles[1]}"]
    matcher = difflib.SequenceMatcher(a=left, b=right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal" and i2 - i1 > 3:
            out.append(f"    ... {i2 - i1} equal lines ...")
            continue
        mark = " " if tag == "equal" else "|"
        for a, b in itertools.zip_longest(left[i1:i2], right[j1:j2], fillvalue=""):
            for wa, wb in itertools.zip_longest(_wrapped(a), _wrapped(b), fillvalue=""):
                out.append(f"    {wa:<{COLUMN}} {mark} {wb}")
    return out


def differing(
    expected: Sequence[Record], got: Sequence[Record]
) -> list[tuple[Record, Record | None]]:
    """The steps of EXPECTED whose compared fields differ in GOT (or that GOT lacks)."""
    by_key = {(r["section"], r["name"]): r for r in got}
    out = []
    for want in expected:
        have = by_key.get((want["section"], want["name"]))
        if have is None or any(want.get(k) != have.get(k) for k in COMPARED):
            out.append((want, have))
    return out


def report(
    section: str,
    target: str,
    diffs: Sequence[tuple[Record, Record | None]],
    total: int,
    calls: Sequence[Call],
) -> str:
    """The assertion message: which steps differ, the first ones side by side with the
    calls our server failed during them."""
    lines = [
        f"{len(diffs)} of {total} steps of section {section!r} differ between HMS 2.3.10 "
        f"and {target}: " + ", ".join(repr(want["name"]) for want, _ in diffs),
    ]
    for want, have in diffs[:SHOWN_STEPS]:
        lines += ["", f"[{section}] {want['name']}", f"  SQL: {want['sql']}"]
        if have is not None and have["sql"] != want["sql"]:
            lines.append(f"  {target} SQL: {have['sql']}")
        lines += side_by_side(_result_lines(want), _result_lines(have), ("HMS 2.3.10", target))
        if have is not None and calls:
            lines.append(f"  {target} calls: {summary_of_calls(calls_during(calls, have))}")
    if len(diffs) > SHOWN_STEPS:
        lines.append(f"\n... and {len(diffs) - SHOWN_STEPS} more differing steps")
    return "\n".join(lines)
