"""RPC benchmark: colstats calls vs the raw SQL they need vs Hive Metastore 2.3.10.

Run from a checkout (see bench/README.md):

    python bench/rpc_bench.py [--parts 1000] [--cols 20] [--repeat N]
                              [--backends sqlite,postgresql,hms]

For each backend of ours (a SQLite file, a new PostgreSQL database) it starts the server in
a process of its own (as it is deployed, and as HMS runs) on a loopback port, creates a table
of COLS bigint columns with PARTS partitions through the generated Thrift client, and times
four calls: set_aggr_stats_for (a bulk upsert of
PARTS x COLS statistics), get_table_statistics_req, get_partitions_statistics_req and
get_aggr_stats_for. Beside each call it times the SQL that call needs, run directly with
SQLAlchemy Core on the same database, and the same load against a real Hive Metastore 2.3.10
(pyspark's jars, embedded Derby) started as a subprocess. It prints one table per backend.
Nothing here asserts on timings: it measures and prints.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

# Benchmark the checkout this script lives in, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore import db, store
from metastore import models as m
from metastore.config import Settings
from metastore.server import MetastoreServer
from metastore.service import Handler

PG_ADMIN_URL = os.environ.get(
    "METASTORE_BENCH_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)

WRITE = "set_aggr_stats_for"
TABLE_READ = "get_table_statistics_req"
PARTS_READ = "get_partitions_statistics_req"
AGGR_READ = "get_aggr_stats_for"
CALLS = (WRITE, TABLE_READ, PARTS_READ, AGGR_READ)

# Targets from the issue: a call within 2x of its raw SQL, and at least this many times
# faster than Hive Metastore 2.3.10.
RAW_TARGET = 2.0
HMS_TARGETS = {WRITE: 10.0, TABLE_READ: 3.0, PARTS_READ: 3.0, AGGR_READ: 5.0}

# Hive Metastore 2.3.10 as a benchmark opponent: embedded Derby in a temp dir, schema created
# on first use, direct SQL on (its default) and the aggregate stats cache off, so that
# get_aggr_stats_for computes every answer as ours does. Logs go to the temp dir at WARN.
HMS_CONF = {
    "datanucleus.schema.autoCreateAll": "true",
    "hive.metastore.schema.verification": "false",
    "hive.async.log.enabled": "false",
    "datanucleus.connectionPoolingType": "DBCP",
    "hive.metastore.try.direct.sql": "true",
    "hive.metastore.aggregate.stats.cache.enabled": "false",
}
HMS_START_TIMEOUT_S = 240.0


# ------------------------------------------------------------------------------------------
# Timing


@dataclasses.dataclass(frozen=True)
class Plan:
    """How to time one call: untimed warm-up calls, then up to COUNT timed calls, stopping
    early once BUDGET_S seconds have passed and at least MIN_COUNT calls were timed."""

    count: int
    budget_s: float
    warmup: int = 2
    min_count: int = 3


@dataclasses.dataclass(frozen=True)
class Timing:
    """Latencies of one measured call, in seconds."""

    samples: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.samples)

    def percentile(self, q: float) -> float:
        """Nearest-rank percentile: with fewer than 100 samples, p99 is the maximum."""
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]

    @property
    def p50(self) -> float:
        return statistics.median(self.samples)

    @property
    def p99(self) -> float:
        return self.percentile(99)

    @property
    def per_second(self) -> float:
        """Calls per second of one client calling back to back."""
        return len(self.samples) / sum(self.samples)


def measure(fn: Callable[[], object], plan: Plan) -> Timing:
    for _ in range(plan.warmup):
        fn()
    samples: list[float] = []
    started = time.perf_counter()
    while len(samples) < plan.count:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
        if len(samples) >= plan.min_count and time.perf_counter() - started >= plan.budget_s:
            break
    return Timing(tuple(samples))


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def report_timing(backend: str, what: str, timing: Timing) -> None:
    progress(
        f"  {backend:<10} {what:<44} p50 {timing.p50 * 1e3:9.2f} ms  "
        f"p99 {timing.p99 * 1e3:9.2f} ms  n={timing.n}"
    )


# ------------------------------------------------------------------------------------------
# The load


@dataclasses.dataclass(frozen=True)
class Workload:
    """A table of COLS bigint columns partitioned by one int key into PARTS partitions."""

    parts: int
    cols: int
    db: str = "bench"
    table: str = "w"

    @property
    def columns(self) -> list[str]:
        return [f"c{i}" for i in range(self.cols)]

    @property
    def part_names(self) -> list[str]:
        return [f"p={i}" for i in range(self.parts)]

    def _storage(self, location: str) -> t.StorageDescriptor:
        return t.StorageDescriptor(
            cols=[t.FieldSchema(c, "bigint", None) for c in self.columns],
            location=location,
            inputFormat="org.apache.hadoop.mapred.TextInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            compressed=False,
            numBuckets=-1,
            serdeInfo=t.SerDeInfo(
                "bench", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {}
            ),
            bucketCols=[],
            sortCols=[],
            parameters={},
        )

    def create(self, client: ThriftHiveMetastore.Client, warehouse: str) -> None:
        """Create the database, the table and its partitions (one add_partitions_req)."""
        db_location = f"file:{warehouse}/{self.db}.db"
        location = f"{db_location}/{self.table}"
        client.create_database(
            t.Database(name=self.db, description="", locationUri=db_location, parameters={})
        )
        client.create_table(
            t.Table(
                tableName=self.table,
                dbName=self.db,
                owner="bench",
                sd=self._storage(location),
                partitionKeys=[t.FieldSchema("p", "int", None)],
                parameters={},
                tableType="MANAGED_TABLE",
            )
        )
        parts = [
            t.Partition(
                values=[name.split("=", 1)[1]],
                dbName=self.db,
                tableName=self.table,
                sd=self._storage(f"{location}/{name}"),
                parameters={"numRows": "100"},
            )
            for name in self.part_names
        ]
        client.add_partitions_req(
            t.AddPartitionsRequest(
                dbName=self.db, tblName=self.table, parts=parts, ifNotExists=False, needResult=False
            )
        )

    @staticmethod
    def _long(column: str, i: int, c: int) -> t.ColumnStatisticsObj:
        data = t.LongColumnStatsData(lowValue=-i - c, highValue=i + c, numNulls=i, numDVs=c + 1)
        return t.ColumnStatisticsObj(column, "bigint", t.ColumnStatisticsData(longStats=data))

    def _stats(self, part_name: str | None, i: int) -> t.ColumnStatistics:
        return t.ColumnStatistics(
            statsDesc=t.ColumnStatisticsDesc(
                isTblLevel=part_name is None,
                dbName=self.db,
                tableName=self.table,
                partName=part_name,
            ),
            statsObj=[self._long(col, i, c) for c, col in enumerate(self.columns)],
        )

    def write_request(self) -> t.SetPartitionsStatsRequest:
        """Statistics of every column of every partition, written without merging."""
        entries = [self._stats(name, i) for i, name in enumerate(self.part_names)]
        return t.SetPartitionsStatsRequest(colStats=entries, needMerge=False)

    def table_stats(self) -> t.ColumnStatistics:
        return self._stats(None, 0)

    def table_request(self) -> t.TableStatsRequest:
        return t.TableStatsRequest(dbName=self.db, tblName=self.table, colNames=self.columns)

    def partitions_request(self) -> t.PartitionsStatsRequest:
        return t.PartitionsStatsRequest(
            dbName=self.db, tblName=self.table, colNames=self.columns, partNames=self.part_names
        )

    def stats_rows(self) -> list[dict[str, Any]]:
        """The PART_COL_STATS rows of write_request(), without PART_ID, in partition order."""
        analyzed = int(time.time())
        return [
            {
                "COLUMN_NAME": col,
                "COLUMN_TYPE": "bigint",
                "STATS_KIND": "long",
                "ENGINE": "hive",
                "LONG_LOW_VALUE": -i - c,
                "LONG_HIGH_VALUE": i + c,
                "NUM_NULLS": i,
                "NUM_DISTINCTS": c + 1,
                "LAST_ANALYZED": analyzed,
            }
            for i in range(self.parts)
            for c, col in enumerate(self.columns)
        ]


def rpc_calls(client: ThriftHiveMetastore.Client, w: Workload) -> dict[str, Callable[[], Any]]:
    """The four measured calls, with their requests built once, outside the timings."""
    write, table, parts = w.write_request(), w.table_request(), w.partitions_request()
    return {
        WRITE: lambda: client.set_aggr_stats_for(write),
        TABLE_READ: lambda: client.get_table_statistics_req(table),
        PARTS_READ: lambda: client.get_partitions_statistics_req(parts),
        AGGR_READ: lambda: client.get_aggr_stats_for(parts),
    }


def check_answer(call: str, answer: Any, w: Workload) -> None:
    """Fail loudly if a call did not do the whole job, so that no timing is of an error."""
    if call == WRITE:
        ok = answer is True or answer is False  # HMS's merge path answers false on success
    elif call == TABLE_READ:
        ok = sorted(o.colName for o in answer.tableStats) == sorted(w.columns)
    elif call == PARTS_READ:
        ok = len(answer.partStats) == w.parts and all(
            len(objs) == w.cols for objs in answer.partStats.values()
        )
    else:
        ok = answer.partsFound == w.parts and len(answer.colStats) == w.cols
    if not ok:
        raise RuntimeError(f"{call} returned an incomplete answer: {str(answer)[:300]}")


@contextlib.contextmanager
def connect(port: int) -> Iterator[ThriftHiveMetastore.Client]:
    """The generated client over an unframed socket and the accelerated binary protocol."""
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(3_600_000)  # HMS's bulk write takes minutes on a slow machine
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    try:
        yield ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
    finally:
        transport.close()


@dataclasses.dataclass(frozen=True)
class Plans:
    """Timing plans of the four calls, for one server."""

    by_call: dict[str, Plan]

    @classmethod
    def ours(cls, repeat: int, budget_s: float) -> Plans:
        read = Plan(count=repeat, budget_s=budget_s, warmup=3)
        return cls(
            {WRITE: Plan(count=min(repeat, 50), budget_s=budget_s, warmup=1)}
            | dict.fromkeys((TABLE_READ, PARTS_READ, AGGR_READ), read)
        )

    @classmethod
    def hms(cls, repeat: int, budget_s: float) -> Plans:
        """Fewer repetitions for HMS's slow calls: its bulk write takes many seconds."""
        slow = Plan(count=min(repeat, 12), budget_s=2 * budget_s, warmup=2)
        return cls(
            {
                WRITE: Plan(count=min(repeat, 2), budget_s=4 * budget_s, warmup=0, min_count=1),
                TABLE_READ: Plan(count=repeat, budget_s=budget_s, warmup=5),
                PARTS_READ: slow,
                AGGR_READ: slow,
            }
        )


