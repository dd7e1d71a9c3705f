"""The statistics job: HMS column statistics for a table and every partition, in one scan.

    metastore analyze DB.TABLE --uri thrift://HOST:PORT
        (--path PATH --format FMT [--schema DDL] | --spark-table NAME)
        [--partition SPEC ...] [--columns a,b] [--engine hive] [--incremental]

or, on a cluster, with spark-submit and the same options:

    spark-submit [--py-files colstats.zip] "$(python -m metastore.analyze --path-of-script)" \
        DB.TABLE --uri thrift://HOST:PORT ...

(this file is the application; the package must be importable on the driver and the
executors: installed there, or shipped with --py-files).

How it works: every Spark task turns its Arrow batches into partial statistics per
(partition, column) (metastore.accumulators: Arrow kernels for counts, extremes and lengths,
Hive's HyperLogLog for NDV, KLL for histograms) and sends them to the driver, which merges
them per partition and merges the partitions into the table level: the data is read once.
Then the job registers in the metastore what is missing (database, table, partitions) and
writes the statistics with set_aggr_stats_for in bounded batches.

With --incremental only partitions without statistics (and those named with --partition)
are scanned; the table level is then the metastore's merge of the stored partition
statistics and sketches (get_aggr_stats_for), so old partitions are never read again.
"""

from __future__ import annotations

import argparse
import logging
import os
import pickle
import re
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

import pyarrow as pa

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.accumulators import ColumnState, hive_type, stats_kind
from metastore.convert import decimal_text, union_member
from metastore.hms_client import MetastoreClient
from metastore.stats import try_read_sketch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("metastore.analyze")

DEFAULT_BATCH = 100  # partitions per set_aggr_stats_for call


@dataclass(frozen=True)
class Column:
    name: str
    hive_type: str
    kind: str


@dataclass
class Plan:
    """What to analyze: the table's layout and the chosen columns and partitions."""

    db: str
    table: str
    partition_keys: list[Column]
    columns: list[Column]
    all_columns: list[Column]


# ------------------------------------------------------------------------------------------
# Reading


def _spark_hive_type(field: Any) -> str:
    """The Hive type text of a Spark field (CHAR/VARCHAR kept from the catalog metadata)."""
    char_varchar = field.metadata.get("__CHAR_VARCHAR_TYPE_STRING") if field.metadata else None
    return hive_type(char_varchar or field.dataType.simpleString())


def read_source(spark: SparkSession, args: argparse.Namespace) -> tuple[DataFrame, list[str]]:
    """The data and its partition key names (in the table's order)."""
    if args.spark_table:
        df = spark.table(args.spark_table)
        keys = [c.name for c in spark.catalog.listColumns(args.spark_table) if c.isPartition]
        return df, keys
    # Partition values are kept as the text of the folder names, as Hive does.
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    reader = spark.read.format(args.format).option("basePath", args.path)
    if args.schema:
        reader = reader.schema(args.schema)
    if args.format == "csv":
        reader = reader.option("header", "true")
    df = reader.load(args.path)
    return df, _partition_keys_of_path(df, args.path)


def _partition_keys_of_path(df: DataFrame, base: str) -> list[str]:
    """The partition keys: the 'key=value' folders between BASE and the first data file."""
    files = df.inputFiles()
    if not files:
        return []
    base_parts = _path_parts(base)
    file_parts = _path_parts(files[0])
    if file_parts[: len(base_parts)] == base_parts:
        folders = file_parts[len(base_parts) : -1]
    else:  # BASE reached through a link: take the trailing key=value folders
        folders = []
        for part in reversed(file_parts[:-1]):
            if "=" not in part:
                break
            folders.insert(0, part)
    keys = [names.unescape_path_name(p.split("=", 1)[0]) for p in folders if "=" in p]
    # Spark makes a column of each key=value folder under the base path only: a folder above
    # it that looks like one (reached by the fallback) is not a partition key.
    lowered = {c.lower(): c for c in df.columns}
    return [lowered[k.lower()] for k in keys if k.lower() in lowered]


