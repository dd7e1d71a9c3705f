"""Spark 4.1 on colstats gives what it gives on a real Hive Metastore 2.3.10.

The workload (spark_steps.py: databases, tables, inserts, partition pruning, partition DDL,
ALTER TABLE, CTAS and TRUNCATE, views, functions, ANALYZE, errors, drops) runs once per
metastore, each in a Spark process of its own (spark_workload.py) with a warehouse of its own:
first against our server (in-process, on a new SQLite database) while HMS starts, then against
HMS (pyspark's jars, Derby). Every section is then a test that compares the two runs step by
step; the message shows the first differing steps side by side, with the calls our server
failed during them (unknown methods, exceptions) from its call log. Other tests check facts
on each run (which partitions a pruned scan read, SHOW PARTITIONS, rows after renames, error
conditions), so that both metastores being wrong the same way cannot pass.

METASTORE_SPARK_TARGETS (comma-separated, default `sqlite`) names what is compared with HMS:
`sqlite`, `postgresql` (our server on each), `hms` (a second HMS: two runs of HMS must compare
equal, which checks the normalization). METASTORE_SPARK_KEEP=DIR copies every run's records,
Spark output and call log to DIR/<run>/; METASTORE_SPARK_REPLAY=DIR compares runs kept there
instead of running Spark (to work on the comparisons, or to read a report again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from conftest import RunningServer, empty_database
from hms_process import pyspark_jars, started_hive_metastore
from spark_compare import Call, Record, call_log, differing, read_calls, report
from spark_steps import SECTIONS, STEPS
from spark_workload import MAP_ENTRY, MAP_ROWS

from metastore.config import Settings
from metastore.store import migrate

pytestmark = [pytest.mark.spark, pytest.mark.hms]

WORKLOAD = Path(__file__).with_name("spark_workload.py")
TARGETS = [t for t in os.environ.get("METASTORE_SPARK_TARGETS", "sqlite").split(",") if t]
KNOWN_TARGETS = ("sqlite", "postgresql", "hms")
REFERENCE = "reference"  # the run on HMS every target is compared with
RUNS = [REFERENCE, *TARGETS]
RUN_TIMEOUT_S = 1200.0
# Once in seven runs on a loaded machine, HMS answered the filter `ds = "2024-01-01" and hr = 1`
# with MetaException (the reference itself was wrong; its log was not kept, and later runs did
# not fail). The likely cause: Derby stops optimizing a statement after a time that depends on
# the machine's load, so HMS's direct SQL may get a plan that fails, and its ORM fallback
# refuses filters on int keys. Full optimization makes the plan the same on every run.
HMS_JAVA_OPTIONS = ("-Dderby.optimizer.noTimeout=true",)


@dataclasses.dataclass
class Run:
    name: str
    records: list[Record]
    returncode: int
    output_tail: str
    seconds: float
    calls: list[Call]

    def record(self, section: str, name: str) -> Record:
        for r in self.records:
            if (r["section"], r["name"]) == (section, name):
                return r
        raise AssertionError(f"{self.name}: step [{section}] {name!r} did not run")


def _unavailable(reason: str) -> NoReturn:
    """Skip, except in CI, which installs pyspark and a JDK and so must run this test."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}, and CI=true requires it")
    pytest.skip(reason)


def _jars() -> Path:
    if importlib.util.find_spec("pyspark") is None:
        _unavailable("pyspark is not installed (pip install -e '.[spark]')")
    if shutil.which("java") is None:
        _unavailable("java is not installed (a JDK 17 is needed)")
    return pyspark_jars()


