"""`metastore analyze`: the statistics job, with Spark, into a metastore."""

from __future__ import annotations

import argparse
import logging
import os
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from metastore.cli import remote
from metastore.cli.errors import EXIT_USAGE, CliError
from metastore.job.errors import OptionsError
from metastore.job.options import DEFAULT_BATCH, DEFAULT_SHARE, FORMATS, AnalyzeOptions
from metastore.job.settings import spark_conf
from metastore.vocabulary import DEFAULT_ENGINE

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

STOP_SECONDS = 10.0
"""After an interrupt, how long Spark may take to stop before the command exits anyway
(the JVM ends when its Python parent is gone)."""


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "analyze",
        help="compute statistics with Spark and write them to a metastore",
        description="Compute HMS column statistics for a table and every partition in one "
        "Spark scan and write them to a metastore (needs the 'spark' extra).",
    )
    add_arguments(parser)
    parser.set_defaults(run=run)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", help="DB.TABLE in the metastore (created when missing)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--path",
        help="data folder with Hive-style partition folders (default: the table's own "
        "files, found through the metastore)",
    )
    source.add_argument("--spark-table", help="a table of the Spark catalog")
    parser.add_argument(
        "--format",
        choices=FORMATS,
        help="with --path: the files' format (default parquet); without it, the format of a "
        "table registered without one",
    )
    parser.add_argument(
        "--schema",
        help="with --path: a DDL schema, e.g. 'a INT, b STRING' (needed for csv and json)",
    )
    parser.add_argument(
        "--partition",
        action="append",
        default=[],
        metavar="SPEC",
        help="only this partition, e.g. ds=2024-01-01 (repeatable; "
        "a prefix of the keys selects every matching partition)",
    )
    parser.add_argument("--columns", help="comma-separated columns (default: all)")
    parser.add_argument(
        "--engine",
        default=DEFAULT_ENGINE,
        help="statistics engine (default hive, which Hive and Trino read)",
    )
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="scan only the partitions without statistics (and those named), among them "
        "the partition folders under the table's location not registered yet",
    )
    parser.add_argument(
        "--skew",
        nargs="?",
        type=float,
        const=DEFAULT_SHARE,
        metavar="SHARE",
        help="find the values holding more than SHARE of a column's rows, per partition "
        f"and for the table (default share {DEFAULT_SHARE})",
    )
    parser.add_argument(
        "--record-skew",
        metavar="COL[,COL]",
        help="store the skewed values of these columns as the table's SkewedInfo",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="csv and json: fail on a value that does not parse as its column's type "
        "(default: read it as NULL and count it)",
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, as spark-submit's --conf (repeatable); object storage is read "
        "with Spark's S3A settings, e.g. spark.hadoop.fs.s3a.endpoint=http://HOST:PORT",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH,
        help=f"partitions per metastore call (default {DEFAULT_BATCH})",
    )
    remote.add_arguments(parser)


def options(args: argparse.Namespace) -> AnalyzeOptions:
    """The job's options from the parsed command line (JobError when they do not fit); the
    metastore's connection as remote.connection() makes it, with the job's Spark settings."""
    from metastore.files.object_storage import split_location  # PyArrow: only when it runs

    path, path_conf = (None, []) if args.path is None else split_location(args.path)
    conf = (*(_setting(text) for text in args.conf), *path_conf)
    connection = remote.connection(args, spark_conf(conf))
    return AnalyzeOptions(
        table=args.table,
        uri=connection.uri,
        random_order=connection.random_order,
        kerberos=connection.kerberos,
        tls=connection.tls,
        path=path,
        spark_table=args.spark_table,
        format=args.format,
        schema=args.schema,
        partitions=tuple(args.partition),
        columns=_names(args.columns),
        engine=args.engine,
        incremental=args.incremental,
        batch_size=args.batch_size,
        skew=args.skew,
        record_skew=_names(args.record_skew),
        strict=args.strict,
        spark_conf=conf,
    )


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise OptionsError(f"--conf {text!r}: give KEY=VALUE, e.g. spark.executor.memory=4g")
    return key.strip(), value


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(c.strip() for c in text.split(",") if c.strip()) if text else ()


def run(args: argparse.Namespace) -> int:
    """Check everything that needs no scan, then start Spark (unless there is nothing to
    read), scan and write; Ctrl-C and SIGTERM stop it at any moment
    (metastore.job.interrupts)."""
    from metastore.cli import configure_logging
    from metastore.job import analyze, interrupts
    from metastore.job.errors import Interrupted, JobError
    from metastore.job.prepare import prepare

    job_options = options(args)
    _check_local_path(job_options.path)
    remote.check(job_options.connection)  # before Spark starts, which takes a while
    configure_logging("INFO")
    if args.traceback:
        logging.getLogger("py4j").setLevel(logging.WARNING)
    else:
        logging.getLogger("py4j").setLevel(logging.CRITICAL)
        for handler in logging.getLogger().handlers:
            handler.addFilter(_without_py4j)
    spark: SparkSession | None = None
    interrupts.install()
    try:
        prepared = prepare(job_options)
        if prepared.nothing_new is not None:  # Spark would read nothing
            print(prepared.nothing_new)
            return 0
        spark = interrupts.off_main_thread(
            lambda: analyze.spark_session(
                job_options.uri,
                hive_catalog=job_options.spark_table is not None,
                conf=job_options.spark_conf,
                quiet=not args.traceback,
            )
        )
        interrupts.watch_spark(spark.sparkContext)
        result = analyze.run(spark, job_options, prepared)
    except (KeyboardInterrupt, Exception) as e:
        # After a signal, a Spark call that fails failed because of it: the signal closed
        # the call the main thread was in, or cancelled the jobs of another. The job's own
        # errors (JobError) already say what was written.
        if not isinstance(e, KeyboardInterrupt) and (
            interrupts.received() is None or isinstance(e, JobError)
        ):
            raise
        if spark is not None:
            _stop(spark)
        interrupts.stop_children()  # a JVM still starting, or one that did not stop
        if isinstance(e, Interrupted):
            raise
        raise Interrupted(analyze.NOTHING_WRITTEN) from e
    finally:
        interrupts.uninstall()
    print()
    print(analyze.summary_text(result))
    return 0


def _without_py4j(record: logging.LogRecord) -> bool:
    """py4j logs some failures of its calls on the root logger, with their traces (an
    interrupted call, the JVM gone after an interrupt): the job reports what failed."""
    return f"{os.sep}py4j{os.sep}" not in record.pathname


def _stop(spark: SparkSession) -> None:
    """Stop SPARK, waiting STOP_SECONDS at most (its JVM may be gone already)."""

    def stop() -> None:
        try:
            spark.stop()
        except Exception as e:
            logging.getLogger("metastore.job").debug("stopping Spark: %s", e)

    stopper = threading.Thread(target=stop, name="colstats-stop", daemon=True)
    stopper.start()
    stopper.join(STOP_SECONDS)


def _check_local_path(path: str | None) -> None:
    """A local --path (no scheme, or file:) must exist; other file systems are Spark's."""
    if path is None:
        return
    parsed = urlparse(path)
    local = parsed.path if parsed.scheme == "file" else path if not parsed.scheme else None
    if local is not None and not os.path.exists(local):
        raise CliError(f"--path {path}: no such file or folder", EXIT_USAGE)
