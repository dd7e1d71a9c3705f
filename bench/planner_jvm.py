"""The planner round of bench/planner_bench.py in a JVM (bench/java/PlannerRounds.java), and
its reads after a write (bench/java/AfterWrite.java), compiled against Hive 2.3.10's client
jars from pyspark, as a Java planner calls a metastore."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from hms_process import pyspark_jars
from timing import progress

JVM_JARS = ("hive-metastore-2.3.10.jar", "libthrift-*.jar", "libfb303-*.jar", "slf4j-api-*.jar")


def compile_jvm_planner(classes: Path) -> str | None:
    """Compile bench/java/*.java against Hive 2.3.10's client jars from pyspark into
    CLASSES; the classpath to run them with, or None (with a line saying why) when there is
    no JDK."""
    missing = [tool for tool in ("javac", "java") if shutil.which(tool) is None]
    if missing:
        tools = " and ".join(missing)
        progress(f"the JVM planner round is left out: {tools} not found (install a JDK 17)")
        return None
    jars = []
    for pattern in JVM_JARS:
        found = sorted(pyspark_jars().glob(pattern))
        if not found:
            raise RuntimeError(f"no {pattern} in {pyspark_jars()}: is pyspark installed whole?")
        jars.append(found[-1])
    classpath = os.pathsep.join(str(jar) for jar in jars)
    sources = sorted(str(p) for p in (Path(__file__).resolve().parent / "java").glob("*.java"))
    subprocess.run(
        ["javac", "-encoding", "UTF-8", "-d", str(classes), "-cp", classpath, *sources],
        check=True,
    )
    return os.pathsep.join([str(classes), classpath])


def jvm_throughput(
    classpath: str,
    ports: Sequence[int],
    args: argparse.Namespace,
    db: str,
    table: str,
    first_day: str,
) -> float:
    """Planner rounds per second of four threads of a JVM spread over PORTS, for SECONDS
    (bench/java/PlannerRounds.java), over table DB.TABLE whose first day is FIRST_DAY."""
    command = [
        *("java", "-cp", classpath, "PlannerRounds", str(args.seconds), db, table),
        *(str(args.days), str(args.hours), str(args.cols), first_day),
        *(str(port) for port in ports),
    ]
    # Its calls time out after a minute each: this bounds a run that hangs all the same.
    done = subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=args.seconds + 600
    )
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not line.startswith("ROUNDS "):
        raise RuntimeError(f"PlannerRounds failed ({done.returncode}): {line}\n{done.stderr}")
    _, rounds, _, seconds = line.split()
    return int(rounds) / float(seconds)


def jvm_after_write(
    classpath: str,
    port: int,
    args: argparse.Namespace,
    db: str,
    tables: dict[str, int],
    first_day: str,
) -> dict[tuple[str, str], float]:
    """p50 in seconds of each read of bench/java/AfterWrite.java right after a write of one
    partition's statistics through the server at PORT, by (call, table), for TABLES (the
    number of partitions of each, named from FIRST_DAY by the hour)."""
    command = [
        *("java", "-cp", classpath, "AfterWrite", str(port), db, str(args.cols)),
        *(str(args.repeat), str(args.budget), "3", first_day, str(args.hours)),
        *(str(v) for table, count in tables.items() for v in (table, count)),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=1800)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines or not all(line.startswith("P50 ") for line in lines):
        last = lines[-1] if lines else ""
        raise RuntimeError(f"AfterWrite failed ({done.returncode}): {last}\n{done.stderr}")
    out = {}
    for line in lines:
        _, call, table, ms = line.split()
        out[(call, table)] = float(ms) / 1e3
    return out
