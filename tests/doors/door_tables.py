"""The tables of the two-doors suite (test_doors_agree.py): Parquet files written here, with
a column of every type HMS keeps statistics for, registered through Thrift as Hive tables;
what the files truly hold, computed by DuckDB over the files themselves; and a Spark
session with Hive support on a running colstats, made on the tests' one Spark context.

`types` is unpartitioned, every type (binary too, so it does not advertise statistics to
DuckDB: see metastore.flight.types). `parted` has the same columns but binary, under
four partitions of two keys, one of them the default partition (a NULL key), so it
does advertise them.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import math
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from metadata_builders import database, fields, partition, storage, table

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.names import DEFAULT_PARTITION_VALUE, escape_path_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
TYPES_ROWS = 2000
EPOCH = datetime.datetime(1970, 1, 1)
# decimal(38,10)'s extremes, from text: arithmetic would round them to 28 digits.
WIDE_MAX = decimal.Decimal("9" * 28 + "." + "9" * 10)
WIDE_MIN = decimal.Decimal("-" + "9" * 28 + "." + "9" * 10)

Make = Callable[[random.Random, int], Any]


@dataclasses.dataclass(frozen=True)
class Column:
    """A column of the files: its Hive type, the Arrow type the files hold it as, the share
    of NULLs and a maker of its non-null values (from the generator and the row number)."""

    name: str
    hive_type: str
    arrow: pa.DataType
    nulls: float
    make: Make


def _text(rng: random.Random, longest: int) -> str:
    """ASCII, two-byte, three-byte and four-byte characters, up to LONGEST of them."""
    return "".join(rng.choice("abcxyz é中😀") for _ in range(rng.randrange(0, longest + 1)))


def _timestamp(rng: random.Random, _: int) -> datetime.datetime:
    """1950..2050 with microseconds, some in the two seconds before 1970 (where flooring
    and truncating to whole seconds differ)."""
    if rng.random() < 0.05:
        return EPOCH - datetime.timedelta(microseconds=rng.randrange(1, 2_000_000))
    return EPOCH + datetime.timedelta(
        microseconds=rng.randrange(-631_152_000_000_000, 2_524_608_000_000_000)
    )


def _bigint(_: random.Random, row: int) -> int:
    """Distinct values (HyperLogLog's work), the type's extremes among them."""
    if row == 0:
        return -(2**63)
    if row == 1:
        return 2**63 - 1
    return row * 7_919_000_003 - 10**13


def _float(rng: random.Random, _: int) -> float:
    # Multiples of 1/8 are exact in float32; a few NaN, which DuckDB orders above all.
    return math.nan if rng.random() < 0.02 else rng.randrange(-8000, 8000) / 8


def _wide(rng: random.Random, row: int) -> decimal.Decimal:
    if row in (3, 4):
        return WIDE_MAX if row == 3 else WIDE_MIN
    return decimal.Decimal(rng.randrange(-(10**9), 10**9)) * decimal.Decimal("1234567.0123456789")


COLUMNS: list[Column] = [
    Column("b", "boolean", pa.bool_(), 0.1, lambda r, _: r.random() < 0.3),
    Column("ti", "tinyint", pa.int8(), 0.1, lambda r, _: r.randrange(-128, 128)),
    Column("si", "smallint", pa.int16(), 0.05, lambda r, _: r.randrange(-32768, 32768)),
    Column("i", "int", pa.int32(), 0.02, lambda r, _: r.randrange(-500, 500)),
    Column("l", "bigint", pa.int64(), 0.0, _bigint),
    Column("f", "float", pa.float32(), 0.05, _float),
    Column("d", "double", pa.float64(), 0.05, lambda r, _: r.uniform(-1e6, 1e6)),
    Column(
        "dec",
        "decimal(9,2)",
        pa.decimal128(9, 2),
        0.05,
        lambda r, _: decimal.Decimal(r.randrange(-9_999_999, 9_999_999)).scaleb(-2),
    ),
    Column("wide", "decimal(38,10)", pa.decimal128(38, 10), 0.05, _wide),
    Column("s", "string", pa.string(), 0.1, lambda r, _: _text(r, 12)),
    Column("vc", "varchar(10)", pa.string(), 0.1, lambda r, _: _text(r, 10)),
    # Hive keeps char(n) values padded to n.
    Column("ch", "char(5)", pa.string(), 0.1, lambda r, _: f"c{r.randrange(40)}".ljust(5)),
    Column("bin", "binary", pa.binary(), 0.1, lambda r, _: r.randbytes(r.randrange(0, 20))),
    Column(
        "dt",
        "date",
        pa.date32(),
        0.05,
        lambda r, _: datetime.date(1950, 1, 1) + datetime.timedelta(days=r.randrange(36525)),
    ),
    Column("ts", "timestamp", pa.timestamp("us"), 0.05, _timestamp),
    Column("nothing", "bigint", pa.int64(), 1.0, lambda r, _: None),
]
PARTED_COLUMNS = [c for c in COLUMNS if c.hive_type != "binary"]
KEYS = [("region", "string"), ("yr", "int")]
# (region, yr) -> rows; None is the default partition (a NULL key).
PARTITIONS: dict[tuple[str | None, int], int] = {
    ("east", 2023): 400,
    ("east", 2024): 300,
    ("west", 2024): 350,
    (None, 2024): 150,
}
TABLES = {"types": COLUMNS, "parted": PARTED_COLUMNS}


def generate(columns: Sequence[Column], rows: int, seed: int) -> pa.Table:
    rng = random.Random(seed)
    data: dict[str, list[Any]] = {c.name: [] for c in columns}
    for row in range(rows):
        for column in columns:
            value = None if rng.random() < column.nulls else column.make(rng, row)
            data[column.name].append(value)
    schema = pa.schema([pa.field(c.name, c.arrow) for c in columns])
    return pa.table({c.name: pa.array(data[c.name], c.arrow) for c in columns}, schema=schema)


def write_files(folder: Path, rows: pa.Table, files: int = 2) -> None:
    """ROWS as FILES Parquet files in FOLDER (several Spark tasks a table or partition)."""
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-rows.num_rows // files)
    for n in range(files):
        pq.write_table(rows.slice(n * step, step), folder / f"part-{n}.parquet")


def partition_name(region: str | None, yr: int) -> str:
    value = DEFAULT_PARTITION_VALUE if region is None else escape_path_name(region)
    return f"region={value}/yr={yr}"


def write_tables(root: Path) -> dict[str, Path]:
    """The files of both tables under ROOT: name -> folder."""
    write_files(root / "types", generate(COLUMNS, TYPES_ROWS, seed=41))
    for n, ((region, yr), rows) in enumerate(PARTITIONS.items()):
        folder = root / "parted" / partition_name(region, yr)
        write_files(folder, generate(PARTED_COLUMNS, rows, seed=500 + n))
    return {name: root / name for name in TABLES}


def register(client: ThriftHiveMetastore.Client, db: str, folders: dict[str, Path]) -> None:
    """Database DB and both tables in it, external Parquet tables over FOLDERS, with every
    partition of `parted`, as Hive would register them."""
    client.create_database(database(db, locationUri=f"file:{folders['types'].parent}/{db}.db"))
    parquet: dict[str, Any] = dict(
        inputFormat=PARQUET_INPUT,
        outputFormat=PARQUET_OUTPUT,
        serdeInfo=t.SerDeInfo("serde", PARQUET_SERDE, {"serialization.format": "1"}),
    )
    external: dict[str, Any] = dict(tableType="EXTERNAL_TABLE", parameters={"EXTERNAL": "TRUE"})
    cols = fields(*((c.name, c.hive_type) for c in COLUMNS))
    client.create_table(
        table(db, "types", sd=storage(cols, f"file:{folders['types']}", **parquet), **external)
    )
    cols = fields(*((c.name, c.hive_type) for c in PARTED_COLUMNS))
    client.create_table(
        table(
            db,
            "parted",
            keys=fields(*KEYS),
            sd=storage(cols, f"file:{folders['parted']}", **parquet),
            **external,
        )
    )
    parts = []
    for region, yr in PARTITIONS:
        name = partition_name(region, yr)
        sd = storage(cols, f"file:{folders['parted'] / name}", **parquet)
        values = [DEFAULT_PARTITION_VALUE if region is None else region, str(yr)]
        parts.append(partition(db, "parted", values, sd=sd))
    client.add_partitions(parts)


# -- what the files hold --------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Truth:
    """What a column's files hold: the row count, NULLs, distinct non-null values, the
    bounds (NaN left out of a float's) and, for text and bytes, the longest and the average
    value in characters (bytes for binary) and the longest in bytes; for floats, whether
    there is NaN; for timestamps, the distinct whole seconds (Hive's unit)."""

    rows: int
    nulls: int
    distinct: int
    low: Any
    high: Any
    longest: int | None = None
    average: float | None = None
    longest_bytes: int | None = None
    nan: bool = False
    distinct_seconds: int | None = None


def files_sql(folder: Path) -> str:
    """DuckDB's own reading of a table's files (partition keys from the folder names; the
    default partition's value read as NULL, as Hive reads it)."""
    if folder.name != "parted":
        return f"SELECT * FROM read_parquet('{folder}/*.parquet')"
    return (
        f"SELECT * REPLACE (NULLIF(region, '{DEFAULT_PARTITION_VALUE}') AS region) "
        f"FROM read_parquet('{folder}/**/*.parquet', hive_partitioning = true, "
        "hive_types = {'region': 'VARCHAR', 'yr': 'INTEGER'})"
    )


def files(folder: Path) -> duckdb.DuckDBPyRelation:
    return duckdb.connect().sql(files_sql(folder))


def truth(folder: Path, column: str, hive_type: str, where: str = "true") -> Truth:
    """What the files under FOLDER hold in COLUMN, over the rows WHERE selects."""
    quoted = f'"{column}"'
    value = quoted
    lengths = ""
    if hive_type in ("float", "double"):
        value = f"CASE WHEN isnan({quoted}) THEN NULL ELSE {quoted} END"
        lengths = f", NULL, NULL, NULL, count_if(isnan({quoted})) > 0"
    if hive_type == "binary":
        lengths = f", max(octet_length({quoted})), avg(octet_length({quoted}))"
        lengths += f", max(octet_length({quoted}))"
    elif hive_type == "string" or hive_type.startswith(("varchar", "char")):
        lengths = f", max(length({quoted})), avg(length({quoted})), max(strlen({quoted}))"
    elif hive_type == "timestamp":
        seconds = f"floor(epoch_us({quoted}) / 1000000.0)"
        lengths = f", NULL, NULL, NULL, false, count(DISTINCT {seconds})"
    row = (
        files(folder)
        .filter(where)
        .aggregate(
            f"count(*), count(*) - count({quoted}), count(DISTINCT {quoted}), "
            f"min({value}), max({value}){lengths}"
        )
        .fetchall()[0]
    )
    return Truth(*row)


# -- Spark, with Hive support, on colstats --------------------------------------------------


def hive_session(spark: SparkSession, port: int) -> Any:
    """A Spark session (the JVM's own object) with Hive support whose metastore is colstats
    on PORT, made on SPARK's context: the tests' one Spark, with a shared state of its own
    (the Hive catalog and its metastore are chosen per shared state, when it is made)."""
    jvm: Any = spark.sparkContext._jvm
    assert jvm is not None
    options = jvm.java.util.HashMap()
    options.put("spark.sql.catalogImplementation", "hive")
    options.put("hive.metastore.uris", f"thrift://127.0.0.1:{port}")
    # Spark's Hive client retries a failed call after this delay (1 s by default).
    options.put("hive.metastore.client.connect.retry.delay", "0s")
    return jvm.org.apache.spark.sql.classic.SparkSession(spark.sparkContext._jsc.sc(), options)