def run_load(
    backend: str,
    port: int,
    w: Workload,
    warehouse: str,
    plans: Plans,
    settle: Callable[[], None] = lambda: None,
) -> dict[str, Timing]:
    """Create the table through the server on PORT, then time the four calls, calling SETTLE
    before each measurement. Returns the client-side timings."""
    timings: dict[str, Timing] = {}
    with connect(port) as client:
        started = time.perf_counter()
        w.create(client, warehouse)
        progress(f"  {backend:<10} created {w.parts} partitions in {_since(started)}")
        calls = rpc_calls(client, w)
        started = time.perf_counter()
        check_answer(WRITE, calls[WRITE](), w)
        progress(f"  {backend:<10} first {WRITE} (inserts) took {_since(started)}")
        for call in CALLS:
            if call == TABLE_READ:
                client.update_table_column_statistics(w.table_stats())
            if call != WRITE:
                check_answer(call, calls[call](), w)
            settle()
            timings[call] = measure(calls[call], plans.by_call[call])
            report_timing(backend, call, timings[call])
    return timings


def _since(started: float) -> str:
    return f"{time.perf_counter() - started:.1f} s"


# ------------------------------------------------------------------------------------------
# Raw SQL: what each call needs from the database, run with SQLAlchemy Core


UPSERTED = (
    "PART_ID",
    "COLUMN_NAME",
    "COLUMN_TYPE",
    "STATS_KIND",
    "ENGINE",
    "LONG_LOW_VALUE",
    "LONG_HIGH_VALUE",
    "NUM_NULLS",
    "NUM_DISTINCTS",
    "LAST_ANALYZED",
)
UPDATED = (
    "STATS_KIND",
    "LONG_LOW_VALUE",
    "LONG_HIGH_VALUE",
    "NUM_NULLS",
    "NUM_DISTINCTS",
    "LAST_ANALYZED",
)
CONFLICT_KEY = ("PART_ID", "COLUMN_NAME", "ENGINE")


