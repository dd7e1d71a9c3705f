"""The floors of bench/planner_bench.py measured on the database driver, with no server and no
statement of the metastore's: the least a durable write and a read statement cost there."""

from __future__ import annotations

import argparse
from typing import Any

from raw_sql import settle
from rpc_bench import raw_engine
from timing import Plan, measure

COMMIT = "durable commit of COLS rows, no server"
READ = "one read statement, no server"


def driver_floors(url: str, args: argparse.Namespace, plan: Plan) -> dict[str, float]:
    """p50 in seconds, on the driver (no server, no statement of the metastore's), of:
    COMMIT, a transaction that upserts COLS rows of a table of its own in the database of
    URL and commits, the least a durable statistics write costs there (SQLite: WAL, synced
    at the commit as the server's; PostgreSQL: its WAL flushed at the commit); READ, a read
    of one of those rows by its key outside a transaction, the least a statement costs (an
    exact answer from memory reads its tables' versions, one statement)."""
    engine = raw_engine(url)
    postgres = engine.dialect.name == "postgresql"
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE bench_commit_floor (owner BIGINT, col VARCHAR(128), value BIGINT, "
            "PRIMARY KEY (owner, col))"
        )
    pooled = engine.raw_connection()
    driver: Any = pooled.driver_connection
    upsert = (
        "INSERT INTO bench_commit_floor SELECT * FROM unnest(%s::bigint[], %s::text[], "
        "%s::bigint[]) ON CONFLICT (owner, col) DO UPDATE SET value = excluded.value"
        if postgres
        else "INSERT INTO bench_commit_floor VALUES (?, ?, ?) "
        "ON CONFLICT (owner, col) DO UPDATE SET value = excluded.value"
    )
    counter = iter(range(10**9))

    def write() -> None:
        n = next(counter)
        rows = [(n % 200, f"c{c}", n) for c in range(args.cols)]
        cursor = driver.cursor()
        if postgres:
            cursor.execute(upsert, [list(column) for column in zip(*rows, strict=True)])
            driver.commit()
        else:
            cursor.execute("BEGIN IMMEDIATE")
            cursor.executemany(upsert, rows)
            cursor.execute("COMMIT")
        cursor.close()

    select = "SELECT value FROM bench_commit_floor WHERE owner = {0} AND col = {0}".format(
        "%s" if postgres else "?"
    )

    def read() -> None:
        n = next(counter)
        cursor = driver.cursor()
        cursor.execute(select, (n % 200, f"c{n % args.cols}"))
        cursor.fetchall()
        cursor.close()

    try:
        floors = {COMMIT: measure(write, plan).p50}
        if postgres:  # outside a transaction, as the server reads versions
            driver.autocommit = True
        floors[READ] = measure(read, plan).p50
        return floors
    finally:
        pooled.close()
        engine.dispose()


def settled(url: str) -> None:
    """Let the database of URL settle before writes are timed, as it was when the floors
    were: on PostgreSQL, vacuum and analyze what the loading and the calls before left
    (autovacuum would do it while the writes are timed, on the same two cores) and
    checkpoint; on SQLite, checkpoint the WAL."""
    engine = raw_engine(url)
    try:
        if engine.dialect.name == "postgresql":
            with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.exec_driver_sql("VACUUM ANALYZE")
                conn.exec_driver_sql("CHECKPOINT")
        else:
            settle(engine)
    finally:
        engine.dispose()
