"""The statistics job from start to summary: plan, scan once, register, write.

    metastore analyze DB.TABLE --uri thrift://HOST:PORT
        (--path PATH --format FMT [--schema DDL] | --spark-table NAME)
        [--partition SPEC ...] [--columns a,b] [--engine hive] [--incremental]

or, on a cluster, spark-submit of the file that `python -m metastore.job --path-of-script`
names, with the same options (the package must be importable on the driver and the
executors: installed there, or shipped with --py-files).

How it works: for files (--path, or the table's own files found through the metastore) the
driver lists them and Spark runs tasks that read them with PyArrow, in bounded batches; a
table of the Spark catalog reaches Python as Arrow batches instead. Either way each task
turns its rows into partial statistics per partition (metastore.job.scan,
metastore.job.accumulators), which are merged per partition and per column on the executors;
the driver fetches the merged partitions a batch at a time and writes each batch (registering
missing partitions, their basic statistics, then set_aggr_stats_for), so its memory does not
grow with the number of partitions. The data is read once, after every check that needs no
scan (metastore.job.prepare), and nothing is registered before the scan has succeeded; each
batch of partitions is written as a unit, the table level last (metastore.job.writer).

With incremental runs only partitions without statistics (and those named) are scanned,
among them the partition folders under a registered table's location that are not
registered yet; when there is none, Spark is not started. The table level is then merged
from the stored partition statistics and sketches (metastore.job.table_level), so old
partitions are never read again.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import logging
import os
import shlex
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.files.listing import splits_of
from metastore.job import iceberg, interrupts, located, scan, writer
from metastore.job.accumulators import ColumnState
from metastore.job.client import MetastoreClient
from metastore.job.errors import Interrupted, JobError, OptionsError, files_errors
from metastore.job.options import DEFAULT_SHARE, AnalyzeOptions
from metastore.job.prepare import (
    Prepared,
    already_done,
    check_plan,
    matches,
    prepare,
    skew_request,
)
from metastore.job.progress import Progress, watch
from metastore.job.scan import Partial, SkewRequest, Unparsed
from metastore.job.skew import split_key
from metastore.job.source import (
    Plan,
    columns_of_dataframe,
    filter_partitions,
    make_plan,
    read_spark_table,
    skip_partitions,
    spark_catalog_storage,
)
from metastore.job.storage import storage_descriptor, table_parameters
from metastore.job.table_level import table_level
from metastore.thrift_stats import decimal_text, union_member

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("metastore.job")
_Item = TypeVar("_Item")
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
NOTHING_WRITTEN = "nothing was written: the metastore is as it was"


@dataclass
class AnalyzeResult:
    """What a run wrote: the table-level statistics by column name, and how long it took;
    with --skew, the skewed values of the table by column (or combination 'a,b')."""

    plan: Plan
    table_stats: dict[str, t.ColumnStatisticsObj]
    partitions: int
    seconds: float
    skewed: dict[str, list[tuple[str, int]]] = field(default_factory=dict)
    share: float = 0.0
    rows: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds spent checking (before Spark), planning, scanning and writing."""
    unparsed: Unparsed = field(default_factory=Unparsed)
    """csv and json values that did not parse as their column's type (read as NULL)."""
    kept: int = 0
    """Partitions not read again, whose statistics the metastore had (--incremental)."""


