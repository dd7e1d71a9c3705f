"""Copy benchmark: `metastore db import` from a local Hive Metastore 2.3.10, against reading
the same objects from HMS alone, side by side in one run.

    python bench/import_bench.py [--partitions 3000] [--cols 10]
        [--sources postgresql,derby] [--backends sqlite,postgresql]

HMS, on PostgreSQL (as sites run it) and on embedded Derby (its test database), gets a table
of PARTITIONS partitions of COLS bigint columns with statistics for every partition (filling
it takes HMS 20 to 30 ms a partition). Then, for each
backend, a copy into a new database (the importer, in process, writing through colstats's
handler), and the reads alone of what the copy reads (partition names, partitions by name,
their statistics, in the copy's batches, one after another; the best of a run before each
copy): the least a copy can take with HMS as the source, since the copy reads a batch while
it writes the one before.
It prints partitions per second of each (target: 1,000 partitions with their statistics per
second) and the copy's time against the reads'.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hms_process import hive_metastore, hive_metastore_on_postgres, pyspark_jars
from rpc_bench import our_databases, postgres_database
from timing import progress

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.hms import importer
from metastore.hms.handler import Handler
from metastore.job.client import MetastoreClient
from metastore.store import transactions

PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
DB, TABLE = "copied", "events"
TARGET = 1000.0


def fill(client: MetastoreClient, partitions: int, cols: int, warehouse: str) -> None:
    columns = [t.FieldSchema(f"c{i}", "bigint", None) for i in range(cols)]

    def storage(location: str) -> t.StorageDescriptor:
        return t.StorageDescriptor(
            cols=columns,
            location=location,
            inputFormat="org.apache.hadoop.mapred.TextInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            serdeInfo=t.SerDeInfo("s", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {}),
            compressed=False,
            numBuckets=-1,
            bucketCols=[],
            sortCols=[],
            parameters={},
        )

    client.call("create_database", t.Database(DB, None, f"{warehouse}/{DB}.db", {}))
    client.call(
        "create_table",
        t.Table(
            tableName=TABLE,
            dbName=DB,
            owner="bench",
            sd=storage(f"{warehouse}/{DB}.db/{TABLE}"),
            partitionKeys=[t.FieldSchema("n", "int", None)],
            parameters={},
            tableType="MANAGED_TABLE",
        ),
    )
    for start in range(0, partitions, 500):
        numbers = range(start, min(start + 500, partitions))
        client.call(
            "add_partitions",
            [
                t.Partition(
                    values=[str(n)],
                    dbName=DB,
                    tableName=TABLE,
                    sd=storage(f"{warehouse}/{DB}.db/{TABLE}/n={n}"),
                    parameters={"numRows": str(n)},
                )
                for n in numbers
            ],
        )
        entries = [
            t.ColumnStatistics(
                t.ColumnStatisticsDesc(False, DB, TABLE, partName=f"n={n}"),
                [
                    t.ColumnStatisticsObj(
                        f"c{c}",
                        "bigint",
                        t.ColumnStatisticsData(longStats=t.LongColumnStatsData(n, n + c, 0, 1)),
                    )
                    for c in range(cols)
                ],
            )
            for n in numbers
        ]
        client.call("set_aggr_stats_for", t.SetPartitionsStatsRequest(entries, needMerge=False))
        progress(f"hms: {numbers[-1] + 1} partitions filled")


def reads_alone(client: MetastoreClient, cols: int) -> float:
    """Seconds to read what a copy of the table reads, in its batches."""
    started = time.perf_counter()
    names = client.call("get_partition_names", DB, TABLE, -1)
    columns = [f"c{c}" for c in range(cols)]
    for start in range(0, len(names), importer.BATCH):
        batch = names[start : start + importer.BATCH]
        client.call("get_partitions_by_names", DB, TABLE, batch)
        client.call(
            "get_partitions_statistics_req", t.PartitionsStatsRequest(DB, TABLE, columns, batch)
        )
    return time.perf_counter() - started


def copy(client: MetastoreClient, url: str) -> float:
    """Seconds of a copy of the table into the database at URL."""
    engine = transactions.create_engine(url)
    try:
        target = Handler(transactions.Transactions(engine), Settings())
        planned = importer.survey(client, DB)
        started = time.perf_counter()
        summary = importer.Importer(client, target).run(planned)
        seconds = time.perf_counter() - started
        if summary.skipped:
            raise RuntimeError(f"the copy skipped {summary.skipped}")
        return seconds
    finally:
        engine.dispose()


@contextlib.contextmanager
def source_hms(backend: str, home: Path) -> Iterator[int]:
    """HMS 2.3.10 on BACKEND (derby, in HOME; postgresql, a new database), its port."""
    if backend == "derby":
        with hive_metastore(pyspark_jars()) as (port, _):
            yield port
    else:
        with (
            postgres_database(PG_ADMIN_URL) as url,
            hive_metastore_on_postgres(pyspark_jars(), url, home, verify=False) as hms,
        ):
            yield hms.port


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=3000)
    parser.add_argument("--cols", type=int, default=10)
    parser.add_argument("--sources", default="postgresql,derby", help="HMS's backends")
    parser.add_argument("--backends", default="sqlite,postgresql", help="colstats's")
    args = parser.parse_args(argv)
    n = args.partitions
    report = [f"\na copy of {n:,} partitions of {args.cols} columns with statistics:"]
    for source in args.sources.split(","):
        rows = []
        with (
            tempfile.TemporaryDirectory(prefix="colstats-import-") as tmp,
            source_hms(source, Path(tmp)) as port,
            MetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=600) as client,
        ):
            progress(f"hms on {source}: filling")
            fill(client, n, args.cols, str(Path(tmp) / "warehouse"))
            alone = reads_alone(client, args.cols)  # the first run warms HMS's JVM
            for backend, url in our_databases(args.backends.split(","), PG_ADMIN_URL):
                alone = min(alone, reads_alone(client, args.cols))
                seconds = copy(client, url)
                rows.append((backend, seconds))
                progress(f"{backend}: copied from HMS on {source} in {seconds:.2f} s")
        report.append(f"  from HMS 2.3.10 on {source}")
        report.append(f"    reads alone (HMS)     {alone:6.2f} s  {n / alone:8,.0f} partitions/s")
        for backend, seconds in rows:
            rate = n / seconds
            met = "met" if rate >= TARGET else "MISSED"
            report.append(
                f"    copy into {backend:<11} {seconds:6.2f} s  {rate:8,.0f} partitions/s  "
                f"{seconds / alone:4.2f}x the reads alone  (target {TARGET:,.0f}/s: {met})"
            )
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