def _path_parts(path: str) -> list[str]:
    """The folders of a local path or a URI (file:, hdfs://host/, s3a://bucket/...)."""
    parsed = urlparse(path)
    if parsed.scheme and len(parsed.scheme) > 1:  # not a Windows drive letter
        location = parsed.netloc + "/" + parsed.path
    else:
        location = os.path.abspath(path)
    return [p for p in location.split("/") if p]


def make_plan(
    df: DataFrame, keys: Sequence[str], db: str, table: str, wanted: Sequence[str] | None
) -> Plan:
    fields = {f.name: f for f in df.schema.fields}
    key_set = {k.lower() for k in keys}
    all_columns: list[Column] = []
    for field in df.schema.fields:
        if field.name.lower() in key_set:
            continue
        hive = _spark_hive_type(field)
        all_columns.append(Column(field.name, hive, stats_kind(hive) or ""))
    by_name = {c.name.lower(): c for c in all_columns}
    if wanted:
        missing = [w for w in wanted if w.lower() not in by_name]
        if missing:
            raise SystemExit(f"no such column(s): {', '.join(missing)}")
        chosen = [by_name[w.lower()] for w in wanted]
    else:
        chosen = all_columns
    columns = []
    for column in chosen:
        if column.kind:
            columns.append(column)
        else:
            log.info(
                "skipping column %s: HMS keeps no statistics for type %s",
                column.name,
                column.hive_type,
            )
    partition_keys = [Column(k, _spark_hive_type(fields[k]), "") for k in keys]
    return Plan(db, table, partition_keys, columns, all_columns)


def parse_partition_spec(spec: str) -> dict[str, str]:
    """'ds=2024-01-01' or 'ds=2024-01-01/hr=1' or 'ds=2024-01-01,hr=1' -> {key: value}.

    Keys and values are unescaped as in partition names: a value with '/' or '=' is given
    escaped (%2F, %3D), exactly as `get_partition_names` lists it.
    """
    out = {}
    for part in re.split(r"[/,](?=[^/,=]+=)", spec):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"partition spec {spec!r}: {part!r} is not key=value")
        value = value.strip().strip("'\"")
        out[names.unescape_path_name(key.strip()).lower()] = names.unescape_path_name(value)
    return out


def _filter_partitions(df: DataFrame, plan: Plan, specs: Sequence[dict[str, str]]) -> DataFrame:
    from pyspark.sql import functions as F

    keys = {k.name.lower(): k.name for k in plan.partition_keys}
    condition = None
    for spec in specs:
        unknown = sorted(set(spec) - set(keys))
        if unknown:
            raise SystemExit(
                f"partition spec names unknown key(s) {', '.join(unknown)}; the "
                f"keys are {', '.join(keys.values()) or 'none'}"
            )
        clause = None
        for key, value in spec.items():
            if value in ("", names.DEFAULT_PARTITION_VALUE):  # Spark reads that folder as NULL
                term = F.col(keys[key]).isNull()
            else:
                term = F.col(keys[key]).cast("string") == F.lit(value)
            clause = term if clause is None else clause & term
        condition = clause if condition is None else condition | clause
    return df if condition is None else df.where(condition)


# ------------------------------------------------------------------------------------------
# Computing