class RawSql:
    """The statements behind each call, on the server's database.

    The reads are the SELECTs the server runs (store.table_stats_by_name and
    store.partition_stats_by_name, the latter with the numRows join for get_aggr_stats_for),
    fetched into Python tuples. The write looks the partition ids up by name and upserts the
    PARTS x COLS rows (INSERT ... ON CONFLICT DO UPDATE) in one transaction, in several ways:
    executemany of a one-row statement; multi-row VALUES statements (as many rows as
    SQLite's 32,766 bound parameters allow); on PostgreSQL also one INSERT ... SELECT from
    unnest() of one array per column. Their parameters are built beforehand.
    """

    def __init__(self, engine: sa.Engine, w: Workload) -> None:
        self.engine = engine
        self.w = w
        self._pcs = m.PartitionColumnStats.__table__
        self._tcs = m.TableColumnStats.__table__
        self._parts = m.Partition.__table__
        self._tables = m.Table.__table__
        self._dbs = m.Database.__table__
        ids = self._part_ids()
        rows = [
            {**row, "PART_ID": ids[w.part_names[i // w.cols]]}
            for i, row in enumerate(w.stats_rows())
        ]
        self._rows = rows
        self._upsert = self._upsert_statement()
        self._multirow = self._multirow_batches(rows)
        self._unnest = self._unnest_statement(rows)

    def _stats_columns(self, table: sa.Table) -> list[sa.Column[Any]]:
        return [table.c[name] for name in store.STATS_COLUMNS]

    def _upsert_statement(self) -> Any:
        insert = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}[
            self.engine.dialect.name
        ]
        stmt = insert(self._pcs)
        return stmt.on_conflict_do_update(
            index_elements=list(CONFLICT_KEY), set_={c: stmt.excluded[c] for c in UPDATED}
        )

    def _multirow_batches(self, rows: list[dict[str, Any]]) -> list[tuple[str, tuple[Any, ...]]]:
        """(SQL, flat parameters) of each multi-row upsert, in the driver's paramstyle."""
        quote = self.engine.dialect.identifier_preparer.quote
        marker = "?" if self.engine.dialect.paramstyle == "qmark" else "%s"
        one_row = "(" + ", ".join([marker] * len(UPSERTED)) + ")"
        per_statement = 32_000 // len(UPSERTED)
        batches = []
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            sql = (
                f"INSERT INTO {quote(self._pcs.name)} ({', '.join(map(quote, UPSERTED))}) "
                f"VALUES {', '.join([one_row] * len(chunk))} {self._upsert_tail()}"
            )
            batches.append((sql, tuple(row[c] for row in chunk for c in UPSERTED)))
        return batches

    def _upsert_tail(self) -> str:
        quote = self.engine.dialect.identifier_preparer.quote
        return f"ON CONFLICT ({', '.join(map(quote, CONFLICT_KEY))}) DO UPDATE SET " + ", ".join(
            f"{quote(c)} = excluded.{quote(c)}" for c in UPDATED
        )

    def _unnest_statement(self, rows: list[dict[str, Any]]) -> tuple[str, tuple[Any, ...]]:
        """(SQL, one list per column) of INSERT ... SELECT * FROM unnest(...) (PostgreSQL)."""
        quote = self.engine.dialect.identifier_preparer.quote
        arrays = ", ".join(
            f"%s::{'text' if isinstance(rows[0][c], str) else 'bigint'}[]" for c in UPSERTED
        )
        sql = (
            f"INSERT INTO {quote(self._pcs.name)} ({', '.join(map(quote, UPSERTED))}) "
            f"SELECT * FROM unnest({arrays}) {self._upsert_tail()}"
        )
        return sql, tuple([row[c] for row in rows] for c in UPSERTED)

    def _table_filter(self) -> list[Any]:
        return [
            self._dbs.c.CTLG_NAME == "hive",
            self._dbs.c.NAME == self.w.db,
            self._tables.c.TBL_NAME == self.w.table,
        ]

    def _part_id_query(self) -> sa.Select[Any]:
        return (
            sa.select(self._parts.c.PART_NAME, self._parts.c.PART_ID)
            .select_from(
                self._parts.join(self._tables, self._tables.c.TBL_ID == self._parts.c.TBL_ID).join(
                    self._dbs, self._dbs.c.DB_ID == self._tables.c.DB_ID
                )
            )
            .where(*self._table_filter(), self._parts.c.PART_NAME.in_(self.w.part_names))
        )

    def _part_ids(self) -> dict[str, int]:
        with self.engine.connect() as conn:
            return {name: part_id for name, part_id in conn.execute(self._part_id_query())}

    def write_executemany(self) -> int:
        with self.engine.begin() as conn:
            found = len(conn.execute(self._part_id_query()).all())
            conn.execute(self._upsert, self._rows)
        return found

    def write_multirow(self) -> int:
        with self.engine.begin() as conn:
            found = len(conn.execute(self._part_id_query()).all())
            for sql, params in self._multirow:
                conn.exec_driver_sql(sql, params)
        return found

    def write_unnest(self) -> int:
        with self.engine.begin() as conn:
            found = len(conn.execute(self._part_id_query()).all())
            conn.exec_driver_sql(*self._unnest)
        return found

    def write_forms(self) -> dict[str, Callable[[], int]]:
        forms = {
            "executemany": self.write_executemany,
            "multi-row VALUES": self.write_multirow,
        }
        if self.engine.dialect.name == "postgresql":
            forms["unnest arrays"] = self.write_unnest
        return forms

    def table_stats(self) -> list[tuple[Any, ...]]:
        c = self._tcs
        query = (
            sa.select(*self._stats_columns(c))
            .select_from(
                c.join(self._tables, self._tables.c.TBL_ID == c.c.TBL_ID).join(
                    self._dbs, self._dbs.c.DB_ID == self._tables.c.DB_ID
                )
            )
            .where(*self._table_filter(), c.c.ENGINE == "hive", c.c.COLUMN_NAME.in_(self.w.columns))
            .order_by(c.c.COLUMN_NAME)
        )
        return self._fetch(query)

    def _partition_query(self, with_row_counts: bool) -> sa.Select[Any]:
        c, p = self._pcs, self._parts
        joined = (
            c.join(p, p.c.PART_ID == c.c.PART_ID)
            .join(self._tables, self._tables.c.TBL_ID == p.c.TBL_ID)
            .join(self._dbs, self._dbs.c.DB_ID == self._tables.c.DB_ID)
        )
        columns: list[Any] = [p.c.PART_NAME, *self._stats_columns(c)]
        if with_row_counts:
            params = m.PartitionParam.__table__
            joined = joined.outerjoin(
                params,
                (params.c.PART_ID == p.c.PART_ID) & (params.c.PARAM_KEY == "numRows"),
            )
            columns.append(params.c.PARAM_VALUE.label("NUM_ROWS"))
        return (
            sa.select(*columns)
            .select_from(joined)
            .where(
                *self._table_filter(),
                p.c.PART_NAME.in_(sorted(self.w.part_names)),
                c.c.ENGINE == "hive",
                c.c.COLUMN_NAME.in_(self.w.columns),
            )
            .order_by(p.c.PART_NAME, c.c.COLUMN_NAME)
        )

    def partition_stats(self) -> list[tuple[Any, ...]]:
        return self._fetch(self._partition_query(with_row_counts=False))

    def aggr_rows(self) -> list[tuple[Any, ...]]:
        return self._fetch(self._partition_query(with_row_counts=True))

    def _fetch(self, query: sa.Select[Any]) -> list[tuple[Any, ...]]:
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]


@dataclasses.dataclass(frozen=True)
class RawTimings:
    """Raw SQL timings per call; the write's is the faster of its two forms."""

    by_call: dict[str, Timing]
    write_forms: dict[str, Timing]


def _checked(fn: Callable[[], Any], expected: int, what: str) -> Callable[[], Any]:
    answer = fn()
    got = answer if isinstance(answer, int) else len(answer)
    if got != expected:
        raise RuntimeError(f"raw SQL of {what}: {got} rows, expected {expected}")
    return fn


def run_raw(backend: str, engine: sa.Engine, w: Workload, plans: Plans) -> RawTimings:
    raw = RawSql(engine, w)
    write_forms: dict[str, Timing] = {}
    for form, fn in raw.write_forms().items():
        fn = _checked(fn, w.parts, WRITE)
        settle(engine)
        write_forms[form] = measure(fn, plans.by_call[WRITE])
        report_timing(backend, f"raw SQL of {WRITE} ({form})", write_forms[form])
    by_call = {WRITE: min(write_forms.values(), key=lambda timing: timing.p50)}
    reads = {
        TABLE_READ: (raw.table_stats, w.cols),
        PARTS_READ: (raw.partition_stats, w.parts * w.cols),
        AGGR_READ: (raw.aggr_rows, w.parts * w.cols),
    }
    for call, (fn, rows) in reads.items():
        fn = _checked(fn, rows, call)
        settle(engine)
        by_call[call] = measure(fn, plans.by_call[call])
        report_timing(backend, f"raw SQL of {call}", by_call[call])
    return RawTimings(by_call, write_forms)


# ------------------------------------------------------------------------------------------
# Our server, on SQLite and on PostgreSQL


@dataclasses.dataclass(frozen=True)
class BackendResult:
    name: str
    description: str
    calls: dict[str, Timing]
    handler: dict[str, Timing]
    raw: RawTimings


class HandlerClock:
    """Times the handler methods of the measured calls: the server's own work (validation,
    queries, building the answer) without the socket and the Thrift encoding and decoding."""

    def __init__(self, handler: Handler) -> None:
        self._samples: dict[str, list[float]] = {call: [] for call in CALLS}
        for call in CALLS:
            # The generated Processor calls self._handler.<call>(...): an instance attribute
            # shadows the method.
            setattr(handler, call, self._timed(getattr(handler, call), self._samples[call]))

    @staticmethod
    def _timed(method: Callable[..., Any], samples: list[float]) -> Callable[..., Any]:
        def timed(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args)
            finally:
                samples.append(time.perf_counter() - started)

        return timed

    def dump(self, path: Path) -> None:
        path.write_text(json.dumps(self._samples))


def last_handler_timings(
    samples: dict[str, list[float]], calls: dict[str, Timing]
) -> dict[str, Timing]:
    """The handler timings of the timed client calls: the last N of each call (each call is
    measured once, after its warm-up and check calls)."""
    return {call: Timing(tuple(samples[call][-timing.n :])) for call, timing in calls.items()}


@contextlib.contextmanager
def our_server(url: str, timings: Path) -> Iterator[int]:
    """Our server with default settings (no bit vectors) in a process of its own, as it is
    deployed and as HMS runs, on a free loopback port; yields the port. When it stops it
    writes its handler timings to TIMINGS."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve", url, "--port", str(port), "--timings", str(timings)],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, process, None)
        yield port
    finally:
        stop_process(process)


def serve(url: str, port: int, timings: Path) -> int:
    """The --serve mode: our server in this process, its handler clocked, until SIGTERM."""
    engine = db.create_engine(url, pool_size=4)
    handler = Handler(db.Transactions(engine), Settings())
    clock = HandlerClock(handler)
    server = MetastoreServer(handler, "127.0.0.1", port, workers=8)
    signal.signal(signal.SIGTERM, lambda _signum, _frame: server.stop())
    try:
        server.serve_forever()
    finally:
        clock.dump(timings)
        engine.dispose()
    return 0


@contextlib.contextmanager
def sqlite_database() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="colstats-bench-") as tmp:
        yield f"sqlite:///{tmp}/metastore.db"


@contextlib.contextmanager
def postgres_database(admin_url: str) -> Iterator[str]:
    """A new database on the PostgreSQL server of ADMIN_URL, dropped afterwards."""
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"colstats_bench_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


def postgres_problem(admin_url: str) -> str | None:
    """Why PostgreSQL at ADMIN_URL cannot be used, or None."""
    engine = sa.create_engine(admin_url)
    try:
        with engine.connect():
            return None
    except sa.exc.OperationalError as e:
        return f"unreachable at {admin_url}: {e.orig}"
    finally:
        engine.dispose()


def database_version(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            return "SQLite " + conn.exec_driver_sql("select sqlite_version()").scalar_one()
        version = conn.exec_driver_sql("show server_version").scalar_one()
        return f"PostgreSQL {version.split()[0]}"


def settle(engine: sa.Engine) -> None:
    """Start each measurement from the same state: on PostgreSQL, vacuum away the dead row
    versions the previous upserts left (20,000 per write) and refresh the planner's
    statistics; on SQLite, checkpoint the WAL into the database file."""
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for table in ("PART_COL_STATS", "TAB_COL_STATS", "PARTITION_PARAMS"):
                conn.exec_driver_sql(f'VACUUM ANALYZE "{table}"')
    else:
        # On the DBAPI connection: SQLAlchemy would wrap the pragma in a transaction.
        connection = engine.raw_connection()
        try:
            connection.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            connection.close()


def raw_engine(url: str) -> sa.Engine:
    """An engine for the raw SQL: SQLite set up as the server's (WAL, foreign keys), and
    PostgreSQL without the server's connection pre-ping, so that only the SQL is timed."""
    if url.startswith("sqlite"):
        return db.create_engine(url, pool_size=2)
    return sa.create_engine(url, pool_size=2)


def bench_ours(backend: str, url: str, w: Workload, plans: Plans, warehouse: str) -> BackendResult:
    progress(f"{backend}: migrating {sa.make_url(url).render_as_string()}")
    db.upgrade(url)
    engine = raw_engine(url)
    try:
        with tempfile.TemporaryDirectory(prefix="colstats-bench-") as tmp:
            timings = Path(tmp) / "handler.json"
            with our_server(url, timings) as port:
                calls = run_load(backend, port, w, warehouse, plans, lambda: settle(engine))
            handler = last_handler_timings(json.loads(timings.read_text()), calls)
        raw = run_raw(backend, engine, w, plans)
        description = database_version(engine)
    finally:
        engine.dispose()
    return BackendResult(backend, description, calls, handler, raw)


# ------------------------------------------------------------------------------------------
# Hive Metastore 2.3.10


def pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hms_command(jars: Path, home: Path, port: int) -> list[str]:
    conf = {
        **HMS_CONF,
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true"
        ),
        "hive.metastore.warehouse.dir": str(home / "warehouse"),
    }
    command = [
        "java",
        f"-Dhive.log.dir={home / 'logs'}",
        "-Dhive.log.level=WARN",
        f"-Dderby.stream.error.file={home / 'derby.log'}",
        f"-Djava.io.tmpdir={home / 'tmp'}",
        "-cp",
        f"{jars}/*",
        "org.apache.hadoop.hive.metastore.HiveMetaStore",
        "-p",
        str(port),
    ]
    for key, value in conf.items():
        command += ["-hiveconf", f"{key}={value}"]
    return command


