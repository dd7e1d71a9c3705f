"""The scale run of analyze_bench.py: the job over the same rows in 10 and in 10,000
partitions of 20 columns, each run in a fresh process (its peak memory is its own), against
our server in a process of its own (SQLite).

A child run (`analyze_bench.py --child DATA URI TABLE`) runs the job once and prints one JSON
line: its time, the plan/scan/write split and the driver's peak resident memory, the Python
driver's and its JVM's (VmHWM of /proc/PID/status; in local mode that JVM also runs the
executors' JVM side, the Python workers are processes of their own and not counted).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hms_process import free_port, stop_process, wait_for_port

SCALE_COLUMNS = 20


def generate_wide(path: Path, rows: int, partitions: int, seed: int = 11) -> None:
    """ROWS rows of 20 columns (bigint, double, string, date and boolean in turn, ~1%
    NULLs) in PARTITIONS folders ds=N, a Parquet file each."""
    rng = np.random.default_rng(seed)
    per_part = max(1, rows // partitions)
    for p in range(partitions):
        n = per_part
        nulls = rng.random(n) < 0.01
        columns: dict[str, pa.Array] = {}
        for c in range(SCALE_COLUMNS):
            kind = c % 5
            if kind == 0:
                columns[f"c{c}"] = pa.array(rng.integers(0, 1_000_000, n), mask=nulls)
            elif kind == 1:
                columns[f"c{c}"] = pa.array(rng.normal(100, 15, n), mask=nulls)
            elif kind == 2:
                names = [f"v{v}" for v in rng.integers(0, 50_000, n)]
                columns[f"c{c}"] = pa.array(names, mask=nulls)
            elif kind == 3:
                days = pa.array(rng.integers(0, 20_000, n).astype("int32"), pa.int32())
                columns[f"c{c}"] = days.cast(pa.date32())
            else:
                columns[f"c{c}"] = pa.array(rng.random(n) < 0.3, mask=nulls)
        folder = path / f"ds={p:05d}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table(columns), folder / "part-0.parquet")


def peak_kib(pid: int) -> int:
    """VmHWM of process PID, in KiB (0 when unknown)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def child(data: str, uri: str, table: str, driver_memory: str) -> int:
    """The --child mode: one run of the job, its figures as a JSON line on stdout."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from metastore.job import analyze
    from metastore.job.options import AnalyzeOptions

    builder = SparkSession.builder.master("local[*]")
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    spark = (
        builder.appName("analyze scale bench")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config(map=analyze.SESSION_SETTINGS)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    logging.getLogger("metastore").setLevel(logging.ERROR)
    jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())  # type: ignore[union-attr]
    started = time.perf_counter()
    result = analyze.run(spark, AnalyzeOptions(table=table, uri=uri, path=data))
    seconds = time.perf_counter() - started
    figures = {
        "partitions": result.partitions,
        "seconds": seconds,
        "timings": result.timings,
        "python_peak_kib": peak_kib(os.getpid()),
        "jvm_peak_kib": peak_kib(jvm_pid),
    }
    spark.stop()
    print(json.dumps(figures))
    return 0


@contextlib.contextmanager
def our_server(tmp: Path) -> Iterator[str]:
    """`metastore serve` on SQLite in a process of its own; yields its URI."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("metastore")),
            "serve",
            "--db",
            f"sqlite:///{tmp / 'scale.db'}",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--warehouse",
            str(tmp / "warehouse"),
            "--log-level",
            "WARNING",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process, None)
        yield f"thrift://127.0.0.1:{port}"
    finally:
        stop_process(process)


def run_child(data: Path, uri: str, table: str, driver_memory: str) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("analyze_bench.py")),
            "--child",
            str(data),
            uri,
            table,
            driver_memory,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the job failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def scale_run(rows: int, partitions: list[int], driver_memory: str = "") -> None:
    """The job over ROWS rows of 20 columns in each count of PARTITIONS; prints a table.
    DRIVER_MEMORY: the driver JVM's heap (spark.driver.memory), its default when empty."""
    with tempfile.TemporaryDirectory(prefix="colstats-scale-") as tmp_name:
        tmp = Path(tmp_name)
        results = {}
        with our_server(tmp) as uri:
            for count in partitions:
                data = tmp / f"data{count}"
                started = time.perf_counter()
                generate_wide(data, rows, count)
                print(
                    f"  generated {rows:,} rows x {SCALE_COLUMNS} columns in {count:,} "
                    f"partitions ({time.perf_counter() - started:.0f} s); load "
                    f"{os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                results[count] = run_child(data, uri, f"scale.t{count}", driver_memory)
                print(f"  ran the job: {results[count]}; load {os.getloadavg()[0]:.1f}", flush=True)
        base = results[partitions[0]]
        base_peak = base["python_peak_kib"] + base["jvm_peak_kib"]
        print(
            f"\n  {'partitions':>10} {'seconds':>8} {'ms/partition':>12} {'scan s':>7} "
            f"{'write s':>7} {'python MiB':>10} {'JVM MiB':>8} {'driver MiB':>10} {'vs first':>8}"
        )
        for count, figures in results.items():
            peak = figures["python_peak_kib"] + figures["jvm_peak_kib"]
            print(
                f"  {count:>10,} {figures['seconds']:>8.1f} "
                f"{1000 * figures['seconds'] / count:>12.1f} {figures['timings']['scan']:>7.1f} "
                f"{figures['timings']['write']:>7.1f} {figures['python_peak_kib'] / 1024:>10.0f} "
                f"{figures['jvm_peak_kib'] / 1024:>8.0f} {peak / 1024:>10.0f} "
                f"{peak / base_peak:>7.2f}x"
            )
        last = results[partitions[-1]]
        ratio = (last["python_peak_kib"] + last["jvm_peak_kib"]) / base_peak
        verdict = "met" if ratio <= 1.5 else "MISSED"
        print(
            f"\n  driver peak memory at {partitions[-1]:,} partitions: {ratio:.2f}x "
            f"(target <= 1.5x): {verdict}"
        )
