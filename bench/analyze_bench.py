"""The statistics job vs Spark's ANALYZE TABLE vs a bare scan, in one Spark session; then
the job at scale.

    python bench/analyze_bench.py [--rows 5000000] [--partitions 10] [--repeat 3]
        [--scale-rows 1000000] [--scale-partitions 10,10000] [--driver-memory 512m]
        [--skip-side-by-side] [--skip-object-storage] [--skip-scale]

Generates a Parquet table (6 columns of mixed types, Hive-style partition folders), then
times, on the same data and session:

* our job (metastore.job.analyze.run) writing to an in-process colstats server on SQLite: every
  partition and the table, with bit vectors and KLL histograms;
* Spark's `ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS` (table level only, no
  bit vectors, no histograms);
* a bare scan: max() of every column;
* the Arrow transfer alone: the same columns handed to a Python function that does nothing
  (mapInArrow), the floor of any job that computes Hive's sketches in Python.

It prints each time (the median of --repeat runs, after one warm-up run each), the ratios
(targets: ours <= 0.7x ANALYZE and <= 1.2x the bare scan), where the job's time goes
(reading, computing, writing: the scan's reading measured as a read-only pass of Spark tasks
over the same files with the same reader) and the NDV error per column against the exact
distinct count.

The object-storage run (object_storage.py) puts the same files on an S3-compatible server on
loopback (moto's) and times, in the same session, the job reading them with PyArrow against
Spark's ANALYZE reading them with Hadoop's S3A, both configured by the same
spark.hadoop.fs.s3a.* settings (target: ours <= 0.7x ANALYZE, as on local files).

The scale run (analyze_scale.py) runs the job over --scale-rows rows of 20 columns in each
of --scale-partitions partition counts, each in a fresh process against our server in its
own process, and prints the time per partition and the driver's peak memory against the
first count (target: within 1.5x at 10,000 partitions). The load average is printed along:
the figures mean little on a busy machine.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from analyze_scale import child, scale_run
from object_storage import HADOOP_33_SETTINGS, MotoServer, s3a_jars

from metastore import arrow_types
from metastore.columns import Column
from metastore.config import Settings
from metastore.files.formats import ReadSpec
from metastore.files.listing import Split, list_files, splits_of
from metastore.files.reading import Pieces, file_schema, read_split
from metastore.hms.handler import Handler
from metastore.hms.server import MetastoreServer
from metastore.job import analyze, scan
from metastore.job.options import AnalyzeOptions
from metastore.store import migrate, transactions
from metastore.thrift_stats import union_member

COLUMNS = ["id", "amount", "price", "name", "day", "flag"]


def generate(path: Path, rows: int, partitions: int, seed: int = 7) -> None:
    """ROWS rows in PARTITIONS folders ds=..., columns of six types, ~1% nulls."""
    rng = np.random.default_rng(seed)
    per_part = rows // partitions
    for p in range(partitions):
        n = per_part
        nulls = rng.random(n) < 0.01
        folder = path / f"ds=2024-01-{p + 1:02d}"
        folder.mkdir(parents=True)
        table = pa.table(
            {
                "id": pa.array(np.arange(p * n, (p + 1) * n, dtype=np.int64)),
                "amount": pa.array(rng.integers(0, 1_000_000, n), mask=nulls),
                "price": pa.array(rng.normal(100, 15, n), mask=nulls),
                "name": pa.array([f"user{v}" for v in rng.integers(0, 200_000, n)], mask=nulls),
                "day": pa.array(rng.integers(0, 20_000, n).astype("int32"), pa.int32()).cast(
                    pa.date32()
                ),
                "flag": pa.array(rng.random(n) < 0.3, mask=nulls),
            }
        )
        pq.write_table(table, folder / "part-0.parquet", row_group_size=1_000_000)


def count_rows(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A mapInArrow function that only receives the data: the cost of the transfer."""
    rows = sum(batch.num_rows for batch in batches)
    yield pa.RecordBatch.from_pydict({"n": [rows]})