def run(
    spark: SparkSession, options: AnalyzeOptions, prepared: Prepared | None = None
) -> AnalyzeResult:
    """Analyze as OPTIONS say, with SPARK, after the checks of PREPARED (made now when
    not given); raises JobError for what the user can fix, Interrupted when a signal
    stopped the run (see metastore.job.interrupts)."""
    started = time.monotonic()
    prepared = prepared or prepare(options)
    db, table = options.db_name, options.table_name
    specs = prepared.specs
    source = prepared.source
    if prepared.nothing_new is not None:
        assert prepared.plan is not None
        log.info("%s", prepared.nothing_new)
        return AnalyzeResult(
            plan=prepared.plan,
            table_stats={},
            partitions=0,
            seconds=time.monotonic() - started + prepared.seconds,
            kept=len(prepared.skip),
        )
    if options.spark_table:
        df, keys = read_spark_table(spark, options.spark_table)
        plan = make_plan(*columns_of_dataframe(df, keys), db, table, options.columns)
        check_plan(plan, options, specs)
        skewed = skew_request(plan, options)
        if prepared.stored is not None:
            writer.check_stored_keys(prepared.stored, plan)
        catalog = spark_catalog_storage(spark, options.spark_table)
        stored_names = list(catalog.locations) if plan.partition_keys else []
        if plan.partition_keys and not stored_names:
            shown = spark.sql(f"SHOW PARTITIONS {options.spark_table}").collect()
            stored_names = [row[0] for row in shown]
        check_specs_select(specs, stored_names, options.spark_table)
        skip: set[str] = set()
        if options.incremental and plan.partition_keys and prepared.stored is not None:
            with MetastoreClient(options.connection) as client:
                skip = already_done(client, plan, options, specs)
    else:
        assert prepared.plan is not None and source is not None
        plan, skewed, skip = prepared.plan, prepared.skewed, prepared.skip
    log.info(
        "stage 1/3: analyzing %s.%s, columns %s, partition keys %s",
        db,
        table,
        ", ".join(c.name for c in plan.columns),
        ", ".join(k.name for k in plan.partition_keys) or "none",
    )
    planned = time.monotonic()
    log.info("stage 2/3: scanning the data (one pass)")
    progress: Progress | None = None
    if source is None:
        df = filter_partitions(skip_partitions(df, plan, skip), plan, specs)
        count = len(stored_names) if plan.partition_keys else 1
        mapped = scan.scan_dataframe(df, plan, skewed)
        merged = scan.merge(mapped, count, options.batch_size)
        total = count
        storage = catalog.storage
        locations = catalog.locations
        parameters: dict[str, str] = {}
    else:
        try:
            with files_errors():
                thetas = iceberg.theta_request(prepared.iceberg, plan)
                progress, merged = _scan_files(spark, source, plan, skewed, options, thetas)
        except JobError as e:  # a file the scan could not read
            raise type(e)(f"{e}; {NOTHING_WRITTEN}") from e
        total = len(source.listing.files)
        fmt = prepared.register_format
        storage = (
            storage_descriptor(fmt, plan.all_columns, source.location, source.location)
            if fmt is not None
            else None
        )
        locations = source.listing.folders
        parameters = table_parameters(fmt, plan.all_columns, plan.partition_keys) if fmt else {}
    scanned = time.monotonic()
    log.info("scanned the data in %.1f s", scanned - planned)
    log.info("stage 3/3: writing statistics to %s", options.uri)
    incremental = options.incremental and bool(plan.partition_keys)
    with MetastoreClient(options.connection) as client:
        registration = writer.Registration(client, plan)
        try:
            with interrupts.deferred():
                registration.ensure_table(
                    prepared.stored,
                    storage,
                    parameters,
                    repair=prepared.stored is not None and storage is not None,
                )
            result = _write(
                registration,
                options,
                specs,
                merged,
                source,
                incremental,
                storage,
                locations,
                prepared.iceberg,
            )
            result.kept = len(skip)
        except BaseException as e:
            _undo_run(registration, e)
            raise _explained(e, registration, total) from e
    if progress is not None:
        progress.done(result.partitions)
    finished = time.monotonic()
    result.timings = {
        "check": prepared.seconds,
        "plan": planned - started,
        "scan": scanned - planned,
        "write": finished - scanned,
    }
    result.seconds = finished - started + prepared.seconds
    result.unparsed = Unparsed.of(merged.table)
    return result


