"""One behaviour suite through both doors (issue 41): the statistics DuckDB reads through
the Flight door (Airport's column_statistics, the batch read by the duckdb package) and
those the Thrift door answers (get_table_statistics_req, get_partitions_statistics_req)
agree with each other and with the files themselves, for a column of every type HMS keeps
statistics for, in an unpartitioned and a partitioned table, whoever wrote them:

* `job`: the statistics job, `metastore analyze` in a process of its own (the real CLI);
* `spark`: Spark's own ANALYZE TABLE ... COMPUTE STATISTICS FOR ALL COLUMNS, in a session
  with Hive support whose metastore is colstats (made on the tests' one Spark context).

Both writers' tables are registered over the same Parquet files (door_tables.py), once per
backend. What the files hold is computed by DuckDB over them. Bounds must be the true ones
(a timestamp's in whole seconds, widened by the Flight door to the microseconds around
them); NULL counts exact; distinct counts, HyperLogLog estimates, within NDV_ERROR.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import decimal
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from conftest import RunningServer, connect
from door_tables import (
    KEYS,
    PARTED_COLUMNS,
    PARTITIONS,
    TABLES,
    Column,
    Truth,
    files,
    files_sql,
    hive_session,
    partition_name,
    register,
    truth,
    write_tables,
)
from java_tools import unavailable

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.flight.server import FlightService
from metastore.flight.types import duckdb_type
from metastore.names import DEFAULT_PARTITION_VALUE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "flight"))
from airport_client import AirportClient, Table

pytestmark = [pytest.mark.spark]

CATALOG = "hive"
WRITERS = ("job", "spark")
DBS = {"job": "doors_job", "spark": "doors_spark"}
# Distinct counts are HyperLogLog estimates: the job's (Hive's sketch, sparse at these
# sizes) within 5%; Spark's HyperLogLog++ (ANALYZE's, at its default relative standard
# deviation, spark.sql.statistics.ndv.maxError = 0.05) within three deviations. A lower
# maxError would make Spark's estimates closer, but its aggregation buffer (a field a
# register word, a column) makes ANALYZE minutes slower to plan and compile.
NDV_ERROR = {"job": 0.05, "spark": 3 * 0.05}
JOB_TIMEOUT_S = 600
EPOCH = datetime.datetime(1970, 1, 1)
EPOCH_DAY = datetime.date(1970, 1, 1)
SECOND = datetime.timedelta(seconds=1)
MICROSECOND = datetime.timedelta(microseconds=1)
UNKNOWN_TEXT = ("", "\U0010ffff\U0010ffff")  # the Flight door's bounds of any text


@dataclasses.dataclass
class Doors:
    """Both writers' tables analyzed on one backend, and both doors open on them."""

    folders: dict[str, Path]
    thrift: ThriftHiveMetastore.Client
    airport: AirportClient
    tables: dict[tuple[str, str], Table]