def _tail(path: Path, lines: int = 40) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _run_workload(name: str, port: int, workdir: Path, calls_path: Path | None) -> Run:
    out, output = workdir / "steps.jsonl", workdir / "spark.log"
    started = time.perf_counter()
    with output.open("wb") as sink:
        done = subprocess.run(
            [
                sys.executable,
                str(WORKLOAD),
                *("--uri", f"thrift://127.0.0.1:{port}"),
                *("--warehouse", str(workdir / "warehouse")),
                *("--out", str(out)),
            ],
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    calls = read_calls(calls_path) if calls_path is not None else []
    run = Run(name, records, done.returncode, _tail(output), time.perf_counter() - started, calls)
    sys.stderr.write(f"spark workload on {name}: {len(records)} steps in {run.seconds:.0f} s\n")
    return run


def _run_on_colstats(backend: str, workdir: Path) -> Run:
    with contextlib.contextmanager(empty_database)(backend, workdir) as url:
        migrate.upgrade(url)
        running = RunningServer(url, Settings())
        try:
            with call_log(running, workdir / "calls.log"):
                return _run_workload(
                    f"colstats ({backend})", running.port, workdir, workdir / "calls.log"
                )
        finally:
            running.stop()


def _keep(run: Run, workdir: Path, key: str) -> None:
    keep = os.environ.get("METASTORE_SPARK_KEEP")
    if keep:
        target = Path(keep) / key
        target.mkdir(parents=True, exist_ok=True)
        for name in ("steps.jsonl", "spark.log", "calls.log", "hms.log"):
            if (workdir / name).exists():
                shutil.copy(workdir / name, target / name)


def _replayed(kept: Path, name: str) -> Run:
    """A run kept by METASTORE_SPARK_KEEP, read back instead of running Spark."""
    steps = kept / "steps.jsonl"
    records = [json.loads(line) for line in steps.read_text().splitlines()]
    shown = {REFERENCE: "HMS 2.3.10", "hms": "HMS 2.3.10 (second run)"}.get(
        name, f"colstats ({name})"
    )
    return Run(shown, records, 0, "(replayed)", 0.0, read_calls(kept / "calls.log"))


@contextlib.contextmanager
def _hms_run(jars: Path, workdir: Path, before: Callable[[], None] | None = None) -> Iterator[Run]:
    """Start HMS, do BEFORE while it starts, then run the workload on it; its log is kept."""
    with started_hive_metastore(jars, HMS_JAVA_OPTIONS) as hms:
        if before is not None:
            before()
        hms.wait()
        try:
            yield _run_workload("HMS 2.3.10", hms.port, workdir, None)
        finally:
            logs = [hms.log, *sorted((hms.home / "logs").glob("*"))]
            with (workdir / "hms.log").open("wb") as sink:
                for log in logs:
                    if log.is_file():
                        sink.write(log.read_bytes())


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """The workload's records on HMS (REFERENCE) and on every target, by name."""
    unknown = set(TARGETS) - set(KNOWN_TARGETS)
    assert not unknown, f"METASTORE_SPARK_TARGETS: unknown {sorted(unknown)}"
    replay = os.environ.get("METASTORE_SPARK_REPLAY")
    if replay:
        return {name: _replayed(Path(replay) / name, name) for name in RUNS}
    jars = _jars()
    out: dict[str, Run] = {}
    started = time.perf_counter()

    def targets() -> None:
        for target in TARGETS:
            workdir = tmp_path_factory.mktemp(f"spark-{target}")
            if target == "hms":
                with _hms_run(jars, workdir) as run:
                    out[target] = dataclasses.replace(run, name="HMS 2.3.10 (second run)")
            else:
                out[target] = _run_on_colstats(target, workdir)
            _keep(out[target], workdir, target)

    # HMS takes 10 to 60 s to start: the targets run meanwhile (one Spark at a time).
    reference = tmp_path_factory.mktemp("spark-reference")
    with _hms_run(jars, reference, before=targets) as run:
        out[REFERENCE] = run
    _keep(run, reference, REFERENCE)
    sys.stderr.write(f"spark workloads done in {time.perf_counter() - started:.0f} s\n")
    if run.returncode != 0 or len(run.records) != len(STEPS):
        pytest.fail(
            f"the workload failed on HMS ({len(run.records)} of {len(STEPS)} steps, exit code "
            f"{run.returncode}): the reference is broken, not the server.\n{run.output_tail}"
        )
    return out


# ------------------------------------------------------------------------------------------
# The same results as HMS, section by section


def _without_keys(record: Record, keys: tuple[str, ...]) -> Record:
    """RECORD with the entries KEYS left out of the parameter maps DESCRIBE prints
    ("[k1=v1, k2=v2]") and out of the (key, value) rows SHOW TBLPROPERTIES prints."""
    rows = record["result"].get("rows")
    if rows is None:
        return record

    def kept_map(text: str) -> str:
        if not (text.startswith("[") and text.endswith("]")):
            return text
        entries = [e for e in MAP_ENTRY.split(text[1:-1]) if e.split("=", 1)[0] not in keys]
        return "[" + ", ".join(entries) + "]"

    out = []
    for row in rows:
        if row and row[0] in keys:
            continue
        if len(row) >= 2 and row[0] in MAP_ROWS and isinstance(row[1], str):
            row = [row[0], kept_map(row[1]), *row[2:]]
        out.append(row)
    return {**record, "result": {"rows": out}}


def _location_set(record: Record) -> Record:
    """HMS 4 changes a database's location (new tables go there); HMS 2.3 ignored it and
    Spark reports that as an error."""
    return {**record, "result": {"rows": []}}


def _describe_moved_database(record: Record) -> Record:
    text = json.dumps(record).replace("file:<WH>/sales.db", "file:<WH>/elsewhere.db")
    out: Record = json.loads(text)
    return out


# Where colstats answers differently from HMS 2.3.10 on purpose: the step, what colstats must
# give instead (from HMS's record), and why. Compared on our server's runs only.
DELIBERATE: dict[tuple[str, str], Callable[[Record], Record]] = {
    ("errors", "set database location"): _location_set,
    ("errors", "describe database after failed set location"): _describe_moved_database,
}
# Spark's ANALYZE keys are kept by colstats as Hive-format statistics (issue 10: numRows,
# COLUMN_STATS_ACCURATE in the parameters DESCRIBE prints); HMS keeps only Spark's hidden
# keys. The statistics themselves are checked by the statistics tests; here both sides are
# compared without these two entries in the analyze section.
STATISTICS_KEYS = ("COLUMN_STATS_ACCURATE", "numRows")


def expected_of(record: Record) -> Record:
    """What our server must give for the step HMS gave RECORD for."""
    change = DELIBERATE.get((record["section"], record["name"]))
    record = change(record) if change else record
    if record["section"] == "analyze":
        record = _without_keys(record, STATISTICS_KEYS)
    return record


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("section", SECTIONS)
def test_same_results_as_hms(runs: dict[str, Run], section: str, target: str) -> None:
    expected = [r for r in runs[REFERENCE].records if r["section"] == section]
    if target != "hms":
        expected = [expected_of(r) for r in expected]
    got = runs[target]
    records = [r for r in got.records if r["section"] == section]
    if target != "hms" and section == "analyze":
        records = [_without_keys(r, STATISTICS_KEYS) for r in records]
    diffs = differing(expected, records)
    if diffs:
        pytest.fail(report(section, got.name, diffs, len(expected), got.calls), pytrace=False)


# ------------------------------------------------------------------------------------------
# Facts that hold on every run


@pytest.mark.parametrize("run", RUNS)
def test_every_step_ran(runs: dict[str, Run], run: str) -> None:
    got = runs[run]
    assert got.returncode == 0, f"the workload process failed:\n{got.output_tail}"
    ran = [(r["section"], r["name"]) for r in got.records]
    assert ran == [(s.section, s.name) for s in STEPS]


EVENTS = [
    ("2023-12-31", 23),
    ("2024-01-01", 1),
    ("2024-01-01", 2),
    ("2024-01-02", 1),
    ("2024-01-02", 3),
    ("2024-01-03", 1),
    ("2024-01-03", 12),
    ("2024-01-04", 5),
    ("2024-01-04", 7),
]
ORDERS = [("2024-01-01", "eu"), ("2024-01-01", "us"), ("2024-01-02", "eu"), ("2024-01-03", "apac")]
LOGS = [("2024-01-01", 1), ("2024-01-15", 2), ("2024-01-15", 4), ("2024-02-01", 3)]
ELEVEN_DATES = {f"2024-01-{d:02d}" for d in range(1, 12)}
ELEVEN_DAYS = {f"2024-01-{d:02d}" for d in range(11, 22)}

Keep = Callable[[Any, Any], bool]
# The partitions each pruning step must read, as a predicate on the partition's values.
PRUNED: dict[str, tuple[str, Keep]] = {
    "string =": ("events", lambda ds, hr: ds == "2024-01-01"),
    "string <": ("events", lambda ds, hr: ds < "2024-01-02"),
    "string <=": ("events", lambda ds, hr: ds <= "2024-01-02"),
    "string >": ("events", lambda ds, hr: ds > "2024-01-02"),
    "string >=": ("events", lambda ds, hr: ds >= "2024-01-03"),
    "string !=": ("events", lambda ds, hr: ds != "2024-01-01"),
    "string <>": ("events", lambda ds, hr: ds != "2024-01-03"),
    "int =": ("events", lambda ds, hr: hr == 1),
    "int <": ("events", lambda ds, hr: hr < 3),
    "int <=": ("events", lambda ds, hr: hr <= 3),
    "int >": ("events", lambda ds, hr: hr > 5),
    "int >=": ("events", lambda ds, hr: hr >= 12),
    "int !=": ("events", lambda ds, hr: hr != 1),
    "int = string literal": ("events", lambda ds, hr: hr == 2),
    "literal first string": ("events", lambda ds, hr: ds > "2024-01-02"),
    "literal first int": ("events", lambda ds, hr: hr < 2),
    "string in small": ("events", lambda ds, hr: ds in ("2024-01-01", "2024-01-04")),
    "int in small": ("events", lambda ds, hr: hr in (1, 12)),
    "int in large": ("events", lambda ds, hr: hr in (0, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13)),
    "string in large": ("events", lambda ds, hr: ds in ELEVEN_DATES),
    "string not in": ("events", lambda ds, hr: ds not in ("2024-01-01", "2024-01-02")),
    "int not in": ("events", lambda ds, hr: hr not in (1, 2)),
    "like prefix": ("events", lambda ds, hr: ds.startswith("2023-12")),
    "like suffix": ("events", lambda ds, hr: ds.endswith("-02")),
    "like contains": ("events", lambda ds, hr: "01-0" in ds),
    "startswith": ("events", lambda ds, hr: ds.startswith("2024-01-0")),
    "like without wildcard": ("events", lambda ds, hr: ds == "2024-01-04"),
    "between": ("events", lambda ds, hr: "2024-01-01" <= ds <= "2024-01-02"),
    "and": ("events", lambda ds, hr: ds == "2024-01-01" and hr == 1),
    "or": ("events", lambda ds, hr: ds == "2024-01-01" or hr == 3),
    "or of ands": (
        "events",
        lambda ds, hr: (ds, hr) in (("2024-01-01", 1), ("2024-01-02", 3)),
    ),
    "not of or": ("events", lambda ds, hr: not (ds == "2024-01-01" or hr == 1)),
    "range and in": ("events", lambda ds, hr: "2024-01-01" < ds < "2024-01-04" and hr in (1, 3)),
    "partition and data column": ("events", lambda ds, hr: ds == "2024-01-02"),
    "not pushed expression": ("events", lambda ds, hr: hr + 1 == 2),
    "orc two string keys": ("orders_orc", lambda ds, r: (ds, r) == ("2024-01-01", "eu")),
    "orc string in": ("orders_orc", lambda ds, r: r in ("us", "apac")),
    "orc like": ("orders_orc", lambda ds, r: r.startswith("a")),
    "date =": ("logs_txt", lambda dt, hr: dt == "2024-01-15"),
    "date = string": ("logs_txt", lambda dt, hr: dt == "2024-01-15"),
    "date <": ("logs_txt", lambda dt, hr: dt < "2024-02-01"),
    "date >=": ("logs_txt", lambda dt, hr: dt >= "2024-01-15"),
    "date !=": ("logs_txt", lambda dt, hr: dt != "2024-01-15"),
    "date in small": ("logs_txt", lambda dt, hr: dt in ("2024-01-01", "2024-02-01")),
    "date in large": ("logs_txt", lambda dt, hr: dt in ELEVEN_DAYS),
    "date between": ("logs_txt", lambda dt, hr: "2024-01-02" <= dt <= "2024-01-31"),
    "date and int": ("logs_txt", lambda dt, hr: dt > "2024-01-01" and hr < 3),
}
KEYS: dict[str, tuple[str, str, list[tuple[str, Any]]]] = {
    "events": ("ds", "hr", list(EVENTS)),
    "orders_orc": ("ds", "region", list(ORDERS)),
    "logs_txt": ("dt", "hr", list(LOGS)),
}


def expected_scan(table: str, keep: Keep) -> list[str]:
    first, second, parts = KEYS[table]
    return sorted(f"sales.db/{table}/{first}={a}/{second}={b}" for a, b in parts if keep(a, b))


def _wrong_report(run: str, wrong: dict[str, tuple[Any, Any]]) -> str:
    lines = [f"{len(wrong)} steps of {run} gave what they must not:"]
    for step, (want, got) in wrong.items():
        lines += [f"  {step}", f"    expected {json.dumps(want)[:600]}"]
        lines.append(f"    got      {json.dumps(got)[:600]}")
    return "\n".join(lines)


def test_the_pruning_oracle_covers_every_pruning_step() -> None:
    assert sorted(PRUNED) == sorted(s.name for s in STEPS if s.section == "pruning")


@pytest.mark.parametrize("run", RUNS)
def test_pruned_scans_read_only_the_matching_partitions(runs: dict[str, Run], run: str) -> None:
    wrong = {}
    for name, (table, keep) in PRUNED.items():
        record = runs[run].record("pruning", name)
        want = expected_scan(table, keep)
        got = record.get("partitions_scanned", record["result"])
        if got != want:
            wrong[f"[pruning] {name}"] = (want, got)
    if wrong:
        pytest.fail(_wrong_report(runs[run].name, wrong), pytrace=False)


def _events_names(parts: list[tuple[str, int]]) -> list[list[str]]:
    return [[f"ds={ds}/hr={hr}"] for ds, hr in parts]


AFTER_DDL = [p for p in EVENTS if p != ("2024-01-04", 7)] + [("2024-01-05", 7)]
# (section, step, what its result must be): {"rows": [...]} exactly, {"has": [...]} among the
# rows, or {"condition": ...} of the error.
FACTS: list[tuple[str, str, dict[str, Any]]] = [
    (
        "databases",
        "describe database extended",
        {"has": [["Properties", "((new.key,v), (owner.team,data-eng), (purpose,research))"]]},
    ),
    ("databases", "show databases like", {"rows": [["sales"]]}),
    ("inserts", "count datasource", {"rows": [["11"]]}),
    ("partitions", "show partitions", {"rows": _events_names(EVENTS)}),
    (
        "partitions",
        "show partitions non-prefix spec",
        {"rows": _events_names([p for p in EVENTS if p[1] == 1])},
    ),
    ("partitions", "show partitions after ddl", {"rows": _events_names(sorted(AFTER_DDL))}),
    (
        "partitions",
        "select renamed partition",
        {"rows": [["10", "2024-01-04", "5"], ["11", "2024-01-05", "7"]]},
    ),
    (
        "partitions",
        "show partitions orc after ddl",
        {"rows": [["ds=2024-01-01/region=eu"], ["ds=2024-01-01/region=us"]]},
    ),
    ("partitions", "select after repair", {"rows": [["1", "a"], ["2", "b"]]}),
    ("alter", "show tblproperties after unset", {"rows": [["team", "growth"]]}),
    ("alter", "select new columns", {"rows": [["20", "t", "20.0", "de", "3", "2024-01-06", "1"]]}),
    ("alter", "select renamed datasource", {"rows": [["1", "a"], ["2", "b"], ["3", "c"]]}),
    ("alter", "select renamed hive", {"rows": [["3", "c"]]}),
    (
        "alter",
        "show partitions renamed",
        {"rows": [[f"dt={dt}/hr={hr}"] for dt, hr in LOGS]},
    ),
    (
        "ctas",
        "select after truncate partition",
        {"rows": [["5", "e", "2024-01-02"], ["6", "f", "2024-01-02"], ["9", "i", "2023-12-31"]]},
    ),
    ("ctas", "count after truncate partitioned", {"rows": [["0"]]}),
    ("views", "show views after drop", {"rows": [["sales", "v_events", "false"]]}),
    ("functions", "use replaced function", {"rows": [["abc"]]}),
    ("functions", "show user functions after drop", {"rows": [["spark_catalog.sales.keep_fn"]]}),
    (
        "analyze",
        "describe int column",
        {"has": [["min", "1"], ["max", "3"], ["num_nulls", "0"], ["distinct_count", "3"]]},
    ),
    ("analyze", "describe column after alter", {"has": [["max", "20"], ["distinct_count", "12"]]}),
    ("errors", "select missing table", {"condition": "TABLE_OR_VIEW_NOT_FOUND"}),
    ("errors", "create existing hive table", {"condition": "TABLE_OR_VIEW_ALREADY_EXISTS"}),
    ("errors", "add existing partition", {"condition": "PARTITIONS_ALREADY_EXIST"}),
    ("errors", "rename missing partition", {"condition": "PARTITIONS_NOT_FOUND"}),
    ("errors", "drop non-empty database", {"condition": "SCHEMA_NOT_EMPTY"}),
    ("errors", "drop missing function", {"condition": "UNRESOLVED_ROUTINE"}),
    ("errors", "drop function if exists missing", {"rows": []}),
    ("errors", "create existing function", {"condition": "ROUTINE_ALREADY_EXISTS"}),
    ("drops", "managed data is deleted", {"condition": "PATH_NOT_FOUND"}),
    ("drops", "select recreated table", {"rows": [["0"]]}),
    ("drops", "external data is kept", {"rows": [["1"]]}),
    ("drops", "database folder is deleted", {"condition": "PATH_NOT_FOUND"}),
    ("drops", "recreated database has no functions", {"rows": []}),
    ("drops", "show databases at the end", {"rows": [["default"]]}),
]


def _fact_holds(record: Record, fact: dict[str, Any]) -> bool:
    result = record["result"]
    if "condition" in fact:
        return bool(result.get("error", {}).get("condition") == fact["condition"])
    rows = result.get("rows")
    if "rows" in fact:
        return bool(rows == fact["rows"])
    return rows is not None and all(row in rows for row in fact["has"])


@pytest.mark.parametrize("run", RUNS)
def test_known_results(runs: dict[str, Run], run: str) -> None:
    wrong = {}
    for section, name, fact in FACTS:
        record = runs[run].record(section, name)
        if not _fact_holds(record, fact):
            wrong[f"[{section}] {name}"] = (fact, record["result"])
    if wrong:
        pytest.fail(_wrong_report(runs[run].name, wrong), pytrace=False)