def check_specs_select(specs: Sequence[dict[str, str]], stored: list[str], where: str) -> None:
    """An OptionsError for a --partition spec that selects none of the partitions STORED."""
    for spec in specs:
        if not any(
            matches(spec, n, [located.key_value(v) for _, v in names.parse_partition_name(n)])
            for n in stored
        ):
            shown = ", ".join(stored[:10])
            if len(stored) > 10:
                shown += f" and {len(stored) - 10} more"
            raise OptionsError(
                f"--partition {'/'.join(f'{k}={v}' for k, v in spec.items())} names no "
                f"partition of {where}; it has {shown or 'none'}"
            )


def _undo_run(registration: writer.Registration, error: BaseException) -> None:
    try:
        registration.undo()
    except Exception as e:
        log.error("could not drop what the failed run created: %s", e)


def _explained(
    error: BaseException, registration: writer.Registration, total: int
) -> BaseException:
    """ERROR, saying which partitions were written before it (each fully: see writer)."""
    done = len(registration.written)
    if done:
        state = (
            f"{done} of {total} partition(s) were written before it stopped (their names are "
            "logged); the others and the table level are as they were"
        )
    else:
        state = NOTHING_WRITTEN
    if isinstance(error, KeyboardInterrupt):
        return Interrupted(state)
    if isinstance(error, OptionsError):
        return OptionsError(f"{error}; {state}")
    if isinstance(error, JobError):  # the metastore's errors among them, as they were
        return JobError(f"{error}; {state}")
    if isinstance(error, Exception):
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return JobError(
            f"writing to the metastore failed ({type(error).__name__}: {first}); {state}"
        )
    return error


def _scan_files(
    spark: SparkSession,
    source: located.FileSource,
    plan: Plan,
    skewed: SkewRequest,
    options: AnalyzeOptions,
    thetas: scan.ThetaRequest | None,
) -> tuple[Progress, scan.Merged]:
    listing = source.listing
    splits = [
        dataclasses.replace(split, index=index)
        for index, split in enumerate(
            split
            for name in sorted(listing.files)
            for split in splits_of(name, listing.files[name], source.spec)
        )
    ]
    total_bytes = sum(split.size for split in splits if split.counts_file)
    partitions = len(listing.files)
    log.info(
        "reading %d file(s), %d byte(s), of %d partition(s)",
        sum(1 for s in splits if s.counts_file),
        total_bytes,
        partitions,
    )
    progress = Progress(partitions, total_bytes, sys.stderr)
    with watch(spark.sparkContext, progress, splits) as (done, reporter):
        mapped = scan.scan_files(
            spark, splits, source.spec, plan, skewed, done, options.strict, reporter, thetas
        )
        return progress, scan.merge(mapped, partitions, options.batch_size)


