"""`metastore db import --from thrift://HOST:9083`: copy a running Hive Metastore (any version,
any backend) into colstats's database (metastore.hms.importer), with a progress bar, a summary
of what was copied and skipped, and --dry-run. Run again, it goes on where it stopped.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from metastore import config
from metastore.cli import remote
from metastore.cli.errors import EXIT_OK

WIDTH = 20
LOG_EVERY = 10.0


def add_parser(db_commands: Any) -> Any:
    copy = db_commands.add_parser(
        "import",
        help="copy a running Hive Metastore into colstats's database",
        description="Copy databases, tables, views, partitions, functions and table and "
        "partition statistics from a running Hive Metastore (any version, any backend) "
        "into colstats's database. What exists already is kept, so a copy that was "
        "interrupted goes on where it stopped when run again.",
    )
    copy.add_argument(
        "--databases", default="*", help="the databases to copy, an HMS pattern (default *)"
    )
    copy.add_argument(
        "--dry-run", action="store_true", help="say what would be copied; write nothing"
    )
    remote.add_arguments(
        copy,
        uri_help="the HMS to copy: thrift://HOST:PORT, or several comma-separated, tried in order",
        uri_flag="--from",
    )
    copy.set_defaults(run=run)
    return copy


class Bar:
    """Partitions copied of the total: redrawn in place on a terminal, a line every
    LOG_EVERY seconds otherwise."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.started = time.monotonic()
        self.shown = 0.0
        self.tty = sys.stderr.isatty()

    def __call__(self, where: str, done: int) -> None:
        now = time.monotonic()
        if not self.tty and now - self.shown < LOG_EVERY:
            return
        self.shown = now
        line = self.line(where, done)
        if self.tty:
            sys.stderr.write(f"\r{line:<100}")
        else:
            sys.stderr.write(f"{line}\n")
        sys.stderr.flush()

    def line(self, where: str, done: int) -> str:
        fraction = done / self.total if self.total else 1.0
        filled = round(fraction * WIDTH)
        elapsed = time.monotonic() - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        return (
            f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done:,}/{self.total:,} partitions "
            f"{rate:,.0f}/s  {where}"
        )

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def run(args: argparse.Namespace) -> int:
    from metastore.hms import importer
    from metastore.hms.handler import Handler
    from metastore.store import migrate, transactions

    settings = config.load(args.config, db=args.db)
    url = settings.database_url()
    where = transactions.safe_url(url)
    source, _ = remote.connect(remote.connection(args))
    with source:
        planned = importer.survey(source, args.databases)
        tables = sum(len(names) for names in planned.tables.values())
        print(
            f"{source.uri} holds {len(planned.databases)} database(s), {tables} table(s) and "
            f"view(s), {planned.partition_count:,} partition(s)"
        )
        if args.dry_run:
            for db in planned.databases:
                print(f"  {db}: {len(planned.tables[db])} table(s) and view(s)")
            print("nothing was written (--dry-run)")
            return EXIT_OK
        migrate.upgrade(url)  # refuses an HMS database not adopted
        engine = transactions.create_engine(url)
        try:
            target = Handler(transactions.Transactions(engine), settings)
            bar = Bar(planned.partition_count)
            started = time.monotonic()
            summary = importer.Importer(source, target, bar).run(planned)
            bar.close()
        finally:
            engine.dispose()
    seconds = time.monotonic() - started
    copied = ", ".join(f"{n:,} {kind}" for kind, n in summary.copied.items()) or "nothing"
    print(f"copied into {where} in {seconds:.1f} s: {copied}")
    if summary.existing:
        there = ", ".join(f"{n:,} {kind}" for kind, n in summary.existing.items())
        print(f"already there, kept: {there}")
    for skipped in summary.skipped:
        print(f"skipped {skipped}")
    return EXIT_OK
