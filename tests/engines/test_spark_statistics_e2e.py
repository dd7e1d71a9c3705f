"""One set of statistics for Spark and Hive, end to end with a real Spark 4.1 (local, Hive
support) on colstats (in process, on SQLite):

* the statistics job's column statistics reach a new Spark session's DESCRIBE EXTENDED and
  its cost-based optimizer (EXPLAIN COST with spark.sql.cbo.enabled), with the job's row
  count;
* Spark's ANALYZE TABLE ... FOR COLUMNS (and partitions' ANALYZE) is read back by a Thrift
  client as Hive-format statistics;
* a Spark session that alters a table sends back the spark.sql.statistics.* keys it reads
  (its echo), which does not undo a newer run of the job.

The Spark sessions run in processes of their own (spark_shell.py): one writer for the module,
which creates and fills the tables, and one reader started after the job, a new JVM that has
never seen the tables. The job runs as users run it, `python -m metastore.cli analyze`.

colstats runs on SQLite; METASTORE_SPARK_TARGETS (as for test_spark_metastore.py) with
`postgresql` runs the module on PostgreSQL too (`hms` does not apply here).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import importlib.util
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from conftest import RunningServer, connect, empty_database
from java_tools import unavailable
from spark_shell import SparkShell

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import migrate
from metastore.thrift_stats import union_member

pytestmark = [pytest.mark.spark]

TARGETS = os.environ.get("METASTORE_SPARK_TARGETS", "sqlite").split(",")
BACKENDS = [
    "sqlite",
    *([pytest.param("postgresql", marks=pytest.mark.postgres)] if "postgresql" in TARGETS else []),
]

DB = "e2e"
ROWS = 4000
JOB_TIMEOUT_S = 600.0
NDV_ERROR = 0.05
"""The job's distinct counts are HLL estimates: within 5% of the truth."""
PREFIX = "spark.sql.statistics."

# The rows Spark writes: id 1..n, and columns derived from it (the same in SQL and Python).
ROW_SQL = """
SELECT CAST(id AS INT) AS id,
       IF(id % 10 = 0, NULL, concat('n', CAST(id % 97 AS STRING))) AS name,
       IF(id % 25 = 0, NULL, id * 0.5) AS price,
       date_add(DATE'2024-01-01', CAST(id % 100 AS INT)) AS day,
       IF(id % 2 = 0, 'east', 'west') AS region
FROM range({first}, {last} + 1)
"""


def name_of(i: int) -> str | None:
    return None if i % 10 == 0 else f"n{i % 97}"


def price_of(i: int) -> float | None:
    return None if i % 25 == 0 else i * 0.5


def day_of(i: int) -> datetime.date:
    return datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 100)


@dataclasses.dataclass
class Truth:
    """Exact statistics of a column over ids FIRST..LAST (min and max as Spark prints them,
    NULLs, distinct non-null values, and for strings the longest and average length of the
    non-null values)."""

    low: str | None
    high: str | None
    nulls: int
    distinct: int
    max_len: int | None = None
    avg_len: float | None = None


def truth(column: str, first: int, last: int) -> Truth:
    ids = range(first, last + 1)
    if column == "id":
        return Truth(str(first), str(last), 0, len(ids))
    if column == "price":
        prices = [p for p in map(price_of, ids) if p is not None]
        return Truth(repr(min(prices)), repr(max(prices)), len(ids) - len(prices), len(prices))
    if column == "day":
        days = sorted({day_of(i) for i in ids})
        return Truth(days[0].isoformat(), days[-1].isoformat(), 0, len(days))
    assert column == "name"
    names = [n for n in map(name_of, ids) if n is not None]
    lengths = [len(n) for n in names]
    return Truth(
        None, None, len(ids) - len(names), len(set(names)), max(lengths), sum(lengths) / len(names)
    )


