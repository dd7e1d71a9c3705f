"""Everything the job checks before Spark starts, which takes seconds to tens of seconds.

prepare() reads the metastore and lists the files, and raises the error of any run that
cannot succeed: a table that is not registered (without --path), a --path that is a file or
a folder without data, a registered table without data files (in the partitions chosen),
files of another format than --format (the first one's first bytes and, for Parquet and
ORC, its footer) or than a Parquet or ORC table is registered as (the first bytes), an
unreadable --schema, unknown columns, --partition specs that name no partition (the error
lists those there are), data partitioned otherwise than the registered table, a table
registered as another format. With --incremental, a registered table's partition folders
that are not registered yet are found under its location, and a run with nothing to read
says so (Prepared.nothing_new) instead of starting Spark. What it finds (the plan, the
files, the stored table) is what the run then scans and writes. A table of the Spark
catalog (--spark-table) can only be planned once Spark runs; for it, prepare() checks the
metastore's side only.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence

from hive_metastore_thrift import ttypes as t
from metastore import names
from metastore.columns import Column
from metastore.files import object_storage
from metastore.files.layout import layout_of
from metastore.iceberg import parameters as iceberg_params
from metastore.job import iceberg, located, writer
from metastore.job.client import MetastoreClient
from metastore.job.errors import JobError, NoSuchObject, OptionsError, files_errors
from metastore.job.options import AnalyzeOptions
from metastore.job.scan import SkewRequest
from metastore.job.settings import spark_conf
from metastore.job.skew import sketched
from metastore.job.source import Plan, check_spec_keys, make_plan

log = logging.getLogger("metastore.job")
SHOWN = 10
"""Partitions named in an error that lists those there are."""


@dataclasses.dataclass
class Prepared:
    """What a run scans and writes, found before Spark starts."""

    options: AnalyzeOptions
    specs: list[dict[str, str]]
    stored: t.Table | None
    """The table as the metastore holds it, None when the run registers it."""
    plan: Plan | None = None
    """None for --spark-table: planned once Spark reads the table."""
    source: located.FileSource | None = None
    register_format: str | None = None
    """The storage format the table gets: a new table's, or one registered without any."""
    skip: set[str] = dataclasses.field(default_factory=set)
    """Stored partitions not to scan again (--incremental)."""
    nothing_new: str | None = None
    """Why there is nothing to read (--incremental, every partition with data has
    statistics): the run then starts no Spark and writes nothing."""
    skewed: SkewRequest = dataclasses.field(default_factory=SkewRequest)
    iceberg: iceberg.IcebergRun | None = None
    """The snapshot of an Iceberg table the run reads, and what its commit needs."""
    seconds: float = 0.0


def prepare(options: AnalyzeOptions) -> Prepared:
    """The checked plan of a run as OPTIONS ask for it; JobError (OptionsError for options
    that do not fit the data) when the run could not succeed."""
    started = time.monotonic()
    db, name = options.db_name, options.table_name
    specs = options.partition_specs()
    with files_errors(), MetastoreClient(options.connection) as client:
        stored = stored_table(client, db, name)
        prepared = Prepared(options, specs, stored)
        if options.spark_table is not None:
            prepared.seconds = time.monotonic() - started
            return prepared
        nothing = None
        # Object storage is listed here and read by the tasks with the same settings.
        conf = spark_conf(options.spark_conf)
        object_storage.use(object_storage.S3Settings.from_spark_conf(conf))
        if options.path is not None:
            source = located.from_path(options)
            prepared.register_format = _format_over(stored, options.file_format)
            check_keys(stored, source.keys)
            _choose_listed(source, specs, options.path)
            plan = _checked_plan(source, options, specs)
            if options.incremental and plan.partition_keys and stored is not None:
                prepared.skip = already_done(client, plan, options, specs)
                located.drop_partitions(source.listing, prepared.skip)
            where = options.path
        else:
            if stored is None:
                raise OptionsError(
                    f"{options.table} is not in the metastore at {options.uri}; give --path "
                    "(and --format) to register it"
                )
            if iceberg_params.is_iceberg(stored.parameters or {}):
                if options.record_skew:
                    raise OptionsError(
                        f"{options.table} is an Iceberg table, whose storage Iceberg keeps: "
                        "leave out --record-skew"
                    )
                source, run = iceberg.describe(stored)
                plan = _checked_plan(source, options, specs)
                if options.incremental:
                    run, nothing = iceberg.incremental(client, stored, source, run, plan)
                prepared.iceberg = run
            else:
                source, prepared.register_format = located.describe(stored, options.format)
                plan = _checked_plan(source, options, specs)
                prepared.skip = _list_stored(client, source, plan, options, specs)
            located.check_first_file(source, options.table)
            where = source.location
        prepared.plan, prepared.source = plan, source
        prepared.skewed = skew_request(plan, options)
        prepared.nothing_new = nothing
        if not any(source.listing.files.values()):
            if not (options.incremental and plan.partition_keys):
                raise OptionsError(_no_data(source, specs, where))
            prepared.nothing_new = (
                f"nothing new to analyze in {options.table}: {len(prepared.skip)} partition(s) "
                f"have statistics already and no other partition under {where} has data "
                "files (--incremental); nothing was written"
            )
    prepared.seconds = time.monotonic() - started
    log.info("checked the table, its files and the options in %.1f s", prepared.seconds)
    return prepared


