"""Iceberg tables in the job: the files of the snapshot it reads, and the commit that
registers the statistics it computed.

`describe` plans the current snapshot's data files through pyiceberg (metastore.iceberg) and
makes them the job's file source, read by field id. The scan computes, besides the HMS
statistics, a theta sketch of each column (metastore.sketches.theta, Iceberg's serialization
of values), which `write_statistics` puts in a Puffin file next to the table's metadata, one
`apache-datasketches-theta-v1` blob per column, and registers in the table's metadata for
that snapshot.

The commit is made as Iceberg's Hive catalog makes one: under the HMS lock of the table
(EXCLUSIVE), the current metadata is read again, the statistics file set on it (a commit of
another writer since the scan is kept: statistics are added to whatever is current, for the
snapshot that was read), the new metadata file written, and the table's `metadata_location`
swapped with `alter_table`, whose environment context also asks servers that compare
(HIVE-26882) to check that it is still the one read under the lock. A swap that is refused
is tried again from a fresh read, a few times, then fails in one line; nothing is ever
overwritten. The same alter records which snapshot the statistics describe
(metastore.iceberg.parameters.STATISTICS_SNAPSHOT) and the basic statistics.
"""

from __future__ import annotations

import dataclasses
import logging
import socket
import time
import uuid
from typing import TYPE_CHECKING, Any

from hive_metastore_thrift import ttypes as t
from metastore.files.formats import ReadSpec
from metastore.files.listing import Listing
from metastore.iceberg import parameters as iceberg_params
from metastore.iceberg import tables
from metastore.job import writer
from metastore.job.accumulators import ColumnState
from metastore.job.client import MetastoreClient, login_user
from metastore.job.errors import JobError, MetastoreRefused
from metastore.job.located import FileSource
from metastore.job.scan import Partial, ThetaRequest, union
from metastore.job.source import Plan
from metastore.sketches.theta import CompactThetaSketch

if TYPE_CHECKING:
    from pyiceberg.table.statistics import StatisticsFile

log = logging.getLogger("metastore.job")

COMMIT_ATTEMPTS = 4
LOCK_WAIT_SECONDS = 120.0


@dataclasses.dataclass(frozen=True)
class IcebergRun:
    """The snapshot a run reads, and what its commit needs."""

    db: str
    table: str
    metadata_location: str
    snapshot_id: int
    sequence_number: int
    location: str
    columns: list[tables.IcebergColumn]
    previous: Previous | None = None
    """--incremental: the statistics of an earlier snapshot the new files are added to."""

    @property
    def where(self) -> str:
        return f"{self.db}.{self.table}"


@dataclasses.dataclass(frozen=True)
class Previous:
    """The statistics of an earlier snapshot of the table, which a run with --incremental
    adds the data files added since to, instead of reading the table again."""

    snapshot_id: int
    statistics_path: str
    rows: int
    files: int
    bytes: int
    raw_bytes: int
    stored: dict[str, t.ColumnStatisticsObj]
    """The HMS statistics of that snapshot, by column name in lower case."""


def incremental(
    client: MetastoreClient, stored: t.Table, source: FileSource, run: IcebergRun, plan: Plan
) -> tuple[IcebergRun, str | None]:
    """RUN with the statistics its new files are added to (SOURCE then lists those files
    only), or RUN as it is when the table must be read again (said in the log); and why
    there is nothing to read, when its statistics describe the current snapshot already."""
    params = stored.parameters or {}
    stated = params.get(iceberg_params.STATISTICS_SNAPSHOT, "")
    if not stated.isdigit():
        log.info("%s has no statistics of an earlier snapshot: reading every file", run.where)
        return run, None
    if int(stated) == run.snapshot_id:
        return run, (
            f"nothing new to analyze in {run.where}: its statistics describe snapshot "
            f"{run.snapshot_id}, the current one (--incremental); nothing was written"
        )
    why, previous = _previous(client, run, plan, int(stated), source.listing.files[""], params)
    if previous is None:
        log.info("%s: reading every file (--incremental): %s", run.where, why)
        return run, None
    log.info(
        "%s: %d data file(s) added since snapshot %d, whose statistics they are added to",
        run.where,
        len(source.listing.files[""]),
        previous.snapshot_id,
    )
    return dataclasses.replace(run, previous=previous), None


