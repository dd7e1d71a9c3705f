"""Hive-format statistics -> the spark.sql.statistics.* parameters Spark reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from spark_rows import COLUMNS, NUM_ROWS, every_type, every_type_parameters, row
from stats_builders import dec

from hive_metastore_thrift import ttypes as t
from metastore.sketches import kll_build
from metastore.spark_properties import read_large, split_value
from metastore.spark_stats import (
    DIGEST_KEY,
    decode_histogram,
    spark_column_names,
    spark_statistics,
    statistics_digest,
    with_spark_statistics,
)
from metastore.spark_stats.to_spark import spark_distinct_count

P = "spark.sql.statistics.colStats."
ROOT = Path(__file__).resolve().parents[2]


def column(keys: dict[str, str], name: str) -> dict[str, str]:
    prefix = f"{P}{name}."
    return {k[len(prefix) :]: v for k, v in keys.items() if k.startswith(prefix)}


def derived() -> dict[str, str]:
    return spark_statistics(every_type_parameters(), COLUMNS, every_type())


def test_every_type_in_sparks_formats() -> None:
    keys = derived()
    assert keys["spark.sql.statistics.totalSize"] == "123456"
    assert keys["spark.sql.statistics.numRows"] == str(NUM_ROWS)
    fixed = {"nullCount": "10", "version": "2"}
    assert column(keys, "c_long") == {
        **fixed,
        "distinctCount": "500",  # Hive's 501 counts NULL
        "min": str(-(2**62)),
        "max": str(2**62),
        "avgLen": "8",
        "maxLen": "8",
    }
    assert column(keys, "c_short") == {
        "nullCount": "0",
        "version": "2",
        "distinctCount": "601",  # no NULL: nothing to subtract
        "min": "-300",
        "max": "300",
        "avgLen": "2",
        "maxLen": "2",
    }
    tiny = column(keys, "c_tiny")
    assert (tiny["min"], tiny["max"], tiny["avgLen"], tiny["distinctCount"]) == (
        "-128",
        "127",
        "1",
        "256",
    )
    assert column(keys, "c_float") == {
        **fixed,
        "distinctCount": "49",
        "min": "1.1",  # Float.toString of the float Hive keeps as a double
        "max": "1.0E10",
        "avgLen": "4",
        "maxLen": "4",
    }
    double = column(keys, "c_double")
    assert (double["min"], double["max"], double["avgLen"]) == ("-1.0E-4", "1.0E7", "8")
    assert column(keys, "c_dec") == {
        **fixed,
        "distinctCount": "899",
        "min": "-10.50",
        "max": "999999.99",
        "avgLen": "8",
        "maxLen": "8",
    }
    wide = column(keys, "c_wide")
    assert (wide["min"], wide["max"], wide["avgLen"]) == (
        "1E-10",  # BigDecimal.toString at scale 10
        "1000000000000000000000000000.0000000000",
        "16",
    )
    assert wide["distinctCount"] == "1000"  # Hive's 2000, capped at the rows
    assert column(keys, "c_str") == {**fixed, "distinctCount": "99", "avgLen": "5", "maxLen": "12"}
    assert column(keys, "c_vchar") == {
        "nullCount": "0",
        "version": "2",
        "distinctCount": "1",
        "avgLen": "20",
        "maxLen": "20",
    }
    assert column(keys, "c_bin") == {**fixed, "avgLen": "43", "maxLen": "300"}  # no NDV in Hive
    assert column(keys, "c_bool") == {
        **fixed,
        "distinctCount": "2",
        "min": "false",
        "max": "true",
        "avgLen": "1",
        "maxLen": "1",
    }
    date = column(keys, "c_date")
    assert (date["min"], date["max"], date["avgLen"], date["distinctCount"]) == (
        "1969-12-31",
        "2024-01-01",
        "4",
        "299",
    )
    stamp = column(keys, "c_ts")
    assert (stamp["min"], stamp["max"], stamp["avgLen"]) == (
        "1969-12-31 00:00:01.000000",
        "2024-01-01 10:00:00.000000",
        "8",
    )


def test_histograms_come_from_kll_sketches_in_sparks_units() -> None:
    keys = derived()
    ints = decode_histogram(read_large(keys, f"{P}c_int.histogram") or "")
    assert len(ints.bins) == 254
    assert ints.height == (NUM_ROWS - 10) / 254  # the non-null rows
    assert ints.bins[0].lo == -5.0 and ints.bins[-1].hi == 994.0
    # 990 distinct values in 254 bins: a bin between two equal quantiles (one retained value
    # weighing more than a bin's height) counts one, so the sum falls short of 990 by as much
    # as the sketch has compacted (about a fifth for k = 200, whatever the input order).
    assert 750 <= sum(b.ndv for b in ints.bins) <= 990
    dates = decode_histogram(read_large(keys, f"{P}c_date.histogram") or "")
    assert dates.bins[0].lo == -1.0 and dates.bins[-1].hi == 19723.0  # days
    assert all(b.lo == round(b.lo) for b in dates.bins)
    assert "histogram" not in column(keys, "c_long")  # no sketch stored


def test_no_histogram_when_spark_asks_for_none() -> None:
    keys = spark_statistics(every_type_parameters(), COLUMNS, every_type(), num_bins=0)
    assert not any("histogram" in k for k in keys)


def test_a_broken_sketch_loses_only_the_histogram(caplog: pytest.LogCaptureFixture) -> None:
    rows = every_type()
    rows[0]["HISTOGRAM"] = b"not a sketch"
    keys = spark_statistics(every_type_parameters(), COLUMNS, rows)
    assert "histogram" not in column(keys, "c_int")
    assert column(keys, "c_int")["min"] == "-5"
    assert "not a KLL sketch" in caplog.text


def test_long_values_are_split_as_spark_splits_them() -> None:
    data = np.random.default_rng(9).lognormal(0, 3, 5000)  # bins that hardly compress
    rows = [
        row(
            "c_double",
            "doubleStats",
            lowValue=data.min(),
            highValue=data.max(),
            numNulls=0,
            numDVs=5000,
            histogram=kll_build(data),
        )
    ]
    params = {"COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"c_double":"true"}}', "totalSize": "9"}
    # 254 such bins take about 3,600 characters; numBins=600 takes more than 4,000
    keys = spark_statistics(params, [("c_double", "double")], rows, num_bins=600)
    key = f"{P}c_double.histogram"
    assert key not in keys
    parts = int(keys[f"{key}.numParts"])
    assert parts >= 2
    assert all(len(keys[f"{key}.part.{i}"]) == 4000 for i in range(parts - 1))
    assert 0 < len(keys[f"{key}.part.{parts - 1}"]) <= 4000
    text = read_large(keys, key)
    assert text is not None and len(text) > 4000
    assert len(decode_histogram(text).bins) == 600


def test_split_and_read_large() -> None:
    assert split_value("k", "x" * 4000) == {"k": "x" * 4000}
    assert split_value("k", "ab" * 3, limit=4) == {
        "k.numParts": "2",
        "k.part.0": "abab",
        "k.part.1": "ab",
    }
    assert read_large({"k.numParts": "2", "k.part.0": "abab", "k.part.1": "ab"}, "k") == "ababab"
    assert read_large({"k": "v", "k.numParts": "9"}, "k") == "v"
    assert read_large({"other": "v"}, "k") is None
    with pytest.raises(ValueError):
        read_large({"k.numParts": "2", "k.part.0": "ab"}, "k")
    with pytest.raises(ValueError):
        read_large({"k.part.0": "ab"}, "k")


# ------------------------------------------------------------------------------------------
# Which statistics are derived


def test_only_accurate_columns_are_derived() -> None:
    params = every_type_parameters()
    params["COLUMN_STATS_ACCURATE"] = '{"BASIC_STATS":"true","COLUMN_STATS":{"c_int":"true"}}'
    keys = spark_statistics(params, COLUMNS, every_type())
    assert {k.split(".")[4] for k in keys if k.startswith(P)} == {"c_int"}


def test_row_count_only_with_accurate_basic_statistics() -> None:
    params = every_type_parameters()
    params["COLUMN_STATS_ACCURATE"] = '{"COLUMN_STATS":{"c_int":"true"}}'
    keys = spark_statistics(params, COLUMNS, every_type())
    assert "spark.sql.statistics.numRows" not in keys
    assert keys["spark.sql.statistics.totalSize"] == "123456"  # Hive's, as Spark reads it
    assert column(keys, "c_int")["distinctCount"] == "990"  # not capped: rows unknown


@pytest.mark.parametrize(
    ("params", "size"),
    [
        ({"totalSize": "500", "rawDataSize": "700"}, "500"),
        ({"totalSize": "0", "rawDataSize": "700"}, "700"),  # Spark skips sizes of 0
        ({"totalSize": "junk", "rawDataSize": " 700 "}, "700"),
        # numRows x (8 + the row's average sizes: 4 for c_int, 5 for c_str, 20 for a string
        # without statistics, 20 for an array)
        ({}, str(NUM_ROWS * (8 + 4 + 5 + 20 + 20))),
    ],
)
def test_total_size(params: dict[str, str], size: str) -> None:
    params["numRows"] = str(NUM_ROWS)
    params["COLUMN_STATS_ACCURATE"] = (
        '{"BASIC_STATS":"true","COLUMN_STATS":{"c_int":"true","c_str":"true"}}'
    )
    columns = [("c_int", "int"), ("c_str", "string"), ("other", "string"), ("a", "array<int>")]
    keys = spark_statistics(params, columns, every_type())
    assert keys["spark.sql.statistics.totalSize"] == size
    assert keys["spark.sql.statistics.numRows"] == str(NUM_ROWS)


@pytest.mark.parametrize(
    "params",
    [
        # no size and no row count: nothing (Spark keeps its own estimate)
        {"COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true","COLUMN_STATS":{"c_int":"true"}}'},
        # only a size: Spark reads Hive's totalSize by itself
        {"totalSize": "100", "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'},
        # an accurate row count of 0 is not believed, as Spark does not
        {"numRows": "0", "totalSize": "0", "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'},
        {},
    ],
)
def test_nothing_is_derived_without_size_and_statistics(params: dict[str, str]) -> None:
    assert spark_statistics(params, COLUMNS, every_type()) == {}
    assert with_spark_statistics(params, COLUMNS, every_type()) == params


def test_statistics_of_a_kind_hive_does_not_write_are_left_out() -> None:
    rows = [row("c_ts", "longStats", lowValue=1, highValue=2, numNulls=0, numDVs=2)]  # Trino's
    params = {
        **every_type_parameters(),
        "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true","COLUMN_STATS":{"c_ts":"true"}}',
    }
    keys = spark_statistics(params, COLUMNS, rows)
    assert column(keys, "c_ts") == {}
    assert keys["spark.sql.statistics.numRows"] == str(NUM_ROWS)


@pytest.mark.parametrize(
    ("name", "member", "fields"),
    [
        ("c_tiny", "longStats", {"lowValue": -1000, "highValue": 5}),  # beyond a tinyint
        ("c_int", "longStats", {"lowValue": 1, "highValue": 2**40}),
        ("c_int", "longStats", {"lowValue": None, "highValue": 5}),  # both or neither
        ("c_date", "dateStats", {"lowValue": None, "highValue": None}),
        ("c_dec", "decimalStats", {"lowValue": None, "highValue": None}),
    ],
)
def test_min_and_max_that_do_not_fit_are_left_out(
    name: str, member: str, fields: dict[str, Any]
) -> None:
    rows = [row(name, member, numNulls=0, numDVs=3, **fields)]
    params = {"COLUMN_STATS_ACCURATE": f'{{"COLUMN_STATS":{{"{name}":"true"}}}}', "totalSize": "1"}
    stats = column(spark_statistics(params, COLUMNS, rows), name)
    assert "min" not in stats and "max" not in stats
    assert stats["distinctCount"] == "3"


def test_dates_beyond_year_9999_and_decimals_beyond_the_precision() -> None:
    rows = [
        row(
            "c_date",
            "dateStats",
            lowValue=t.Date(0),
            highValue=t.Date(3_000_000),
            numNulls=0,
            numDVs=3,
        ),
        row(
            "c_dec",
            "decimalStats",
            lowValue=dec(1, 0),
            highValue=dec(12345678912, 2),
            numNulls=0,
            numDVs=3,
        ),
    ]
    params = {
        "COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"c_date":"true","c_dec":"true"}}',
        "totalSize": "1",
    }
    keys = spark_statistics(params, COLUMNS, rows)
    assert "min" not in column(keys, "c_date")
    assert "min" not in column(keys, "c_dec")  # decimal(10,2) holds 8 digits before the point


@pytest.mark.parametrize(
    ("ndv", "nulls", "non_null", "spark"),
    [
        (10, 0, 100, 10),
        (10, 5, 95, 9),  # NULL counted by Hive
        (10, 5, None, 9),
        (500, 0, 100, 100),  # capped at the non-null rows
        (1, 5, 95, 1),  # at least one value when there are rows
        (1, 5, 0, 0),  # all NULL
        (0, 0, None, 0),
        (-1, 0, 100, None),  # unknown
        (None, 0, 100, None),
        (10, None, None, 10),  # nulls unknown: nothing to subtract
    ],
)
def test_distinct_count_without_hives_null(
    ndv: int | None, nulls: int | None, non_null: int | None, spark: int | None
) -> None:
    assert spark_distinct_count(ndv, nulls, non_null) == spark


@pytest.mark.parametrize(
    ("trues", "falses", "expected"),
    [
        (5, 3, {"min": "false", "max": "true", "distinctCount": "2"}),
        (5, 0, {"min": "true", "max": "true", "distinctCount": "1"}),
        (0, 3, {"min": "false", "max": "false", "distinctCount": "1"}),
        (0, 0, {"distinctCount": "0"}),  # all NULL
        (-1, -1, {}),  # unknown (Trino, Impala)
        (5, -1, {}),
    ],
)
def test_booleans(trues: int, falses: int, expected: dict[str, str]) -> None:
    rows = [row("c_bool", "booleanStats", numTrues=trues, numFalses=falses, numNulls=2)]
    params = {"COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"c_bool":"true"}}', "totalSize": "1"}
    stats = column(spark_statistics(params, COLUMNS, rows), "c_bool")
    assert stats == {"version": "2", "nullCount": "2", "avgLen": "1", "maxLen": "1", **expected}


def test_strings_of_an_all_null_column_take_sparks_default_size() -> None:
    rows = [
        row("c_str", "stringStats", maxColLen=0, avgColLen=0.0, numNulls=NUM_ROWS, numDVs=1),
        row("c_bin", "binaryStats", maxColLen=0, avgColLen=0.0, numNulls=NUM_ROWS),
    ]
    keys = spark_statistics(every_type_parameters(), COLUMNS, rows)
    assert column(keys, "c_str") == {
        "version": "2",
        "nullCount": str(NUM_ROWS),
        "distinctCount": "0",
        "avgLen": "20",
        "maxLen": "20",
    }
    assert column(keys, "c_bin")["avgLen"] == "100"


# ------------------------------------------------------------------------------------------
# Served parameters and their digest


def test_served_parameters_carry_the_derived_keys_and_their_digest() -> None:
    stored = {
        **every_type_parameters(),
        "spark.sql.statistics.numRows": "1",
        "spark.sql.statistics.colStats.gone.version": "2",
    }
    served = with_spark_statistics(stored, COLUMNS, every_type())
    keys = derived()
    spark = {k: v for k, v in served.items() if k.startswith("spark.") and k != DIGEST_KEY}
    assert spark.keys() == keys.keys()
    assert served["owner.team"] == "stats"
    digest = json.loads(served[DIGEST_KEY])
    assert set(digest) == {"", *(name for name, _ in COLUMNS)}
    assert all(len(h) == 16 for h in digest.values())
    assert served[DIGEST_KEY] == statistics_digest(served)


def test_digest_is_stable_and_sees_any_change() -> None:
    keys = derived()
    assert statistics_digest(keys) == statistics_digest(dict(reversed(list(keys.items()))))
    assert statistics_digest({"unrelated": "1"}) is None
    changed = {**keys, f"{P}c_int.max": "995"}
    before, after = (
        json.loads(statistics_digest(keys) or ""),
        json.loads(statistics_digest(changed) or ""),
    )
    assert {g for g in before if before[g] != after[g]} == {"c_int"}


def test_spark_column_names_from_a_data_source_schema() -> None:
    schema = json.dumps(
        {
            "type": "struct",
            "fields": [{"name": "userId", "type": "long", "nullable": True, "metadata": {}}],
        }
    )
    assert spark_column_names({"spark.sql.sources.schema": schema}) == {"userid": "userId"}
    split = split_value("spark.sql.sources.schema", schema, limit=10)
    assert spark_column_names(split) == {"userid": "userId"}
    assert spark_column_names({}) == {}
    assert spark_column_names({"spark.sql.sources.schema": "{broken"}) == {}


def test_a_server_converting_without_histograms_loads_no_numpy() -> None:
    """The conversions a server makes on every table call import neither NumPy nor
    DataSketches (as `metastore serve` does not, test_layout.py) until a histogram needs them."""
    code = """
import sys
from metastore.spark_stats import hive_statistics, with_spark_statistics
from metastore.stats.queries import STATS_COLUMNS
row = dict.fromkeys(STATS_COLUMNS)
row.update(COLUMN_NAME="a", COLUMN_TYPE="bigint", STATS_KIND="long", LONG_LOW_VALUE=1,
           LONG_HIGH_VALUE=9, NUM_NULLS=0, NUM_DISTINCTS=9)
accurate = '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}'
params = {"numRows": "9", "COLUMN_STATS_ACCURATE": accurate}
served = with_spark_statistics(params, [("a", "bigint")], [row])
assert "spark.sql.statistics.colStats.a.max" in served
served["spark.sql.statistics.colStats.a.max"] = "10"
assert hive_statistics(served, [("a", "bigint")]).statistics
print(" ".join(sorted(sys.modules)))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    loaded = {name.split(".")[0] for name in out.split()}
    assert "metastore" in loaded
    assert not loaded & {"numpy", "datasketches", "pyspark", "pyarrow"}