def stored_table(client: MetastoreClient, db: str, table: str) -> t.Table | None:
    try:
        found: t.Table = client.call("get_table", db, table)
    except NoSuchObject:
        return None
    return found


def _format_over(stored: t.Table | None, fmt: str) -> str | None:
    """The format to register for files of FMT: a new table's, or a stored table's that
    has none; None when the stored table already says FMT (an OptionsError if another)."""
    if stored is None:
        return fmt
    storage = located.storage_of(stored)
    if not storage.has_format:
        return fmt
    spec = layout_of(storage).spec
    if spec.format != fmt:
        raise OptionsError(
            f"{stored.dbName}.{stored.tableName} is registered as {spec.format}; the files "
            f"under --path are read as {fmt} (give --format {spec.format}, or analyze "
            "them as another table)"
        )
    return None


def check_keys(stored: t.Table | None, keys: Sequence[Column]) -> None:
    """The data must be partitioned as the registered table is."""
    if stored is None:
        return
    stored_keys = [k.name.lower() for k in stored.partitionKeys or []]
    if stored_keys != [k.name.lower() for k in keys]:
        raise OptionsError(
            f"{stored.dbName}.{stored.tableName} in the metastore is partitioned by "
            f"{', '.join(stored_keys) or 'nothing'}, the data by "
            f"{', '.join(k.name for k in keys) or 'nothing'}"
        )


def check_plan(plan: Plan, options: AnalyzeOptions, specs: Sequence[dict[str, str]]) -> None:
    if not plan.columns:
        raise JobError(f"{options.table} has no column that HMS keeps statistics for")
    if specs and not plan.partition_keys:
        raise OptionsError(f"{options.table} is not partitioned; leave out --partition")
    for spec in specs:
        check_spec_keys(spec, [k.name for k in plan.partition_keys])


def matches(spec: dict[str, str], name: str, values: Sequence[str | None]) -> bool:
    """Whether the partition NAME (of VALUES) is one that SPEC selects."""
    keys = [k.lower() for k, _ in names.parse_partition_name(name)] if name else []
    check_spec_keys(spec, keys)
    for key, wanted in spec.items():
        value = values[keys.index(key)]
        if wanted in ("", names.DEFAULT_PARTITION_VALUE):
            if value is not None:
                return False
        elif value != wanted:
            return False
    return True


def _choose_listed(source: located.FileSource, specs: Sequence[dict[str, str]], path: str) -> None:
    """Keep the listed partitions the SPECS select; an OptionsError for a spec that selects
    none, listing those there are."""
    listing = source.listing
    if not specs:
        return
    if not listing.keys:
        raise OptionsError(f"the data under {path} is not partitioned; leave out --partition")
    for spec in specs:
        check_spec_keys(spec, listing.keys)
    chosen = set()
    for spec in specs:
        found = {n for n, values in listing.values.items() if matches(spec, n, values)}
        if not found:
            raise OptionsError(
                f"--partition {_spec_text(spec)} names no partition of the data under {path}; "
                f"it has {_some(sorted(listing.values))}"
            )
        chosen |= found
    located.drop_partitions(listing, set(listing.values) - chosen)


