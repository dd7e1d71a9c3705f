"""The floors of bench/planner_bench.py measured on the database driver, with no server and no
statement of the metastore's: the least a durable write and a read statement cost there."""

from __future__ import annotations

import argparse
import json
from typing import Any

from raw_sql import settle
from rpc_bench import raw_engine
from timing import Plan, measure

COMMIT = "durable commit of COLS rows, no server"
READ = "one read statement, no server"
ROWS = "durable upsert of the write's COLS statistics rows alone, one statement, no server"

_ROWS_UPSERT = """INSERT INTO bench_rows_floor AS s ("PART_ID", "CAT_NAME", "DB_NAME",
  "TABLE_NAME", "PARTITION_NAME", "COLUMN_NAME", "COLUMN_TYPE", "ENGINE", "STATS_KIND",
  "LONG_LOW_VALUE", "LONG_HIGH_VALUE", "NUM_DISTINCTS", "NUM_NULLS", "LAST_ANALYZED")
SELECT %s, 'hive', 'planner', 'sales', %s, r."COLUMN_NAME", r."COLUMN_TYPE", r."ENGINE",
  r."STATS_KIND", r."LONG_LOW_VALUE", r."LONG_HIGH_VALUE", r."NUM_DISTINCTS", r."NUM_NULLS",
  r."LAST_ANALYZED"
FROM jsonb_populate_recordset(NULL::bench_rows_floor, CAST(%s AS jsonb)) r
ORDER BY r."COLUMN_NAME"
ON CONFLICT ("PART_ID", "COLUMN_NAME", "ENGINE") DO UPDATE SET
  "STATS_KIND" = excluded."STATS_KIND", "LONG_LOW_VALUE" = excluded."LONG_LOW_VALUE",
  "LONG_HIGH_VALUE" = excluded."LONG_HIGH_VALUE", "NUM_DISTINCTS" = excluded."NUM_DISTINCTS",
  "NUM_NULLS" = excluded."NUM_NULLS", "LAST_ANALYZED" = excluded."LAST_ANALYZED"
"""
"""The rows of a per-call statistics write of one partition (bench/planner_bench.py's) upserted
into a table of PART_COL_STATS's shape and keys, as the write's statement upserts them (its
rows as JSON, in one order), with none of the rest of the write: what PostgreSQL spends on
the rows themselves."""


class DriverFloor:
    """The floors' statements on the driver of a connection to the database of URL, with a
    table of their own (COLS columns' rows per write): `commit`, a transaction that upserts
    COLS rows and commits, the least a durable statistics write costs there (SQLite: WAL,
    synced at the commit as the server's; PostgreSQL: its WAL flushed at the commit);
    `read`, a read of one of those rows by its key outside a transaction, the least a
    statement costs (an exact answer from memory reads its tables' versions, one
    statement); on PostgreSQL, `rows`, ROWS: a statistics write's rows upserted alone into
    a table of PART_COL_STATS's shape (bench_rows_floor)."""

    def __init__(self, url: str, cols: int) -> None:
        self.cols = cols
        self._engine = raw_engine(url)
        self.postgres = self._engine.dialect.name == "postgresql"
        with self._engine.begin() as conn:
            conn.exec_driver_sql(
                "CREATE TABLE IF NOT EXISTS bench_commit_floor (owner BIGINT, "
                "col VARCHAR(128), value BIGINT, PRIMARY KEY (owner, col))"
            )
        self._pooled = self._engine.raw_connection()
        self._driver: Any = self._pooled.driver_connection
        self._counter = iter(range(10**9))
        self._upsert = (
            "INSERT INTO bench_commit_floor SELECT * FROM unnest(%s::bigint[], %s::text[], "
            "%s::bigint[]) ON CONFLICT (owner, col) DO UPDATE SET value = excluded.value"
            if self.postgres
            else "INSERT INTO bench_commit_floor VALUES (?, ?, ?) "
            "ON CONFLICT (owner, col) DO UPDATE SET value = excluded.value"
        )
        self._select = "SELECT value FROM bench_commit_floor WHERE owner = {0} AND col = {0}"
        self._select = self._select.format("%s" if self.postgres else "?")
        if self.postgres:
            with self._engine.begin() as conn:
                conn.exec_driver_sql(
                    'CREATE TABLE IF NOT EXISTS bench_rows_floor (LIKE "PART_COL_STATS" '
                    "INCLUDING ALL)"
                )

    def commit(self) -> None:
        n = next(self._counter)
        rows = [(n % 200, f"c{c}", n) for c in range(self.cols)]
        cursor = self._driver.cursor()
        if self.postgres:
            self._driver.autocommit = False
            cursor.execute(self._upsert, [list(column) for column in zip(*rows, strict=True)])
            self._driver.commit()
        else:
            cursor.execute("BEGIN IMMEDIATE")
            cursor.executemany(self._upsert, rows)
            cursor.execute("COMMIT")
        cursor.close()

    def rows(self) -> None:
        """ROWS: the statistics rows of a write of one partition's COLS columns upserted
        alone, in one statement that is its own transaction (PostgreSQL only)."""
        n = next(self._counter)
        stats = [
            {
                "COLUMN_NAME": f"c{c}",
                "COLUMN_TYPE": "bigint",
                "ENGINE": "hive",
                "STATS_KIND": "long",
                "LONG_LOW_VALUE": -n - c,
                "LONG_HIGH_VALUE": n + c,
                "NUM_DISTINCTS": 100 + c,
                "NUM_NULLS": n % 7,
                "LAST_ANALYZED": 1_700_000_000 + n,
            }
            for c in range(self.cols)
        ]
        self._driver.autocommit = True
        cursor = self._driver.cursor()
        rows = json.dumps(stats, separators=(",", ":"))
        cursor.execute(_ROWS_UPSERT, (n % 200, f"p{n % 200}", rows))
        cursor.close()

    def read(self) -> None:
        n = next(self._counter)
        if self.postgres:  # outside a transaction, as the server reads versions
            self._driver.autocommit = True
        cursor = self._driver.cursor()
        cursor.execute(self._select, (n % 200, f"c{n % self.cols}"))
        cursor.fetchall()
        cursor.close()

    def close(self) -> None:
        self._pooled.close()
        self._engine.dispose()


def driver_floors(url: str, args: argparse.Namespace, plan: Plan) -> dict[str, float]:
    """p50 in seconds of DriverFloor's COMMIT and READ on the database of URL."""
    floor = DriverFloor(url, args.cols)
    try:
        return {COMMIT: measure(floor.commit, plan).p50, READ: measure(floor.read, plan).p50}
    finally:
        floor.close()


def settled(url: str) -> None:
    """Let the database of URL settle before writes are timed: on PostgreSQL, vacuum and
    analyze what the loading and the calls before left (autovacuum would do it while the
    writes are timed, on the same two cores); on SQLite, checkpoint the WAL."""
    engine = raw_engine(url)
    try:
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
        else:
            settle(engine)
    finally:
        engine.dispose()
