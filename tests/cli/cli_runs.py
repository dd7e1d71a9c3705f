"""Helpers of the tests that run `metastore` as a user types it: the command in a process of
its own, what the metastore holds afterwards, and a Spark with Hive support that reads the
metastore's tables as an engine would."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import RunningServer, connect

from hive_metastore_thrift import ttypes as t

SPARK_TIMEOUT_S = 600

READER = """
import json, sys
from pyspark.sql import SparkSession
uri, warehouse = sys.argv[1], sys.argv[2]
spark = (
    SparkSession.builder.master("local[1]").appName("colstats reader")
    .enableHiveSupport()
    .config("spark.hadoop.hive.metastore.uris", uri)
    .config("spark.sql.warehouse.dir", warehouse)
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
answers = []
for query in json.loads(sys.stdin.read()):
    try:
        answers.append([[str(v) for v in row] for row in spark.sql(query).collect()])
    except Exception as e:
        answers.append(f"{type(e).__name__}: {str(e).strip().splitlines()[0]}")
print("ANSWERS " + json.dumps(answers))
"""


def metastore(*argv: str, env: dict[str, str] | None = None, timeout: float = 600) -> Any:
    """`metastore ARGV` in a process of its own (no terminal, stdin closed)."""
    return subprocess.run(
        [sys.executable, "-m", "metastore.cli", *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable, **(env or {})},
        timeout=timeout,
        check=False,
    )


LOGGED = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (INFO|WARNING) ")
"""The job's log of its progress (and of the retries of its client)."""


def error_lines(stderr: str) -> list[str]:
    """The lines of STDERR that are not the job's log of its progress nor the JVM's own
    start-up notice."""
    return [
        line
        for line in stderr.splitlines()
        if not LOGGED.match(line) and not line.startswith("WARNING: Using incubator modules")
    ]


def spark_reads(server: RunningServer, warehouse: Path, queries: list[str]) -> list[Any]:
    """The rows (values as text) of each query, or its error's first line, as a new Spark
    session with Hive support on SERVER answers them."""
    done = subprocess.run(
        [sys.executable, "-c", READER, f"thrift://127.0.0.1:{server.port}", str(warehouse)],
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        timeout=SPARK_TIMEOUT_S,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        check=False,
    )
    for line in done.stdout.splitlines():
        if line.startswith("ANSWERS "):
            answers: list[Any] = json.loads(line[len("ANSWERS ") :])
            return answers
    raise AssertionError(f"the Spark reader failed:\n{done.stderr[-3000:]}")


def databases(server: RunningServer) -> list[str]:
    client, transport = connect(server.port)
    try:
        found: list[str] = client.get_all_databases()
        return found
    finally:
        transport.close()


def table(server: RunningServer, db: str, name: str) -> t.Table:
    client, transport = connect(server.port)
    try:
        found: t.Table = client.get_table(db, name)
        return found
    finally:
        transport.close()


def partitions(server: RunningServer, db: str, name: str) -> list[t.Partition]:
    client, transport = connect(server.port)
    try:
        found: list[t.Partition] = client.get_partitions(db, name, -1)
        return found
    finally:
        transport.close()


def folders(root: Path) -> list[str]:
    """Every folder under ROOT, relative: the job must never add one."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_dir())
