"""The statistics job on an Iceberg table vs reading the same files bare, in one Spark session.

    python bench/iceberg_bench.py [--rows 4000000] [--files 8] [--repeat 3]

Writes an Iceberg table with pyiceberg through an in-process colstats server on SQLite (six
columns of mixed types, --files appends), then times, on the same data and session, taking
turns (the median of --repeat runs after a warm-up run each):

* ours: `metastore analyze` of the table (metastore.job.analyze.run): its current snapshot's
  files planned through pyiceberg, HMS statistics with bit vectors and KLL histograms, a theta
  sketch per column, the Puffin file written and committed under the HMS lock;
* ours on the same files as a plain folder of Parquet (--path): the job without Iceberg (no
  theta sketches, no commit), to show what Iceberg's statistics add;
* a bare scan of the same files: Spark reading them (max() of every column);

and prints the ratios (target: ours on the Iceberg table <= 1.2x the bare scan).
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
from analyze_bench import timed

from metastore.config import Settings
from metastore.hms.handler import Handler
from metastore.hms.server import MetastoreServer
from metastore.job import analyze
from metastore.job.options import AnalyzeOptions
from metastore.store import migrate, transactions

COLUMNS = ["id", "amount", "price", "name", "day", "at"]


def batch(start: int, rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    nulls = rng.random(rows) < 0.01
    return pa.table(
        {
            "id": pa.array(np.arange(start, start + rows, dtype=np.int64)),
            "amount": pa.array(rng.integers(0, 1_000_000, rows).astype(np.int32), mask=nulls),
            "price": pa.array(rng.random(rows) * 1000, pa.float64()),
            "name": pa.array([f"customer-{i}" for i in rng.integers(0, 200_000, rows)]),
            "day": pa.array(
                (np.datetime64("2024-01-01") + rng.integers(0, 365, rows)).astype("datetime64[D]")
            ),
            "at": pa.array(
                np.datetime64("2024-01-01T00:00:00", "us")
                + rng.integers(0, 365 * 86400, rows).astype("timedelta64[s]")
            ),
        }
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--files", type=int, default=8, help="appends (a data file each)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyiceberg.catalog.hive import HiveCatalog
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'metastore.db'}"
        migrate.upgrade(url)
        engine = transactions.create_engine(url)
        settings = Settings(warehouse=str(Path(tmp) / "warehouse"))
        server = MetastoreServer(
            Handler(transactions.Transactions(engine), settings), "127.0.0.1", 0
        )
        threading.Thread(target=server.serve_forever, daemon=True).start()
        uri = f"thrift://127.0.0.1:{server.port}"
        catalog = HiveCatalog("bench", uri=uri, warehouse=(Path(tmp) / "lake").as_uri())
        catalog.create_namespace("lake")
        per_file = args.rows // args.files
        print(f"writing {per_file * args.files:,} rows in {args.files} appends with pyiceberg ...")
        table = catalog.create_table("lake.events", schema=batch(0, 1, 0).schema)
        for n in range(args.files):
            table.append(batch(n * per_file, per_file, n))
        table = catalog.load_table("lake.events")
        snapshot = table.current_snapshot()
        assert snapshot is not None
        paths = [task.file.file_path for task in table.scan().plan_files()]
        folder = Path(tmp) / "plain"
        folder.mkdir()
        for index, path in enumerate(paths):  # the same files, as a plain Parquet folder
            os.link(path.removeprefix("file:").removeprefix("//"), folder / f"part-{index}.parquet")

        spark = (
            SparkSession.builder.master("local[*]")
            .appName("iceberg bench")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config(map=analyze.SESSION_SETTINGS)
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        logging.getLogger("metastore").setLevel(logging.ERROR)
        on_iceberg = AnalyzeOptions(table="lake.events", uri=uri)
        on_folder = AnalyzeOptions(table="plain.events", uri=uri, path=str(folder))
        df = spark.read.parquet(*[p.removeprefix("file:") for p in paths])
        cores = spark.sparkContext.defaultParallelism
        print(
            f"\n{per_file * args.files:,} rows, {len(paths)} files, {len(COLUMNS)} columns, "
            f"local[*] with {cores} cores; median of {args.repeat} runs, taking turns:"
        )
        medians = timed(
            {
                "ours on the Iceberg table (+ Puffin, commit)": lambda: analyze.run(
                    spark, on_iceberg
                ),
                "ours on the same files as a folder": lambda: analyze.run(spark, on_folder),
                "bare scan (max of every column)": lambda: df.agg(
                    *[F.max(c) for c in COLUMNS]
                ).collect(),
            },
            args.repeat,
        )
        t_iceberg, t_folder, t_scan = medians.values()
        print(f"\n  ours (Iceberg) / bare scan  = {t_iceberg / t_scan:5.2f}x   (target <= 1.2x)")
        print(
            f"  ours (Iceberg) / ours (folder) = {t_iceberg / t_folder:5.2f}x   (what Iceberg adds)"
        )
        load = os.getloadavg()[0]
        print(f"  load average {load:.1f} on {os.cpu_count()} cores")
        print(f"  {datetime.datetime.now():%Y-%m-%d %H:%M}")
        spark.stop()
        server.stop()
        engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