@dataclasses.dataclass
class Stack:
    """colstats on a loopback port, the module's writing Spark session, and what the server
    received in alter_table calls (table name, parameters), in order."""

    running: RunningServer
    writer: SparkShell
    workdir: Path
    altered: list[tuple[str, dict[str, str]]]

    @contextlib.contextmanager
    def client(self) -> Iterator[ThriftHiveMetastore.Client]:
        client, transport = connect(self.running.port)
        try:
            yield client
        finally:
            transport.close()

    @property
    def uri(self) -> str:
        return f"thrift://127.0.0.1:{self.running.port}"

    def spark(self, name: str) -> SparkShell:
        """A new Spark session in a new process."""
        return SparkShell(self.running.port, self.workdir / "warehouse", self.workdir / name)

    def fill(self, table: str, first: int, last: int) -> None:
        self.writer.sql(
            f"INSERT INTO {DB}.{table} PARTITION (region) " + ROW_SQL.format(first=first, last=last)
        )

    def analyze(self, table: str) -> None:
        """The statistics job on TABLE's folder, as on the command line."""
        with self.client() as client:
            location = client.get_table(DB, table).sd.location
        log = self.workdir / f"job-{table}.log"
        with log.open("ab") as sink:
            done = subprocess.run(
                [
                    *(sys.executable, "-m", "metastore.cli", "analyze", f"{DB}.{table}"),
                    *("--uri", self.uri, "--path", location, "--format", "parquet"),
                ],
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                timeout=JOB_TIMEOUT_S,
                check=False,
            )
        if done.returncode != 0:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-30:])
            pytest.fail(f"metastore analyze {DB}.{table} exited with {done.returncode}:\n{tail}")

    def table_stats(self, table: str, columns: list[str]) -> dict[str, Any]:
        """Column -> Hive-format statistics (the union's member) of TABLE, engine hive."""
        with self.client() as client:
            request = t.TableStatsRequest(dbName=DB, tblName=table, colNames=columns, engine="hive")
            objs = client.get_table_statistics_req(request).tableStats
        return {o.colName: union_member(o.statsData) for o in objs}


def _spark_available() -> None:
    if importlib.util.find_spec("pyspark") is None:
        unavailable("pyspark is not installed (pip install -e '.[spark]')")
    if shutil.which("java") is None:
        unavailable("java is not installed (a JDK 17 is needed)")


@pytest.fixture(scope="module", params=BACKENDS)
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """colstats on a new database of the backend, and the module's writing Spark session."""
    _spark_available()
    workdir = tmp_path_factory.mktemp("spark-stats")
    with contextlib.contextmanager(empty_database)(request.param, workdir) as url:
        migrate.upgrade(url)
        yield from _stack(url, workdir)


def _stack(url: str, workdir: Path) -> Iterator[Stack]:
    running = RunningServer(url, Settings())
    altered: list[tuple[str, dict[str, str]]] = []
    handler = running.handler
    alter = handler.alter_table_with_environment_context

    def recording(
        dbname: str, tbl_name: str, new_tbl: t.Table, context: t.EnvironmentContext | None
    ) -> None:
        altered.append((tbl_name, dict(new_tbl.parameters or {})))
        alter(dbname, tbl_name, new_tbl, context)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(handler, "alter_table_with_environment_context", recording)
            writer = SparkShell(running.port, workdir / "warehouse", workdir / "writer.log")
            try:
                writer.sql(f"CREATE DATABASE {DB}")
                yield Stack(running, writer, workdir, altered)
            finally:
                writer.close()
    finally:
        running.stop()


# -- Spark's output -----------------------------------------------------------------------


def described(shell: SparkShell, table: str, column: str, session: str = "main") -> dict[str, str]:
    """DESCRIBE EXTENDED TABLE COLUMN as info_name -> info_value."""
    rows = shell.sql(f"DESCRIBE EXTENDED {DB}.{table} {column}", session)
    return {str(name): str(value) for name, value in rows}


_STATISTICS = re.compile(r"Statistics\(([^)]*)\)")


def plan_statistics(plan: str) -> list[dict[str, str]]:
    """The Statistics(...) of each line of EXPLAIN COST's optimized logical plan, top down."""
    logical = plan.split("== Optimized Logical Plan ==")[1].split("== Physical Plan ==")[0]
    out = []
    for match in _STATISTICS.finditer(logical):
        fields = (item.split("=", 1) for item in match[1].split(", "))
        out.append({key: value for key, value in fields})
    return out


def explain_cost(shell: SparkShell, query: str, session: str = "main") -> str:
    rows = shell.sql(f"EXPLAIN COST {query}", session)
    return str(rows[0][0])


def within(estimate: int, exact: int, error: float) -> bool:
    return abs(estimate - exact) <= error * exact


# -- a: the job's statistics in Spark -------------------------------------------------------

SALES_QUERY = f"SELECT * FROM {DB}.sales WHERE id <= {ROWS // 2}"


@dataclasses.dataclass
class Sales:
    before: str
    """EXPLAIN COST of SALES_QUERY before the job ran."""


@pytest.fixture(scope="module")
def sales(stack: Stack) -> Sales:
    """A partitioned table created and filled by Spark, then analyzed by the job (column
    statistics, and the basic statistics of the partitions and of the table)."""
    stack.writer.sql(
        f"CREATE TABLE {DB}.sales (id INT, name STRING, price DOUBLE, day DATE) "
        "PARTITIONED BY (region STRING) STORED AS PARQUET"
    )
    stack.fill("sales", 1, ROWS)
    stack.writer.sql("SET spark.sql.cbo.enabled=true", "cbo")
    before = explain_cost(stack.writer, SALES_QUERY, "cbo")
    stack.analyze("sales")
    return Sales(before)


