"""Helpers of the job's tests: running the job in-process, writing partitioned data, and
checking what the server stored against exact answers."""

from __future__ import annotations

import argparse
import math
import uuid
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from analyze_data import (
    COLUMNS,
    Col,
    Expected,
    generate,
    write_partition,
)
from conftest import RunningServer
from datasketches import kll_floats_sketch
from pyspark.sql import SparkSession

from hive_metastore_thrift import ttypes as t
from metastore.cli import analyze as analyze_command
from metastore.job import analyze
from metastore.sketches import HyperLogLog
from metastore.store import models as m

COL = {c.name: c for c in COLUMNS}
HLL_BOUND = 3 * 1.04 / math.sqrt(1024)
KEY = "ds"
# Partition values and the names HMS must give them (written out, not computed).
MAIN_PARTS: dict[str | None, tuple[str, int]] = {
    "2024-01-01": ("ds=2024-01-01", 1200),
    "a b/c=d e": ("ds=a b%2Fc%3Dd e", 800),
    "50%: it's": ("ds=50%25%3A it%27s", 500),
    None: ("ds=__HIVE_DEFAULT_PARTITION__", 300),
}
MEMBERS = {
    "boolean": "booleanStats",
    "long": "longStats",
    "double": "doubleStats",
    "decimal": "decimalStats",
    "string": "stringStats",
    "binary": "binaryStats",
    "date": "dateStats",
    "timestamp": "timestampStats",
}


def run_job(
    spark: SparkSession, server: RunningServer, table: str, *options: str
) -> dict[str, t.ColumnStatisticsObj]:
    """metastore analyze TABLE --uri ... OPTIONS, in this process."""
    return run_job_result(spark, server, table, *options).table_stats


def run_job_result(
    spark: SparkSession, server: RunningServer, table: str, *options: str
) -> analyze.AnalyzeResult:
    """metastore analyze TABLE --uri ... OPTIONS, in this process: what it returns."""
    parser = argparse.ArgumentParser()
    analyze_command.add_arguments(parser)
    args = parser.parse_args([table, "--uri", f"thrift://127.0.0.1:{server.port}", *options])
    return analyze.run(spark, analyze_command.options(args))


def new_db() -> str:
    return f"an_{uuid.uuid4().hex[:10]}"


def write_parts(
    base: Path, parts: Mapping[Any, int], columns: Sequence[Col] = COLUMNS, seed: int = 0
) -> dict[str | None, dict[str, list[Any]]]:
    """Generate and write ROWS rows for every partition value; returns the data by value."""
    out = {}
    for n, (value, rows) in enumerate(parts.items()):
        out[value] = generate(columns, rows, seed * 1000 + n)
        write_partition(base, KEY, value, columns, out[value])
    return out


def names_of(data: Mapping[Any, Any], names: Mapping[Any, str]) -> dict[str, Any]:
    return {names[value]: d for value, d in data.items()}


def as_decimal(value: t.Decimal | None) -> Decimal | None:
    if value is None:
        return None
    # From text: Decimal arithmetic would round to 28 digits.
    return Decimal(f"{int.from_bytes(value.unscaled, 'big', signed=True)}E-{value.scale}")


def stats_of(obj: t.ColumnStatisticsObj, kind: str) -> Any:
    """The one member of the statistics union, which must be the one for KIND."""
    data = obj.statsData
    set_members = [k for k, v in vars(data).items() if v is not None]
    assert set_members == [MEMBERS[kind]], f"{obj.colName}: {set_members}"
    return getattr(data, MEMBERS[kind])


def _seconds_of(kind: str, value: Any) -> float:
    """A low or high value as the histogram holds it: dates as epoch seconds."""
    if kind == "date":
        return float(value * 86_400)
    return float(value)


def check_histogram(blob: bytes | None, exp: Expected, where: str) -> None:
    """A KLL sketch (read with DataSketches itself) of every non-null, non-NaN value."""
    if exp.finite == 0:
        assert blob is None, where
        return
    assert blob is not None, where
    sketch = kll_floats_sketch.deserialize(blob)
    assert sketch.n == exp.finite, where
    with np.errstate(over="ignore"):
        low, high = (np.float32(_seconds_of(exp.kind, v)) for v in (exp.low, exp.high))
    assert (sketch.get_min_value(), sketch.get_max_value()) == (low, high), where


def check_ndv(num_dvs: int, bit_vectors: bytes | None, exp: Expected, where: str) -> None:
    """numDVs is the estimate of the distinct non-null values, capped at their count, plus
    one when there are NULLs; the bit vector is the sketch it came from."""
    estimate = num_dvs - (1 if exp.nulls else 0)
    assert 0 <= estimate <= exp.non_null, (where, num_dvs, exp)
    assert abs(estimate - exp.distinct) <= HLL_BOUND * exp.distinct, (where, num_dvs, exp)
    assert bit_vectors is not None, where
    assert min(HyperLogLog.from_bytes(bit_vectors).estimate(), exp.non_null) == estimate, where