def _analyze(server: RunningServer, table: str, log: Path) -> subprocess.Popen[bytes]:
    """`metastore analyze TABLE` as a user runs it, started (its output to LOG)."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [
                *(sys.executable, "-m", "metastore.cli", "analyze", table),
                *("--uri", f"thrift://127.0.0.1:{server.port}"),
            ],
            cwd=log.parent,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        )


def _wait(job: subprocess.Popen[bytes], log: Path) -> None:
    try:
        code = job.wait(timeout=JOB_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        job.kill()
        job.wait()
        raise
    assert code == 0, log.read_text(errors="replace")[-3000:]


@pytest.fixture(scope="module")
def doors(
    server: RunningServer, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Doors]:
    """The tables written and registered twice; the job's analyzed by two runs of the CLI
    while Spark analyzes its own; then the Flight door opened beside the server."""
    if importlib.util.find_spec("pyspark") is None:
        unavailable("pyspark is not installed (pip install -e '.[spark]')")
    if shutil.which("java") is None:
        unavailable("java is not installed (a JDK 17 is needed)")
    root = tmp_path_factory.mktemp("doors")
    folders = write_tables(root / "data")
    with contextlib.ExitStack() as opened:
        client, transport = connect(server.port)
        opened.callback(transport.close)
        for db in DBS.values():
            register(client, db, folders)
        logs = {name: root / f"job-{name}.log" for name in TABLES}
        jobs = [_analyze(server, f"{DBS['job']}.{name}", log) for name, log in logs.items()]
        try:  # Spark's work (and its start, the first time) while the job runs
            session = hive_session(request.getfixturevalue("spark"), server.port)
            for name in TABLES:
                session.sql(
                    f"ANALYZE TABLE {DBS['spark']}.{name} COMPUTE STATISTICS FOR ALL COLUMNS"
                )
        finally:
            for job, log in zip(jobs, logs.values(), strict=True):
                _wait(job, log)
        service = FlightService(server.handler.tx, server.settings, "127.0.0.1", 0)
        service.start()
        opened.callback(service.stop)
        airport = AirportClient(f"grpc://127.0.0.1:{service.port}", CATALOG)
        opened.callback(airport.close)
        yield Doors(folders, client, airport, airport.tables())


# -- reading both doors ---------------------------------------------------------------------


def kind_of(hive_type: str) -> str:
    """The kind of statistics Hive keeps for HIVE_TYPE (ColumnStatisticsData's member)."""
    if hive_type in ("tinyint", "smallint", "int", "bigint"):
        return "long"
    if hive_type in ("float", "double"):
        return "double"
    if hive_type.startswith(("varchar", "char")):
        return "string"
    return hive_type.split("(")[0]


def member(obj: t.ColumnStatisticsObj, kind: str) -> Any:
    """The one member of OBJ's statistics union, which must be KIND's."""
    found = {k: v for k, v in vars(obj.statsData).items() if v is not None}
    assert list(found) == [f"{kind}Stats"], (obj.colName, list(found))
    return found[f"{kind}Stats"]


def thrift_table(doors: Doors, writer: str, table: str, column: Column) -> Any:
    got = doors.thrift.get_table_statistics_req(
        t.TableStatsRequest(DBS[writer], table, [column.name])
    ).tableStats
    assert [o.colName for o in got] == [column.name], f"no table statistics of {column.name}"
    return member(got[0], kind_of(column.hive_type))


def row_count(parameters: dict[str, str]) -> int:
    """numRows, which BASIC_STATS must mark current."""
    assert '"BASIC_STATS":"true"' in parameters.get("COLUMN_STATS_ACCURATE", ""), parameters
    return int(parameters["numRows"])


def flight(doors: Doors, writer: str, table: str, column: str) -> dict[str, Any]:
    """Column_statistics as DuckDB imports them: the batch read by the duckdb package, min
    and max of the column's DuckDB type."""
    found = doors.tables[(DBS[writer], table)]
    arrow = found.schema.field(column).type
    batch = doors.airport.column_statistics(found, column, duckdb_type(arrow))
    relation = duckdb.connect().from_arrow(pa.Table.from_batches([batch]))
    types = dict(zip(relation.columns, [str(x) for x in relation.types], strict=True))
    assert types["min"] == types["max"] == duckdb_type(arrow)
    return dict(zip(relation.columns, relation.fetchall()[0], strict=True))


def as_decimal(value: t.Decimal | None) -> decimal.Decimal | None:
    if value is None:
        return None
    unscaled = int.from_bytes(value.unscaled, "big", signed=True)
    return decimal.Decimal(f"{unscaled}E-{value.scale}")  # text: no rounding to 28 digits


def thrift_bounds(kind: str, stats: Any) -> tuple[Any, Any]:
    """A Thrift answer's bounds as values of the column (whole seconds for timestamps)."""
    low, high = getattr(stats, "lowValue", None), getattr(stats, "highValue", None)
    if kind == "decimal":
        return as_decimal(low), as_decimal(high)
    if kind == "date":
        return day(low), day(high)
    if kind == "timestamp":
        return seconds(low), seconds(high)
    return low, high


def day(value: t.Date | None) -> datetime.date | None:
    return None if value is None else EPOCH_DAY + datetime.timedelta(days=value.daysSinceEpoch)


def seconds(value: t.Timestamp | None) -> int | None:
    return None if value is None else int(value.secondsSinceEpoch)


def thrift_distinct(kind: str, stats: Any) -> int | None:
    """Distinct non-null values by a Thrift answer (Hive's numDVs counts NULL as one value
    where there are NULLs); None when it does not say."""
    if kind == "binary":
        return None
    if kind == "boolean":
        if min(stats.numTrues, stats.numFalses) < 0:  # -1: unknown
            return None
        return int(stats.numTrues > 0) + int(stats.numFalses > 0)
    if stats.numDVs is None:
        return None
    return max(int(stats.numDVs) - (1 if stats.numNulls > 0 else 0), 0)


def whole_seconds(moment: datetime.datetime) -> set[int]:
    """The whole seconds a writer may keep for MOMENT: its floor, or its truncation toward
    zero (before 1970)."""
    micros = (moment - EPOCH) // MICROSECOND
    return {micros // 1_000_000, int(micros / 1_000_000)}


def near(estimate: int, exact: int, error: float) -> bool:
    return abs(estimate - exact) <= max(error * exact, 1)


def near_truth(estimate: int, data: Truth, error: float) -> bool:
    """Whether ESTIMATE is within ERROR of DATA's distinct values, or (timestamps) of its
    distinct whole seconds, which Hive keeps timestamps in and the job counts."""
    return near(estimate, data.distinct, error) or (
        data.distinct_seconds is not None and near(estimate, data.distinct_seconds, error)
    )


# -- the checks -----------------------------------------------------------------------------


def check_thrift(
    column: Column,
    stats: Any,
    data: Truth,
    trues: int,
    error: float,
    problems: list[str],
    where: str,
) -> None:
    """A Thrift answer against the data: NULLs exact, bounds true, NDV within ERROR."""
    kind = kind_of(column.hive_type)

    def differ(what: str, got: Any, true: Any) -> None:
        problems.append(f"{where} {column.name} {what}: thrift {got!r}, data {true!r}")

    if stats.numNulls != data.nulls:
        differ("numNulls", stats.numNulls, data.nulls)
    distinct = thrift_distinct(kind, stats)
    if distinct is not None and not near_truth(distinct, data, error):
        differ("distinct non-null values", distinct, data.distinct)
    if kind == "boolean":
        counts = (stats.numTrues, stats.numFalses)
        exact = (trues, data.rows - data.nulls - trues)
        if counts != exact and not (counts == (-1, -1) and min(exact) > 0):
            differ("(numTrues, numFalses)", counts, exact)
    elif kind in ("string", "binary"):
        if (stats.maxColLen or 0) != (data.longest or 0):
            differ("maxColLen", stats.maxColLen, data.longest)
        average = data.average or 0.0
        if not average - 1e-9 <= stats.avgColLen < average + 1:  # Spark's: its ceiling
            differ("avgColLen", stats.avgColLen, average)
    elif kind == "timestamp":
        low, high = thrift_bounds(kind, stats)
        if data.low is not None and low not in whole_seconds(data.low):
            differ("low", low, data.low)
        if data.high is not None and high not in whole_seconds(data.high):
            differ("high", high, data.high)
    else:
        low, high = thrift_bounds(kind, stats)
        if low != data.low:
            differ("low", low, data.low)
        # A float's max with NaN among the values: Spark's is NaN, which Hive cannot keep.
        if high != data.high and not (high is None and kind == "double" and data.nan):
            differ("high", high, data.high)


def flight_bounds(column: Column, stats: Any, rows: int) -> tuple[Any, Any]:
    """The bounds the Flight door must send, by the Thrift answer STATS of ROWS rows: the
    same values of the column's type, a timestamp's seconds widened to the microseconds
    around them, a float's low bound rounded down to a float, no high bound of a float or
    double (DuckDB orders NaN above all), none of text or bytes, none where no value is."""
    kind = kind_of(column.hive_type)
    low, high = thrift_bounds(kind, stats)
    if stats.numNulls >= rows:
        return UNKNOWN_TEXT if kind == "string" else (None, None)
    if kind in ("long", "decimal", "date"):
        return low, high
    if kind == "double":
        if low is not None and column.hive_type == "float":
            narrowed = np.float32(low)
            if float(narrowed) > low:
                narrowed = np.nextafter(narrowed, np.float32(-np.inf))
            low = float(narrowed)
        return low, None
    if kind == "timestamp":
        if low is None or high is None:
            return None, None
        first = EPOCH + low * SECOND if low > 0 else EPOCH + (low - 1) * SECOND + MICROSECOND
        return first, EPOCH + (high + 1) * SECOND - MICROSECOND
    if kind == "boolean":
        if min(stats.numTrues, stats.numFalses) < 0:  # -1: unknown
            return None, None
        return stats.numFalses == 0, stats.numTrues > 0
    if kind == "string":
        return UNKNOWN_TEXT
    return None, None


def holds(bounds: tuple[Any, Any], data: Truth, exact: bool) -> bool:
    """Whether BOUNDS hold every value of DATA (are exactly its bounds, EXACT)."""
    low, high = bounds
    if exact:
        return (low, high) == (data.low, data.high)
    if data.low is None:
        return True
    return (low is None or low <= data.low) and (high is None or data.high <= high)


def check_flight(
    column: Column,
    got: dict[str, Any],
    stats: Any,
    rows: int,
    data: Truth,
    error: float,
    problems: list[str],
    where: str,
) -> None:
    """What DuckDB reads against the Thrift answer STATS (of ROWS rows) and the data."""
    kind = kind_of(column.hive_type)

    def differ(what: str, flight_value: Any, thrift_value: Any, true: Any) -> None:
        problems.append(
            f"{where} {column.name} {what}: flight {flight_value!r}, thrift {thrift_value!r}, "
            f"data {true!r}"
        )

    has_null = stats.numNulls > 0
    if not got["has_null"] is has_null is (data.nulls > 0):
        differ("has_null", got["has_null"], stats.numNulls, data.nulls)
    has_not_null = stats.numNulls < rows
    if not got["has_not_null"] is has_not_null is (data.nulls < data.rows):
        differ("has_not_null", got["has_not_null"], (stats.numNulls, rows), data.rows)
    distinct = thrift_distinct(kind, stats)
    expected = 0 if distinct is None else min(distinct, rows - stats.numNulls)
    if got["distinct_count"] != expected or (expected and not near_truth(expected, data, error)):
        differ("distinct_count", got["distinct_count"], distinct, data.distinct)
    bounds = (got["min"], got["max"])
    exact = kind in ("long", "decimal", "date") or (data.low is None and kind != "string")
    if bounds != flight_bounds(column, stats, rows) or not holds(bounds, data, exact):
        differ("bounds", bounds, thrift_bounds(kind, stats), (data.low, data.high))
    if kind == "string":
        declared = [4 * int(column.hive_type[:-1].split("(")[1])] if "(" in column.hive_type else []
        length = min([4 * stats.maxColLen, *declared])
        if got["max_string_length"] != length or length < (data.longest_bytes or 0):
            differ("max_string_length", got["max_string_length"], stats.maxColLen, data)


def booleans(folder: Path, column: Column, where: str = "true") -> int:
    """How many rows hold true in a boolean column (0 for another type)."""
    if column.hive_type != "boolean":
        return 0
    count: int = files(folder).filter(where).aggregate(f"count_if({column.name})").fetchall()[0][0]
    return count


# -- the suite ------------------------------------------------------------------------------

TABLE_COLUMNS = [
    pytest.param(writer, table, column, id=f"{writer}-{table}-{column.name}")
    for writer in WRITERS
    for table, columns in TABLES.items()
    for column in columns
]


@pytest.mark.parametrize(("writer", "table", "column"), TABLE_COLUMNS)
def test_table_statistics_agree(doors: Doors, writer: str, table: str, column: Column) -> None:
    """The table's statistics: Thrift's against the files, DuckDB's against Thrift's and
    the files."""
    folder = doors.folders[table]
    data = truth(folder, column.name, column.hive_type)
    stats = thrift_table(doors, writer, table, column)
    rows = row_count(doors.thrift.get_table(DBS[writer], table).parameters)
    assert rows == data.rows
    problems: list[str] = []
    error = NDV_ERROR[writer]
    check_thrift(column, stats, data, booleans(folder, column), error, problems, "table")
    got = flight(doors, writer, table, column.name)
    check_flight(column, got, stats, rows, data, error, problems, "table")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


def where_partition(region: str | None, yr: int) -> str:
    return f"{'region IS NULL' if region is None else f'region = {region!r}'} AND yr = {yr}"


def in_order(kind: str, bound: Any) -> Any:
    """A Thrift bound as a value that sorts."""
    if kind == "decimal":
        return as_decimal(bound)
    if kind in ("date", "timestamp"):
        return day(bound) if kind == "date" else seconds(bound)
    return bound


def merged(column: Column, parts: list[Any]) -> Any:
    """The Thrift answers PARTS of the partitions merged as one answer for the table: their
    NULLs summed, the outermost bounds, counts of booleans summed (what bounds and NULLs of
    the table they give; distinct values do not merge)."""
    kind = kind_of(column.hive_type)
    fields: dict[str, Any] = {"numNulls": sum(p.numNulls for p in parts)}
    if kind == "boolean":
        fields["numTrues"] = sum(p.numTrues for p in parts)
        fields["numFalses"] = sum(p.numFalses for p in parts)
    elif kind not in ("string", "binary"):
        lows = [p.lowValue for p in parts if p.lowValue is not None]
        highs = [p.highValue for p in parts if p.highValue is not None]
        fields["lowValue"] = min(lows, key=lambda v: in_order(kind, v)) if lows else None
        fields["highValue"] = max(highs, key=lambda v: in_order(kind, v)) if highs else None
    return type(parts[0])(**fields)


PARTED = [
    pytest.param(writer, column, id=f"{writer}-{column.name}")
    for writer in WRITERS
    for column in PARTED_COLUMNS
]


@pytest.mark.parametrize(("writer", "column"), PARTED)
def test_partition_statistics_agree(doors: Doors, writer: str, column: Column) -> None:
    """Each partition's statistics (get_partitions_statistics_req) against its own rows, and
    what DuckDB reads of the table against the partitions' merged: the outermost bounds,
    NULLs where any partition has them. The job writes every partition's; Spark's ANALYZE
    TABLE ... FOR ALL COLUMNS writes the table's only (Spark keeps no column statistics of
    partitions), which DuckDB reads then (test_table_statistics_agree)."""
    db, folder = DBS[writer], doors.folders["parted"]
    names = {partition_name(*values): values for values in PARTITIONS}
    answer = doors.thrift.get_partitions_statistics_req(
        t.PartitionsStatsRequest(db, "parted", [column.name], list(names))
    ).partStats
    if writer == "spark":
        assert answer == {}
        return
    assert sorted(answer) == sorted(names)
    kind = kind_of(column.hive_type)
    problems: list[str] = []
    parts, counts = [], {}
    for partition in doors.thrift.get_partitions(db, "parted", -1):
        region, yr = partition.values
        region = None if region == DEFAULT_PARTITION_VALUE else region
        counts[partition_name(region, int(yr))] = row_count(partition.parameters)
    for name, values in names.items():
        where = where_partition(*values)
        data = truth(folder, column.name, column.hive_type, where)
        assert counts[name] == data.rows
        (obj,) = answer[name]
        parts.append(member(obj, kind))
        trues = booleans(folder, column, where)
        check_thrift(column, parts[-1], data, trues, NDV_ERROR[writer], problems, name)
    # What DuckDB reads of the table, against the partitions' answers merged.
    got = flight(doors, writer, "parted", column.name)
    whole = merged(column, parts)
    rows = sum(counts.values())
    expected = flight_bounds(column, whole, rows)
    if (got["min"], got["max"]) != expected:
        problems.append(f"bounds: flight {(got['min'], got['max'])!r}, partitions {expected!r}")
    nulls = [(p.numNulls, counts[name]) for p, name in zip(parts, names, strict=True)]
    if got["has_null"] is not any(n > 0 for n, _ in nulls):
        problems.append(f"has_null: flight {got['has_null']}, partitions' (NULLs, rows) {nulls}")
    if got["has_not_null"] is not any(n < r for n, r in nulls):
        problems.append(f"has_not_null: flight {got['has_not_null']}, partitions' {nulls}")
    distinct = [thrift_distinct(kind, p) for p in parts]
    if None not in distinct:
        each = [d for d in distinct if d is not None]
        low, high = max(each) * (1 - NDV_ERROR[writer]), sum(each) * (1 + NDV_ERROR[writer])
        if not low <= got["distinct_count"] <= high:
            problems.append(f"distinct_count: flight {got['distinct_count']}, partitions' {each}")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize(("key", "hive_type"), KEYS)
def test_partition_keys_agree(doors: Doors, writer: str, key: str, hive_type: str) -> None:
    """A partition key, which DuckDB knows from the partition values: exactly the files'
    (the default partition a NULL)."""
    data = truth(doors.folders["parted"], key, hive_type)
    got = flight(doors, writer, "parted", key)
    assert (got["has_null"], got["has_not_null"]) == (data.nulls > 0, data.nulls < data.rows)
    assert (got["min"], got["max"], got["distinct_count"]) == (data.low, data.high, data.distinct)


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("table", list(TABLES))
def test_duckdb_scans_the_rows_of_the_files(doors: Doors, writer: str, table: str) -> None:
    """DuckDB's scan through the Flight door reads the files' rows, row for row, as many as
    both doors count; the table takes statistics when DuckDB can take them for every column
    (not BLOB)."""
    found = doors.tables[(DBS[writer], table)]
    assert found.advertises_statistics is (table == "parted")
    rows = doors.airport.scan(found)
    con = duckdb.connect()
    con.register("flight_rows", rows)
    con.register("direct", con.sql(files_sql(doors.folders[table])).select(*found.schema.names))
    count = con.sql("SELECT count(*) FROM direct").fetchall()[0][0]
    assert (
        rows.num_rows == count == row_count(doors.thrift.get_table(DBS[writer], table).parameters)
    )
    differences = con.sql(
        "SELECT count(*) FROM ((SELECT * FROM flight_rows EXCEPT ALL SELECT * FROM direct) "
        "UNION ALL (SELECT * FROM direct EXCEPT ALL SELECT * FROM flight_rows))"
    ).fetchall()[0][0]
    assert differences == 0