def _previous(
    client: MetastoreClient,
    run: IcebergRun,
    plan: Plan,
    snapshot_id: int,
    files: list[tuple[str, int]],
    params: dict[str, str],
) -> tuple[str, Previous | None]:
    """The statistics of SNAPSHOT_ID to add to, FILES cut to those added since; or why
    not."""
    table = tables.load(run.where, run.metadata_location)
    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    if snapshot is None:
        return f"snapshot {snapshot_id} of its statistics has expired", None
    statistics = next((s for s in table.metadata.statistics if s.snapshot_id == snapshot_id), None)
    if statistics is None:
        return f"snapshot {snapshot_id} has no statistics file in the table's metadata", None
    with_blobs = {blob.fields[0] for blob in statistics.blob_metadata if blob.fields}
    ids = {c.column.name: c.field_id for c in run.columns}
    missing = [c.name for c in plan.columns if ids[c.name] not in with_blobs]
    if missing:
        return f"no theta sketch of {', '.join(missing)} in its statistics file", None
    try:
        before = {f.path for f in tables.data_files(run.where, table, snapshot_id)}
    except tables.IcebergError as e:
        return str(e), None
    now = {path for path, _ in files}
    if before - now:
        return f"{len(before - now)} data file(s) were rewritten or removed since", None
    objs = client.call(
        "get_table_statistics_req",
        t.TableStatsRequest(
            dbName=run.db,
            tblName=run.table,
            colNames=[c.name.lower() for c in plan.columns],
            engine="hive",
        ),
    ).tableStats
    stored = {obj.colName.lower(): obj for obj in objs}
    if len(stored) < len(plan.columns):
        return "the metastore lacks the statistics of some columns", None
    summary = snapshot.summary
    counts = {key: (summary.get(key) or "") for key in _TOTALS} if summary else {}
    if not all(value.isdigit() for value in counts.values()) or len(counts) < len(_TOTALS):
        return f"snapshot {snapshot_id} has no totals in its summary", None
    files[:] = [(path, size) for path, size in files if path not in before]
    raw = params.get("rawDataSize", "")
    return "", Previous(
        snapshot_id,
        statistics.statistics_path,
        int(counts["total-records"]),
        int(counts["total-data-files"]),
        int(counts["total-files-size"]),
        int(raw) if raw.isdigit() else 0,
        stored,
    )


_TOTALS = ("total-records", "total-data-files", "total-files-size")
"""What a snapshot's summary says of the whole table at that snapshot."""


def with_previous(run: IcebergRun, plan: Plan, partial: Partial) -> Partial:
    """PARTIAL (the files added since RUN's previous statistics) merged with them: the
    statistics of the whole snapshot."""
    previous = run.previous
    if previous is None:
        return partial
    from metastore.iceberg import puffin

    stored_file = puffin.read(previous.statistics_path)
    blobs = {blob.fields[0]: blob for blob in stored_file.blobs if blob.fields}
    ids = {c.column.name: c.field_id for c in run.columns}
    whole = Partial(
        rows=previous.rows + partial.rows,
        files=previous.files + partial.files,
        bytes=previous.bytes + partial.bytes,
        raw_bytes=previous.raw_bytes + partial.raw_bytes,
    )
    for column in plan.columns:
        before = ColumnState.from_thrift(
            column.stats_kind, previous.stored[column.name.lower()], previous.rows
        )
        added = partial.states.get(column.name) or ColumnState.empty(column.stats_kind)
        state = before.merge(added)
        theta = CompactThetaSketch.from_bytes(stored_file.data(blobs[ids[column.name]]))
        if column.name in partial.thetas:
            theta = union(theta, partial.thetas[column.name])
        whole.thetas[column.name] = theta
        if state.sketch is None:  # the metastore returned no HyperLogLog: the theta's count
            state.distinct = round(theta.estimate)
        whole.states[column.name] = state
    unknown = [c.name for c in plan.columns if whole.states[c.name].sketch is None]
    if unknown:
        log.warning(
            "%s: the metastore returned no HyperLogLog sketches of %s (fetch_bitvector off): "
            "their distinct counts come from the theta sketches, written without a bit vector",
            run.where,
            ", ".join(unknown),
        )
    return whole


