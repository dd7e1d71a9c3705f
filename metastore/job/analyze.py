"""The statistics job from start to summary: plan, scan once, register, write.

    metastore analyze DB.TABLE --uri thrift://HOST:PORT
        (--path PATH --format FMT [--schema DDL] | --spark-table NAME)
        [--partition SPEC ...] [--columns a,b] [--engine hive] [--incremental]

or, on a cluster, spark-submit of the file that `python -m metastore.job --path-of-script`
names, with the same options (the package must be importable on the driver and the
executors: installed there, or shipped with --py-files).

How it works: every Spark task turns its Arrow batches into partial statistics per
(partition, column) (metastore.job.scan, metastore.job.accumulators) and sends them to the
driver, which merges them per partition and merges the partitions into the table level: the
data is read once. Then the job registers in the metastore what is missing (database, table,
partitions) and writes the statistics with set_aggr_stats_for in bounded batches.

With incremental runs only partitions without statistics (and those named) are scanned; the
table level is then the metastore's merge of the stored partition statistics and sketches
(get_aggr_stats_for), so old partitions are never read again.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.job import writer
from metastore.job.accumulators import ColumnState
from metastore.job.client import MetastoreClient
from metastore.job.errors import JobError
from metastore.job.options import AnalyzeOptions
from metastore.job.scan import partial_states
from metastore.job.source import Plan, filter_partitions, make_plan, read_source, skip_partitions
from metastore.vocabulary import decimal_text, union_member

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("metastore.job")


@dataclass
class AnalyzeResult:
    """What a run wrote: the table-level statistics by column name, and how long it took."""

    plan: Plan
    table_stats: dict[str, t.ColumnStatisticsObj]
    partitions: int
    seconds: float


def run(spark: SparkSession, options: AnalyzeOptions) -> AnalyzeResult:
    """Analyze as OPTIONS say, with SPARK; raises JobError for what the user can fix."""
    started = time.monotonic()
    db, table = options.db_name, options.table_name
    df, keys = read_source(spark, options)
    plan = make_plan(df, keys, db, table, options.columns)
    if not plan.columns:
        raise JobError(f"{options.table} has no column that HMS keeps statistics for")
    specs = options.partition_specs()
    if specs and not plan.partition_keys:
        raise JobError(f"{options.table} is not partitioned; partition specs do not apply")
    log.info(
        "stage 1/3: analyzing %s.%s, columns %s, partition keys %s",
        db,
        table,
        ", ".join(c.name for c in plan.columns),
        ", ".join(k.name for k in plan.partition_keys) or "none",
    )
    with MetastoreClient(options.uri) as client:
        writer.ensure_table(client, plan, options.path)
        incremental = options.incremental and bool(plan.partition_keys)
        if incremental:
            done = writer.partitions_with_stats(client, plan, options.engine)
            named = {
                names.make_partition_name(list(s), list(s.values()))
                for s in specs
                if len(s) == len(plan.partition_keys)
            }
            skip = done - named
            log.info(
                "incremental: %d partitions already have statistics%s",
                len(skip),
                f" ({len(named & done)} named again)" if named & done else "",
            )
            df = skip_partitions(df, plan, skip)
        df = filter_partitions(df, plan, specs)
        log.info("stage 2/3: scanning the data (one pass)")
        states = partial_states(df, plan)
        partitions = sorted({part for part, _ in states})
        for spec in specs:  # a named partition without rows gets empty statistics
            if len(spec) == len(plan.partition_keys):
                name = names.make_partition_name(
                    [k.name for k in plan.partition_keys],
                    [spec[k.name.lower()] for k in plan.partition_keys],
                )
                if name not in partitions:
                    partitions.append(name)
                    for column in plan.columns:
                        states[(name, column.name)] = ColumnState.empty(column.stats_kind)
        log.info(
            "scanned %d partition(s) in %.1f s", max(len(partitions), 1), time.monotonic() - started
        )

        log.info("stage 3/3: writing statistics to %s", options.uri)
        table_objs: list[t.ColumnStatisticsObj]
        if plan.partition_keys:
            row_counts = {p: states[(p, plan.columns[0].name)].rows for p in partitions}
            stored = writer.ensure_partitions(client, plan, row_counts, options.batch_size)
            entries = [
                writer.column_stats(
                    plan,
                    p,
                    [
                        states[(p, c.name)].to_thrift(c.name.lower(), c.hive_type)
                        for c in plan.columns
                    ],
                    options.engine,
                )
                for p in partitions
            ]
            writer.clear_unset_fields(
                client, plan, [e for e in entries if e.statsDesc.partName in stored], options.engine
            )
            writer.push(client, entries, options.engine, options.batch_size, "partition")
            if incremental or specs:
                table_objs = writer.table_level_from_metastore(client, plan, options.engine)
            else:
                table_objs = _merge_table_level(states, plan)
        else:
            whole = states.get(("", plan.columns[0].name))
            writer.set_table_row_count(client, plan, whole.rows if whole else 0)
            table_objs = _merge_table_level(states, plan)
        if table_objs:
            table_entry = writer.column_stats(plan, None, table_objs, options.engine)
            writer.clear_unset_fields(client, plan, [table_entry], options.engine)
            writer.push(client, [table_entry], options.engine, 1, "table")
    return AnalyzeResult(
        plan=plan,
        table_stats={o.colName: o for o in table_objs},
        partitions=len(partitions),
        seconds=time.monotonic() - started,
    )


def _merge_table_level(
    states: dict[tuple[str, str], ColumnState], plan: Plan
) -> list[t.ColumnStatisticsObj]:
    objs = []
    for column in plan.columns:
        merged = ColumnState.empty(column.stats_kind)
        for (_, name), state in states.items():
            if name == column.name:
                merged.merge(state)
        objs.append(merged.to_thrift(column.name.lower(), column.hive_type))
    return objs


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


def spark_session() -> SparkSession:
    """The active session, or a new one (local[*] unless spark-submit said otherwise)."""
    from pyspark.sql import SparkSession

    # Python workers must import this package: by default they run this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return (
        SparkSession.builder.appName("colstats analyze")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
        .getOrCreate()
    )
