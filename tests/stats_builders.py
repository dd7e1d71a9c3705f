"""Building the Thrift structs of column-statistics calls: one example of every kind, tables
to write them to."""

from __future__ import annotations

import math
from typing import Any

import sqlalchemy as sa
from metadata_builders import WAREHOUSE

from hive_metastore_thrift import ttypes as t

COLUMNS = {
    "c_bool": "boolean",
    "c_tiny": "tinyint",
    "c_long": "bigint",
    "c_float": "float",
    "c_double": "double",
    "c_dec": "decimal(38,10)",
    "c_str": "string",
    "c_vchar": "varchar(20)",
    "c_bin": "binary",
    "c_date": "date",
    "c_ts": "timestamp",
    "c_arr": "array<int>",
}
PART = "ds=2024-01-01/region=a%2Fb"

SKETCH = b"HLL\xa0\x02\x02\x81\x83\x8e\xcc\x07\x00\xff"  # arbitrary bytes, non-UTF-8 on purpose
HISTOGRAM = bytes(range(256))


def make_table(client: Any, db: str, table: str = "t") -> None:
    client.create_database(t.Database(name=db, locationUri=f"file:{WAREHOUSE}/{db}", parameters={}))
    sd = t.StorageDescriptor(
        cols=[t.FieldSchema(n, ty, None) for n, ty in COLUMNS.items()],
        location=f"file:{WAREHOUSE}/{db}/{table}",
        serdeInfo=t.SerDeInfo("s", "lib", {}),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    client.create_table(
        t.Table(
            tableName=table,
            dbName=db,
            sd=sd,
            parameters={},
            partitionKeys=[
                t.FieldSchema("ds", "string", None),
                t.FieldSchema("region", "string", None),
            ],
        )
    )
    client.add_partition(
        t.Partition(values=["2024-01-01", "a/b"], dbName=db, tableName=table, parameters={})
    )


def dec(unscaled: int, scale: int) -> t.Decimal:
    bits = unscaled.bit_length() if unscaled >= 0 else (-unscaled - 1).bit_length()
    return t.Decimal(unscaled=unscaled.to_bytes(bits // 8 + 1, "big", signed=True), scale=scale)


def stats_data(kind: str, **fields: Any) -> t.ColumnStatisticsData:
    structs = {
        "booleanStats": t.BooleanColumnStatsData,
        "longStats": t.LongColumnStatsData,
        "doubleStats": t.DoubleColumnStatsData,
        "stringStats": t.StringColumnStatsData,
        "binaryStats": t.BinaryColumnStatsData,
        "decimalStats": t.DecimalColumnStatsData,
        "dateStats": t.DateColumnStatsData,
        "timestampStats": t.TimestampColumnStatsData,
    }
    return t.ColumnStatisticsData(**{kind: structs[kind](**fields)})


# One value of every kind of statistics, with extreme values where the type has them.
EXAMPLES: dict[str, tuple[str, t.ColumnStatisticsData]] = {
    "c_bool": ("boolean", stats_data("booleanStats", numTrues=7, numFalses=3, numNulls=1)),
    "c_tiny": (
        "tinyint",
        stats_data(
            "longStats",
            lowValue=-128,
            highValue=127,
            numNulls=0,
            numDVs=256,
            bitVectors=SKETCH,
            histogram=HISTOGRAM,
        ),
    ),
    "c_long": (
        "bigint",
        stats_data(
            "longStats",
            lowValue=-(2**63),
            highValue=2**63 - 1,
            numNulls=2**63 - 1,
            numDVs=2**62,
            bitVectors=SKETCH,
        ),
    ),
    "c_float": (
        "float",
        stats_data("doubleStats", lowValue=-math.inf, highValue=math.inf, numNulls=0, numDVs=2),
    ),
    "c_double": (
        "double",
        stats_data(
            "doubleStats",
            lowValue=-1.7976931348623157e308,
            highValue=5e-324,
            numNulls=4,
            numDVs=9,
            bitVectors=SKETCH,
            histogram=HISTOGRAM,
        ),
    ),
    "c_dec": (
        "decimal(38,10)",
        stats_data(
            "decimalStats",
            lowValue=dec(-(10**38 - 1), 10),
            highValue=dec(10**38 - 1, 10),
            numNulls=0,
            numDVs=3,
            bitVectors=SKETCH,
            histogram=HISTOGRAM,
        ),
    ),
    "c_str": (
        "string",
        stats_data(
            "stringStats",
            maxColLen=2**40,
            avgColLen=12.345678901234567,
            numNulls=1,
            numDVs=100,
            bitVectors=SKETCH,
        ),
    ),
    "c_vchar": (
        "varchar(20)",
        stats_data("stringStats", maxColLen=20, avgColLen=0.0, numNulls=0, numDVs=0),
    ),
    "c_bin": (
        "binary",
        stats_data("binaryStats", maxColLen=1024, avgColLen=99.5, numNulls=5, bitVectors=SKETCH),
    ),
    "c_date": (
        "date",
        stats_data(
            "dateStats",
            lowValue=t.Date(-719162),
            highValue=t.Date(2932896),
            numNulls=0,
            numDVs=11,
            histogram=HISTOGRAM,
        ),
    ),
    "c_ts": (
        "timestamp",
        stats_data(
            "timestampStats",
            lowValue=t.Timestamp(-62135596800),
            highValue=t.Timestamp(253402300799),
            numNulls=0,
            numDVs=12,
            bitVectors=SKETCH,
        ),
    ),
}


def column_stats(
    db: str,
    objs: list[t.ColumnStatisticsObj],
    part: str | None = None,
    engine: str | None = None,
    last_analyzed: int | None = None,
) -> t.ColumnStatistics:
    desc = t.ColumnStatisticsDesc(
        isTblLevel=part is None, dbName=db, tableName="t", partName=part, lastAnalyzed=last_analyzed
    )
    stats = t.ColumnStatistics(statsDesc=desc, statsObj=objs)
    stats.engine = engine
    return stats


def obj(
    column: str, data: t.ColumnStatisticsData, col_type: str | None = None
) -> t.ColumnStatisticsObj:
    return t.ColumnStatisticsObj(
        colName=column, colType=col_type or COLUMNS[column.lower()], statsData=data
    )


def all_examples() -> list[t.ColumnStatisticsObj]:
    return [obj(c, data, ty) for c, (ty, data) in EXAMPLES.items()]


def row_count(url: str, table: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            count: int = conn.execute(sa.text(f'SELECT COUNT(*) FROM "{table}"')).scalar_one()
            return count
    finally:
        engine.dispose()
