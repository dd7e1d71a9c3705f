"""Run the Spark workload (spark_steps.py) against one metastore and record what every step
gives, normalized so that two metastores that behave the same give the same records.

    python tests/engines/spark_workload.py --uri thrift://127.0.0.1:9083 \\
        --warehouse /tmp/wh --out steps.jsonl [--sections databases,tables]

Each Spark session needs a JVM of its own (the metastore URI and the Hive catalog are fixed
per JVM), so this runs as a process of its own: a local[2] session with Hive support on the
metastore at --uri, with --warehouse as spark.sql.warehouse.dir. It runs the steps in order,
whatever fails, and writes one JSON line per step to --out as soon as the step ends:

    {"section", "name", "sql", "result": {"rows": [[...], ...]} | {"error": {...}},
     "partitions_scanned": [folders the scans read] (pruning steps),
     "started", "ended" (wall clock, to find a step's calls in a server log)}

Normalized: the warehouse directory (`<WH>`), timestamps (`Created Time`, `Last Access`,
`transient_lastDdlTime`: `<time>`), the order of the entries of the maps DESCRIBE prints
(table and partition parameters, serde properties: sorted); rows of a query without ORDER BY
are sorted; values are JSON text (None stays null). An error is Spark's error condition
(TABLE_OR_VIEW_NOT_FOUND...), its message parameters and the exception's type; the message
(which can hold paths, plans and stack traces) only when there are no parameters, cut to its
first line. The head of every error's message and Java stack also goes to stderr.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spark_steps import SECTIONS, STEPS, Step

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

WH = "<WH>"
TIME = "<time>"
# java.util.Date.toString(), as DESCRIBE prints Created Time and Last Access.
_JAVA_DATE = re.compile(r"\b[A-Z][a-z]{2} [A-Z][a-z]{2} \d{1,2} \d\d:\d\d:\d\d [A-Z]{2,5} \d{4}\b")
# In property lists ("transient_lastDdlTime=1795447362") and in SHOW CREATE TABLE
# ("'transient_lastDdlTime' = '1795447362'").
_DDL_TIME = re.compile(r"(transient_lastDdlTime'?\s*=\s*'?)\d+")
# DESCRIBE rows that print a map as "[k1=v1, k2=v2]", in the map's iteration order.
MAP_ROWS = {"Table Properties", "Partition Parameters", "Storage Properties"}
MAP_ENTRY = re.compile(r", (?=[^,=\s]+=)")
_MAP_LINE = re.compile(
    r"^((?:Table Properties|Partition Parameters|Storage Properties): )(\[.*\])$", re.M
)
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)
_QUERY = re.compile(r"^\s*(select|with|from|values|table)\b", re.IGNORECASE)
_TIME_KEYS = {"transient_lastDdlTime", "Created Time", "Last Access"}


class Normalizer:
    """Replaces the run's warehouse directory and timestamps in the text Spark shows."""

    def __init__(self, warehouse: Path) -> None:
        # Longest first, so that the resolved path wins over a prefix of it.
        self.paths = sorted({str(warehouse), str(warehouse.resolve())}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for path in self.paths:
            value = value.replace(path, WH)
        value = _DDL_TIME.sub(rf"\g<1>{TIME}", value)
        value = _JAVA_DATE.sub(TIME, value)
        # SHOW TABLE EXTENDED prints "Table Properties: [...]" lines in one text.
        return _MAP_LINE.sub(lambda m: m[1] + _sorted_map(m[2]), value)

    def row(self, row: list[Any]) -> list[Any]:
        out = [self.text(v) if isinstance(v, str) else v for v in row]
        # SHOW TBLPROPERTIES prints (key, value), DESCRIBE prints (name, value, comment).
        if len(out) >= 2 and out[0] in _TIME_KEYS and out[1] not in (None, "UNKNOWN"):
            out[1] = TIME
        if len(out) >= 2 and out[0] in MAP_ROWS and isinstance(out[1], str):
            out[1] = _sorted_map(out[1])
        return out


def _sorted_map(text: str) -> str:
    """A map printed as "[k1=v1, k2=v2]" with its entries sorted: their order depends on
    how the map was built."""
    if not (text.startswith("[") and text.endswith("]")):
        return text
    return "[" + ", ".join(sorted(MAP_ENTRY.split(text[1:-1]))) + "]"


def json_value(value: Any) -> Any:
    """A Spark value as JSON: None stays null, scalars become their text, nested values
    keep their shape."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, decimal.Decimal | int | str):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(json_value(k)): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):  # also Row
        return [json_value(v) for v in value]
    return str(value)


def is_unordered_query(sql: str) -> bool:
    return bool(_QUERY.match(sql)) and not _ORDER_BY.search(sql)


def error_record(e: BaseException, norm: Normalizer) -> dict[str, Any]:
    """Spark's error condition and parameters, or the first line of the message."""
    from pyspark.errors import PySparkException

    info: dict[str, Any] = {"type": type(e).__name__}
    condition: str | None = None
    params: dict[str, str] = {}
    if isinstance(e, PySparkException):
        condition = e.getCondition()
        params = e.getMessageParameters() or {}
    else:
        java = getattr(e, "java_exception", None)  # py4j's Py4JJavaError
        if java is not None:
            info["java_type"] = java.getClass().getName()
            if hasattr(java, "getCondition"):
                condition = java.getCondition()
    if condition:
        info["condition"] = condition
        info["parameters"] = {k: norm.text(str(v)) for k, v in sorted(params.items())}
    if not params:  # INTERNAL_ERROR and some legacy conditions say what happened only here
        java = getattr(e, "java_exception", None)
        if java is not None:  # its first line names a py4j object ("o53"): the Java chain
            info["message"] = " <- ".join(_java_causes(java, norm))
        else:
            lines = str(e).strip().splitlines() or [""]
            info["message"] = norm.text(lines[0])[:300]
    return info


def _java_causes(throwable: Any, norm: Normalizer, depth: int = 3) -> list[str]:
    """The first lines of a Java exception and of its causes."""
    out: list[str] = []
    while throwable is not None and len(out) < depth:
        lines = str(throwable.toString()).splitlines() or [""]
        out.append(norm.text(lines[0])[:300])
        throwable = throwable.getCause()
    return out


def _scala_seq(seq: Any) -> list[Any]:
    items, it = [], seq.iterator()
    while it.hasNext():
        items.append(it.next())
    return items


def _scans(node: Any) -> list[Any]:
    """The table scans of an executed plan, through adaptive plans and query stages."""
    kind = node.getClass().getSimpleName()
    if kind in ("FileSourceScanExec", "HiveTableScanExec"):
        return [node]
    if kind == "AdaptiveSparkPlanExec":
        return _scans(node.executedPlan())
    if kind.endswith("QueryStageExec"):
        return _scans(node.plan())
    return [scan for child in _scala_seq(node.children()) for scan in _scans(child)]


def scanned_folders(df: DataFrame, norm: Normalizer) -> list[str]:
    """The folders the scans of DF's executed plan read, relative to the warehouse: a
    partition's folder when Spark pruned the partitions, else the table's."""
    folders = []
    for scan in _scans(df._jdf.queryExecution().executedPlan()):
        if scan.getClass().getSimpleName() == "FileSourceScanExec":
            paths = [p.toString() for p in _scala_seq(scan.relation().location().rootPaths())]
        else:
            paths = [p.getLocation() for p in _scala_seq(scan.prunedPartitions())]
        for path in paths:
            folders.append(norm.text(re.sub(r"^file:/*", "/", path)).removeprefix(WH + "/"))
    return sorted(folders)


def run_step(spark: SparkSession, step: Step, warehouse: Path, norm: Normalizer) -> dict[str, Any]:
    sql = step.sql.format(wh=warehouse)
    record: dict[str, Any] = {
        "section": step.section,
        "name": step.name,
        "sql": norm.text(sql),
        "started": time.time(),
    }
    try:
        df = spark.sql(sql)
        rows = [norm.row(json_value(list(row))) for row in df.collect()]
        if is_unordered_query(sql):
            rows.sort(key=lambda r: json.dumps(r))
        record["result"] = {"rows": rows}
    except Exception as e:
        record["result"] = {"error": error_record(e, norm)}
        # The head of Spark's message and of the Java stack, for whoever reads the log.
        head = "\n    ".join(str(e).strip().splitlines()[:12])
        print(f"{step.section} / {step.name}: {type(e).__name__}: {head}", file=sys.stderr)
    else:
        if step.scans:
            try:
                record["partitions_scanned"] = scanned_folders(df, norm)
            except Exception as e:
                record["partitions_scanned"] = {"error": error_record(e, norm)}
    record["ended"] = time.time()
    return record


def build_session(uri: str, warehouse: Path) -> SparkSession:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("colstats spark workload")
        .config("spark.sql.catalogImplementation", "hive")
        .config("spark.hadoop.hive.metastore.uris", uri)
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        # Spark's Hive client retries a call that failed with a Thrift error after this delay
        # (1 s by default): a server that answers UNKNOWN_METHOD would only cost time.
        .config("spark.hadoop.hive.metastore.client.connect.retry.delay", "0s")
        .enableHiveSupport()
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    # Inserts into Hive text tables with only dynamic partition values (Hive's strict mode).
    spark.conf.set("hive.exec.dynamic.partition.mode", "nonstrict")
    return spark


def run(spark: SparkSession, steps: Sequence[Step], warehouse: Path, out: TextIO) -> None:
    norm = Normalizer(warehouse)
    for step in steps:
        record = run_step(spark, step, warehouse, norm)
        out.write(json.dumps(record, sort_keys=True) + "\n")
        out.flush()
        outcome = "error" if "error" in record["result"] else "ok"
        seconds = record["ended"] - record["started"]
        print(f"{step.section:<10} {step.name:<45} {outcome:<5} {seconds:6.2f} s", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", required=True, help="thrift://HOST:PORT of the metastore")
    parser.add_argument("--warehouse", required=True, type=Path, help="spark.sql.warehouse.dir")
    parser.add_argument("--out", required=True, type=Path, help="JSON lines, one per step")
    parser.add_argument("--sections", help=f"comma-separated, of {','.join(SECTIONS)}")
    args = parser.parse_args(argv)
    warehouse = args.warehouse.resolve()
    warehouse.mkdir(parents=True, exist_ok=True)
    steps = list(STEPS)
    if args.sections:
        wanted = set(args.sections.split(","))
        if wanted - set(SECTIONS):
            parser.error(f"unknown sections {sorted(wanted - set(SECTIONS))}")
        steps = [s for s in steps if s.section in wanted]
    started = time.perf_counter()
    spark = build_session(args.uri, warehouse)
    print(f"session built in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    try:
        with args.out.open("w", encoding="utf-8") as out:
            run(spark, steps, warehouse, out)
    finally:
        spark.stop()
    print(f"workload done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
