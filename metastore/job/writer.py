"""The metastore side of the job: registering the database, table and partitions, and
writing statistics in bounded batches (see AnalyzeOptions.batch_size)."""

from __future__ import annotations

import logging

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.job.client import MetastoreClient
from metastore.job.errors import JobError
from metastore.job.source import Plan
from metastore.sketches import try_read_sketch
from metastore.stats import accurate
from metastore.thrift_stats import union_member

log = logging.getLogger(__name__)


def ensure_table(client: MetastoreClient, plan: Plan, location: str | None) -> list[str]:
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
                # HMS keeps a table external only with this parameter set.
                parameters={"EXTERNAL": "TRUE"},
                tableType="EXTERNAL_TABLE",
                partitionKeys=[
                    t.FieldSchema(k.name.lower(), k.hive_type, None) for k in plan.partition_keys
                ],
            ),
        )
        return [k.name.lower() for k in plan.partition_keys]
    stored_keys = [k.name for k in table.partitionKeys or []]
    if stored_keys != [k.name.lower() for k in plan.partition_keys]:
        raise JobError(
            f"{plan.db}.{plan.table} in the metastore is partitioned by "
            f"{stored_keys}, the data by {[k.name for k in plan.partition_keys]}"
        )
    return stored_keys


BASIC_CONTEXT = t.EnvironmentContext(
    properties={"DO_NOT_UPDATE_STATS": "true", "STATS_GENERATED": "TASK"}
)
"""Sent with every change of basic statistics: the metastore must not count the files itself
(HMS does on alters) and marks the statistics as a task's, which makes them accurate."""
MEASURED = ("numFiles", "totalSize", "rawDataSize", "numRows")


def with_basic(params: dict[str, str] | None, basic: dict[str, str]) -> dict[str, str] | None:
    """PARAMS with the basic statistics BASIC and COLUMN_STATS_ACCURATE to match, or None
    when nothing changes. BASIC_STATS is true when all four were measured; when the data
    changed, no column's statistics are accurate any more (the job's write marks its own
    columns again)."""
    old = dict(params or {})
    new = {**old, **basic}
    value = old.get(accurate.KEY)
    if any(old.get(key) != text for key, text in basic.items()):
        value = accurate.without_columns(value, None)
    value = (
        accurate.with_basic(value)
        if all(key in basic for key in MEASURED)
        else accurate.without_basic(value)
    )
    if value is None:
        new.pop(accurate.KEY, None)
    else:
        new[accurate.KEY] = value
    return None if new == old else new


def write_partitions(
    client: MetastoreClient,
    plan: Plan,
    basic: dict[str, dict[str, str]],
    entries: list[t.ColumnStatistics],
    engine: str,
) -> tuple[int, int]:
    """One batch: add the partitions of BASIC the metastore lacks, set the basic statistics
    of the stored ones, then write the column statistics ENTRIES of the batch. Returns how
    many partitions were added and altered."""
    wanted = sorted(basic)
    stored = client.call("get_partitions_by_names", plan.db, plan.table, wanted)
    keys = [k.name.lower() for k in plan.partition_keys]
    found = {names.make_partition_name(keys, p.values): p for p in stored}
    missing = [name for name in wanted if name not in found]
    if missing:
        parts = [
            t.Partition(
                values=[v for _, v in names.parse_partition_name(name)],
                dbName=plan.db,
                tableName=plan.table,
                parameters=with_basic({}, basic[name]),
            )
            for name in missing
        ]
        client.call(
            "add_partitions_req",
            t.AddPartitionsRequest(
                dbName=plan.db,
                tblName=plan.table,
                parts=parts,
                ifNotExists=True,
                needResult=False,
                environmentContext=BASIC_CONTEXT,
            ),
        )
    stale = []
    for name, part in found.items():
        params = with_basic(part.parameters, basic[name])
        if params is not None:
            part.parameters = params
            stale.append(part)
    if stale:
        client.call(
            "alter_partitions_with_environment_context", plan.db, plan.table, stale, BASIC_CONTEXT
        )
    clear_unset_fields(client, plan, [e for e in entries if e.statsDesc.partName in found], engine)
    push(client, entries, engine, len(entries) or 1)
    return len(missing), len(stale)


def set_table_basic(client: MetastoreClient, plan: Plan, basic: dict[str, str]) -> None:
    """The basic statistics of the table (the partitions' sums when it is partitioned)."""
    table = client.call("get_table", plan.db, plan.table)
    params = with_basic(table.parameters, basic)
    if params is not None:
        table.parameters = params
        client.call(
            "alter_table_with_environment_context", plan.db, plan.table, table, BASIC_CONTEXT
        )


def set_skewed(
    client: MetastoreClient, plan: Plan, columns: list[str], values: list[list[str]]
) -> None:
    """The table's skewed columns and values (list bucketing's SkewedInfo)."""
    table = client.call("get_table", plan.db, plan.table)
    table.sd.skewedInfo = t.SkewedInfo(
        skewedColNames=[c.lower() for c in columns],
        skewedColValues=values,
        skewedColValueLocationMaps={},
    )
    client.call("alter_table_with_environment_context", plan.db, plan.table, table, BASIC_CONTEXT)


def stored_basic(client: MetastoreClient, plan: Plan) -> dict[str, str]:
    """The sums of the stored partitions' basic statistics (those every partition has)."""
    parts = client.call("get_partition_names", plan.db, plan.table, -1)
    totals = dict.fromkeys(MEASURED, 0)
    for start in range(0, len(parts), 1000):
        for partition in client.call(
            "get_partitions_by_names", plan.db, plan.table, parts[start : start + 1000]
        ):
            params = partition.parameters or {}
            for key in list(totals):
                text = params.get(key, "")
                if text.isdigit():
                    totals[key] += int(text)
                else:
                    del totals[key]
    return {key: str(total) for key, total in totals.items()}


def clear_unset_fields(
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


def column_stats(
    plan: Plan, part_name: str | None, objs: list[t.ColumnStatisticsObj], engine: str
) -> t.ColumnStatistics:
    desc = t.ColumnStatisticsDesc(
        isTblLevel=part_name is None, dbName=plan.db, tableName=plan.table, partName=part_name
    )
    return t.ColumnStatistics(statsDesc=desc, statsObj=objs, engine=engine)


def push(
    client: MetastoreClient, entries: list[t.ColumnStatistics], engine: str, batch: int
) -> None:
    for start in range(0, len(entries), batch):
        client.call(
            "set_aggr_stats_for",
            t.SetPartitionsStatsRequest(
                colStats=entries[start : start + batch], needMerge=False, engine=engine
            ),
        )


def partitions_with_stats(client: MetastoreClient, plan: Plan, engine: str) -> set[str]:
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


def table_level_from_metastore(
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
    objs: list[t.ColumnStatisticsObj] = aggr.colStats
    return objs


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
