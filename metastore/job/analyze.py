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
grow with the number of partitions. The data is read once.

With incremental runs only partitions without statistics (and those named) are scanned; the
table level is then the metastore's merge of the stored partition statistics and sketches
(get_aggr_stats_for), so old partitions are never read again.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.job import located, scan, writer
from metastore.job.accumulators import ColumnState
from metastore.job.client import MetastoreClient
from metastore.job.errors import JobError
from metastore.job.files import splits_of
from metastore.job.options import DEFAULT_SHARE, AnalyzeOptions
from metastore.job.progress import Progress, watch
from metastore.job.scan import Partial, SkewRequest
from metastore.job.skew import sketched, split_key
from metastore.job.source import (
    Plan,
    check_spec_keys,
    columns_of_dataframe,
    filter_partitions,
    make_plan,
    read_spark_table,
    skip_partitions,
)
from metastore.thrift_stats import decimal_text, union_member

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("metastore.job")
_Item = TypeVar("_Item")


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
    """Seconds spent planning, scanning (reading and computing) and writing."""


def run(spark: SparkSession, options: AnalyzeOptions) -> AnalyzeResult:
    """Analyze as OPTIONS say, with SPARK; raises JobError for what the user can fix."""
    started = time.monotonic()
    db, table = options.db_name, options.table_name
    specs = options.partition_specs()
    skip: set[str] = set()
    wanted = _wanted_partitions(specs, skip)
    with MetastoreClient(options.uri) as client:
        source: located.FileSource | None = None
        if options.spark_table:
            df, keys = read_spark_table(spark, options.spark_table)
            plan = make_plan(*columns_of_dataframe(df, keys), db, table, options.columns)
        else:
            if options.path is not None:
                source = located.from_path(spark, options, wanted)
            else:
                source = located.describe(client, db, table)
            plan = make_plan(source.columns, source.keys, db, table, options.columns)
        if not plan.columns:
            raise JobError(f"{options.table} has no column that HMS keeps statistics for")
        if specs and not plan.partition_keys:
            raise JobError(f"{options.table} is not partitioned; partition specs do not apply")
        skewed = _skew_request(plan, options)
        log.info(
            "stage 1/3: analyzing %s.%s, columns %s, partition keys %s",
            db,
            table,
            ", ".join(c.name for c in plan.columns),
            ", ".join(k.name for k in plan.partition_keys) or "none",
        )
        writer.ensure_table(client, plan, options.path)
        incremental = options.incremental and bool(plan.partition_keys)
        if incremental:
            skip.update(_already_done(client, plan, options, specs))
        if source is not None and options.path is None:
            located.list_partitions(client, source, db, table, wanted)
        elif source is not None:
            located.drop_partitions(source.listing, skip)
        planned = time.monotonic()
        log.info("stage 2/3: scanning the data (one pass)")
        if source is None:
            df = filter_partitions(skip_partitions(df, plan, skip), plan, specs)
            assert options.spark_table is not None
            # The catalog's partition count: the merged partitions are fetched a batch at a time.
            count = (
                spark.sql(f"SHOW PARTITIONS {options.spark_table}").count()
                if plan.partition_keys
                else 1
            )
            mapped = scan.scan_dataframe(df, plan, skewed)
            merged = scan.merge(mapped, count, options.batch_size)
        else:
            merged = _scan_files(spark, source, plan, skewed, options)
        scanned = time.monotonic()
        log.info("scanned the data in %.1f s", scanned - planned)

        log.info("stage 3/3: writing statistics to %s", options.uri)
        result = _write(client, plan, options, specs, merged, source, incremental)
    finished = time.monotonic()
    result.timings = {
        "plan": planned - started,
        "scan": scanned - planned,
        "write": finished - scanned,
    }
    result.seconds = finished - started
    return result


def _wanted_partitions(specs: Sequence[dict[str, str]], skip: set[str]) -> located.Wanted:
    """Whether a partition (its name, its values) is one to analyze."""

    def wanted(name: str, values: Sequence[str | None]) -> bool:
        if name in skip:
            return False
        if not specs:
            return True
        pairs = names.parse_partition_name(name) if name else []
        keys = [k.lower() for k, _ in pairs]
        for spec in specs:
            check_spec_keys(spec, keys)
            if all(_same(values[keys.index(k)], v) for k, v in spec.items()):
                return True
        return False

    return wanted


def _same(value: str | None, wanted: str) -> bool:
    if wanted in ("", names.DEFAULT_PARTITION_VALUE):
        return value is None
    return value == wanted


def _already_done(
    client: MetastoreClient, plan: Plan, options: AnalyzeOptions, specs: Sequence[dict[str, str]]
) -> set[str]:
    """The stored partitions with statistics of every analyzed column, but those named."""
    done = writer.partitions_with_stats(client, plan, options.engine)
    named = {
        names.make_partition_name(list(s), list(s.values()))
        for s in specs
        if len(s) == len(plan.partition_keys)
    }
    log.info(
        "incremental: %d partitions already have statistics%s",
        len(done - named),
        f" ({len(named & done)} named again)" if named & done else "",
    )
    return done - named