def test_a_new_session_shows_the_jobs_statistics(stack: Stack, sales: Sales) -> None:
    reader = stack.spark("reader.log")
    try:
        shown = {c: described(reader, "sales", c) for c in ("id", "name", "price", "day")}
        reader.sql("SET spark.sql.cbo.enabled=true")
        after = explain_cost(reader, SALES_QUERY)
    finally:
        reader.close()
    for column, info in shown.items():
        exact = truth(column, 1, ROWS)
        assert (info["min"], info["max"]) == (exact.low or "NULL", exact.high or "NULL"), column
        assert info["num_nulls"] == str(exact.nulls), column
        assert within(int(info["distinct_count"]), exact.distinct, NDV_ERROR), (column, info)
    name = truth("name", 1, ROWS)
    assert name.avg_len is not None
    assert shown["name"]["max_col_len"] == str(name.max_len)
    assert shown["name"]["avg_col_len"] == str(math.ceil(name.avg_len))  # Spark's rounding
    assert shown["id"]["avg_col_len"] == "4" and shown["day"]["avg_col_len"] == "4"

    # Before the job, Spark knew nothing of the table: no row count, and its default size.
    # After it, the table's rows, and the filter's from id's min and max.
    assert all("rowCount" not in stats for stats in plan_statistics(sales.before))
    filtered, relation = plan_statistics(after)[:2]
    assert Decimal(relation["rowCount"]) == ROWS
    assert within(int(Decimal(filtered["rowCount"])), ROWS // 2, 0.02), after
    sys.stderr.write(f"EXPLAIN COST before the job:\n{sales.before}\nafter:\n{after}\n")


# -- b: Spark's ANALYZE read back in Hive's format -------------------------------------------


def sent_by_spark(stack: Stack, table: str) -> dict[str, str]:
    """The spark.sql.statistics.* keys of the last alter of TABLE, without the prefix."""
    params = next(p for name, p in reversed(stack.altered) if name == table)
    return {k.removeprefix(PREFIX): v for k, v in params.items() if k.startswith(PREFIX)}


def days(text: str | None) -> int:
    assert text is not None
    return (datetime.date.fromisoformat(text) - datetime.date(1970, 1, 1)).days


def test_sparks_analyze_is_read_back_in_hive_format(stack: Stack) -> None:
    first, last = 1, 1500
    stack.writer.sql(
        f"CREATE TABLE {DB}.flat (id INT, name STRING, price DOUBLE, day DATE, region STRING) "
        "STORED AS PARQUET"
    )
    stack.writer.sql(f"INSERT INTO {DB}.flat " + ROW_SQL.format(first=first, last=last))
    stack.writer.sql(f"ANALYZE TABLE {DB}.flat COMPUTE STATISTICS FOR COLUMNS id, name, price, day")
    spark = sent_by_spark(stack, "flat")
    stats = stack.table_stats("flat", ["id", "name", "price", "day", "region"])
    assert sorted(stats) == ["day", "id", "name", "price"]  # region was not analyzed

    def ndv(column: str, nulls: int) -> int:  # Hive's NDV counts NULL as a value
        return int(spark[f"colStats.{column}.distinctCount"]) + (1 if nulls else 0)

    # min, max and NULLs are exact; NDV is Spark's HLL estimate, converted exactly.
    id_, name, price, day = (truth(c, first, last) for c in ("id", "name", "price", "day"))
    assert (stats["id"].lowValue, stats["id"].highValue) == (first, last)
    assert (stats["id"].numNulls, stats["id"].numDVs) == (0, ndv("id", 0))
    assert within(stats["id"].numDVs, id_.distinct, NDV_ERROR)
    got = (repr(stats["price"].lowValue), repr(stats["price"].highValue))
    assert got == (price.low, price.high)
    assert (stats["price"].numNulls, stats["price"].numDVs) == (price.nulls, ndv("price", 1))
    got_days = (stats["day"].lowValue.daysSinceEpoch, stats["day"].highValue.daysSinceEpoch)
    assert got_days == (days(day.low), days(day.high))
    assert (stats["day"].numNulls, stats["day"].numDVs) == (0, ndv("day", 0))
    # Strings: Spark keeps no min or max, and the ceiling of the average length.
    assert (stats["name"].numNulls, stats["name"].numDVs) == (name.nulls, ndv("name", 1))
    assert stats["name"].maxColLen == name.max_len
    assert name.avg_len is not None
    assert stats["name"].avgColLen == math.ceil(name.avg_len) == int(spark["colStats.name.avgLen"])
    with stack.client() as client:
        params = client.get_table(DB, "flat").parameters
    assert params["numRows"] == spark["numRows"] == str(last - first + 1)
    assert params["totalSize"] == spark["totalSize"]
    assert '"BASIC_STATS":"true"' in params["COLUMN_STATS_ACCURATE"]


def test_sparks_partition_analyze_is_read_back_in_hive_format(stack: Stack) -> None:
    """Spark keeps sizes and row counts per partition, column statistics per table only
    (ANALYZE ... PARTITION (...) FOR COLUMNS ignores the partition)."""
    first, last = 1, 1000
    stack.writer.sql(
        f"CREATE TABLE {DB}.parts (id INT, name STRING, price DOUBLE, day DATE) "
        "PARTITIONED BY (region STRING) STORED AS PARQUET"
    )
    stack.fill("parts", first, last)
    stack.writer.sql(f"ANALYZE TABLE {DB}.parts PARTITION (region) COMPUTE STATISTICS")
    stack.writer.sql(
        f"ANALYZE TABLE {DB}.parts PARTITION (region='east') COMPUTE STATISTICS FOR COLUMNS id"
    )
    names = ["region=east", "region=west"]
    with stack.client() as client:
        partitions = client.get_partitions_by_names(DB, "parts", names)
        request = t.PartitionsStatsRequest(
            dbName=DB, tblName="parts", colNames=["id"], partNames=names, engine="hive"
        )
        by_partition = client.get_partitions_statistics_req(request).partStats
    for partition in partitions:
        params = partition.parameters
        assert params["numRows"] == str((last - first + 1) // 2)
        assert int(params["totalSize"]) > 0
        assert '"BASIC_STATS":"true"' in params["COLUMN_STATS_ACCURATE"]
    assert by_partition == {}
    stats = stack.table_stats("parts", ["id"])["id"]
    assert (stats.lowValue, stats.highValue, stats.numNulls) == (first, last, 0)
    assert stats.numDVs == int(sent_by_spark(stack, "parts")["colStats.id.distinctCount"])


# -- c: Spark's echo ------------------------------------------------------------------------


def test_an_echo_of_sparks_keys_does_not_undo_a_newer_job_run(stack: Stack) -> None:
    """Spark sends every spark.sql.statistics.* key it reads back on its next alter of the
    table. Spark 4.1 reads the table again right before altering it, so the keys it echoes
    are those served at that moment; colstats recognises them and stores nothing of them."""
    columns = ["id", "name", "price", "day"]
    stack.writer.sql(
        f"CREATE TABLE {DB}.events (id INT, name STRING, price DOUBLE, day DATE) "
        "PARTITIONED BY (region STRING) STORED AS PARQUET"
    )
    stack.fill("events", 1, 1000)
    stack.analyze("events")
    # Session one reads the table and the job's statistics.
    assert described(stack.writer, "events", "id", "one")["max"] == "1000"
    stack.fill("events", 1001, 3000)  # new data: Spark drops its keys, the statistics go stale
    stack.analyze("events")  # the job runs again
    newer = stack.table_stats("events", columns)
    assert newer["id"].highValue == 3000
    with stack.client() as client:
        served = client.get_table(DB, "events").parameters
    seen = len(stack.altered)
    stack.writer.sql(f"ALTER TABLE {DB}.events SET TBLPROPERTIES ('owner.team'='growth')", "one")
    echoes = [params for name, params in stack.altered[seen:] if name == "events"]
    assert len(echoes) == 1
    echoed = {k: v for k, v in echoes[0].items() if k.startswith(PREFIX)}
    assert echoed["spark.sql.statistics.colStats.id.max"] == "3000"
    assert echoed == {k: v for k, v in served.items() if k.startswith(PREFIX)}

    # Stored once, as the job wrote them: a conversion of Spark's keys would have rounded
    # the strings' average length up and recomputed NDVs.
    assert stack.table_stats("events", columns) == newer
    assert newer["name"].avgColLen != math.ceil(newer["name"].avgColLen)
    with stack.client() as client:
        params = client.get_table(DB, "events").parameters
    assert params["owner.team"] == "growth"
    for column in columns:
        assert f'"{column}":"true"' in params["COLUMN_STATS_ACCURATE"]
    shown = described(stack.writer, "events", "id", "two")  # a new session
    assert (shown["min"], shown["max"]) == ("1", "3000")