def timed(works: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """The median time of REPEAT runs of each of WORKS after a warm-up run each, the works
    taking turns (a round runs each once), so that a load that comes and goes on the machine
    falls on all of them alike; anything they print is dropped (the job prints its summary)."""
    times: dict[str, list[float]] = {label: [] for label in works}
    real_stdout = sys.stdout
    with open(os.devnull, "w") as quiet:
        sys.stdout = quiet
        try:
            for work in works.values():
                work()  # warm-up: JIT, file cache, Python workers
            for _ in range(repeat):
                for label, work in works.items():
                    started = time.perf_counter()
                    work()
                    times[label].append(time.perf_counter() - started)
        finally:
            sys.stdout = real_stdout
    medians = {label: statistics.median(runs) for label, runs in times.items()}
    for label, runs in times.items():
        shown = ", ".join(f"{t:.2f}" for t in runs)
        print(f"  {label:<40} {medians[label]:7.2f} s   (runs: {shown})")
    return medians


def read_only(spark: Any, data: Path) -> float:
    """Seconds of a Spark job that reads the files as the job's tasks do, computing nothing."""
    listing = list_files(str(data))
    spec = ReadSpec("parquet")
    splits = [s for n in sorted(listing.files) for s in splits_of(n, listing.files[n], spec)]
    schema = file_schema(splits[0].path, spec)
    columns = [Column(f.name, arrow_types.hive_type(f.type)) for f in schema]

    def rows(group: list[Split]) -> int:
        pieces = Pieces()
        return sum(b.num_rows for s in group for b in read_split(s, spec, columns, pieces))

    # The job's tasks: the same groups of splits.
    groups = scan.task_groups(splits, spark.sparkContext.defaultParallelism)
    started = time.perf_counter()
    spark.sparkContext.parallelize(groups, len(groups)).map(rows).sum()
    return time.perf_counter() - started


def main() -> int:
    if sys.argv[1:2] == ["--child"]:
        return child(*sys.argv[2:6])
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scale-rows", type=int, default=1_000_000)
    parser.add_argument("--scale-partitions", default="10,10000")
    parser.add_argument(
        "--driver-memory",
        default="",
        help="spark.driver.memory of the scale run's jobs (default: Spark's)",
    )
    parser.add_argument("--skip-side-by-side", action="store_true")
    parser.add_argument("--skip-object-storage", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {', '.join(f'{v:.1f}' for v in os.getloadavg())}")
    if not args.skip_side_by_side:
        side_by_side(args)
    if not args.skip_scale:
        counts = [int(c) for c in args.scale_partitions.split(",")]
        print(f"\nscale run: {args.scale_rows:,} rows x 20 columns in {counts} partitions")
        scale_run(args.scale_rows, counts, args.driver_memory)
    print(f"load average at end: {', '.join(f'{v:.1f}' for v in os.getloadavg())}")
    return 0


def side_by_side(args: argparse.Namespace) -> None:
    """The job, ANALYZE, a bare scan and the Arrow transfer on the same data and session."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    moto = None if args.skip_object_storage else MotoServer()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        print(f"generating {args.rows:,} rows in {args.partitions} partitions ...")
        generate(data, args.rows, args.partitions)
        builder = (
            SparkSession.builder.master("local[*]")
            .appName("analyze bench")
            .config("spark.sql.warehouse.dir", str(Path(tmp) / "warehouse"))
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config(map=analyze.SESSION_SETTINGS)
        )
        if moto is not None:  # Spark's S3A, for the object-storage run
            builder = builder.config("spark.jars", ",".join(str(jar) for jar in s3a_jars()))
            for key, value in {**moto.spark_conf(), **HADOOP_33_SETTINGS}.items():
                builder = builder.config(key, value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql(f"CREATE TABLE bench USING parquet LOCATION '{data}'")
        spark.sql("MSCK REPAIR TABLE bench")

        url = f"sqlite:///{Path(tmp) / 'metastore.db'}"
        migrate.upgrade(url)
        engine = transactions.create_engine(url)
        server = MetastoreServer(
            Handler(transactions.Transactions(engine), Settings()), "127.0.0.1", 0
        )
        threading.Thread(target=server.serve_forever, daemon=True).start()
        options = AnalyzeOptions(
            table="bench.t", uri=f"thrift://127.0.0.1:{server.port}", path=str(data)
        )
        logging.getLogger("metastore").setLevel(logging.ERROR)
        results: dict[str, object] = {}

        def ours() -> None:
            results["ours"] = analyze.run(spark, options).table_stats

        df = spark.read.parquet(str(data))
        cores = spark.sparkContext.defaultParallelism
        print(
            f"\n{args.rows:,} rows, {args.partitions} partitions, {len(COLUMNS)} columns, "
            f"local[*] with {cores} cores; median of {args.repeat} runs, taking turns:"
        )
        medians = timed(
            {
                "ours (partitions + table, sketches)": ours,
                "ANALYZE ... FOR ALL COLUMNS": lambda: spark.sql(
                    "ANALYZE TABLE bench COMPUTE STATISTICS FOR ALL COLUMNS"
                ).collect(),
                "bare scan (max of every column)": lambda: df.agg(
                    *[F.max(c) for c in COLUMNS]
                ).collect(),
                "Arrow transfer only (mapInArrow no-op)": lambda: (
                    df.select(F.col("ds").cast("string"), *COLUMNS)
                    .mapInArrow(count_rows, "n long")
                    .collect()
                ),
            },
            args.repeat,
        )
        t_ours, t_analyze, t_scan, t_transfer = medians.values()
        print(f"\n  ours / ANALYZE   = {t_ours / t_analyze:5.2f}x   (target <= 0.7x)")
        print(f"  ours / bare scan = {t_ours / t_scan:5.2f}x   (target <= 1.2x)")
        print(
            f"  ours / transfer  = {t_ours / t_transfer:5.2f}x   (the job's floor: handing the "
            "same columns to Python, doing nothing there)"
        )

        split_of_time(spark, data, options)
        exact = df.agg(
            *[F.countDistinct(c).alias(c) for c in COLUMNS],
            *[F.sum(F.col(c).isNull().cast("int")).alias(f"{c}_nulls") for c in COLUMNS],
        ).first()
        assert exact is not None
        print("\n  NDV per column (ours counts NULL as one value; compared without it):")
        print(f"  {'column':<8} {'exact':>10} {'ours':>10} {'error':>8}")
        table_stats = results["ours"]
        assert isinstance(table_stats, dict)
        for column in COLUMNS:
            stats = union_member(table_stats[column].statsData)
            if not hasattr(stats, "numDVs"):
                print(f"  {column:<8} {exact[column]:>10,} {'(boolean)':>10}")
                continue
            ours_ndv = stats.numDVs - (1 if exact[f"{column}_nulls"] else 0)
            error = (ours_ndv - exact[column]) / exact[column]
            print(f"  {column:<8} {exact[column]:>10,} {ours_ndv:>10,} {error:>+8.2%}")
        if moto is not None:
            on_object_storage(spark, data, moto, options.uri, args)
            moto.stop()
        server.stop()
        engine.dispose()
        spark.stop()


def on_object_storage(
    spark: Any, data: Path, moto: MotoServer, uri: str, args: argparse.Namespace
) -> None:
    """The job and ANALYZE on the same files on an S3-compatible server, side by side."""
    location = moto.upload(data, "data")
    spark.sql(f"CREATE TABLE bench_s3 USING parquet LOCATION '{location}'")
    spark.sql("MSCK REPAIR TABLE bench_s3")
    options = AnalyzeOptions(
        table="bench.t_s3", uri=uri, path=location, spark_conf=tuple(moto.spark_conf().items())
    )
    rows: list[int] = []
    print(
        f"\non object storage ({location} on moto's server at {moto.endpoint}); "
        f"median of {args.repeat} runs, taking turns:"
    )
    medians = timed(
        {
            "ours, PyArrow's S3 (partitions + table)": lambda: rows.append(
                analyze.run(spark, options).rows
            ),
            "ANALYZE ... FOR ALL COLUMNS, S3A": lambda: spark.sql(
                "ANALYZE TABLE bench_s3 COMPUTE STATISTICS FOR ALL COLUMNS"
            ).collect(),
        },
        args.repeat,
    )
    t_ours, t_analyze = medians.values()
    counted = spark.table("bench_s3").count()
    assert set(rows) == {counted}, (rows, counted)
    print(f"\n  both read {counted:,} rows")
    print(f"  ours / ANALYZE on S3 = {t_ours / t_analyze:5.2f}x   (target <= 0.7x)")


def split_of_time(spark: Any, data: Path, options: AnalyzeOptions) -> None:
    """Where one run of the job spends its time: reading, computing, writing."""
    runs = [analyze.run(spark, options).timings for _ in range(3)]
    timings = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    reading = statistics.median(read_only(spark, data) for _ in range(3))
    total = sum(timings.values())
    computing = max(timings["scan"] - reading, 0.0)
    print(
        f"\n  where the job's time goes (median of 3 runs, {total:.2f} s): planning "
        f"{timings['plan'] / total:.0%}, reading {min(reading, timings['scan']) / total:.0%}, "
        f"computing {computing / total:.0%}, writing {timings['write'] / total:.0%}"
    )


if __name__ == "__main__":
    sys.exit(main())