def check_obj(obj: t.ColumnStatisticsObj, column: Col, exp: Expected, where: str) -> None:
    """Every field of OBJ against the independently computed EXP."""
    where = f"{where}, column {column.name}"
    assert (obj.colName, obj.colType) == (column.name, column.hive_type), where
    s = stats_of(obj, exp.kind)
    assert s.numNulls == exp.nulls, where
    if exp.kind == "boolean":
        assert (s.numTrues, s.numFalses) == (exp.trues, exp.falses), where
        assert s.bitVectors is None, where
        return
    if exp.kind in ("string", "binary"):
        assert s.maxColLen == exp.max_len, where
        assert s.avgColLen == pytest.approx(exp.avg_len, rel=1e-12), where
        if exp.kind == "string":
            check_ndv(s.numDVs, s.bitVectors, exp, where)
        else:
            assert s.bitVectors is None, where
        return
    low, high = s.lowValue, s.highValue
    if exp.kind == "decimal":
        low, high = as_decimal(low), as_decimal(high)
    elif exp.kind == "date":
        low, high = (v.daysSinceEpoch if v else None for v in (low, high))
    elif exp.kind == "timestamp":
        low, high = (v.secondsSinceEpoch if v else None for v in (low, high))
    assert (low, high) == (exp.low, exp.high), where
    check_ndv(s.numDVs, s.bitVectors, exp, where)
    check_histogram(s.histogram, exp, where)


def check_objs(
    objs: Sequence[t.ColumnStatisticsObj],
    expected: dict[str, Expected],
    columns: Sequence[Col],
    where: str,
) -> None:
    by_name = {o.colName: o for o in objs}
    wanted = [c for c in columns if c.kind]
    assert sorted(by_name) == sorted(c.name for c in wanted), where
    for column in wanted:
        check_obj(by_name[column.name], column, expected[column.name], where)


def table_stats(
    client: Any, db: str, table: str, columns: Sequence[Col], engine: str = "hive"
) -> list[t.ColumnStatisticsObj]:
    objs: list[t.ColumnStatisticsObj] = client.get_table_statistics_req(
        t.TableStatsRequest(
            dbName=db, tblName=table, colNames=[c.name for c in columns], engine=engine
        )
    ).tableStats
    return objs


def partition_stats(
    client: Any,
    db: str,
    table: str,
    columns: Sequence[Col],
    parts: Sequence[str] | None = None,
    engine: str = "hive",
) -> dict[str, list[t.ColumnStatisticsObj]]:
    parts = client.get_partition_names(db, table, -1) if parts is None else parts
    stats: dict[str, list[t.ColumnStatisticsObj]] = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(
            dbName=db,
            tblName=table,
            colNames=[c.name for c in columns],
            partNames=list(parts),
            engine=engine,
        )
    ).partStats
    return stats


def paired_fields(
    got: Sequence[t.ColumnStatisticsObj], want: Sequence[t.ColumnStatisticsObj], where: str
) -> Iterator[tuple[str, str, Any, Any]]:
    """(column, field, got value, wanted value) of two lists of the same columns, after
    checking that they hold the same columns, types and kinds of statistics."""
    got_by, want_by = {o.colName: o for o in got}, {o.colName: o for o in want}
    assert sorted(got_by) == sorted(want_by), where
    for name, w in want_by.items():
        g = got_by[name]
        assert g.colType == w.colType, (where, name)
        gs, ws = union_member(g), union_member(w)
        assert type(gs) is type(ws), (where, name)
        for field, value in vars(ws).items():
            yield name, field, getattr(gs, field), value


def assert_identical(
    got: Sequence[t.ColumnStatisticsObj], want: Sequence[t.ColumnStatisticsObj], where: str
) -> None:
    """Every field equal, bit vectors included; KLL histograms, whose compaction is random,
    hold the same number of values and the same extremes."""
    for name, field, other, value in paired_fields(got, want, where):
        if field == "histogram" and value is not None and other is not None:
            a, b = kll_floats_sketch.deserialize(other), kll_floats_sketch.deserialize(value)
            assert (a.n, a.get_min_value(), a.get_max_value()) == (
                b.n,
                b.get_min_value(),
                b.get_max_value(),
            ), (where, name, field)
        else:
            assert other == value, (where, name, field)


def assert_same_stats(
    got: Sequence[t.ColumnStatisticsObj], want: Sequence[t.ColumnStatisticsObj], where: str
) -> None:
    """Equal field by field, except NDV (within the bound of each other, as two sketches of
    the same values may be merged in another order or representation) and avgColLen."""
    for name, field, other, value in paired_fields(got, want, where):
        if field in ("bitVectors", "histogram"):
            continue
        if field == "numDVs":
            assert abs(other - value) <= HLL_BOUND * value, (where, name, other, value)
        elif field == "avgColLen":
            assert other == pytest.approx(value, rel=1e-9), (where, name)
        else:
            assert other == value, (where, name, field)


def union_member(obj: t.ColumnStatisticsObj) -> Any:
    (value,) = [v for v in vars(obj.statsData).values() if v is not None]
    return value


def stored_rows(server: RunningServer, db: str) -> dict[str, int]:
    """How many rows of PARTITIONS, TAB_COL_STATS and PART_COL_STATS belong to DB."""
    tables = (
        sa.select(m.Table.TBL_ID)
        .join(m.Database, m.Database.DB_ID == m.Table.DB_ID)
        .where(m.Database.NAME == db)
    )
    parts = sa.select(m.Partition.PART_ID).where(m.Partition.TBL_ID.in_(tables))
    queries = {
        "PARTITIONS": sa.select(sa.func.count())
        .select_from(m.Partition)
        .where(m.Partition.TBL_ID.in_(tables)),
        "TAB_COL_STATS": sa.select(sa.func.count())
        .select_from(m.TableColumnStats)
        .where(m.TableColumnStats.TBL_ID.in_(tables)),
        "PART_COL_STATS": sa.select(sa.func.count())
        .select_from(m.PartitionColumnStats)
        .where(m.PartitionColumnStats.PART_ID.in_(parts)),
    }
    with server.engine.connect() as conn:
        return {name: conn.execute(query).scalar_one() for name, query in queries.items()}