def describe(stored: t.Table) -> tuple[FileSource, IcebergRun]:
    """The file source of STORED's current snapshot (its data files, read by field id)."""
    where = f"{stored.dbName}.{stored.tableName}"
    params = stored.parameters or {}
    metadata_location = params.get(iceberg_params.METADATA_LOCATION)
    if not metadata_location:
        raise JobError(f"{where} is an Iceberg table without metadata_location in the metastore")
    table = tables.load(where, metadata_location)
    snapshot = table.current_snapshot()
    if snapshot is None:
        raise JobError(f"{where} is an Iceberg table without data (no snapshot yet)")
    columns = tables.columns(table)
    files = tables.data_files(where, table, snapshot.snapshot_id)
    names_ = tuple(c.column.name for c in columns)
    spec = ReadSpec("parquet", names=names_, field_ids=tuple(c.field_id for c in columns))
    listing = Listing([], {"": [(f.path, f.size) for f in files]}, {"": []})
    source = FileSource(
        table.metadata.location,
        spec,
        [c.column for c in columns],
        [],
        listing,
        (stored.dbName, stored.tableName),
    )
    run = IcebergRun(
        stored.dbName,
        stored.tableName,
        metadata_location,
        snapshot.snapshot_id,
        snapshot.sequence_number or 0,
        table.metadata.location,
        columns,
    )
    log.info(
        "%s is an Iceberg table: snapshot %d, %d data file(s)",
        where,
        snapshot.snapshot_id,
        len(files),
    )
    return source, run


def commit_statistics(
    client: MetastoreClient,
    run: IcebergRun,
    statistics: StatisticsFile,
    basic: dict[str, str],
) -> str:
    """Register STATISTICS (for RUN's snapshot) in the table's metadata, with the BASIC
    statistics among the table's parameters; the new metadata location. JobError when it
    cannot be committed."""
    last = ""
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        lock_id = _lock(client, run)
        try:
            done = _commit_once(client, run, statistics, basic)
            if done is not None:
                return done
            last = "another writer swapped the table's metadata at the same moment"
        finally:
            _unlock(client, lock_id)
        log.info("commit of the statistics refused (%s); attempt %d again", last, attempt + 1)
        time.sleep(0.1 * attempt)
    raise JobError(
        f"could not commit the statistics of {run.where}: {last} ({COMMIT_ATTEMPTS} attempts); "
        "run the job again"
    )


def _commit_once(
    client: MetastoreClient,
    run: IcebergRun,
    statistics: StatisticsFile,
    basic: dict[str, str],
) -> str | None:
    from pyiceberg.serializers import ToOutputFile
    from pyiceberg.table.update import SetStatisticsUpdate, update_table_metadata

    hive = client.call("get_table", run.db, run.table)
    params = dict(hive.parameters or {})
    current_location = params.get(iceberg_params.METADATA_LOCATION)
    if not current_location or not iceberg_params.is_iceberg(params):
        raise JobError(f"{run.where} is no longer an Iceberg table in the metastore")
    current = tables.load(run.where, current_location)
    if current.metadata.snapshot_by_id(run.snapshot_id) is None:
        raise JobError(
            f"snapshot {run.snapshot_id} of {run.where}, which the job read, is gone (expired "
            "meanwhile); run the job again"
        )
    # snapshot-id is optional (deprecated: the statistics file carries it); mypy's view of
    # the model's alias says required.
    update = SetStatisticsUpdate(statistics=statistics)  # type: ignore[call-arg]
    metadata = update_table_metadata(current.metadata, (update,))
    new_location = _next_metadata_location(run.location, current_location)
    ToOutputFile.table_metadata(metadata, current.io.new_output(new_location))
    params = writer.with_basic(params, basic) or params
    params[iceberg_params.METADATA_LOCATION] = new_location
    params[iceberg_params.PREVIOUS_METADATA_LOCATION] = current_location
    params[iceberg_params.STATISTICS_SNAPSHOT] = str(run.snapshot_id)
    hive.parameters = params
    context = t.EnvironmentContext(
        {
            "expected_parameter_key": iceberg_params.METADATA_LOCATION,
            "expected_parameter_value": current_location,
            iceberg_params.STATISTICS_COMMIT: "true",
        }
    )
    try:
        client.call("alter_table_with_environment_context", run.db, run.table, hive, context)
    except MetastoreRefused as e:
        if "has been modified" in e.reason:
            return None
        raise
    log.info(
        "committed the statistics of %s snapshot %d: %s", run.where, run.snapshot_id, new_location
    )
    return new_location


