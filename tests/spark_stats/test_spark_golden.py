"""Golden tests against Spark's own classes in a local JVM (py4j): what colstats derives is read
by HistogramSerializer and CatalogColumnStat as Spark reads table parameters, and what Spark
writes (HistogramSerializer.serialize, a real ANALYZE TABLE ... FOR ALL COLUMNS with
histograms) is read by colstats."""

from __future__ import annotations

import base64
import itertools
import math
import random
import struct
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from pyspark.sql import SparkSession
from spark_rows import COLUMNS, every_type, every_type_parameters, members, row

from metastore.sketches import kll_build, kll_count
from metastore.spark_properties import read_large
from metastore.spark_stats import (
    Histogram,
    HistogramBin,
    decode_histogram,
    encode_histogram,
    hive_statistics,
    spark_statistics,
    statistics_digest,
    with_spark_statistics,
)
from metastore.spark_stats.histogram import histogram_payload, read_lz4_blocks
from metastore.spark_stats.properties import COLUMN_PREFIX, DIGEST_KEY
from metastore.spark_stats.values import java_double_text, java_float_text
from metastore.thrift_stats import python_decimal

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]

# The Spark type of each column of spark_rows.COLUMNS (char/varchar are strings to Spark).
SPARK_TYPES: dict[str, str | tuple[int, int]] = {
    "c_int": "IntegerType",
    "c_long": "LongType",
    "c_short": "ShortType",
    "c_tiny": "ByteType",
    "c_float": "FloatType",
    "c_double": "DoubleType",
    "c_dec": (10, 2),
    "c_wide": (38, 10),
    "c_str": "StringType",
    "c_vchar": "StringType",
    "c_bin": "BinaryType",
    "c_bool": "BooleanType",
    "c_date": "DateType",
    "c_ts": "TimestampType",
}


class Jvm:
    """Spark's classes through py4j."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        assert spark._jvm is not None
        self.jvm: Any = spark._jvm
        self.logical = self.jvm.org.apache.spark.sql.catalyst.plans.logical
        self.catalog = self.jvm.org.apache.spark.sql.catalyst.catalog

    def deserialize(self, text: str) -> Histogram:
        histogram = self.logical.HistogramSerializer.deserialize(text)
        bins = tuple(HistogramBin(b.lo(), b.hi(), b.ndv()) for b in histogram.bins())
        return Histogram(histogram.height(), bins)

    def serialize(self, histogram: Histogram) -> str:
        gateway: Any = self.spark.sparkContext._gateway
        bins = gateway.new_array(self.logical.HistogramBin, len(histogram.bins))
        for i, b in enumerate(histogram.bins):
            bins[i] = self.logical.HistogramBin(b.lo, b.hi, b.ndv)
        text: str = self.logical.HistogramSerializer.serialize(
            self.logical.Histogram(histogram.height, bins)
        )
        return text

    def data_type(self, spec: str | tuple[int, int]) -> Any:
        types = self.jvm.org.apache.spark.sql.types
        if isinstance(spec, tuple):
            return types.DecimalType(*spec)
        return getattr(getattr(types, spec + "$"), "MODULE$")

    def column_stat(self, keys: dict[str, str], column: str) -> Any:
        """CatalogColumnStat.fromMap of a column's keys, as statsFromProperties calls it."""
        jmap = self.jvm.java.util.HashMap()
        for k, v in keys.items():
            if k.startswith(COLUMN_PREFIX):
                jmap.put(k[len(COLUMN_PREFIX) :], v)
        scala = self.jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(jmap)
        stat = self.catalog.CatalogColumnStat.fromMap("db.t", column, scala)
        assert stat.isDefined(), f"Spark did not read the statistics of {column}"
        return stat.get()

    def to_map(self, stat: Any, column: str) -> dict[str, str]:
        """CatalogColumnStat.toMap, with the prefix statsToProperties adds: Spark's echo."""
        out = {}
        it = stat.toMap(column).iterator()
        while it.hasNext():
            kv = it.next()
            out[COLUMN_PREFIX + kv._1()] = kv._2()
        return out