def _skew_request(plan: Plan, options: AnalyzeOptions) -> SkewRequest:
    if options.skew is None and not options.record_skew:
        return SkewRequest()
    by_name = {c.name.lower(): c for c in plan.columns}
    recorded = []
    for name in options.record_skew:
        column = by_name.get(name.lower())
        if column is None or not sketched(column.stats_kind):
            raise JobError(
                f"--record-skew {name}: not an analyzed column whose values can be skewed "
                f"(analyzed: {', '.join(c.name for c in plan.columns if sketched(c.stats_kind))})"
            )
        recorded.append(column.name)
    columns = tuple(c.name for c in plan.columns if sketched(c.stats_kind))
    combinations = (tuple(recorded),) if len(recorded) > 1 else ()
    return SkewRequest(columns, combinations)


def _scan_files(
    spark: SparkSession,
    source: located.FileSource,
    plan: Plan,
    skewed: SkewRequest,
    options: AnalyzeOptions,
) -> scan.Merged:
    listing = source.listing
    splits = [
        split
        for name in sorted(listing.files)
        for split in splits_of(name, listing.files[name], source.spec)
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
    with watch(spark.sparkContext, progress) as done:
        mapped = scan.scan_files(spark, splits, source.spec, plan, skewed, done)
        return scan.merge(mapped, partitions, options.batch_size)


def _write(
    client: MetastoreClient,
    plan: Plan,
    options: AnalyzeOptions,
    specs: Sequence[dict[str, str]],
    merged: scan.Merged,
    source: located.FileSource | None,
    incremental: bool,
) -> AnalyzeResult:
    measured = source is not None
    share = options.skew if options.skew is not None else 0.0
    written = 0
    added = altered = 0
    if plan.partition_keys:
        # Each Partial becomes what is written as it arrives, and is dropped: unpickled, its
        # sparse sketches take about ten times the memory of their serialized form.
        converted = (
            _partition_stats(plan, name, partial, measured, options, share)
            for name, partial in _with_named_empty(merged, plan, specs, source)
        )
        for batch in _batches(converted, options.batch_size):
            basic = {name: stats for name, stats, _ in batch}
            entries = [entry for _, _, entry in batch]
            new, changed = writer.write_partitions(client, plan, basic, entries, options.engine)
            added, altered, written = added + new, altered + changed, written + len(batch)
            log.info("wrote partition statistics: %d partition(s)", written)
        if added or altered:
            log.info("registered %d partition(s), updated %d stored one(s)", added, altered)
        if incremental or specs:
            table_basic = writer.stored_basic(client, plan)
            table_objs = writer.table_level_from_metastore(client, plan, options.engine)
        else:
            table_basic = _basic(merged.table, measured)
            table_objs = _objs(plan, merged.table)
    else:
        whole = merged.table
        if source is not None and not whole.rows:  # empty files: their count and size
            files = source.listing.files.get("", [])
            whole.files, whole.bytes = len(files), sum(size for _, size in files)
        table_basic = _basic(whole, measured)
        table_objs = _objs(plan, whole)
        written = 1
    writer.set_table_basic(client, plan, table_basic)
    if table_objs:
        table_entry = writer.column_stats(plan, None, table_objs, options.engine)
        writer.clear_unset_fields(client, plan, [table_entry], options.engine)
        writer.push(client, [table_entry], options.engine, 1)
    skewed = _table_skew(merged.table, share) if options.skew is not None else {}
    if options.record_skew:
        _record_skew(client, plan, options, merged.table)
    return AnalyzeResult(
        plan=plan,
        table_stats={o.colName: o for o in table_objs},
        partitions=written,
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
    client: MetastoreClient, plan: Plan, options: AnalyzeOptions, table: Partial
) -> None:
    """The table's SkewedInfo: the recorded columns' values above the share, together."""
    by_name = {c.name.lower(): c.name for c in plan.columns}
    ordered = [by_name[name.lower()] for name in options.record_skew]
    key = ",".join(ordered)
    share = options.skew if options.skew is not None else DEFAULT_SHARE
    sketch = table.skew.get(key)
    found = sketch.above(share, table.rows) if sketch is not None else []
    values = [split_key(value) for value, _ in found]
    writer.set_skewed(client, plan, ordered, values)
    log.info("recorded %d skewed value(s) of %s in the table's SkewedInfo", len(values), key)


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
    lines = [
        f"statistics of {plan.db}.{plan.table}: {len(plan.columns)} column(s), "
        f"{result.partitions} partition(s) analyzed in {result.seconds:.1f} s"
    ]
    for i, row in enumerate(rows):
        lines.append("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
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
    if isinstance(value, t.Date | t.Timestamp):
        return str(value.daysSinceEpoch if isinstance(value, t.Date) else value.secondsSinceEpoch)
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


def spark_session() -> SparkSession:
    """The active session, or a new one (local[*] unless spark-submit said otherwise)."""
    from pyspark.sql import SparkSession

    # Python workers must import this package: by default they run this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.appName("colstats analyze").config(map=SESSION_SETTINGS).getOrCreate()
    )
