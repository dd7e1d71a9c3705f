"""RPC benchmark: colstats calls vs the raw SQL they need vs Hive Metastore 2.3.10.

Run from a checkout (see bench/README.md):

    python bench/rpc_bench.py [--parts 1000] [--cols 20] [--repeat N]
                              [--backends sqlite,postgresql,hms]

For each backend of ours (a SQLite file, a new PostgreSQL database) it starts the server in
a process of its own (as it is deployed, and as HMS runs) on a loopback port, creates a table
of COLS bigint columns with PARTS partitions through the generated Thrift client, and times
four calls: set_aggr_stats_for (a bulk upsert of
PARTS x COLS statistics), get_table_statistics_req, get_partitions_statistics_req and
get_aggr_stats_for. Beside each call it times the SQL that call needs, run directly with
SQLAlchemy Core on the same database, and the same load against a real Hive Metastore 2.3.10
(pyspark's jars, embedded Derby) started as a subprocess. It prints one table per backend.
Nothing here asserts on timings: it measures and prints.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

# Benchmark the checkout this script lives in, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlalchemy as sa
from hms_process import free_port, hive_metastore, pyspark_jars, stop_process, wait_for_port
from raw_sql import database_version, run_raw, settle
from rpc_report import BackendResult, load, print_report
from rpc_workload import CALLS, Plans, Workload, run_load
from timing import Timing, progress, since

from metastore.config import Settings
from metastore.hms.handler import Handler
from metastore.hms.server import MetastoreServer
from metastore.store import migrate, transactions

PG_ADMIN_URL = os.environ.get(
    "METASTORE_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)

# ------------------------------------------------------------------------------------------
# Our server, on SQLite and on PostgreSQL


class HandlerClock:
    """Times the handler methods of the measured calls: the server's own work (validation,
    queries, building the answer) without the socket and the Thrift encoding and decoding."""

    def __init__(self, handler: Handler) -> None:
        self._samples: dict[str, list[float]] = {call: [] for call in CALLS}
        for call in CALLS:
            # The generated Processor calls self._handler.<call>(...): an instance attribute
            # shadows the method.
            setattr(handler, call, self._timed(getattr(handler, call), self._samples[call]))

    @staticmethod
    def _timed(method: Callable[..., Any], samples: list[float]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args)
            finally:
                samples.append(time.perf_counter() - started)

        return timed

    def dump(self, path: Path) -> None:
        path.write_text(json.dumps(self._samples))


def last_handler_timings(
    samples: dict[str, list[float]], calls: dict[str, Timing]
) -> dict[str, Timing]:
    """The handler timings of the timed client calls: the last N of each call (each call is
    measured once, after its warm-up and check calls)."""
    return {call: Timing(tuple(samples[call][-timing.n :])) for call, timing in calls.items()}


@contextlib.contextmanager
def our_server(url: str, timings: Path, cache_size: int = 0) -> Iterator[int]:
    """Our server with default settings (no bit vectors), with a cache of answers of
    CACHE_SIZE bytes (0: none, every call reads the database), in a process of its own, as
    it is deployed and as HMS runs, on a free loopback port; yields the port. When it stops
    it writes its handler timings to TIMINGS."""
    port = free_port()
    process = subprocess.Popen(
        [
            *(sys.executable, __file__, "--serve", url, "--port", str(port)),
            *("--timings", str(timings), "--cache-size", str(cache_size)),
        ],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process, None)
        yield port
    finally:
        stop_process(process)


def serve(url: str, port: int, timings: Path, cache_size: int) -> int:
    """The --serve mode: our server in this process, its handler clocked, until SIGTERM."""
    engine = transactions.create_engine(url, pool_size=4)
    # The warehouse (the `default` database's folder) beside the timings, in a temp dir.
    handler = Handler(
        transactions.Transactions(engine), Settings(warehouse=str(timings.parent / "wh"))
    )
    handler.ensure_default_database()
    clock = HandlerClock(handler)
    server = MetastoreServer(handler, "127.0.0.1", port, workers=8, cache_size=cache_size)
    signal.signal(signal.SIGTERM, lambda _signum, _frame: server.stop())
    try:
        server.serve_forever()
    finally:
        clock.dump(timings)
        engine.dispose()
    return 0


@contextlib.contextmanager
def sqlite_database() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="colstats-bench-") as tmp:
        yield f"sqlite:///{tmp}/metastore.db"


@contextlib.contextmanager
def postgres_database(admin_url: str) -> Iterator[str]:
    """A new database on the PostgreSQL server of ADMIN_URL, dropped afterwards."""
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"colstats_bench_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


def our_databases(backends: Sequence[str], admin_url: str) -> Iterator[tuple[str, str]]:
    """(backend, URL) of a new database with the schema, for each of ours in BACKENDS
    (sqlite, postgresql) in turn; PostgreSQL left out, with a line saying why, when it
    cannot be reached. Each database is removed once the next is yielded."""
    for backend in ("sqlite", "postgresql"):
        if backend not in backends:
            continue
        if backend == "postgresql" and (problem := postgres_problem(admin_url)):
            progress(f"postgresql skipped: {problem}")
            continue
        database = sqlite_database() if backend == "sqlite" else postgres_database(admin_url)
        with database as url:
            migrate.upgrade(url)
            yield backend, url


def postgres_problem(admin_url: str) -> str | None:
    """Why PostgreSQL at ADMIN_URL cannot be used, or None."""
    engine = sa.create_engine(admin_url)
    try:
        with engine.connect():
            return None
    except sa.exc.OperationalError as e:
        return f"unreachable at {admin_url}: {e.orig}"
    finally:
        engine.dispose()


def raw_engine(url: str) -> sa.Engine:
    """An engine for the raw SQL: SQLite set up as the server's (WAL, foreign keys), and
    PostgreSQL without the server's connection pre-ping, so that only the SQL is timed."""
    if url.startswith("sqlite"):
        return transactions.create_engine(url, pool_size=2)
    return sa.create_engine(url, pool_size=2)


