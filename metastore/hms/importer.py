"""Copying a running Hive Metastore into colstats (`metastore db import --from URI`).

Any HMS serves the same calls whatever its version and backend (MySQL-backed ones too), so
the copy reads through them: databases, functions, tables and views, partitions, and the
statistics of tables and partitions (with their bit vectors where the source returns them).
It writes through colstats's own handler, in process, with the checks every client gets.

A copy can be run again: what exists already is left as it is (databases, functions, tables
and partitions, by name), and the statistics of every table and partition are written again
(an upsert: the source's figures of now). So an interrupted copy goes on where it stopped
when run again, whatever step it stopped in. What colstats does not serve is skipped and said:
transactional (ACID) tables, and anything the handler refuses, with its reason.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from thrift.Thrift import TException

from hive_metastore_thrift import ttypes as t
from metastore.hms.handler import Handler
from metastore.hms.structs.tables import transactional

log = logging.getLogger(__name__)

BATCH = 200
"""Partitions read, written and their statistics copied per call. HMS 2.3 reads the
statistics of more than 250 partitions in one call three times as slowly per partition
(bench/import_bench.py: 3,000 partitions of 10 columns take 2.1 s in calls of 200 names,
7.5 s in calls of 300 or 500)."""


class Source(Protocol):
    """A client of the HMS to copy: its `call(method, *args)` (metastore.job.client)."""

    @property
    def uri(self) -> str: ...

    def call(self, method: str, *args: Any) -> Any: ...


@dataclasses.dataclass
class Summary:
    """What a copy did: counts of what was copied and of what existed already, and the
    objects skipped with their reasons."""

    copied: dict[str, int] = dataclasses.field(default_factory=dict)
    existing: dict[str, int] = dataclasses.field(default_factory=dict)
    skipped: list[str] = dataclasses.field(default_factory=list)

    def count(self, kind: str, n: int = 1, *, existed: bool = False) -> None:
        counts = self.existing if existed else self.copied
        counts[kind] = counts.get(kind, 0) + n


@dataclasses.dataclass
class Planned:
    """What the source holds: databases, tables and partitions to copy (for progress and
    --dry-run)."""

    databases: list[str]
    tables: dict[str, list[str]]
    partitions: dict[tuple[str, str], int]

    @property
    def partition_count(self) -> int:
        return sum(self.partitions.values())


@dataclasses.dataclass
class _Read:
    """One batch as read from the source: the names of the partitions the copy lacks and
    those partitions, and the statistics of every partition of the batch by name."""

    missing: list[str]
    partitions: list[t.Partition]
    statistics: dict[str, list[t.ColumnStatisticsObj]]


Progress = Callable[[str, int], None]
"""Told, as the copy goes, the table it is at and the partitions copied so far."""


def survey(source: Source, database_pattern: str = "*") -> Planned:
    """What SOURCE holds of the databases matching DATABASE_PATTERN (HMS's patterns)."""
    databases = sorted(source.call("get_databases", database_pattern))
    tables: dict[str, list[str]] = {}
    partitions: dict[tuple[str, str], int] = {}
    for db in databases:
        tables[db] = sorted(source.call("get_all_tables", db))
        for table in _tables(source, db, tables[db]):
            if table.partitionKeys:
                names = source.call("get_partition_names", db, table.tableName, -1)
                partitions[(db, table.tableName)] = len(names)
    return Planned(databases, tables, partitions)


def _tables(source: Source, db: str, names: Sequence[str]) -> list[t.Table]:
    out: list[t.Table] = []
    for start in range(0, len(names), BATCH):
        out += source.call("get_table_objects_by_name", db, list(names[start : start + BATCH]))
    return out


class Importer:
    """Copies SOURCE into the database behind TARGET (a handler, called in process)."""

    def __init__(self, source: Source, target: Handler, progress: Progress | None = None) -> None:
        self.source = source
        self.target = target
        self.progress = progress or (lambda _where, _done: None)
        self.summary = Summary()
        self._partitions_done = 0

    def run(self, planned: Planned) -> Summary:
        for db in planned.databases:
            self._database(db)
            self._functions(db)
            for table in _tables(self.source, db, planned.tables[db]):
                self._table(db, table)
        return self.summary

    def _database(self, name: str) -> None:
        database: t.Database = self.source.call("get_database", name)
        database.catalogName = None  # colstats keeps one catalog, hive
        try:
            self.target.create_database(database)
            self.summary.count("databases")
        except t.AlreadyExistsException:
            self.summary.count("databases", existed=True)

    def _functions(self, db: str) -> None:
        for name in sorted(self.source.call("get_functions", db, "*")):
            function: t.Function = self.source.call("get_function", db, name)
            function.catName = None
            try:
                self.target.create_function(function)
                self.summary.count("functions")
            except t.AlreadyExistsException:
                self.summary.count("functions", existed=True)
            except TException as e:
                self._skip(f"function {db}.{name}", e)

    def _table(self, db: str, table: t.Table) -> None:
        where = f"{db}.{table.tableName}"
        self.progress(where, self._partitions_done)
        if transactional(table.parameters):
            self.summary.skipped.append(
                f"table {where}: transactional (ACID) tables are not served by colstats"
            )
            return
        table.catName = None
        table.colStats = None
        table.id = None
        # The copy keeps the figures HMS has: nothing is counted again.
        keep = t.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"})
        try:
            self.target.create_table_with_environment_context(table, keep)
            self.summary.count("tables" if table.tableType != "VIRTUAL_VIEW" else "views")
        except t.AlreadyExistsException:
            self.summary.count("tables", existed=True)
        except TException as e:
            self._skip(f"table {where}", e)
            return
        if table.tableType == "VIRTUAL_VIEW":
            return
        columns = [c.name for c in (table.sd.cols if table.sd else []) or []]
        self._table_statistics(db, table.tableName, columns)
        if table.partitionKeys:
            self._partitions(db, table.tableName, columns)

    def _table_statistics(self, db: str, table: str, columns: list[str]) -> None:
        if not columns:
            return
        found = self.source.call(
            "get_table_statistics_req", t.TableStatsRequest(db, table, columns)
        ).tableStats
        if not found:
            return
        desc = t.ColumnStatisticsDesc(isTblLevel=True, dbName=db, tableName=table)
        try:
            self.target.update_table_column_statistics(t.ColumnStatistics(desc, found))
            self.summary.count("table statistics", len(found))
        except TException as e:
            self._skip(f"statistics of table {db}.{table}", e)

    def _partitions(self, db: str, table: str, columns: list[str]) -> None:
        """The partitions of DB.TABLE the copy lacks, and the statistics of all of them
        (those of partitions a copy interrupted earlier added may be missing).

        The source is read one batch ahead, in a thread of its own, while colstats writes
        the batch before: the copy then takes about as long as the slower of the two."""
        names = self.source.call("get_partition_names", db, table, -1)
        there = set(self.target.get_partition_names(db, table, -1))
        batches = [names[start : start + BATCH] for start in range(0, len(names), BATCH)]
        reader = ThreadPoolExecutor(1, thread_name_prefix="import-read")
        try:
            read = [reader.submit(self._read, db, table, columns, b, there) for b in batches[:1]]
            for i, batch in enumerate(batches):
                done = read.pop().result()
                if i + 1 < len(batches):
                    nxt = batches[i + 1]
                    read.append(reader.submit(self._read, db, table, columns, nxt, there))
                self._write(db, table, batch, done)
                self._partitions_done += len(batch)
                self.progress(f"{db}.{table}", self._partitions_done)
        finally:
            reader.shutdown(wait=True, cancel_futures=True)

    def _read(
        self, db: str, table: str, columns: list[str], batch: list[str], there: set[str]
    ) -> _Read:
        """From the source: the partitions of BATCH not THERE, and the statistics of all."""
        missing = [name for name in batch if name not in there]
        parts: list[t.Partition] = (
            self.source.call("get_partitions_by_names", db, table, missing) if missing else []
        )
        statistics: dict[str, list[t.ColumnStatisticsObj]] = (
            self.source.call(
                "get_partitions_statistics_req", t.PartitionsStatsRequest(db, table, columns, batch)
            ).partStats
            if columns
            else {}
        )
        return _Read(missing, parts, statistics or {})

    def _write(self, db: str, table: str, batch: list[str], read: _Read) -> None:
        """Into colstats: the partitions READ from BATCH, then their statistics."""
        self.summary.count("partitions", len(batch) - len(read.missing), existed=True)
        if read.partitions:
            for part in read.partitions:
                part.catName = None
            request = t.AddPartitionsRequest(
                dbName=db, tblName=table, parts=read.partitions, ifNotExists=False, needResult=False
            )
            try:
                self.target.add_partitions_req(request)
            except TException as e:
                first, last = read.missing[0], read.missing[-1]
                self._skip(f"partitions {first} to {last} of {db}.{table}", e)
                return
            self.summary.count("partitions", len(read.partitions))
        entries = [
            t.ColumnStatistics(
                t.ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName=table, partName=name),
                objs,
            )
            for name, objs in sorted(read.statistics.items())
            if objs
        ]
        if not entries:
            return
        try:
            self.target.set_aggr_stats_for(t.SetPartitionsStatsRequest(entries, needMerge=False))
            self.summary.count("partition statistics", sum(len(e.statsObj) for e in entries))
        except TException as e:
            self._skip(f"statistics of {len(entries)} partitions of {db}.{table}", e)

    def _skip(self, what: str, error: TException) -> None:
        reason = getattr(error, "message", None) or str(error)
        log.warning("skipped %s: %s", what, reason)
        self.summary.skipped.append(f"{what}: {reason}")