def _write(
    registration: writer.Registration,
    options: AnalyzeOptions,
    specs: Sequence[dict[str, str]],
    merged: scan.Merged,
    source: located.FileSource | None,
    incremental: bool,
    storage: t.StorageDescriptor | None,
    locations: dict[str, str],
    iceberg_run: iceberg.IcebergRun | None = None,
) -> AnalyzeResult:
    client, plan = registration.client, registration.plan
    measured = source is not None
    share = options.skew if options.skew is not None else 0.0
    added = altered = 0
    if plan.partition_keys:
        table_sd = storage
        if table_sd is None:  # the stored table's formats for its new partitions
            table_sd = client.call("get_table", plan.db, plan.table).sd
        # Each Partial becomes what is written as it arrives, and is dropped: unpickled, its
        # sparse sketches take about ten times the memory of their serialized form.
        converted = (
            _partition_stats(plan, name, partial, measured, options, share)
            for name, partial in _with_named_empty(merged, plan, specs, source)
        )
        for batch in _batches(converted, options.batch_size):
            basic = {name: stats for name, stats, _ in batch}
            entries = [entry for _, _, entry in batch]
            folders = {
                name: writer.partition_storage(table_sd, locations.get(name)) for name in basic
            }
            new, changed = writer.write_partitions(
                client, plan, basic, entries, options.engine, folders
            )
            registration.written.extend(sorted(basic))
            added, altered = added + new, altered + changed
            log.info(
                "wrote the statistics of %d partition(s): %s",
                len(registration.written),
                ", ".join(sorted(basic)),
            )
        if added or altered:
            log.info("registered %d partition(s), updated %d stored one(s)", added, altered)
        if incremental or specs:
            table_basic, table_objs = table_level(
                client, plan, options.engine, merged.table, registration.written
            )
        else:
            table_basic = _basic(merged.table, measured)
            table_objs = _objs(plan, merged.table)
    else:
        whole = merged.table
        if iceberg_run is not None:  # --incremental: the new files' added to the stored
            whole = iceberg.with_previous(iceberg_run, plan, whole)
        if source is not None and not whole.rows:  # empty files: their count and size
            files = source.listing.files.get("", [])
            whole.files, whole.bytes = len(files), sum(size for _, size in files)
        table_basic = _basic(whole, measured)
        table_objs = _objs(plan, whole)
    table_entry = (
        writer.column_stats(plan, None, table_objs, options.engine) if table_objs else None
    )
    recorded = _record_skew(plan, options, merged.table) if options.record_skew else None
    if iceberg_run is not None:
        # The basic statistics go with the commit of the Puffin file, under the table's lock;
        # the column statistics after it.
        iceberg.write_statistics(client, iceberg_run, whole, table_basic)
    writer.write_table_level(
        client,
        plan,
        None if iceberg_run is not None else table_basic,
        table_entry,
        options.engine,
        recorded,
    )
    if not plan.partition_keys:
        registration.written.append("")
    skewed = _table_skew(merged.table, share) if options.skew is not None else {}
    return AnalyzeResult(
        plan=plan,
        table_stats={o.colName: o for o in table_objs},
        partitions=len(registration.written) if plan.partition_keys else 1,
        seconds=0.0,
        skewed=skewed,
        share=share,
        rows=merged.table.rows,
    )


def _with_named_empty(
    merged: scan.Merged,
    plan: Plan,
    specs: Sequence[dict[str, str]],
    source: located.FileSource | None,
) -> Iterable[tuple[str, Partial]]:
    """The scanned partitions, then those named in full that had no rows: empty statistics
    (and the count and size of their files)."""
    keys = [k.name.lower() for k in plan.partition_keys]
    named = {
        names.make_partition_name(keys, [spec[k] for k in keys])
        for spec in specs
        if len(spec) == len(keys)
    }
    for name, partial in merged:
        named.discard(name)
        yield name, partial
    for name in sorted(named):
        empty = Partial({c.name: ColumnState.empty(c.stats_kind) for c in plan.columns})
        if source is not None:
            files = source.listing.files.get(name, [])
            empty.files, empty.bytes = len(files), sum(size for _, size in files)
        yield name, empty


def _partition_stats(
    plan: Plan,
    name: str,
    partial: Partial,
    measured: bool,
    options: AnalyzeOptions,
    share: float,
) -> tuple[str, dict[str, str], t.ColumnStatistics]:
    """Partition NAME's basic and column statistics, as written; its skewed values logged."""
    if options.skew is not None:
        _log_skew(name, partial, share)
    entry = writer.column_stats(plan, name, _objs(plan, partial), options.engine)
    return name, _basic(partial, measured), entry


def _batches(items: Iterable[_Item], size: int) -> Iterable[list[_Item]]:
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _objs(plan: Plan, partial: Partial) -> list[t.ColumnStatisticsObj]:
    return [
        partial.states.get(c.name, ColumnState.empty(c.stats_kind)).to_thrift(
            c.name.lower(), c.hive_type
        )
        for c in plan.columns
    ]


def _basic(partial: Partial, measured: bool) -> dict[str, str]:
    """Hive's basic statistics of PARTIAL: numRows always, the files' count and sizes when
    the job read the files itself."""
    basic = {"numRows": str(partial.rows)}
    if measured:
        basic["numFiles"] = str(partial.files)
        basic["totalSize"] = str(partial.bytes)
        basic["rawDataSize"] = str(partial.raw_bytes)
    return basic