def _log_tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path | None) -> None:
    """Wait until PROCESS (HMS, or our server when LOG is None) listens on PORT."""
    what = "HMS" if log is not None else "our server"
    deadline = time.monotonic() + HMS_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = _log_tail(log) if log is not None else "(its output is above)"
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{tail}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {port} in {HMS_START_TIMEOUT_S:.0f} s")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate PROCESS (its own process group), then kill it if it lingers."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


@contextlib.contextmanager
def hive_metastore(jars: Path) -> Iterator[tuple[int, Path]]:
    """HMS 2.3.10 on a free loopback port with Derby in a temp dir; yields (port, home).

    It runs in its own session, so that Ctrl-C reaches only this script, whose finally
    blocks then stop it and remove the temp dir.
    """
    with tempfile.TemporaryDirectory(prefix="colstats-bench-hms-") as tmp:
        home = Path(tmp)
        (home / "tmp").mkdir()
        port = free_port()
        log = home / "hms.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                hms_command(jars, home, port),
                cwd=home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            started = time.perf_counter()
            wait_for_port(port, process, log)
            progress(f"hms: listening on {port} after {_since(started)}")
            yield port, home
        finally:
            stop_process(process)


def bench_hms(w: Workload, plans: Plans) -> dict[str, Timing]:
    jars = pyspark_jars()
    if not (jars / "hive-metastore-2.3.10.jar").exists():
        raise RuntimeError(f"no hive-metastore-2.3.10.jar in {jars}")
    progress(f"hms: starting Hive Metastore 2.3.10 from {jars}")
    with hive_metastore(jars) as (port, home):
        return run_load("hms", port, w, str(home / "warehouse"), plans)