def bench_ours(backend: str, url: str, w: Workload, plans: Plans, warehouse: str) -> BackendResult:
    progress(f"{backend}: migrating {sa.make_url(url).render_as_string()}")
    migrate.upgrade(url)
    engine = raw_engine(url)
    try:
        with tempfile.TemporaryDirectory(prefix="colstats-bench-") as tmp:
            timings = Path(tmp) / "handler.json"
            with our_server(url, timings) as port:
                calls = run_load(backend, port, w, warehouse, plans, lambda: settle(engine))
            handler = last_handler_timings(json.loads(timings.read_text()), calls)
        raw = run_raw(backend, engine, w, plans)
        description = database_version(engine)
    finally:
        engine.dispose()
    return BackendResult(backend, description, calls, handler, raw)


# ------------------------------------------------------------------------------------------
# Hive Metastore 2.3.10


def bench_hms(w: Workload, plans: Plans) -> dict[str, Timing]:
    jars = pyspark_jars()
    if not (jars / "hive-metastore-2.3.10.jar").exists():
        raise RuntimeError(f"no hive-metastore-2.3.10.jar in {jars}")
    progress(f"hms: starting Hive Metastore 2.3.10 from {jars}")
    with hive_metastore(jars) as (port, home):
        return run_load("hms", port, w, str(home / "warehouse"), plans)


# ------------------------------------------------------------------------------------------
# Main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=1000, help="partitions (default 1000)")
    parser.add_argument("--cols", type=int, default=20, help="bigint columns (default 20)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=500,
        help="at most this many timed calls per measurement (default 500); slow calls stop "
        "earlier, at the time budget, and HMS's bulk write is timed at most twice",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=10.0,
        help="seconds after which a measurement stops repeating (default 10; HMS's slow reads "
        "get twice that)",
    )
    parser.add_argument(
        "--backends",
        default="sqlite,postgresql,hms",
        help="comma-separated: sqlite, postgresql, hms (default all three)",
    )
    parser.add_argument(
        "--pg-url",
        default=PG_ADMIN_URL,
        help="SQLAlchemy URL of a PostgreSQL database to connect to for creating the "
        "benchmark's own database (default $METASTORE_BENCH_PG or postgres@127.0.0.1:5432)",
    )
    # Internal: the process of our server that the benchmark starts (see our_server).
    parser.add_argument("--serve", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--timings", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--cache-size", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(args.backends) - {"sqlite", "postgresql", "hms"}
    if unknown:
        parser.error(f"unknown backend(s): {', '.join(sorted(unknown))}")
    if args.parts < 1 or args.cols < 1 or args.repeat < 1:
        parser.error("--parts, --cols and --repeat must be positive")
    return args


def _exit_on_sigterm(signum: int, _frame: FrameType | None) -> None:
    """Turn SIGTERM into SystemExit so that the finally blocks stop HMS and clean up."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve:
        return serve(args.serve, args.port, args.timings, args.cache_size)
    load_at_start = load()[0]
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    w = Workload(parts=args.parts, cols=args.cols)
    ours = Plans.ours(args.repeat, args.budget)
    started = time.perf_counter()
    results: list[BackendResult] = []
    skipped: dict[str, str] = {}
    hms: dict[str, Timing] | None = None
    with tempfile.TemporaryDirectory(prefix="colstats-bench-wh-") as warehouse:
        if "sqlite" in args.backends:
            with sqlite_database() as url:
                results.append(bench_ours("sqlite", url, w, ours, warehouse))
        if "postgresql" in args.backends:
            problem = postgres_problem(args.pg_url)
            if problem:
                skipped["postgresql"] = problem
            else:
                with postgres_database(args.pg_url) as url:
                    results.append(bench_ours("postgresql", url, w, ours, warehouse))
    if "hms" in args.backends:
        if shutil.which("java") is None:
            skipped["hms"] = "no java on PATH"
        else:
            hms = bench_hms(w, Plans.hms(args.repeat, args.budget))
    print_report(args, w, results, hms, skipped, load_at_start)
    print(f"\ntotal time {since(started)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