@pytest.fixture(scope="module")
def jvm(spark: SparkSession) -> Jvm:
    return Jvm(spark)


# ------------------------------------------------------------------------------------------
# The histogram codec


def histograms() -> Iterator[Histogram]:
    rng = random.Random(11)
    for n in (0, 1, 254, 3000):  # 3000 bins: 72 KB, two LZ4 blocks
        edges = sorted(rng.uniform(-1e9, 1e9) for _ in range(n + 1))
        yield Histogram(
            rng.uniform(0, 1e6),
            tuple(HistogramBin(edges[i], edges[i + 1], rng.randint(1, 2**40)) for i in range(n)),
        )
    yield Histogram(
        4 / 254,
        tuple(HistogramBin(float(1 + i // 64), float(1 + (i + 1) // 64), 1) for i in range(254)),
    )
    yield Histogram(
        0.0, (HistogramBin(-math.inf, -0.0, 0), HistogramBin(5e-324, math.inf, 2**63 - 1))
    )


def test_spark_reads_our_histograms(jvm: Jvm) -> None:
    for histogram in histograms():
        ours = encode_histogram(histogram)
        if len(histogram.bins) <= 254:  # bin by bin through py4j
            assert jvm.deserialize(ours) == histogram
        # Spark's object, serialised again by Spark: the very payload bytes we wrote
        spark_text = jvm.logical.HistogramSerializer.serialize(
            jvm.logical.HistogramSerializer.deserialize(ours)
        )
        assert read_lz4_blocks(base64.b64decode(spark_text)) == histogram_payload(histogram)
        assert decode_histogram(spark_text) == histogram


def test_spark_writes_what_we_read(jvm: Jvm) -> None:
    rng = random.Random(12)
    for n in (0, 1, 254):
        edges = sorted(rng.random() * 10 ** rng.randint(-10, 10) for _ in range(n + 1))
        histogram = Histogram(
            rng.random(),
            tuple(HistogramBin(a, b, rng.randint(0, 99)) for a, b in itertools.pairwise(edges)),
        )
        spark_text = jvm.serialize(histogram)
        assert read_lz4_blocks(base64.b64decode(spark_text)) == histogram_payload(histogram)
        assert decode_histogram(spark_text) == histogram


# ------------------------------------------------------------------------------------------
# CatalogColumnStat reads what colstats derives, for every type


def expected_plan_values() -> dict[str, tuple[Any, Any]]:
    """toPlanStat's min and max of every_type(), as Python values."""
    return {
        "c_int": (-5, 994),
        "c_long": (-(2**62), 2**62),
        "c_short": (-300, 300),
        "c_tiny": (-128, 127),
        "c_float": (1.1, 1e10),  # Floats, which py4j reads through their text
        "c_double": (-0.0001, 1e7),
        "c_dec": ("-10.50", "999999.99"),
        "c_wide": ("1E-10", "1000000000000000000000000000.0000000000"),
        "c_bool": (False, True),
        "c_date": (-1, 19723),  # days
        "c_ts": (-86399 * 10**6, 1704103200 * 10**6),  # microseconds
    }


def test_catalog_column_stat_reads_every_type(jvm: Jvm) -> None:
    keys = spark_statistics(every_type_parameters(), COLUMNS, every_type())
    plan_values = expected_plan_values()
    for name, _ in COLUMNS:
        prefix = f"{COLUMN_PREFIX}{name}."
        mine = {k[len(prefix) :]: v for k, v in keys.items() if k.startswith(prefix)}
        stat = jvm.column_stat(keys, name)
        plan = stat.toPlanStat(name, jvm.data_type(SPARK_TYPES[name]))
        assert plan.nullCount().get() == int(mine["nullCount"])
        assert plan.avgLen().get() == int(mine["avgLen"])
        assert plan.maxLen().get() == int(mine["maxLen"])
        if "distinctCount" in mine:
            assert plan.distinctCount().get() == int(mine["distinctCount"])
        else:
            assert not plan.distinctCount().isDefined()
        if name in plan_values:
            low, high = plan.min().get(), plan.max().get()
            if isinstance(plan_values[name][0], str):  # Spark's Decimal
                low, high = low.toString(), high.toString()
            assert (low, high) == plan_values[name], name
        else:  # strings and binaries: no min and max
            assert not plan.min().isDefined() and not plan.max().isDefined()
        if "histogram" in mine:
            histogram = plan.histogram().get()
            ours = decode_histogram(mine["histogram"])
            assert histogram.height() == ours.height
            assert [(b.lo(), b.hi(), b.ndv()) for b in histogram.bins()] == list(ours.bins)
        else:
            assert not plan.histogram().isDefined()


def test_catalog_column_stat_joins_a_split_histogram(jvm: Jvm) -> None:
    rng = random.Random(13)
    data = [rng.lognormvariate(0, 3) for _ in range(5000)]
    rows = [
        row(
            "c_double",
            "doubleStats",
            lowValue=min(data),
            highValue=max(data),
            numNulls=0,
            numDVs=5000,
            histogram=kll_build(data),
        )
    ]
    params = {"COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"c_double":"true"}}', "totalSize": "9"}
    keys = spark_statistics(params, [("c_double", "double")], rows, num_bins=600)
    assert f"{COLUMN_PREFIX}c_double.histogram.numParts" in keys
    stat = jvm.column_stat(keys, "c_double")
    assert len(stat.histogram().get().bins()) == 600
    text = read_large(keys, f"{COLUMN_PREFIX}c_double.histogram") or ""
    assert jvm.deserialize(text) == decode_histogram(text)


def test_sparks_echo_of_our_keys_has_the_same_digest(jvm: Jvm) -> None:
    served = with_spark_statistics(every_type_parameters(), COLUMNS, every_type())
    # Spark's alterTable keeps the stored keys of its prefix it does not know (the digest).
    echo = {k: v for k, v in served.items() if not k.startswith("spark.") or k == DIGEST_KEY}
    echo["spark.sql.statistics.totalSize"] = served["spark.sql.statistics.totalSize"]
    echo["spark.sql.statistics.numRows"] = served["spark.sql.statistics.numRows"]
    for name, _ in COLUMNS:
        echo.update(jvm.to_map(jvm.column_stat(served, name), name))  # re-serialised by Spark
    assert statistics_digest(echo) == statistics_digest(served)
    assert hive_statistics(echo, COLUMNS).echo


# ------------------------------------------------------------------------------------------
# Java's number text


def test_double_text_is_javas(jvm: Jvm) -> None:
    """Ours is Java 19+'s shortest text; Java 17's is the same or has more digits for the same
    double."""
    rng = random.Random(14)
    values = [struct.unpack(">d", rng.getrandbits(64).to_bytes(8, "big"))[0] for _ in range(600)]
    values += [rng.uniform(-1e7, 1e7) for _ in range(300)] + [1e-4, 1e7, -0.0, 5e-324, 1e23]
    for value in values:
        if math.isnan(value):
            continue
        java: str = jvm.jvm.java.lang.Double.toString(value)
        ours = java_double_text(value)
        assert float(ours.replace("Infinity", "inf")) == value
        if java != ours:  # Java 17 (FloatingDecimal): more digits, the same double
            assert float(java) == value
            assert len(java) > len(ours), (java, ours)


def test_float_text_is_javas(jvm: Jvm) -> None:
    rng = random.Random(15)
    for value in [rng.uniform(-1e6, 1e6) for _ in range(300)] + [1.1, 1e10, 1e-4, 3.4e38]:
        single = jvm.jvm.java.lang.Float.parseFloat(repr(value))
        java: str = jvm.jvm.java.lang.Float.toString(single)
        ours = java_float_text(value)
        assert java == ours or (float(java) == float(ours) and len(java) > len(ours))


# ------------------------------------------------------------------------------------------
# A real ANALYZE TABLE ... FOR ALL COLUMNS, read back as Hive-format statistics

TABLE_COLUMNS = [
    ("i", "int"),
    ("d", "double"),
    ("m", "decimal(10,2)"),
    ("day", "date"),
    ("ts", "timestamp"),
    ("s", "string"),
    ("b", "boolean"),
]


def spark_properties(jvm: Jvm, table: str) -> dict[str, str]:
    """The table parameters HiveExternalCatalog.statsToProperties would write for TABLE's
    statistics (the in-memory catalog keeps them as objects)."""
    identifier = jvm.jvm.org.apache.spark.sql.catalyst.TableIdentifier.apply(table)
    session: Any = jvm.spark._jsparkSession
    stats = session.sessionState().catalog().getTableMetadata(identifier).stats().get()
    out = {
        "spark.sql.statistics.totalSize": str(stats.sizeInBytes()),
        "spark.sql.statistics.numRows": str(stats.rowCount().get()),
    }
    it = stats.colStats().iterator()
    while it.hasNext():
        kv = it.next()
        out.update(jvm.to_map(kv._2(), kv._1()))
    return out


def test_analyze_table_read_back_as_hive_statistics(spark: SparkSession, jvm: Jvm) -> None:
    rows = 2000
    spark.sql(
        f"""
        CREATE TABLE colstats_golden USING parquet AS
        SELECT CAST(IF(id % 10 = 0, NULL, id % 700) AS INT) AS i,
               id * 1.5 - 100.25 AS d,
               CAST(id / 8 AS DECIMAL(10,2)) AS m,
               DATE_ADD(DATE '1969-12-01', CAST(id % 365 AS INT)) AS day,
               TIMESTAMP_SECONDS(id * 3600 - 500000) AS ts,
               IF(id % 3 = 0, NULL, REPEAT('x', CAST(id % 7 AS INT))) AS s,
               id % 2 = 0 AS b
        FROM RANGE({rows})
        """
    )
    spark.conf.set("spark.sql.statistics.histogram.enabled", "true")
    try:
        spark.sql("ANALYZE TABLE colstats_golden COMPUTE STATISTICS FOR ALL COLUMNS")
        params = spark_properties(jvm, "colstats_golden")
    finally:
        spark.conf.unset("spark.sql.statistics.histogram.enabled")
        spark.sql("DROP TABLE colstats_golden")
    # Spark's histograms, read with our decoder
    for name in ("i", "d", "m", "day", "ts"):
        text = read_large(params, f"{COLUMN_PREFIX}{name}.histogram")
        assert text is not None
        histogram = decode_histogram(text)
        assert len(histogram.bins) == 254
        assert histogram.height * 254 == pytest.approx(rows - (200 if name == "i" else 0))
        assert histogram == jvm.deserialize(text)
    result = hive_statistics(params, TABLE_COLUMNS)
    assert result.basic["numRows"] == str(rows)
    stats = members(result.statistics)
    assert set(stats) == {name for name, _ in TABLE_COLUMNS}
    assert (stats["i"].lowValue, stats["i"].highValue, stats["i"].numNulls) == (1, 699, 200)
    assert stats["i"].numDVs == int(params[f"{COLUMN_PREFIX}i.distinctCount"]) + 1  # NULL
    assert kll_count(stats["i"].histogram) == rows - 200
    assert (stats["d"].lowValue, stats["d"].highValue) == (-100.25, (rows - 1) * 1.5 - 100.25)
    assert python_decimal(stats["m"].highValue) == Decimal("249.88")  # 1999 / 8, rounded
    assert (stats["day"].lowValue.daysSinceEpoch, stats["day"].highValue.daysSinceEpoch) == (
        -31,
        333,
    )
    assert stats["ts"].lowValue.secondsSinceEpoch == -500000  # UTC, whatever the session zone
    assert stats["ts"].highValue.secondsSinceEpoch == (rows - 1) * 3600 - 500000
    assert stats["s"].maxColLen == 6 and stats["s"].numNulls == 667
    assert (stats["b"].numTrues, stats["b"].numFalses) == (-1, -1)  # min false, max true