# ------------------------------------------------------------------------------------------
# Output


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.2f}"


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def backend_table(result: BackendResult, hms: dict[str, Timing] | None) -> list[str]:
    header = (
        "call",
        "p50 ms",
        "p99 ms",
        "calls/s",
        "n",
        "handler p50",
        "raw p50 ms",
        "ours/raw",
        "HMS p50 ms",
        "HMS/ours",
        f"<= {RAW_TARGET:g}x raw",
        "vs HMS (target)",
    )
    rows = [header]
    for call in CALLS:
        ours, raw = result.calls[call], result.raw.by_call[call]
        handler = result.handler.get(call)
        over_raw = ours.p50 / raw.p50
        hms_timing = hms.get(call) if hms else None
        speedup = hms_timing.p50 / ours.p50 if hms_timing else None
        target = HMS_TARGETS[call]
        rows.append(
            (
                call,
                _ms(ours.p50),
                _ms(ours.p99),
                f"{ours.per_second:.1f}",
                str(ours.n),
                _ms(handler.p50 if handler else None),
                _ms(raw.p50),
                _ratio(over_raw),
                _ms(hms_timing.p50 if hms_timing else None),
                _ratio(speedup),
                _verdict(over_raw <= RAW_TARGET),
                "-" if speedup is None else f"{_verdict(speedup >= target)} (>= {target:g}x)",
            )
        )
    return format_table(rows)


