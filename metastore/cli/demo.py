"""`metastore demo`: colstats from start to finish on a sample table, in one command.

It starts a metastore in this process on a loopback port, over a new embedded SQLite
database in a temporary folder (the server creates `default` there, as HMS does), writes a
partitioned sample table of shop orders (metastore.sample_data), runs the statistics job on
it with a local Spark, and prints `describe` for the table and a few columns; then it stops
the server and removes the folder. With --uri it uses that metastore instead of starting
one (the compose stack's job service does so). A line per stage shows the progress.

Its output is those lines and the tables, nothing else: the logs of Spark, of the job and of
the embedded server go to a file in the temporary folder of the system, which the first line
names and which is kept; an error is one line on stderr that names it too.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from metastore.cli import describe, remote
from metastore.job.connection import Connection

DEMO_TABLE = "sales.orders"
DESCRIBED = (("amount", None), ("quantity", "ds=2024-01-03"))
"""(column, partition) described after the table."""
STAGES = 5


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "demo",
        help="analyze a sample table and show its statistics (needs the 'spark' extra)",
        description="Start a metastore on a temporary SQLite database, write a partitioned "
        "sample table, compute its statistics with Spark and describe them; then clean up.",
    )
    parser.add_argument(
        "--data",
        help="write the sample table here and keep it (default: a temporary folder)",
    )
    parser.add_argument("--rows", type=int, default=20_000, help="orders (default 20000)")
    parser.add_argument("--table", default=DEMO_TABLE, help=f"DB.TABLE (default {DEMO_TABLE})")
    remote.add_arguments(
        parser,
        uri_help="use this metastore instead of starting one, thrift://HOST:PORT (default "
        "$METASTORE_URI; unset, a metastore of its own)",
    )
    parser.set_defaults(run=run)


class Progress:
    """`[i/5] what` lines, flushed at once, with the seconds since the start."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.stage = 0

    def next(self, what: str) -> None:
        self.stage += 1
        print(f"[{self.stage}/{STAGES}] {what}", flush=True)

    def note(self, what: str) -> None:
        print(f"      {what} ({time.monotonic() - self.started:.1f} s)", flush=True)


def run(args: argparse.Namespace) -> int:
    from metastore.cli.errors import EXIT_USAGE, CliError, explain
    from metastore.job import interrupts

    if args.rows < 7:
        raise CliError(f"--rows must be at least 7 (one order a day), not {args.rows}", EXIT_USAGE)
    remote_uri = args.uri or os.environ.get("METASTORE_URI")
    handle, name = tempfile.mkstemp(prefix="colstats-demo-", suffix=".log")
    os.close(handle)
    log = Path(name)
    logged = (
        "Spark and the statistics job"
        if remote_uri
        else "Spark, the statistics job and the embedded metastore"
    )
    print(f"logs of {logged}: {log}", flush=True)
    progress = Progress()
    interrupts.install()
    try:
        with _output_to(log), tempfile.TemporaryDirectory(prefix="colstats-demo-") as tmp:
            work = Path(tmp)
            data = Path(args.data) if args.data else work / "orders"
            if remote_uri:
                connection = remote.connection(args)
                progress.next(f"using the metastore at {connection.uri}")
                answer = remote.check(connection)
                progress.note(f"it answers, {len(answer.databases)} database(s)")
                _demo(connection, data, args, progress, log)
            else:
                progress.next("starting a metastore on a new SQLite database")
                with _local_server(work, progress) as uri:
                    _demo(Connection.of(uri), data, args, progress, log)
                progress.note("metastore stopped, temporary files removed")
    except Exception as e:
        if interrupts.received() is not None:  # Spark's work failed because it was cancelled
            interrupts.stop_children()
            raise KeyboardInterrupt from e
        if args.traceback:
            raise
        code, message = explain(e)
        raise CliError(f"{message}; logs in {log}", code) from e
    except KeyboardInterrupt:
        interrupts.stop_children()  # a JVM still starting
        raise
    finally:
        interrupts.uninstall()
    print(f"done in {time.monotonic() - progress.started:.1f} s")
    return 0


