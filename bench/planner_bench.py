"""Planner benchmark: the calls a query planner makes for every query, and the writes of a
statistics task, colstats (SQLite, PostgreSQL; cold and warm) against Hive Metastore 2.3.10,
side by side in one run.

    python bench/planner_bench.py [--days 8] [--hours 25] [--cols 10] [--wide 1200]
                                  [--repeat 200] [--seconds 10]
                                  [--backends sqlite,postgresql,hms,hms-postgresql]

HMS runs on its embedded Derby (`hms`, as hms_process.hive_metastore runs it) and on
PostgreSQL (`hms-postgresql`, as sites run it: a database of its own on the same server as
ours, Hive's schema made by DataNucleus, direct SQL on, its transaction tables made as Hive's
script for PostgreSQL makes them; two servers on it, as ours).

A table of COLS bigint columns partitioned by (ds string, hr int), DAYS x HOURS partitions,
with statistics for the table and every partition. Timed, p50 over REPEAT calls through the
generated client, each server in a process of its own on a loopback port:

* get_table, get_partition_names, get_partitions_by_filter of a day, and the statistics of a
  day's partitions (get_partitions_statistics_req, get_aggr_stats_for);
* a planner's round (the table, the partition names, a day's partitions by filter and their
  statistics) repeated for SECONDS by four planners, each with a connection of its own,
  spread over two servers on the database (HMS on Derby: one, as embedded Derby allows):
  rounds per second, of four threads of a JVM through Hive 2.3.10's generated client (what
  Spark's planner uses: bench/java/PlannerRounds.java, compiled with javac), then of four
  threads of this script (whose decoding of the answers takes turns under Python's global
  lock), then of four processes of this script;
* per-call writes: update_partition_column_statistics of one partition (COLS columns),
  add_partition, and an Iceberg commit as pyiceberg and Java Iceberg make it (lock the table,
  get_table, alter_table_with_environment_context swapping metadata_location, unlock: four
  calls; HMS with its transaction tables made);
* the statistics of every partition of the table (get_partitions_statistics_req,
  get_aggr_stats_for) and the partitions themselves (get_partitions_by_names) right after a
  write of one partition's statistics (untimed, a different partition each time), and the
  same over a table of WIDE partitions (1,200): what a planner reads while data is loaded;
  with, for each, this script's client's decoding of the answer, in process, no server (the
  least this client spends on the answer, whatever the server: the report adds it to the
  floor of those reads), and, for the statistics reads, the read with its reply read as
  bytes, not decoded (the server's part and the transfer: bench/raw_calls.py); after each
  statistics read's timings, one more, right after a write, must hold what that write wrote
  (a server answering from a cache the write left as it was fails the run);
* get_partition_names_ps of a day (Trino's call), one statement when answered: to show what
  the cache costs where the answer costs least;
* the floors, of our servers: a call that does nothing (set_ugi), a server's cost of a call
  whatever it asks; and the durable commit of COLS rows (an upsert and its commit on
  the driver, no server: one round trip and the commit). No write through a server is faster
  than the two together, so the report gives, for each write, the ratio to HMS that this
  floor allows, and the write's own ratio to it (targets: 1.5x the statistics write, 2x
  add_partition); the statistics write is also timed beside its rows' own upsert, alone
  (planner_floors.ROWS). Our writes are timed once the database has settled (VACUUM ANALYZE after
  the loading and the calls before: left to autovacuum, that work ran while the writes were
  timed, on the same two cores), each in turns with its floor (a write, a durable commit on
  the driver, a call that does nothing, and again), so that both meet the same moments of a
  machine whose disk and cores are shared.

With `adopted` among the backends, the table is also made by HMS 2.3.10 itself in a new
PostgreSQL database (its schema made by DataNucleus), which colstats then adopts
(`metastore db adopt`); the report gives each call's p50 there against the same call on a
database colstats made (target: within 1.2x).

Cold is a server without the cache of answers (every call reads the database), warm one with
it (answers from memory once read). It prints the p50s, the ratios of each HMS to ours and
the targets (bench/planner_report.py), judged against HMS on PostgreSQL when it ran, else
against HMS on Derby; nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import multiprocessing
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hms_process import (
    JDBC_DRIVER,
    hive_metastore,
    hive_metastore_on_postgres,
    make_postgres_transaction_tables,
    pyspark_jars,
)
from partition_bench import decoding
from planner_floors import COMMIT, ROWS, DriverFloor, driver_floors, settled
from planner_jvm import compile_jvm_planner, jvm_after_write, jvm_throughput
from planner_report import (
    DECODING,
    ICEBERG_COMMIT,
    NO_OP,
    RAW,
    ROUND_JVM,
    ROUND_PROCESSES,
    ROUND_THREADS,
    beside,
    report,
    report_adopted,
)
from raw_calls import RawCaller, encoded_call, reply_size
from rpc_bench import our_databases, our_server, postgres_database, postgres_problem
from rpc_workload import connect
from timing import Plan, Timing, measure, measure_together, progress

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
DB, TABLE, ADDED, ICEBERG, WIDE = "planner", "sales", "added", "iceberg", "wide"
FIRST_DAY = datetime.date(2024, 1, 1)
CACHE = 256 * 1024 * 1024  # the default size of the cache of answers
Client = ThriftHiveMetastore.Client

AFTER_WRITE_CALLS = (
    "get_partitions_statistics_req",
    "get_aggr_stats_for",
    "get_partitions_by_names",
)
"""The reads of every partition of a table timed right after a write of one partition's
statistics (the target is the statistics reads')."""


def day(index: int) -> str:
    return (FIRST_DAY + datetime.timedelta(days=index)).isoformat()


def _storage(cols: int, location: str) -> t.StorageDescriptor:
    return t.StorageDescriptor(
        cols=[t.FieldSchema(f"c{i}", "bigint", None) for i in range(cols)],
        location=location,
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=t.SerDeInfo(
            "parquet", "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe", {}
        ),
        compressed=False,
        numBuckets=-1,
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def _stats(
    args: argparse.Namespace, part: str | None, seed: int, table: str = TABLE
) -> t.ColumnStatistics:
    desc = t.ColumnStatisticsDesc(
        isTblLevel=part is None, dbName=DB, tableName=table, partName=part
    )
    objs = [
        t.ColumnStatisticsObj(
            f"c{c}",
            "bigint",
            t.ColumnStatisticsData(
                longStats=t.LongColumnStatsData(-seed - c, seed + c, seed % 7, 100 + c)
            ),
        )
        for c in range(args.cols)
    ]
    return t.ColumnStatistics(desc, objs)


def create(client: Client, warehouse: str, args: argparse.Namespace) -> None:
    location = f"{warehouse}/{DB}.db"
    client.create_database(t.Database(DB, None, location, {}))
    keys = [t.FieldSchema("ds", "string", None), t.FieldSchema("hr", "int", None)]

    def table(name: str, partitioned: bool = True, **params: str) -> None:
        client.create_table(
            t.Table(
                tableName=name,
                dbName=DB,
                owner="bench",
                sd=_storage(args.cols, f"{location}/{name}"),
                partitionKeys=keys if partitioned else [],
                parameters={"EXTERNAL": "TRUE", **params},
                tableType="EXTERNAL_TABLE",
            )
        )

    table(TABLE)
    table(ADDED)  # add_partition adds to a table of its own: the reads' answers stay the same
    table(ICEBERG, partitioned=False, table_type="ICEBERG", metadata_location="v0")
    parts = [
        t.Partition(
            values=[day(d), str(h)],
            dbName=DB,
            tableName=TABLE,
            sd=_storage(args.cols, f"{location}/{TABLE}/ds={day(d)}/hr={h}"),
            parameters={"numRows": "1000", "totalSize": "65536"},
        )
        for d in range(args.days)
        for h in range(args.hours)
    ]
    client.add_partitions(parts)
    names = client.get_partition_names(DB, TABLE, -1)
    entries = [_stats(args, name, i) for i, name in enumerate(names)]
    client.update_table_column_statistics(_stats(args, None, 1))
    client.set_aggr_stats_for(t.SetPartitionsStatsRequest(entries))
    if args.wide:  # WIDE partitions with statistics, for the reads after a write
        table(WIDE)
        wide = [(day(n // args.hours), str(n % args.hours)) for n in range(args.wide)]
        for start in range(0, len(wide), 200):
            client.add_partitions(
                [
                    t.Partition(
                        values=list(v),
                        dbName=DB,
                        tableName=WIDE,
                        sd=_storage(args.cols, f"{location}/{WIDE}/ds={v[0]}/hr={v[1]}"),
                        parameters={"numRows": "1000", "totalSize": "65536"},
                    )
                    for v in wide[start : start + 200]
                ]
            )
            client.set_aggr_stats_for(
                t.SetPartitionsStatsRequest(
                    [
                        _stats(args, f"ds={v[0]}/hr={v[1]}", start + i, WIDE)
                        for i, v in enumerate(wide[start : start + 200])
                    ]
                )
            )


def _day_names(args: argparse.Namespace, which: int) -> list[str]:
    return [f"ds={day(which)}/hr={h}" for h in range(args.hours)]


def reads(args: argparse.Namespace) -> dict[str, Callable[[Client], Any]]:
    columns = [f"c{c}" for c in range(args.cols)]
    filter_ = f'ds = "{day(2)}"'
    request = t.PartitionsStatsRequest(DB, TABLE, columns, _day_names(args, 2))
    return {
        "get_table": lambda c: c.get_table(DB, TABLE),
        "get_partition_names": lambda c: c.get_partition_names(DB, TABLE, -1),
        "get_partitions_by_filter (a day)": lambda c: c.get_partitions_by_filter(
            DB, TABLE, filter_, -1
        ),
        "get_partitions_statistics_req (a day)": lambda c: c.get_partitions_statistics_req(request),
        "get_aggr_stats_for (a day)": lambda c: c.get_aggr_stats_for(request),
        "get_partition_names_ps (a day)": lambda c: c.get_partition_names_ps(
            DB, TABLE, [day(2), ""], -1
        ),
    }


def _after_write_tables(args: argparse.Namespace) -> dict[str, int]:
    """The tables read after a write, and their numbers of partitions."""
    tables = {TABLE: args.days * args.hours, WIDE: args.wide}
    return {table: count for table, count in tables.items() if count}


def after_write_reads(args: argparse.Namespace) -> dict[str, tuple[str, list[str]]]:
    """The reads timed right after a write of one partition's statistics: by name, the
    table and its partitions read (every partition of each)."""
    out = {}
    for table, count in _after_write_tables(args).items():
        names = [f"ds={day(n // args.hours)}/hr={n % args.hours}" for n in range(count)]
        for call in AFTER_WRITE_CALLS:
            out[f"{call} after a write ({count:,} x {args.cols})"] = (table, names)
    return out


def measure_after_write(
    client: Client, port: int, args: argparse.Namespace, plan: Plan
) -> dict[str, Timing]:
    """Each of `after_write_reads`, timed right after an untimed write of one of its
    partitions' statistics (a different partition each time) through the same server; the
    statistics reads also with their replies read as bytes (RawCaller, on the server at
    PORT), their answers' sizes the same after every write."""
    columns = [f"c{c}" for c in range(args.cols)]
    out: dict[str, Timing] = {}
    counter = iter(range(10**9))
    for name, (table, names) in after_write_reads(args).items():
        call = name.split()[0]
        request = t.PartitionsStatsRequest(DB, table, columns, names)
        arguments = (DB, table, names) if call == "get_partitions_by_names" else (request,)
        read = getattr(client, call)

        def write(table: str = table, names: list[str] = names) -> None:
            n = next(counter)
            client.update_partition_column_statistics(
                _stats(args, names[n * 7 % len(names)], n, table)
            )

        out[name] = measure(functools.partial(read, *arguments), plan, before=write)
        answer = read(*arguments)
        out[f"{name}, {DECODING}"] = decoding(call, answer, plan)
        if call != "get_partitions_by_names":
            raw = RawCaller(port)
            encoded, size = encoded_call(call, arguments), reply_size(call, answer)
            try:
                raw.check_size(encoded, size)
                timed = functools.partial(raw.call, encoded, size)
                out[f"{name}, {RAW}"] = measure(timed, plan, before=write)
                raw.check_drained()
            finally:
                raw.close()
            part, fresh = names[0], FRESH + next(counter)
            client.update_partition_column_statistics(_stats(args, part, fresh, table))
            _check_fresh(name, read(*arguments), part, fresh)
    return out


FRESH = 10**12
"""Above the seeds of the timed writes: a last write before each statistics read after a
write is checked is seeded FRESH and more, so that its partition's c0 then has the highest
value of the table, higher than any before."""


def _check_fresh(name: str, answer: Any, part: str, fresh: int) -> None:
    """Fail unless ANSWER (of the read NAME, right after a write of partition PART's
    statistics seeded FRESH) holds what that write wrote: a timing of a stale answer
    compares nothing."""
    found = answer.colStats if name.startswith("get_aggr_stats_for") else answer.partStats[part]
    c0 = next((c for c in found if c.colName == "c0"), None)
    high = c0.statsData.longStats.highValue if c0 is not None else None
    if high != fresh:
        raise RuntimeError(
            f"{name}: c0's high value is {high} right after a write of {fresh}: the answer is "
            "stale (a cache of the server's, not told of the write?)"
        )


def _plan(args: argparse.Namespace) -> Plan:
    """How each call is timed: REPEAT calls (fewer past BUDGET seconds) after 3 untimed."""
    return Plan(count=args.repeat, budget_s=args.budget, warmup=3)


def planner_round(args: argparse.Namespace) -> Callable[[Client, int], None]:
    """A planner's round for a query on day WHICH: the table, its partition names, the
    day's partitions by filter, their statistics."""
    columns = [f"c{c}" for c in range(args.cols)]

    def round_(client: Client, which: int) -> None:
        client.get_table(DB, TABLE)
        client.get_partition_names(DB, TABLE, -1)
        client.get_partitions_by_filter(DB, TABLE, f'ds = "{day(which)}"', -1)
        client.get_partitions_statistics_req(
            t.PartitionsStatsRequest(DB, TABLE, columns, _day_names(args, which))
        )

    return round_


def throughput(ports: Sequence[int], args: argparse.Namespace, *, processes: bool) -> float:
    """Planner rounds per second of four planners spread over PORTS, for SECONDS: four
    threads of this process, or (PROCESSES) four processes of a thread each. A planner's
    threads decode their answers in parallel (a JVM's do); this script's threads take turns
    under Python's global lock, so that the threads' figure also measures that lock."""
    round_ = planner_round(args)
    context = multiprocessing.get_context("fork")
    start, stop = context.Event(), context.Event()
    done = context.Array("q", 4)

    def work(index: int) -> None:
        with connect(ports[index % len(ports)]) as client:
            for which in range(args.days):  # every day once, untimed
                round_(client, which)
            start.wait()
            n = 0
            while not stop.is_set():
                round_(client, n % args.days)
                n += 1
            done[index] = n

    kind = context.Process if processes else threading.Thread
    planners = [kind(target=work, args=(i,)) for i in range(4)]
    for planner in planners:
        planner.start()
    time.sleep(1.0)  # the warm-up rounds
    start.set()
    began = time.perf_counter()
    time.sleep(args.seconds)
    stop.set()
    for planner in planners:
        planner.join()
    rounds: list[int] = done[:]
    return sum(rounds) / (time.perf_counter() - began)


def writes(
    client: Client, args: argparse.Namespace, plan: Plan, label: str, floor: DriverFloor | None
) -> dict[str, Timing]:
    """The writes timed; with FLOOR (ours), each of WRITES in turns with its floor (a call
    that does nothing, a durable commit on the driver), named by `beside`."""
    names = client.get_partition_names(DB, TABLE, -1)
    counter = iter(range(10**9))

    def update() -> None:
        n = next(counter)
        client.update_partition_column_statistics(_stats(args, names[n % len(names)], n))

    added = iter(range(10**9))
    location = client.get_table(DB, ADDED).sd.location
    prefix = label.replace(" ", "-")

    def add() -> None:
        n = next(added)
        client.add_partition(
            t.Partition(
                values=[f"{prefix}-{n}", "0"],
                dbName=DB,
                tableName=ADDED,
                sd=_storage(args.cols, f"{location}/ds={prefix}-{n}/hr=0"),
                parameters={},
            )
        )

    component = t.LockComponent(
        type=t.LockType.EXCLUSIVE, level=t.LockLevel.TABLE, dbname=DB, tablename=ICEBERG
    )
    lock_request = t.LockRequest(component=[component], user="bench", hostname="bench")
    no_stats = t.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"})
    commits = iter(range(10**9))

    def commit() -> None:
        lock = client.lock(lock_request)
        if lock.state != t.LockState.ACQUIRED:
            raise RuntimeError(f"the table's lock was not granted at once: {lock}")
        table = client.get_table(DB, ICEBERG)
        table.parameters = {
            **table.parameters,
            "previous_metadata_location": table.parameters["metadata_location"],
            "metadata_location": f"{prefix}-{next(commits)}",
        }
        client.alter_table_with_environment_context(DB, ICEBERG, table, no_stats)
        client.unlock(t.UnlockRequest(lock.lockid))

    def noop() -> None:
        client.set_ugi("bench", [])

    out: dict[str, Timing] = {}
    for name, call in (("update_partition_column_statistics", update), ("add_partition", add)):
        if floor is None:
            out[name] = measure(call, plan)
            continue
        parts: dict[str, Callable[[], object]] = {name: call, COMMIT: floor.commit, NO_OP: noop}
        if name == "update_partition_column_statistics" and floor.postgres:
            parts[ROWS] = floor.rows
        together = measure_together(parts, plan)
        out[name] = together.pop(name)
        out.update({beside(name, part): timing for part, timing in together.items()})
    out[ICEBERG_COMMIT] = measure(commit, plan)
    return out


def run(
    backend: str,
    ports: Sequence[int],
    args: argparse.Namespace,
    warehouse: str | None,
    jvm: str | None,
    url: str | None = None,
) -> dict[str, float]:
    """p50s in seconds (throughput: rounds per second) on the servers at PORTS; the JVM
    planner round with classpath JVM (none when None); with URL (our database), the writes
    timed once it has settled, in turns with their floor."""
    plan = _plan(args)
    out: dict[str, float] = {}
    with connect(ports[0]) as client:
        if warehouse is not None:
            create(client, warehouse, args)
        calls = reads(args)
        # HMS 2.3 closes the connection on a set_ugi after the first call.
        if not backend.startswith("hms"):
            calls[NO_OP] = lambda c: c.set_ugi("bench", [])
        for name, call in calls.items():
            out[name] = measure(lambda c=call: c(client), plan).p50  # type: ignore[misc]
            progress(f"  {backend:<16} {name:<40} p50 {out[name] * 1e3:8.2f} ms")
    if jvm is not None:
        out[ROUND_JVM] = jvm_throughput(jvm, ports, args, DB, TABLE, FIRST_DAY.isoformat())
        progress(f"  {backend:<16} {ROUND_JVM}: {out[ROUND_JVM]:.0f}")
    for name, processes in ((ROUND_THREADS, False), (ROUND_PROCESSES, True)):
        out[name] = throughput(ports, args, processes=processes)
        progress(f"  {backend:<16} {name}: {out[name]:.0f}")
    if url is not None:
        settled(url)
    floor = DriverFloor(url, args.cols) if url is not None else None
    with connect(ports[0]) as client:
        timings = writes(client, args, plan, backend, floor)
        if floor is not None:
            floor.close()
        for name, timing in timings.items():
            out[name] = timing.p50
            progress(f"  {backend:<16} {name:<40} p50 {timing.p50 * 1e3:8.2f} ms")
        for name, timing in measure_after_write(client, ports[0], args, plan).items():
            out[name] = timing.p50
            progress(f"  {backend:<16} {name:<40} p50 {timing.p50 * 1e3:8.2f} ms")
    if jvm is not None:
        tables = _after_write_tables(args)
        first = FIRST_DAY.isoformat()
        for (read, table), p50 in jvm_after_write(jvm, ports[0], args, DB, tables, first).items():
            name = f"{read} after a write ({tables[table]:,} x {args.cols}), JVM client"
            out[name] = p50
            progress(f"  {backend:<16} {name:<40} p50 {p50 * 1e3:8.2f} ms")
    return out


@contextlib.contextmanager
def two_servers(url: str, warehouse: Path, cache: int) -> Iterator[list[int]]:
    warehouse.mkdir(parents=True, exist_ok=True)
    with (
        our_server(url, warehouse / "a.json", cache) as a,
        our_server(url, warehouse / "b.json", cache) as b,
    ):
        yield [a, b]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=8)
    parser.add_argument("--hours", type=int, default=25)
    parser.add_argument("--cols", type=int, default=10)
    parser.add_argument(
        "--wide", type=int, default=1200, help="partitions of the table read after a write"
    )
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per measurement")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per measurement")
    parser.add_argument("--seconds", type=float, default=10.0, help="of planner rounds")
    parser.add_argument("--backends", default="sqlite,postgresql,hms,hms-postgresql")
    args = parser.parse_args(argv)
    backends = args.backends.split(",")
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="colstats-bench-") as tmp:
        warehouse = Path(tmp)
        (warehouse / "classes").mkdir()
        jvm = compile_jvm_planner(warehouse / "classes")
        floors: dict[str, dict[str, float]] = {}
        for backend, url in our_databases(backends, PG_ADMIN_URL):
            floors[backend] = driver_floors(url, args, _plan(args))
            for name, p50 in floors[backend].items():
                progress(f"  {backend:<16} {name:<40} p50 {p50 * 1e3:8.2f} ms")
            with two_servers(url, warehouse / f"{backend}-cold", 0) as ports:
                results[f"{backend} cold"] = run(
                    f"{backend} cold", ports, args, str(warehouse / backend), jvm, url
                )
            with two_servers(url, warehouse / f"{backend}-warm", CACHE) as ports:
                results[f"{backend} warm"] = run(f"{backend} warm", ports, args, None, jvm, url)
        if "adopted" in backends:
            with adopted_database(PG_ADMIN_URL, warehouse / "adopted", args) as url:
                with two_servers(url, warehouse / "adopted-cold", 0) as ports:
                    results["adopted cold"] = run("adopted cold", ports, args, None, jvm, url)
                with two_servers(url, warehouse / "adopted-warm", CACHE) as ports:
                    results["adopted warm"] = run("adopted warm", ports, args, None, jvm, url)
        if "hms" in backends:
            progress("hms: starting Hive Metastore 2.3.10")
            with hive_metastore(pyspark_jars(), transactions=True) as (port, home):
                results["hms"] = run("hms", [port], args, str(home / "warehouse"), jvm)
        if "hms-postgresql" in backends:
            if problem := hms_on_postgres_problem():
                progress(f"hms-postgresql skipped: {problem}")
            else:
                with two_hms_on_postgres(warehouse / "hms-postgresql", args) as ports:
                    results["hms-postgresql"] = run("hms-postgresql", ports, args, None, jvm)
    for name, result in results.items():
        if name.split()[0] in floors:
            result.update(floors[name.split()[0]])
    adopted = {
        b: results.pop(f"adopted {b}") for b in ("cold", "warm") if f"adopted {b}" in results
    }
    report(results, args)
    if adopted:
        report_adopted(adopted, results)
    return 0


def hms_on_postgres_problem() -> str | None:
    """Why HMS cannot run on the PostgreSQL server of PG_ADMIN_URL, or None."""
    if not JDBC_DRIVER.exists():
        return f"{JDBC_DRIVER} is missing (apt-get install libpostgresql-jdbc-java)"
    return postgres_problem(PG_ADMIN_URL)


@contextlib.contextmanager
def two_hms_on_postgres(home: Path, args: argparse.Namespace) -> Iterator[list[int]]:
    """Two HMS 2.3.10 servers on a new PostgreSQL database of their own (dropped after),
    with the benchmark's table; yields their ports. HMS's transaction tables are made first,
    then Hive's schema by DataNucleus (direct SQL on, as in hms_process.HMS_CONF). The table
    is made through the first server before the second starts: DataNucleus makes each of
    HMS's tables when a server first uses it, and two servers doing so at once could both
    try."""
    jars = pyspark_jars()
    (home / "second").mkdir(parents=True)
    with postgres_database(PG_ADMIN_URL) as url:
        progress("hms-postgresql: Hive Metastore 2.3.10 makes its tables in a PostgreSQL database")
        make_postgres_transaction_tables(url)
        with hive_metastore_on_postgres(jars, url, home, verify=False) as first:
            with connect(first.port) as client:
                create(client, str(home / "warehouse"), args)
            with hive_metastore_on_postgres(jars, url, home / "second", verify=False) as second:
                yield [first.port, second.port]


@contextlib.contextmanager
def adopted_database(admin_url: str, home: Path, args: argparse.Namespace) -> Iterator[str]:
    """A PostgreSQL database whose schema HMS 2.3.10 made and whose table HMS filled (as
    `create` fills ours), adopted by colstats; its URL."""
    from metastore.store import adopt

    home.mkdir(parents=True, exist_ok=True)
    with postgres_database(admin_url) as url:
        progress("adopted: HMS 2.3.10 makes and fills a PostgreSQL database")
        with (
            hive_metastore_on_postgres(pyspark_jars(), url, home, verify=False) as hms,
            connect(hms.port) as client,
        ):
            create(client, str(home / "warehouse"), args)
        adopt.adopt(url)
        yield url


if __name__ == "__main__":
    sys.exit(main())