def write_forms_line(result: BackendResult) -> str:
    forms = ", ".join(
        f"{form} {_ms(timing.p50)} ms" for form, timing in result.raw.write_forms.items()
    )
    return f"raw {WRITE} p50: {forms} (the fastest is in the table)"


def hms_table(hms: dict[str, Timing]) -> list[str]:
    rows = [("call", "p50 ms", "p99 ms", "calls/s", "n")]
    for call in CALLS:
        timing = hms[call]
        rows.append(
            (call, _ms(timing.p50), _ms(timing.p99), f"{timing.per_second:.2f}", str(timing.n))
        )
    return format_table(rows)


def format_table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        cells = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * width for width in widths))
    return lines


def print_header(args: argparse.Namespace, w: Workload, with_hms: bool) -> None:
    rows = w.parts * w.cols
    print(
        f"colstats RPC benchmark: {w.parts} partitions x {w.cols} bigint columns "
        f"({rows:,} statistics rows); Python {platform.python_version()}, {os.cpu_count()} CPUs; "
        f"at most {args.repeat} timed calls or {args.budget:g} s per measurement"
    )
    notes = [
        "Our server runs in a process of its own with Settings() defaults (fetch_bitvector "
        "off); the "
        "generated client calls it over TBufferedTransport + TBinaryProtocolAccelerated on "
        "loopback.",
        "p50/p99/calls/s are per call as the client sees them (request encoding and answer "
        "decoding included); p99 is nearest-rank, i.e. the maximum when n < 100.",
        "handler p50 = time inside the server's handler method for the same calls (no "
        "socket, no Thrift encoding or decoding).",
        "raw = the call's SQL with SQLAlchemy Core, rows fetched as tuples; for "
        f"{WRITE}: partition-id lookup + INSERT ... ON CONFLICT DO UPDATE of {rows:,} rows "
        "in one transaction, the fastest of the forms listed under each table. Ratios "
        "compare p50s.",
        "Before each measurement PostgreSQL tables are vacuumed and analyzed (each upsert "
        "leaves dead rows) and SQLite's WAL is checkpointed.",
    ]
    if with_hms:
        conf = ", ".join(f"{k}={v}" for k, v in HMS_CONF.items())
        notes += [
            "HMS = Hive Metastore 2.3.10 from pyspark's jars with embedded Derby in a temp "
            f"dir, log level WARN; {conf}.",
            "HMS's aggregate stats cache is DISABLED, so its get_aggr_stats_for computes "
            "every answer, as ours does.",
        ]
    for note in notes:
        print(f"  - {note}")


