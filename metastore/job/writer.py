"""The metastore side of the job: registering the database, table and partitions, and
writing statistics in bounded batches (see AnalyzeOptions.batch_size)."""

from __future__ import annotations

import copy
import logging

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.job import interrupts
from metastore.job.client import MetastoreClient
from metastore.job.errors import MetastoreRefused, NoSuchObject, OptionsError
from metastore.job.source import Plan
from metastore.job.storage import has_storage
from metastore.stats import accurate
from metastore.thrift_stats import union_member

log = logging.getLogger(__name__)


class Registration:
    """What a run registers in the metastore, in the order that leaves nothing half-written:
    the database and table (or a repair of a table's storage) when the first statistics are
    written, then each batch of partitions as a unit, then the table level. A unit that
    fails is undone (the partitions it added dropped, the parameters and statistics it
    replaced put back); a run that wrote no partition drops the table and database it
    created. Signals wait for the end of a unit (metastore.job.interrupts)."""

    def __init__(self, client: MetastoreClient, plan: Plan) -> None:
        self.client = client
        self.plan = plan
        self.created_database = False
        self.created_table = False
        self.written: list[str] = []
        """Partitions whose unit of writes is done."""

    def ensure_table(
        self,
        stored: t.Table | None,
        storage: t.StorageDescriptor | None,
        parameters: dict[str, str],
        repair: bool,
    ) -> None:
        """Create the database and the table (with STORAGE and PARAMETERS) when STORED is
        None; with REPAIR, give the stored table and its partitions STORAGE's formats."""
        plan, client = self.plan, self.client
        if stored is not None:
            check_stored_keys(stored, plan)
            if repair and storage is not None:
                with interrupts.deferred():
                    repair_storage(client, plan, stored, storage, parameters)
            return
        try:
            client.call("get_database", plan.db)
        except NoSuchObject:
            log.info("creating database %s", plan.db)
            client.call("create_database", t.Database(name=plan.db, parameters={}))
            self.created_database = True
        log.info("creating table %s.%s", plan.db, plan.table)
        sd = storage or t.StorageDescriptor(
            location=None,
            bucketCols=[],
            sortCols=[],
            parameters={},
            numBuckets=-1,
            serdeInfo=t.SerDeInfo(name=None, serializationLib=None, parameters={}),
        )
        sd.cols = [t.FieldSchema(c.name.lower(), c.hive_type, None) for c in plan.all_columns]
        client.call(
            "create_table",
            t.Table(
                tableName=plan.table,
                dbName=plan.db,
                sd=sd,
                # HMS keeps a table external only with this parameter set.
                parameters={"EXTERNAL": "TRUE", **parameters},
                tableType="EXTERNAL_TABLE",
                partitionKeys=[
                    t.FieldSchema(k.name.lower(), k.hive_type, None) for k in plan.partition_keys
                ],
            ),
        )
        self.created_table = True

    def undo(self) -> None:
        """After a failure: drop what this run created, if it wrote no partition."""
        if self.written:
            return
        plan = self.plan
        if self.created_table:
            log.info("dropping the table %s.%s this run created", plan.db, plan.table)
            self.client.call("drop_table", plan.db, plan.table, False)
            self.created_table = False
        if self.created_database:
            log.info("dropping the database %s this run created", plan.db)
            # Its folder is the metastore's (in its warehouse), made with the database.
            self.client.call("drop_database", plan.db, True, False)
            self.created_database = False


def check_stored_keys(stored: t.Table, plan: Plan) -> None:
    stored_keys = [k.name for k in stored.partitionKeys or []]
    if stored_keys != [k.name.lower() for k in plan.partition_keys]:
        raise OptionsError(
            f"{plan.db}.{plan.table} in the metastore is partitioned by "
            f"{', '.join(stored_keys) or 'nothing'}, the data by "
            f"{', '.join(k.name for k in plan.partition_keys) or 'nothing'}"
        )