def _next_metadata_location(location: str, current: str) -> str:
    from pyiceberg.catalog import MetastoreCatalog

    version = MetastoreCatalog._parse_metadata_version(current) + 1
    return f"{location.rstrip('/')}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"


def _lock(client: MetastoreClient, run: IcebergRun) -> int:
    """An EXCLUSIVE HMS lock of the table, as Iceberg's Hive catalog takes it."""
    component = t.LockComponent(
        type=t.LockType.EXCLUSIVE,
        level=t.LockLevel.TABLE,
        dbname=run.db,
        tablename=run.table,
        operationType=t.DataOperationType.UNSET,
    )
    request = t.LockRequest([component], user=login_user(), hostname=socket.gethostname())
    response: Any = client.call("lock", request)
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    delay = 0.05
    while response.state == t.LockState.WAITING:
        if time.monotonic() > deadline:
            _unlock(client, response.lockid)
            raise JobError(
                f"the HMS lock of {run.where} was not granted within {LOCK_WAIT_SECONDS:.0f} s "
                "(another writer holds it); run the job again"
            )
        time.sleep(delay)
        delay = min(delay * 2, 1.0)
        response = client.call("check_lock", t.CheckLockRequest(response.lockid))
    if response.state != t.LockState.ACQUIRED:
        raise JobError(f"the HMS lock of {run.where} was refused ({response.state})")
    return int(response.lockid)


def _unlock(client: MetastoreClient, lock_id: int) -> None:
    try:
        client.call("unlock", t.UnlockRequest(lock_id))
    except Exception as e:  # the lock times out on the server anyway
        log.warning("could not release HMS lock %d: %s", lock_id, e)


THETA_BLOB = "apache-datasketches-theta-v1"


def theta_request(run: IcebergRun | None, plan: Plan) -> ThetaRequest | None:
    """The columns of RUN whose theta sketches the scan keeps: the analyzed ones."""
    if run is None:
        return None
    analyzed = {c.name for c in plan.columns}
    return {c.column.name: c.arrow for c in run.columns if c.column.name in analyzed}


def write_statistics(
    client: MetastoreClient, run: IcebergRun, table: Partial, basic: dict[str, str]
) -> None:
    """The Puffin file of TABLE's theta sketches next to RUN's metadata, committed for its
    snapshot with the BASIC statistics; the file is removed when the commit fails."""
    from pyiceberg.table.statistics import StatisticsFile

    from metastore.iceberg import puffin

    blobs = []
    for column in run.columns:
        sketch = table.thetas.get(column.column.name)
        if sketch is not None:
            blobs.append(
                puffin.Blob(
                    type=THETA_BLOB,
                    fields=[column.field_id],
                    snapshot_id=run.snapshot_id,
                    sequence_number=run.sequence_number,
                    data=sketch.to_bytes(),
                    properties={"ndv": str(round(sketch.estimate))},
                )
            )
    path = f"{run.location.rstrip('/')}/metadata/{run.snapshot_id}-{uuid.uuid4()}.stats"
    written = puffin.write(path, blobs)
    statistics = StatisticsFile.model_validate(written.statistics_file(run.snapshot_id))
    try:
        commit_statistics(client, run, statistics, basic)
    except BaseException:
        puffin.remove(path)
        raise
    log.info("wrote %d theta sketch(es) of %s to %s", len(blobs), run.where, path)