def print_report(
    args: argparse.Namespace,
    w: Workload,
    results: list[BackendResult],
    hms: dict[str, Timing] | None,
    skipped: dict[str, str],
    load_at_start: float,
) -> None:
    print()
    print_header(args, w, hms is not None)
    print(f"  - load average (1 min) at start {load_at_start:.2f}, at end {load()[0]:.2f}")
    for result in results:
        print()
        print(f"== {result.name} ({result.description}) ==")
        for line in backend_table(result, hms):
            print(line)
        print(write_forms_line(result))
    if hms is not None:
        print()
        print("== Hive Metastore 2.3.10 (embedded Derby) ==")
        for line in hms_table(hms):
            print(line)
    for name, reason in skipped.items():
        print(f"\n{name}: skipped ({reason})")


# ------------------------------------------------------------------------------------------
# Main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=1000, help="partitions (default 1000)")
    parser.add_argument("--cols", type=int, default=20, help="bigint columns (default 20)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=500,
        help="at most this many timed calls per measurement (default 500); slow calls stop "
        "earlier, at the time budget, and HMS's bulk write is timed at most twice",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=10.0,
        help="seconds after which a measurement stops repeating (default 10; HMS's slow reads "
        "get twice that)",
    )
    parser.add_argument(
        "--backends",
        default="sqlite,postgresql,hms",
        help="comma-separated: sqlite, postgresql, hms (default all three)",
    )
    parser.add_argument(
        "--pg-url",
        default=PG_ADMIN_URL,
        help="SQLAlchemy URL of a PostgreSQL database to connect to for creating the "
        "benchmark's own database (default $METASTORE_BENCH_PG or postgres@127.0.0.1:5432)",
    )
    # Internal: the process of our server that the benchmark starts (see our_server).
    parser.add_argument("--serve", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--timings", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(args.backends) - {"sqlite", "postgresql", "hms"}
    if unknown:
        parser.error(f"unknown backend(s): {', '.join(sorted(unknown))}")
    if args.parts < 1 or args.cols < 1 or args.repeat < 1:
        parser.error("--parts, --cols and --repeat must be positive")
    return args


def load() -> tuple[float, float, float]:
    """The machine's load averages: other work on it skews the timings."""
    return os.getloadavg()


def _exit_on_sigterm(signum: int, _frame: FrameType | None) -> None:
    """Turn SIGTERM into SystemExit so that the finally blocks stop HMS and clean up."""
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.serve:
        return serve(args.serve, args.port, args.timings)
    load_at_start = load()[0]
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    w = Workload(parts=args.parts, cols=args.cols)
    ours = Plans.ours(args.repeat, args.budget)
    started = time.perf_counter()
    results: list[BackendResult] = []
    skipped: dict[str, str] = {}
    hms: dict[str, Timing] | None = None
    with tempfile.TemporaryDirectory(prefix="colstats-bench-wh-") as warehouse:
        if "sqlite" in args.backends:
            with sqlite_database() as url:
                results.append(bench_ours("sqlite", url, w, ours, warehouse))
        if "postgresql" in args.backends:
            problem = postgres_problem(args.pg_url)
            if problem:
                skipped["postgresql"] = problem
            else:
                with postgres_database(args.pg_url) as url:
                    results.append(bench_ours("postgresql", url, w, ours, warehouse))
    if "hms" in args.backends:
        if shutil.which("java") is None:
            skipped["hms"] = "no java on PATH"
        else:
            hms = bench_hms(w, Plans.hms(args.repeat, args.budget))
    print_report(args, w, results, hms, skipped, load_at_start)
    print(f"\ntotal time {_since(started)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