def repair_storage(
    client: MetastoreClient,
    plan: Plan,
    stored: t.Table,
    storage: t.StorageDescriptor,
    parameters: dict[str, str],
) -> None:
    """Give a table registered without a storage format (and its partitions without one)
    STORAGE's formats and SerDe, keeping their locations and columns."""
    log.info("registering the storage format of %s.%s, which had none", plan.db, plan.table)
    table = client.call("get_table", plan.db, plan.table)
    table.sd = _with_formats(table.sd, storage)
    table.parameters = {**(table.parameters or {}), **parameters}
    client.call("alter_table_with_environment_context", plan.db, plan.table, table, BASIC_CONTEXT)
    if not plan.partition_keys:
        return
    names_ = client.call("get_partition_names", plan.db, plan.table, -1)
    for start in range(0, len(names_), 500):
        parts = client.call(
            "get_partitions_by_names", plan.db, plan.table, names_[start : start + 500]
        )
        bare = [p for p in parts if not has_storage(p.sd)]
        for part in bare:
            part.sd = _with_formats(part.sd, storage)
        if bare:
            client.call(
                "alter_partitions_with_environment_context",
                plan.db,
                plan.table,
                bare,
                BASIC_CONTEXT,
            )


def _with_formats(
    sd: t.StorageDescriptor | None, storage: t.StorageDescriptor
) -> t.StorageDescriptor:
    sd = copy.deepcopy(sd) if sd is not None else copy.deepcopy(storage)
    sd.inputFormat, sd.outputFormat = storage.inputFormat, storage.outputFormat
    sd.serdeInfo = copy.deepcopy(storage.serdeInfo)
    return sd


def partition_storage(
    table_sd: t.StorageDescriptor | None, location: str | None
) -> t.StorageDescriptor | None:
    """A new partition's storage: the table's formats and columns, in its own folder."""
    if table_sd is None or location is None:
        return None
    sd = copy.deepcopy(table_sd)
    sd.location = location
    return sd


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
    storage: dict[str, t.StorageDescriptor | None],
) -> tuple[int, int]:
    """One batch, as a unit: add the partitions of BASIC the metastore lacks (in STORAGE's
    folders), set the basic statistics of the stored ones, then write the column
    statistics ENTRIES. Returns how many partitions were added and altered. When a call
    fails, what the batch did before it is undone, and the error raised."""
    undo: list[tuple[str, tuple[object, ...]]] = []
    try:
        with interrupts.deferred():
            return _write_batch(client, plan, basic, entries, engine, storage, undo)
    except BaseException:
        _undo(client, plan, undo)
        raise


