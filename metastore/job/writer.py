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
from metastore.vocabulary import union_member

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


def ensure_partitions(
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


def set_table_row_count(client: MetastoreClient, plan: Plan, rows: int) -> None:
    """numRows of an unpartitioned table, the row count planners weigh its statistics with."""
    table = client.call("get_table", plan.db, plan.table)
    if (table.parameters or {}).get("numRows") != str(rows):
        table.parameters = {**(table.parameters or {}), "numRows": str(rows)}
        client.call("alter_table_with_environment_context", plan.db, plan.table, table, None)


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