def partial_states(df: DataFrame, plan: Plan) -> dict[tuple[str, str], ColumnState]:
    """(partition name, column) -> merged statistics, from one scan of DF."""
    from pyspark.sql import functions as F

    key_names = [k.name for k in plan.partition_keys]
    kinds = {c.name: c.kind for c in plan.columns}
    selected = df.select(
        *[F.col(k).cast("string").alias(k) for k in key_names],
        *[F.col(c.name) for c in plan.columns],
    )

    def compute(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        states: dict[tuple[str, str], ColumnState] = {}
        for batch in batches:
            for part_name, rows in _split_by_partition(batch, key_names):
                for column, kind in kinds.items():
                    state = ColumnState.of(kind, rows.column(column))
                    key = (part_name, column)
                    states[key] = states[key].merge(state) if key in states else state
        yield pa.RecordBatch.from_pydict(
            {
                "part": [k[0] for k in states],
                "col": [k[1] for k in states],
                "state": [pickle.dumps(s) for s in states.values()],
            },
            schema=pa.schema([("part", pa.string()), ("col", pa.string()), ("state", pa.binary())]),
        )

    merged: dict[tuple[str, str], ColumnState] = {}
    for row in selected.mapInArrow(compute, "part string, col string, state binary").collect():
        state = pickle.loads(row["state"])
        key = (row["part"], row["col"])
        merged[key] = merged[key].merge(state) if key in merged else state
    return merged


def _split_by_partition(
    batch: pa.RecordBatch, keys: Sequence[str]
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """The rows of BATCH per partition, with the partition's name ('' when unpartitioned)."""
    import pyarrow.compute as pc

    if not keys:
        yield "", batch
        return
    joined = pc.binary_join_element_wise(
        *[pc.fill_null(batch.column(k), "\x01") for k in keys], "\x00"
    )
    encoded = pc.dictionary_encode(joined)
    dictionary = encoded.dictionary.to_pylist()
    for index, combined in enumerate(dictionary):
        values = [None if v == "\x01" else v for v in combined.split("\x00")]
        name = names.make_partition_name(keys, values)
        rows = batch if len(dictionary) == 1 else batch.filter(pc.equal(encoded.indices, index))
        yield name, rows


# ------------------------------------------------------------------------------------------
# Writing


def _ensure_table(client: MetastoreClient, plan: Plan, location: str | None) -> list[str]:
    """Create the database and table if missing; return the table's partition key names."""
    try:
        client.call("get_database", plan.db)
    except t.NoSuchObjectException:
        log.info("creating database %s", plan.db)
        client.call("create_database", t.Database(name=plan.db, locationUri=None, parameters={}))
    try:
        table = client.call("get_table", plan.db, plan.table)
    except t.NoSuchObjectException:
        log.info("creating table %s.%s", plan.db, plan.table)
        sd = t.StorageDescriptor(
            cols=[t.FieldSchema(c.name.lower(), c.hive_type, None) for c in plan.all_columns],
            location=location,
            bucketCols=[],
            sortCols=[],
            parameters={},
            numBuckets=-1,
            serdeInfo=t.SerDeInfo(name=None, serializationLib=None, parameters={}),
        )
        client.call(
            "create_table",
            t.Table(
                tableName=plan.table,
                dbName=plan.db,
                sd=sd,
                parameters={},
                tableType="EXTERNAL_TABLE",
                partitionKeys=[
                    t.FieldSchema(k.name.lower(), k.hive_type, None) for k in plan.partition_keys
                ],
            ),
        )
        return [k.name.lower() for k in plan.partition_keys]
    stored_keys = [k.name for k in table.partitionKeys or []]
    if stored_keys != [k.name.lower() for k in plan.partition_keys]:
        raise SystemExit(
            f"{plan.db}.{plan.table} in the metastore is partitioned by "
            f"{stored_keys}, the data by {[k.name for k in plan.partition_keys]}"
        )
    return stored_keys


def _ensure_partitions(
    client: MetastoreClient, plan: Plan, rows: dict[str, int], batch: int
) -> set[str]:
    """Add the partitions the metastore does not have and set numRows (the row count that
    planners weigh column statistics with) on all of ROWS: new partitions get it when they
    are added, stored ones whose count changed are altered."""
    existing = set(client.call("get_partition_names", plan.db, plan.table, -1))
    missing = [name for name in sorted(rows) if name not in existing]
    for start in range(0, len(missing), batch):
        chunk = missing[start : start + batch]
        parts = [
            t.Partition(
                values=[v for _, v in names.parse_partition_name(name)],
                dbName=plan.db,
                tableName=plan.table,
                parameters={"numRows": str(rows[name])},
            )
            for name in chunk
        ]
        client.call(
            "add_partitions_req",
            t.AddPartitionsRequest(
                dbName=plan.db, tblName=plan.table, parts=parts, ifNotExists=True, needResult=False
            ),
        )
        log.info("registered partitions: %d/%d", min(start + batch, len(missing)), len(missing))
    stored = sorted(name for name in rows if name in existing)
    keys = [k.name.lower() for k in plan.partition_keys]
    changed = 0
    for start in range(0, len(stored), batch):
        parts = client.call(
            "get_partitions_by_names", plan.db, plan.table, stored[start : start + batch]
        )
        stale = []
        for part in parts:
            count = str(rows[names.make_partition_name(keys, part.values)])
            if (part.parameters or {}).get("numRows") != count:
                part.parameters = {**(part.parameters or {}), "numRows": count}
                stale.append(part)
        if stale:
            client.call("alter_partitions", plan.db, plan.table, stale)
            changed += len(stale)
    if changed:
        log.info("updated numRows of %d stored partition(s)", changed)
    return set(stored)


def _set_table_row_count(client: MetastoreClient, plan: Plan, rows: int) -> None:
    """numRows of an unpartitioned table, the row count planners weigh its statistics with."""
    table = client.call("get_table", plan.db, plan.table)
    if (table.parameters or {}).get("numRows") != str(rows):
        table.parameters = {**(table.parameters or {}), "numRows": str(rows)}
        client.call("alter_table_with_environment_context", plan.db, plan.table, table, None)


def _clear_unset_fields(
    client: MetastoreClient, plan: Plan, entries: list[t.ColumnStatistics], engine: str
) -> None:
    """Delete the stored statistics of the columns whose new statistics leave a field unset
    (no low and high value in an all-NULL or empty column, no histogram): writes keep the
    stored value of an unset field, as in HMS, and it would describe data that is gone."""
    for entry in entries:
        part_name = entry.statsDesc.partName
        for obj in entry.statsObj:
            stats = union_member(obj.statsData)
            if all(
                getattr(stats, f, 0) is not None for f in ("lowValue", "highValue", "histogram")
            ):
                continue
            try:
                if part_name is None:
                    client.call(
                        "delete_table_column_statistics", plan.db, plan.table, obj.colName, engine
                    )
                else:
                    client.call(
                        "delete_partition_column_statistics",
                        plan.db,
                        plan.table,
                        part_name,
                        obj.colName,
                        engine,
                    )
            except t.NoSuchObjectException:
                pass  # nothing stored yet


def _column_stats(
    plan: Plan, part_name: str | None, objs: list[t.ColumnStatisticsObj], engine: str
) -> t.ColumnStatistics:
    desc = t.ColumnStatisticsDesc(
        isTblLevel=part_name is None, dbName=plan.db, tableName=plan.table, partName=part_name
    )
    return t.ColumnStatistics(statsDesc=desc, statsObj=objs, engine=engine)


def _push(
    client: MetastoreClient, entries: list[t.ColumnStatistics], engine: str, batch: int, what: str
) -> None:
    for start in range(0, len(entries), batch):
        client.call(
            "set_aggr_stats_for",
            t.SetPartitionsStatsRequest(
                colStats=entries[start : start + batch], needMerge=False, engine=engine
            ),
        )
        log.info("wrote %s statistics: %d/%d", what, min(start + batch, len(entries)), len(entries))


def _partitions_with_stats(client: MetastoreClient, plan: Plan, engine: str) -> set[str]:
    """Stored partitions that have statistics for every analyzed column."""
    stored = client.call("get_partition_names", plan.db, plan.table, -1)
    columns = [c.name.lower() for c in plan.columns]
    done: set[str] = set()
    for start in range(0, len(stored), 1000):
        result = client.call(
            "get_partitions_statistics_req",
            t.PartitionsStatsRequest(
                dbName=plan.db,
                tblName=plan.table,
                colNames=columns,
                partNames=stored[start : start + 1000],
                engine=engine,
            ),
        )
        done.update(p for p, objs in result.partStats.items() if len(objs) == len(columns))
    return done


def _table_level_from_metastore(
    client: MetastoreClient, plan: Plan, engine: str
) -> list[t.ColumnStatisticsObj]:
    """The table level as the metastore merges the stored partition statistics.

    The metastore's NDV of a union is the estimate of the merged bit vectors, which count
    non-null values only; this job's convention (NULL is one more distinct value, and the
    count never exceeds the non-null rows) is applied on top. When the server does not
    return bit vectors (HMS's fetch.bitvector is off), its NDV is used as the estimate and
    the table level is written without a bit vector.
    """
    parts = client.call("get_partition_names", plan.db, plan.table, -1)
    aggr = client.call(
        "get_aggr_stats_for",
        t.PartitionsStatsRequest(
            dbName=plan.db,
            tblName=plan.table,
            colNames=[c.name.lower() for c in plan.columns],
            partNames=parts,
            engine=engine,
        ),
    )
    rows = _stored_row_count(client, plan, parts)
    without_sketch = []
    for obj in aggr.colStats:
        stats = union_member(obj.statsData)
        if getattr(stats, "numDVs", None) is None:
            continue
        if not stats.bitVectors:
            without_sketch.append(obj.colName)
        sketch = try_read_sketch(stats.bitVectors) if stats.bitVectors else None
        if sketch is not None:
            distinct = sketch.estimate()
        elif len(parts) == 1:
            continue  # the partition's own statistics, NULL already counted
        else:
            # The metastore's union estimate, without NULL. (If some partition had no bit
            # vector, it is HMS's fallback instead, the largest partition NDV, which already
            # counts NULL: then the result below may be one too high.)
            distinct = stats.numDVs
        nulls = stats.numNulls or 0
        if rows is not None:
            distinct = min(distinct, max(rows - nulls, 0))
        stats.numDVs = distinct + (1 if nulls else 0)
    if without_sketch:
        log.warning(
            "the metastore returned no bit vectors for %s (its fetch of bit vectors is off): "
            "their table level is written without one",
            ", ".join(without_sketch),
        )
    return aggr.colStats


def _stored_row_count(client: MetastoreClient, plan: Plan, parts: list[str]) -> int | None:
    """The sum of the partitions' numRows, or None when one of them does not say."""
    total = 0
    for start in range(0, len(parts), 1000):
        for partition in client.call(
            "get_partitions_by_names", plan.db, plan.table, parts[start : start + 1000]
        ):
            rows = (partition.parameters or {}).get("numRows")
            if rows is None or not rows.lstrip("-").isdigit() or int(rows) < 0:
                return None
            total += int(rows)
    return total


# ------------------------------------------------------------------------------------------
# The job


def run(spark: SparkSession, args: argparse.Namespace) -> dict[str, t.ColumnStatisticsObj]:
    """Analyze as ARGS says; returns the table-level statistics written, by column."""
    started = time.monotonic()
    db, _, table = args.table.partition(".")
    if not table:
        raise SystemExit(f"table {args.table!r} must be given as DB.TABLE")
    db, table = names.identifier(db), names.identifier(table)
    df, keys = read_source(spark, args)
    wanted = [c.strip() for c in args.columns.split(",")] if args.columns else None
    plan = make_plan(df, keys, db, table, wanted)
    if not plan.columns:
        raise SystemExit("no column to analyze")
    specs = [parse_partition_spec(s) for s in args.partition or []]
    if specs and not plan.partition_keys:
        raise SystemExit(f"{args.table} is not partitioned; --partition does not apply")
    log.info(
        "stage 1/3: analyzing %s.%s, columns %s, partition keys %s",
        db,
        table,
        ", ".join(c.name for c in plan.columns),
        ", ".join(k.name for k in plan.partition_keys) or "none",
    )
    with MetastoreClient(args.uri) as client:
        _ensure_table(client, plan, args.path)
        incremental = args.incremental and bool(plan.partition_keys)
        if incremental:
            done = _partitions_with_stats(client, plan, args.engine)
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
            df = _skip_partitions(df, plan, skip)
        df = _filter_partitions(df, plan, specs)
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
                        states[(name, column.name)] = ColumnState.empty(column.kind)
        log.info(
            "scanned %d partition(s) in %.1f s", max(len(partitions), 1), time.monotonic() - started
        )

        log.info("stage 3/3: writing statistics to %s", args.uri)
        table_objs: list[t.ColumnStatisticsObj]
        if plan.partition_keys:
            row_counts = {p: states[(p, plan.columns[0].name)].rows for p in partitions}
            stored = _ensure_partitions(client, plan, row_counts, args.batch_size)
            entries = [
                _column_stats(
                    plan,
                    p,
                    [
                        states[(p, c.name)].to_thrift(c.name.lower(), c.hive_type)
                        for c in plan.columns
                    ],
                    args.engine,
                )
                for p in partitions
            ]
            _clear_unset_fields(
                client, plan, [e for e in entries if e.statsDesc.partName in stored], args.engine
            )
            _push(client, entries, args.engine, args.batch_size, "partition")
            if incremental or specs:
                table_objs = _table_level_from_metastore(client, plan, args.engine)
            else:
                table_objs = _merge_table_level(states, plan)
        else:
            whole = states.get(("", plan.columns[0].name))
            _set_table_row_count(client, plan, whole.rows if whole else 0)
            table_objs = _merge_table_level(states, plan)
        if table_objs:
            table_entry = _column_stats(plan, None, table_objs, args.engine)
            _clear_unset_fields(client, plan, [table_entry], args.engine)
            _push(
                client,
                [table_entry],
                args.engine,
                1,
                "table",
            )
    summary = {o.colName: o for o in table_objs}
    print_summary(plan, summary, len(partitions), time.monotonic() - started)
    return summary


def _skip_partitions(df: DataFrame, plan: Plan, skip: set[str]) -> DataFrame:
    if not skip:
        return df
    from pyspark.sql import functions as F

    keys = [k.name for k in plan.partition_keys]
    parts = [
        F.concat(
            F.lit(f"{names.escape_path_name(k.lower())}="),
            F.coalesce(F.col(k).cast("string"), F.lit(names.DEFAULT_PARTITION_VALUE)),
        )
        for k in keys
    ]
    # The stored name escapes values; compare with the escaped names of the stored ones.
    unescaped = {"/".join(f"{k}={v}" for k, v in names.parse_partition_name(name)) for name in skip}
    return df.where(~F.concat_ws("/", *parts).isin(sorted(unescaped)))


def _merge_table_level(
    states: dict[tuple[str, str], ColumnState], plan: Plan
) -> list[t.ColumnStatisticsObj]:
    objs = []
    for column in plan.columns:
        merged = ColumnState.empty(column.kind)
        for (_, name), state in states.items():
            if name == column.name:
                merged.merge(state)
        objs.append(merged.to_thrift(column.name.lower(), column.hive_type))
    return objs


def print_summary(
    plan: Plan,
    objs: dict[str, t.ColumnStatisticsObj],
    partitions: int,
    seconds: float,
    out: Any = None,
) -> None:
    """A table of what was written at the table level, per column."""
    out = out or sys.stdout
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
    print(
        f"\nstatistics of {plan.db}.{plan.table}: {len(plan.columns)} column(s), "
        f"{partitions} partition(s) analyzed in {seconds:.1f} s",
        file=out,
    )
    for i, row in enumerate(rows):
        print("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip(), file=out)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=out)


def _show(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, t.Decimal):
        return decimal_text("", value) or ""
    if isinstance(value, t.Date | t.Timestamp):
        return str(value.daysSinceEpoch if isinstance(value, t.Date) else value.secondsSinceEpoch)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


# ------------------------------------------------------------------------------------------
# Command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("table", help="DB.TABLE in the metastore (created when missing)")
    parser.add_argument("--uri", required=True, help="metastore URI, thrift://HOST:PORT")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--path", help="data folder with Hive-style partition folders")
    source.add_argument("--spark-table", help="a table of the Spark catalog")
    parser.add_argument(
        "--format", default="parquet", help="with --path: parquet (default), orc, csv or json"
    )
    parser.add_argument(
        "--schema",
        help="with --path: a DDL schema, e.g. 'a INT, b STRING' (needed for csv and json)",
    )
    parser.add_argument(
        "--partition",
        action="append",
        metavar="SPEC",
        help="only this partition, e.g. ds=2024-01-01 (repeatable; "
        "a prefix of the keys selects every matching partition)",
    )
    parser.add_argument("--columns", help="comma-separated columns (default: all)")
    parser.add_argument(
        "--engine",
        default="hive",
        help="statistics engine (default hive, which Hive and Trino read)",
    )
    parser.add_argument(
        "--incremental",
        action="store_true",
        help="scan only partitions without statistics (and those named)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH,
        help=f"partitions per metastore call (default {DEFAULT_BATCH})",
    )


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


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--path-of-script"]:  # for spark-submit, which wants a file
        print(os.path.abspath(__file__))
        return 0
    parser = argparse.ArgumentParser(
        prog="metastore analyze",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_command(args)


def run_command(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.path and args.format in ("csv", "json") and not args.schema:
        raise SystemExit(f"--format {args.format} needs --schema")
    run(spark_session(), args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
