"""The SQL each benchmarked call needs, run directly with SQLAlchemy Core on the same database:
the floor a call's own work is compared with."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Benchmark the checkout this script lives in, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import sqlalchemy as sa
from rpc_workload import AGGR_READ, PARTS_READ, TABLE_READ, WRITE, Plans, Workload
from sqlalchemy.dialects import postgresql, sqlite
from timing import Timing, measure, report_timing

from metastore.stats.rows import STATS_COLUMNS
from metastore.store import models as m

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

    The reads are the SELECTs the server runs (metastore.stats.queries.table_stats_by_name and
    partition_stats_by_name, the latter with the numRows join for get_aggr_stats_for),
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
        return [table.c[name] for name in STATS_COLUMNS]

    def _upsert_statement(self) -> Any:
        stmt: postgresql.Insert | sqlite.Insert = (
            postgresql.insert(self._pcs)
            if self.engine.dialect.name == "postgresql"
            else sqlite.insert(self._pcs)
        )
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
    reads: dict[str, tuple[Callable[[], Any], int]] = {
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


def database_version(engine: sa.Engine) -> str:
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            sqlite_version: str = conn.exec_driver_sql("select sqlite_version()").scalar_one()
            return f"SQLite {sqlite_version}"
        version: str = conn.exec_driver_sql("show server_version").scalar_one()
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
            driver = connection.driver_connection
            assert driver is not None
            driver.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            connection.close()