@contextmanager
def _output_to(log: Path) -> Iterator[None]:
    """While the demo runs, what is not its own lines goes to the file LOG: the records of
    Python's logging (the job's and the embedded server's, and the trace of a failure) and
    whatever is written to this process's stderr (Python's warnings); Spark's JVM writes
    there too (see _demo). Logging keeps writing to LOG afterwards."""
    handler = logging.FileHandler(log, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.getLogger("py4j").setLevel(logging.WARNING)  # a line per call to the JVM
    with _written_to(log, 2):
        try:
            yield
        except BaseException:
            logging.getLogger("metastore.demo").exception("the demo stopped")
            raise


@contextmanager
def _written_to(log: Path, *fds: int) -> Iterator[None]:
    """What is written to the file descriptors FDS (1 stdout, 2 stderr) in this block goes
    to LOG, also by the processes started in it, which keep LOG as theirs."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(fd) for fd in fds]
    target = os.open(log, os.O_WRONLY | os.O_APPEND)
    for fd in fds:
        os.dup2(target, fd)
    os.close(target)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, original in zip(fds, saved, strict=True):
            os.dup2(original, fd)
            os.close(original)


@contextmanager
def _local_server(work: Path, progress: Progress) -> Iterator[str]:
    """A server in a thread of this process on a free loopback port, over WORK/metastore.db;
    yields its URI and stops it afterwards."""
    from metastore.config import Settings
    from metastore.hms.handler import Handler
    from metastore.hms.server import MetastoreServer
    from metastore.store import migrate, transactions

    url = f"sqlite:///{work / 'metastore.db'}"
    migrate.upgrade(url)
    settings = Settings(db=url, warehouse=str(work / "warehouse"), fetch_histogram=True, workers=8)
    engine = transactions.create_engine(url, pool_size=4)
    handler = Handler(transactions.Transactions(engine), settings)
    handler.ensure_default_database()
    server = MetastoreServer.from_settings(handler, settings, host="127.0.0.1", port=0)
    thread = threading.Thread(target=server.serve_forever, name="metastore", daemon=True)
    thread.start()
    uri = f"thrift://127.0.0.1:{server.port}"
    progress.note(f"listening on {uri}, database {url}")
    try:
        yield uri
    finally:
        server.stop()
        thread.join(timeout=30)
        engine.dispose()


def _demo(
    connection: Connection, data: Path, args: argparse.Namespace, progress: Progress, log: Path
) -> None:
    from metastore import sample_data
    from metastore.job import analyze, interrupts
    from metastore.job.options import AnalyzeOptions

    progress.next(f"writing a sample table of {args.rows} orders to {data}")
    sample = sample_data.write_orders(data, rows=args.rows)
    progress.note(
        f"{len(sample.partitions)} daily partitions ({sample.partitions[0]} .. "
        f"{sample.partitions[-1]}), Parquet"
    )
    options = AnalyzeOptions(
        table=args.table,
        uri=connection.uri,
        path=str(data),
        random_order=connection.random_order,
        kerberos=connection.kerberos,
        tls=connection.tls,
    )
    progress.next("starting Spark (local)")
    # The JVM writes its log and its own warnings to the stdout and stderr it inherits, and
    # so do the Python workers it starts; Spark's bar of a job's tasks would be drawn there.
    # Started off the main thread, so that Ctrl-C stops the demo as it stops `metastore
    # analyze` (metastore.job.interrupts) instead of failing the Spark job it cancels.
    with _written_to(log, 1, 2):
        spark = interrupts.off_main_thread(
            lambda: analyze.spark_session(conf=(("spark.ui.showConsoleProgress", "false"),))
        )
    interrupts.watch_spark(spark.sparkContext)
    try:
        progress.note(f"Spark {spark.version}")
        uri = connection.uri
        progress.next(f"computing the statistics of {args.table} and writing them to {uri}")
        result = analyze.run(spark, options)
        progress.note(
            f"{len(result.plan.columns)} columns, {result.partitions} partitions analyzed in "
            f"{result.seconds:.1f} s"
        )
    finally:
        spark.stop()
    progress.next(f"reading them back: metastore describe {args.table} [COLUMN] --uri {uri}")
    db_name, _, table_name = args.table.partition(".")
    client, _ = remote.connect(connection)
    try:
        table = describe.fetch(client, db_name, table_name, None, None, "hive")
        print("\n".join(describe.text_lines(table, 10, one_column=False)), flush=True)
        for column, partition in DESCRIBED:
            one = describe.fetch(client, db_name, table_name, column, partition, "hive")
            print(flush=True)
            print("\n".join(describe.text_lines(one, 10, one_column=True)), flush=True)
    finally:
        client.close()