def _write_batch(
    client: MetastoreClient,
    plan: Plan,
    basic: dict[str, dict[str, str]],
    entries: list[t.ColumnStatistics],
    engine: str,
    storage: dict[str, t.StorageDescriptor | None],
    undo: list[tuple[str, tuple[object, ...]]],
) -> tuple[int, int]:
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
                sd=storage.get(name),
                parameters=with_basic({}, basic[name]),
            )
            for name in missing
        ]
        _changing(
            client,
            undo,
            ("drop", tuple(missing)),
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
            stale.append(copy.deepcopy(part))
            part.parameters = params
    if stale:
        changed = [found[names.make_partition_name(keys, p.values)] for p in stale]
        _changing(
            client,
            undo,
            ("alter", tuple(stale)),
            "alter_partitions_with_environment_context",
            plan.db,
            plan.table,
            changed,
            BASIC_CONTEXT,
        )
    kept = [e for e in entries if e.statsDesc.partName in found]
    undo.append(("restore", tuple(clear_unset_fields(client, plan, kept, engine))))
    push(client, entries, engine, len(entries) or 1)
    return len(missing), len(stale)


def _changing(
    client: MetastoreClient,
    undo: list[tuple[str, tuple[object, ...]]],
    step: tuple[str, tuple[object, ...]],
    method: str,
    *args: object,
) -> None:
    """METHOD(*ARGS), with the STEP of UNDO that puts back what it changes: kept when the call
    may have changed something (done, or its answer lost with the connection), dropped when
    the metastore refused it (it changed nothing, and might refuse the undo too)."""
    undo.append(step)
    try:
        client.call(method, *args)
    except MetastoreRefused:
        undo.pop()
        raise


def _undo(client: MetastoreClient, plan: Plan, undo: list[tuple[str, tuple[object, ...]]]) -> None:
    """Put back what a failed unit of writes changed, newest first; a step that fails is
    logged (the partitions it names may be half-written)."""
    for action, items in reversed(undo):
        try:
            if action == "drop":
                for name in items:
                    client.call("drop_partition_by_name", plan.db, plan.table, name, False)
            elif action == "alter":
                client.call(
                    "alter_partitions_with_environment_context",
                    plan.db,
                    plan.table,
                    list(items),
                    BASIC_CONTEXT,
                )
            elif action == "restore" and items:
                entries = [e for e in items if isinstance(e, t.ColumnStatistics)]
                push(client, entries, entries[0].engine or "hive", len(entries))
            elif action == "table":
                (table,) = items
                client.call(
                    "alter_table_with_environment_context",
                    plan.db,
                    plan.table,
                    table,
                    BASIC_CONTEXT,
                )
        except Exception as e:
            log.error("could not undo a write (%s): %s", action, e)


def write_table_level(
    client: MetastoreClient,
    plan: Plan,
    basic: dict[str, str] | None,
    entry: t.ColumnStatistics | None,
    engine: str,
    skewed: tuple[list[str], list[list[str]]] | None,
) -> None:
    """The table's basic statistics, its column statistics ENTRY and its skewed values
    (SKEWED: columns and values), as one unit of writes."""
    undo: list[tuple[str, tuple[object, ...]]] = []
    try:
        with interrupts.deferred():
            table = client.call("get_table", plan.db, plan.table)
            old = copy.deepcopy(table)
            params = with_basic(table.parameters, basic) if basic is not None else None
            if params is not None:
                table.parameters = params
            if skewed is not None:
                columns, values = skewed
                table.sd.skewedInfo = t.SkewedInfo(
                    skewedColNames=[c.lower() for c in columns],
                    skewedColValues=values,
                    skewedColValueLocationMaps={},
                )
            if params is not None or skewed is not None:
                _changing(
                    client,
                    undo,
                    ("table", (old,)),
                    "alter_table_with_environment_context",
                    plan.db,
                    plan.table,
                    table,
                    BASIC_CONTEXT,
                )
            if entry is not None:
                undo.append(("restore", tuple(clear_unset_fields(client, plan, [entry], engine))))
                push(client, [entry], engine, 1)
    except BaseException:
        _undo(client, plan, undo)
        raise


def clear_unset_fields(
    client: MetastoreClient, plan: Plan, entries: list[t.ColumnStatistics], engine: str
) -> list[t.ColumnStatistics]:
    """Delete the stored statistics of the columns whose new statistics leave a field unset
    (no low and high value in an all-NULL or empty column, no histogram, no bit vector of a
    table level whose partitions' sketches are unknown): writes keep the stored value of an
    unset field, as in HMS, and it would describe data that is gone. Returns the statistics
    deleted (to be put back if the rest of the unit fails)."""
    deleted = []
    for entry in entries:
        part_name = entry.statsDesc.partName
        columns = []
        for obj in entry.statsObj:
            stats = union_member(obj.statsData)
            unset = any(
                getattr(stats, f, 0) is None for f in ("lowValue", "highValue", "histogram")
            )
            no_sketch = getattr(stats, "numDVs", None) is not None and stats.bitVectors is None
            if unset or no_sketch:
                columns.append(obj.colName)
        if not columns:
            continue
        old = _stored_stats(client, plan, part_name, columns, engine)
        for column in columns:
            try:
                if part_name is None:
                    client.call(
                        "delete_table_column_statistics", plan.db, plan.table, column, engine
                    )
                else:
                    client.call(
                        "delete_partition_column_statistics",
                        plan.db,
                        plan.table,
                        part_name,
                        column,
                        engine,
                    )
            except NoSuchObject:
                pass  # nothing stored yet
        if old is not None:
            deleted.append(old)
    return deleted


def _stored_stats(
    client: MetastoreClient, plan: Plan, part_name: str | None, columns: list[str], engine: str
) -> t.ColumnStatistics | None:
    """The stored statistics of COLUMNS of the table (or partition PART_NAME), or None."""
    if part_name is None:
        objs = client.call(
            "get_table_statistics_req",
            t.TableStatsRequest(
                dbName=plan.db, tblName=plan.table, colNames=columns, engine=engine
            ),
        ).tableStats
    else:
        objs = (
            client.call(
                "get_partitions_statistics_req",
                t.PartitionsStatsRequest(
                    dbName=plan.db,
                    tblName=plan.table,
                    colNames=columns,
                    partNames=[part_name],
                    engine=engine,
                ),
            ).partStats.get(part_name)
            or []
        )
    return column_stats(plan, part_name, objs, engine) if objs else None


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