def _log_skew(name: str, partial: Partial, share: float) -> None:
    for column, sketch in partial.skew.items():
        found = sketch.above(share, partial.rows)
        if found:
            log.info("skewed values of %s in %s: %s", column, name, _show_skew(found, partial.rows))


def _show_skew(found: list[tuple[str, int]], rows: int) -> str:
    return ", ".join(f"{'/'.join(split_key(value))} ({count / rows:.1%})" for value, count in found)


def _table_skew(table: Partial, share: float) -> dict[str, list[tuple[str, int]]]:
    return {column: sketch.above(share, table.rows) for column, sketch in table.skew.items()}


def _record_skew(
    plan: Plan, options: AnalyzeOptions, table: Partial
) -> tuple[list[str], list[list[str]]]:
    """The table's SkewedInfo: the recorded columns' values above the share, together."""
    by_name = {c.name.lower(): c.name for c in plan.columns}
    ordered = [by_name[name.lower()] for name in options.record_skew]
    key = ",".join(ordered)
    share = options.skew if options.skew is not None else DEFAULT_SHARE
    sketch = table.skew.get(key)
    found = sketch.above(share, table.rows) if sketch is not None else []
    values = [split_key(value) for value, _ in found]
    log.info("recording %d skewed value(s) of %s in the table's SkewedInfo", len(values), key)
    return ordered, values


