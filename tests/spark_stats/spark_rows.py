"""Statistics rows as the server stores them, and one table of every type, for the Spark
conversion tests."""

from __future__ import annotations

from typing import Any

from stats_builders import dec, stats_data

from hive_metastore_thrift import ttypes as t
from metastore.hms.structs.statistics import stats_obj, stats_row
from metastore.sketches import kll_build
from metastore.stats.rows import StatsRow, as_row
from metastore.stats.validate import checked
from metastore.thrift_stats import union_member

# A table of every type with statistics, as (name, Hive type).
COLUMNS = [
    ("c_int", "int"),
    ("c_long", "bigint"),
    ("c_short", "smallint"),
    ("c_tiny", "tinyint"),
    ("c_float", "float"),
    ("c_double", "double"),
    ("c_dec", "decimal(10,2)"),
    ("c_wide", "decimal(38,10)"),
    ("c_str", "string"),
    ("c_vchar", "varchar(20)"),
    ("c_bin", "binary"),
    ("c_bool", "boolean"),
    ("c_date", "date"),
    ("c_ts", "timestamp"),
]
TYPES = dict(COLUMNS)
NUM_ROWS = 1000


def row(name: str, member: str, hive_type: str | None = None, **fields: Any) -> StatsRow:
    """The stored row of statistics FIELDS of MEMBER ('longStats', ...) for column NAME."""
    column_type = hive_type or TYPES[name]
    obj = t.ColumnStatisticsObj(name, column_type, stats_data(member, **fields))
    return checked(stats_row(obj, 1_700_000_000, "hive"), column_type)


def every_type() -> list[StatsRow]:
    """Statistics of every column of COLUMNS over NUM_ROWS rows, 10 of them NULL."""
    nulls = 10
    ints = kll_build(range(-5, 995))
    return [
        row(
            "c_int",
            "longStats",
            lowValue=-5,
            highValue=994,
            numNulls=nulls,
            numDVs=991,
            histogram=ints,
        ),
        row("c_long", "longStats", lowValue=-(2**62), highValue=2**62, numNulls=nulls, numDVs=501),
        row("c_short", "longStats", lowValue=-300, highValue=300, numNulls=0, numDVs=601),
        row("c_tiny", "longStats", lowValue=-128, highValue=127, numNulls=nulls, numDVs=257),
        row(
            "c_float",
            "doubleStats",
            lowValue=1.100000023841858,
            highValue=1e10,
            numNulls=nulls,
            numDVs=50,
        ),
        row("c_double", "doubleStats", lowValue=-0.0001, highValue=1e7, numNulls=nulls, numDVs=990),
        row(
            "c_dec",
            "decimalStats",
            lowValue=dec(-1050, 2),
            highValue=dec(99999999, 2),
            numNulls=nulls,
            numDVs=900,
        ),
        row(
            "c_wide",
            "decimalStats",
            lowValue=dec(1, 10),
            highValue=dec(10**37, 10),
            numNulls=0,
            numDVs=2000,
        ),
        row("c_str", "stringStats", maxColLen=12, avgColLen=4.2, numNulls=nulls, numDVs=100),
        row("c_vchar", "stringStats", maxColLen=20, avgColLen=20.0, numNulls=0, numDVs=1),
        row("c_bin", "binaryStats", maxColLen=300, avgColLen=42.3, numNulls=nulls),
        row("c_bool", "booleanStats", numTrues=600, numFalses=390, numNulls=nulls),
        row(
            "c_date",
            "dateStats",
            lowValue=t.Date(-1),
            highValue=t.Date(19723),
            numNulls=nulls,
            numDVs=300,
            histogram=kll_build([d * 86400 for d in range(-1, 19724, 20)]),
        ),
        row(
            "c_ts",
            "timestampStats",
            lowValue=t.Timestamp(-86399),
            highValue=t.Timestamp(1704103200),
            numNulls=nulls,
            numDVs=990,
        ),
    ]


def every_type_parameters() -> dict[str, str]:
    columns = ",".join(f'"{name}":"true"' for name, _ in sorted(COLUMNS))
    return {
        "COLUMN_STATS_ACCURATE": f'{{"BASIC_STATS":"true","COLUMN_STATS":{{{columns}}}}}',
        "numRows": str(NUM_ROWS),
        "totalSize": "123456",
        "numFiles": "3",
        "owner.team": "stats",
    }


def members(rows: list[StatsRow]) -> dict[str, Any]:
    """Column -> the statistics struct a reader gets for each of ROWS (sketches included)."""
    return {
        r["COLUMN_NAME"]: union_member(
            stats_obj(as_row(r), fetch_bitvector=True, fetch_histogram=True).statsData
        )
        for r in rows
    }