def _checked_plan(
    source: located.FileSource, options: AnalyzeOptions, specs: Sequence[dict[str, str]]
) -> Plan:
    plan = make_plan(
        source.columns, source.keys, options.db_name, options.table_name, options.columns
    )
    check_plan(plan, options, specs)
    return plan


def _list_stored(
    client: MetastoreClient,
    source: located.FileSource,
    plan: Plan,
    options: AnalyzeOptions,
    specs: Sequence[dict[str, str]],
) -> set[str]:
    """List the files of the stored table's partitions that the SPECS select (all without
    specs). With --incremental, the partition folders under the table's location that are
    not registered yet are candidates too, and the registered partitions that have
    statistics (but those named) are neither listed nor read: returns them."""
    if not source.keys:
        located.list_partitions(client, source, [])
        return set()
    db, table = source.table
    registered: list[str] = client.call("get_partition_names", db, table, -1)
    new = located.new_partitions(source, registered) if options.incremental else None
    candidates = registered + sorted(new.files) if new is not None else registered
    chosen = _choose_stored(f"{db}.{table}", source.keys, candidates, specs)
    skip = already_done(client, plan, options, specs) if options.incremental else set()
    stored = set(registered) - skip
    located.list_partitions(client, source, [n for n in chosen if n in stored])
    if new is not None:
        located.drop_partitions(new, set(new.files) - set(chosen))
        located.add_partitions(source.listing, new)
        if new.files:
            log.info(
                "incremental: %d partition folder(s) not registered yet: %s",
                len(new.files),
                _some(sorted(new.files)),
            )
    return skip


def _choose_stored(
    table: str, keys: Sequence[Column], partitions: list[str], specs: Sequence[dict[str, str]]
) -> list[str]:
    """The PARTITIONS of TABLE that the SPECS select (all without specs); an OptionsError
    for a spec that selects none, listing those there are."""
    if not specs:
        return partitions
    for spec in specs:
        check_spec_keys(spec, [k.name for k in keys])
    chosen: list[str] = []
    for spec in specs:
        found = [
            name
            for name in partitions
            if matches(
                spec, name, [located.key_value(v) for _, v in names.parse_partition_name(name)]
            )
        ]
        if not found:
            raise OptionsError(
                f"--partition {_spec_text(spec)} names no partition of {table}; "
                f"it has {_some(partitions)}"
            )
        chosen.extend(n for n in found if n not in chosen)
    return chosen


def _no_data(source: located.FileSource, specs: Sequence[dict[str, str]], where: str) -> str:
    """Why a run has nothing to read: no data file under WHERE (or in the partitions)."""
    hidden = "names starting with _ or . are skipped"
    if not source.keys:
        return f"no data under {where}: no files ({hidden})"
    table = ".".join(source.table)
    count = len(source.listing.files)
    if not count:
        return (
            f"{table} has no partitions in the metastore; --incremental registers and "
            f"analyzes the partition folders under {where}"
        )
    named = " named" if specs else ""
    return (
        f"no data in the {count} partition(s){named} of {table}: their folders hold no "
        f"files ({hidden})"
    )


def _spec_text(spec: dict[str, str]) -> str:
    return "/".join(f"{k}={v}" for k, v in spec.items())


def _some(items: Sequence[str]) -> str:
    if not items:
        return "none"
    shown = ", ".join(items[:SHOWN])
    return shown + (f" and {len(items) - SHOWN} more" if len(items) > SHOWN else "")


def already_done(
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


def skew_request(plan: Plan, options: AnalyzeOptions) -> SkewRequest:
    if options.skew is None and not options.record_skew:
        return SkewRequest()
    by_name = {c.name.lower(): c for c in plan.columns}
    recorded = []
    for name in options.record_skew:
        column = by_name.get(name.lower())
        if column is None or not sketched(column.stats_kind):
            raise OptionsError(
                f"--record-skew {name}: not an analyzed column whose values can be skewed "
                f"(analyzed: {', '.join(c.name for c in plan.columns if sketched(c.stats_kind))})"
            )
        recorded.append(column.name)
    columns = tuple(c.name for c in plan.columns if sketched(c.stats_kind))
    combinations = (tuple(recorded),) if len(recorded) > 1 else ()
    return SkewRequest(columns, combinations)