def summary_text(result: AnalyzeResult) -> str:
    """What was written at the table level, a table with a row per column, for people."""
    plan, objs = result.plan, result.table_stats
    rows = [("column", "type", "nulls", "distinct", "low", "high", "avg len", "max len")]
    for column in plan.columns:
        obj = objs.get(column.name.lower())
        if obj is None:
            continue
        stats = union_member(obj.statsData)
        low, high = (
            _show(getattr(stats, "lowValue", None)),
            _show(getattr(stats, "highValue", None)),
        )
        if hasattr(stats, "numTrues"):
            low, high = f"{stats.numTrues} true", f"{stats.numFalses} false"
        rows.append(
            (
                column.name,
                column.hive_type,
                str(stats.numNulls),
                str(getattr(stats, "numDVs", "")),
                low,
                high,
                _show(getattr(stats, "avgColLen", None)),
                _show(getattr(stats, "maxColLen", None)),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    kept = f", {result.kept} kept as they were (--incremental)" if result.kept else ""
    lines = [
        f"statistics of {plan.db}.{plan.table}: {len(plan.columns)} column(s), "
        f"{result.partitions} partition(s) analyzed{kept} in {result.seconds:.1f} s"
    ]
    for i, row in enumerate(rows):
        lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    if result.unparsed.values:
        lines.append(result.unparsed.text())
    if result.skewed:
        lines.append(f"skewed values (each more than {result.share:.1%} of the rows):")
        for name, found in result.skewed.items():
            shown = _show_skew(found, result.rows) if found else "none"
            lines.append(f"  {name}: {shown}")
    return "\n".join(lines)


def _show(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, t.Decimal):
        return decimal_text(value)
    if isinstance(value, t.Date):
        return (EPOCH + dt.timedelta(days=value.daysSinceEpoch)).date().isoformat()
    if isinstance(value, t.Timestamp):
        return (EPOCH + dt.timedelta(seconds=value.secondsSinceEpoch)).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


# The settings of the session the job creates (the benchmarks use them too):
# * Arrow batches of 100,000 rows for the sources that Spark reads;
# * glibc's allocator in the Python workers keeps up to 128 MiB of freed memory and serves
#   arrays below 32 MiB from it, instead of mapping fresh pages for each array and giving
#   them back when it is freed. The statistics allocate a few arrays of a batch's size per
#   column; a page fault on every 4 KiB of them was a third of the time spent computing on
#   a virtual machine (bench/README.md). Other allocators ignore these variables;
# * shuffles written by the sort-based writers, never by the "bypass" writer. With up to
#   200 reducers, Spark's default, a map task of the bypass writer opens a file, buffers and
#   a serializer (a Kryo instance, about 180 KB of allocations to build) per reducer: the
#   partition-level merge has a reducer per write batch, so at 10,000 partitions each map
#   task built a hundred of them, and the driver's JVM in local mode peaked 40-160 MB
#   higher (bench/README.md). The job's shuffles carry few records, large ones (pickled
#   Partials), so the sort costs nothing.
SESSION_SETTINGS: dict[str, bool | float | int | str | None] = {  # as builder.config(map=) takes
    "spark.sql.execution.arrow.maxRecordsPerBatch": "100000",
    "spark.shuffle.sort.bypassMergeThreshold": "0",
    "spark.executorEnv.MALLOC_MMAP_THRESHOLD_": str(32 << 20),
    "spark.executorEnv.MALLOC_TRIM_THRESHOLD_": str(128 << 20),
}


QUIET_LOGGING = os.path.join(os.path.dirname(__file__), "log4j2-quiet.properties")
"""Spark's log for `metastore analyze` without --traceback: none (the job reports what
fails in one line)."""


def spark_session(
    uri: str | None = None,
    *,
    hive_catalog: bool = False,
    quiet: bool = False,
    conf: Sequence[tuple[str, str]] = (),
) -> SparkSession:
    """The active session, or a new one (local[*] unless spark-submit said otherwise).

    With HIVE_CATALOG (for --spark-table), a new session's catalog is the metastore at URI
    (Hive support, spark.hadoop.hive.metastore.uris) unless Spark's configuration names a
    catalog or a metastore of its own (spark.sql.catalogImplementation,
    spark.hadoop.hive.metastore.uris, or a hive-site.xml that sets hive.metastore.uris).
    QUIET: Spark logs nothing (see QUIET_LOGGING). CONF: settings as spark-submit's --conf
    (given to the JVM this starts, so that its own, such as spark.driver.memory, apply too)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    # Python workers must import this package: by default they run this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("colstats analyze").config(map=SESSION_SETTINGS)
    for key, value in conf:
        builder = builder.config(key, value)
    if SparkContext._active_spark_context is not None:
        return builder.getOrCreate()
    if conf and SparkContext._gateway is None and not os.environ.get("PYSPARK_GATEWAY_PORT"):
        given = os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
        settings = " ".join(f"--conf {shlex.quote(f'{k}={v}')}" for k, v in conf)
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"{settings} {given}"
    if quiet:
        options = os.environ.get("SPARK_SUBMIT_OPTS", "")
        if "log4j2.configurationFile" not in options:  # the driver JVM's options
            quiet_log = f"-Dlog4j2.configurationFile={QUIET_LOGGING}"
            os.environ["SPARK_SUBMIT_OPTS"] = f"{options} {quiet_log}".strip()
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    SparkContext._ensure_initialized()  # the JVM, with spark-defaults.conf read
    if hive_catalog and uri is not None:
        configured = SparkConf()  # the JVM's: spark-submit's --conf and spark-defaults.conf
        named = configured.get("spark.sql.catalogImplementation") or configured.get(
            "spark.hadoop.hive.metastore.uris"
        )
        if named is None and not _hive_site_names_a_metastore():
            log.info("Spark's catalog: the metastore at %s (Hive support)", uri)
            builder = builder.enableHiveSupport().config("spark.hadoop.hive.metastore.uris", uri)
        else:
            log.info("Spark's catalog: as Spark's configuration says")
    return builder.getOrCreate()


def _hive_site_names_a_metastore() -> bool:
    """Whether a hive-site.xml on Spark's class path sets hive.metastore.uris."""
    from pyspark import SparkContext

    jvm: Any = SparkContext._jvm
    resource = (
        jvm.java.lang.Thread.currentThread().getContextClassLoader().getResource("hive-site.xml")
    )
    if resource is None:
        return False
    stream = resource.openStream()
    try:
        content = bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()
    return "hive.metastore.uris" in content.decode("utf-8", "replace")
