"""spark.sql.statistics.* parameters written by Spark -> Hive-format statistics, and the echo."""

from __future__ import annotations

import base64
import json
import struct
from decimal import Decimal
from typing import Any

import pytest
import xxhash
from spark_rows import COLUMNS, NUM_ROWS, TYPES, every_type, every_type_parameters, members

from hive_metastore_thrift import ttypes as t
from metastore.sketches import kll_count, kll_quantiles
from metastore.spark_properties import split_value
from metastore.spark_stats import (
    DIGEST_KEY,
    Histogram,
    HistogramBin,
    encode_histogram,
    hive_statistics,
    with_spark_statistics,
)
from metastore.spark_stats.histogram import decode_histogram, histogram_payload
from metastore.stats.validate import checked
from metastore.thrift_stats import python_decimal

P = "spark.sql.statistics.colStats."

# What Spark 4.1 wrote on ANALYZE TABLE ... FOR ALL COLUMNS (/work/notes/spark/notes.md §3.10),
# over 4 rows, and a few more types.


def spark_column(name: str, **values: str) -> dict[str, str]:
    """The keys Spark writes for column NAME: VALUES and version 2."""
    return {f"{P}{name}.{k}": v for k, v in {"version": "2", **values}.items()}


FIXED = {"distinctCount": "4", "nullCount": "0"}
SPARK = {
    "spark.sql.statistics.numRows": "4",
    "spark.sql.statistics.totalSize": "4577",
    **spark_column("c_int", min="1", max="4", avgLen="4", maxLen="4", **FIXED),
    **spark_column("c_str", avgLen="2", distinctCount="3", maxLen="3", nullCount="1"),
    **spark_column("c_double", min="1.5", max="4.5", avgLen="8", maxLen="8", **FIXED),
    **spark_column(
        "c_date",
        min="2024-01-01",
        max="2024-03-01",
        distinctCount="3",
        nullCount="1",
        avgLen="4",
        maxLen="4",
    ),
    **spark_column("c_bool", min="false", max="true", distinctCount="2", nullCount="0"),
    **spark_column("c_dec", min="1.25", max="9.99", avgLen="8", maxLen="8", **FIXED),
    **spark_column(
        "c_wide",
        min="1E-10",
        max="12345678901234567890.1234567890",
        avgLen="16",
        maxLen="16",
        **FIXED,
    ),
    **spark_column("c_long", min="10", max="40", avgLen="8", maxLen="8", **FIXED),
    **spark_column(
        "c_ts",
        min="1969-12-31 23:59:59.500000",
        max="2024-03-01 00:00:00.000000",
        avgLen="8",
        maxLen="8",
        **FIXED,
    ),
    **spark_column("c_bin", avgLen="6", maxLen="9", **FIXED),
    **spark_column(
        "c_float",
        min="1.1",
        max="NaN",
        distinctCount="3",
        nullCount="1",
        avgLen="4",
        maxLen="4",
    ),
}


def convert_all(params: dict[str, str]) -> dict[str, Any]:
    result = hive_statistics(params, COLUMNS)
    for row in result.statistics:  # what the server will store accepts them
        checked(row, TYPES[row["COLUMN_NAME"]])
    return members(result.statistics)


def test_every_type() -> None:
    stats = convert_all({**SPARK, "owner.team": "stats"})
    assert stats["c_int"] == t.LongColumnStatsData(lowValue=1, highValue=4, numNulls=0, numDVs=4)
    assert stats["c_long"] == t.LongColumnStatsData(lowValue=10, highValue=40, numNulls=0, numDVs=4)
    assert stats["c_str"] == t.StringColumnStatsData(
        maxColLen=3, avgColLen=2.0, numNulls=1, numDVs=4
    )
    assert stats["c_bin"] == t.BinaryColumnStatsData(maxColLen=9, avgColLen=6.0, numNulls=0)
    assert stats["c_double"] == t.DoubleColumnStatsData(
        lowValue=1.5, highValue=4.5, numNulls=0, numDVs=4
    )
    # a float's double, as Hive keeps it; NaN cannot be a Hive bound
    assert stats["c_float"] == t.DoubleColumnStatsData(
        lowValue=1.100000023841858, highValue=None, numNulls=1, numDVs=4
    )
    assert stats["c_date"] == t.DateColumnStatsData(
        lowValue=t.Date(19723), highValue=t.Date(19783), numNulls=1, numDVs=4
    )
    # floored to whole seconds
    assert stats["c_ts"] == t.TimestampColumnStatsData(
        lowValue=t.Timestamp(-1), highValue=t.Timestamp(1709251200), numNulls=0, numDVs=4
    )
    assert python_decimal(stats["c_dec"].lowValue) == Decimal("1.25")
    assert python_decimal(stats["c_dec"].highValue) == Decimal("9.99")
    assert stats["c_wide"].lowValue.scale == 10
    assert python_decimal(stats["c_wide"].lowValue) == Decimal("1E-10")
    assert python_decimal(stats["c_wide"].highValue) == Decimal("12345678901234567890.1234567890")
    assert stats["c_wide"].highValue.scale == 10  # exact, at the column's scale
    # booleans: min != max, so the counts are unknown
    assert stats["c_bool"] == t.BooleanColumnStatsData(numTrues=-1, numFalses=-1, numNulls=0)


def test_parameters_and_basic_statistics() -> None:
    params = {
        **SPARK,
        "owner.team": "stats",
        "numRows": "1",
        "COLUMN_STATS_ACCURATE": '{"COLUMN_STATS":{"x":"true"}}',
    }
    result = hive_statistics(params, COLUMNS)
    assert result.basic == {"numRows": "4", "totalSize": "4577"}
    assert result.parameters == {
        "owner.team": "stats",
        "numRows": "4",
        "totalSize": "4577",
        "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true","COLUMN_STATS":{"x":"true"}}',
    }
    assert not result.echo


def test_a_size_without_row_count_leaves_basic_stats_as_they_are() -> None:
    # ANALYZE ... NOSCAN, or an empty partition: totalSize only
    result = hive_statistics({"spark.sql.statistics.totalSize": "0", "numRows": "7"}, COLUMNS)
    assert result.parameters == {"numRows": "7", "totalSize": "0"}
    assert result.statistics == []


def test_no_spark_keys_nothing_to_convert() -> None:
    result = hive_statistics({"a": "1", DIGEST_KEY: "{}"}, COLUMNS)
    assert result == type(result)({"a": "1"})


@pytest.mark.parametrize(
    ("low", "high", "non_null", "counts"),
    [
        ("true", "true", 3, (3, 0)),  # every non-null row is true
        ("false", "false", 3, (0, 3)),
        ("FALSE", "False", 3, (0, 3)),  # Scala's toBoolean ignores case
        ("false", "true", 3, (-1, -1)),  # unknown: Trino and Impala read -1 so
        (None, None, 0, (0, 0)),  # all NULL
        ("true", "true", None, (-1, -1)),  # rows unknown
    ],
)
def test_booleans(
    low: str | None, high: str | None, non_null: int | None, counts: tuple[int, int]
) -> None:
    params = {
        f"{P}c_bool.version": "2",
        f"{P}c_bool.nullCount": "1",
        "spark.sql.statistics.totalSize": "1",
    }
    if non_null is not None:
        params["spark.sql.statistics.numRows"] = str(non_null + 1)
    if low is not None and high is not None:
        params.update({f"{P}c_bool.min": low, f"{P}c_bool.max": high})
    stats = convert_all(params)["c_bool"]
    assert (stats.numTrues, stats.numFalses, stats.numNulls) == (*counts, 1)


def test_histograms_become_kll_sketches_in_hives_units() -> None:
    days = Histogram(1.5, (HistogramBin(19723.0, 19723.0, 1), HistogramBin(19723.0, 19783.0, 2)))
    ints = Histogram(2.0, (HistogramBin(1.0, 2.0, 2), HistogramBin(2.0, 4.0, 2)))
    params = {
        **SPARK,
        f"{P}c_date.histogram": encode_histogram(days),
        **split_value(f"{P}c_int.histogram", encode_histogram(ints), limit=40),
    }
    stats = convert_all(params)
    assert kll_count(stats["c_date"].histogram) == 3  # numRows - nullCount
    assert set(kll_quantiles(stats["c_date"].histogram, [0.0, 1.0]).tolist()) <= {
        19723.0 * 86400,
        19783.0 * 86400,
    }
    assert kll_count(stats["c_int"].histogram) == 4
    assert stats["c_long"].histogram is None


# ------------------------------------------------------------------------------------------
# Malformed values: the column is skipped, the alter goes on


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("distinctCount", "four"),
        ("distinctCount", "-1"),
        ("nullCount", "1.0"),
        ("min", "one"),
        ("max", "99999999999"),  # not an int
        ("min", "5"),  # min > max
        ("version", "x"),
        ("version", "1"),  # Spark 2.3's format
        ("histogram", "garbage"),
        ("histogram.numParts", "2"),  # the parts are missing
    ],
)
def test_malformed_columns_are_skipped(
    key: str, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    params = {**SPARK, f"{P}c_int.{key}": value}
    stats = convert_all(params)
    assert "c_int" not in stats
    assert "c_long" in stats and "c_str" in stats
    assert "column c_int skipped" in caplog.text


@pytest.mark.parametrize(
    ("column", "key", "value"),
    [
        ("c_tiny", "min", "-129"),  # beyond a tinyint
        ("c_dec", "max", "123456789.5"),  # beyond decimal(10,2)
        ("c_date", "min", "2024-02-30"),
        ("c_ts", "max", "2024-03-01T00:00:00"),
        ("c_bool", "min", "yes"),
        ("c_double", "max", "inf"),  # Java does not read it
        ("c_str", "avgLen", "2.5"),
        ("c_str", "maxLen", None),  # Hive needs it
        ("c_int", "nullCount", None),
    ],
)
def test_values_that_do_not_fit_the_type(column: str, key: str, value: str | None) -> None:
    params = {
        **SPARK,
        f"{P}c_tiny.version": "2",
        f"{P}c_tiny.nullCount": "0",
        f"{P}c_tiny.distinctCount": "1",
    }
    if value is None:
        params.pop(f"{P}{column}.{key}")
    else:
        params[f"{P}{column}.{key}"] = value
    assert column not in convert_all(params)


def test_unknown_columns_and_bad_counts_are_skipped() -> None:
    params = {**SPARK, f"{P}nope.version": "2", "spark.sql.statistics.numRows": "many"}
    result = hive_statistics(params, COLUMNS)
    names = {row["COLUMN_NAME"] for row in result.statistics}
    assert "nope" not in names and "c_int" in names
    assert result.basic == {"totalSize": "4577"}
    assert "numRows" not in result.parameters


def test_columns_are_matched_whatever_their_case() -> None:
    params = {k.replace("c_int.", "C_Int."): v for k, v in SPARK.items()}
    result = hive_statistics(params, COLUMNS)
    assert "c_int" in {row["COLUMN_NAME"] for row in result.statistics}


# ------------------------------------------------------------------------------------------
# The echo


def served() -> dict[str, str]:
    return with_spark_statistics(every_type_parameters(), COLUMNS, every_type())


def test_an_echo_converts_nothing() -> None:
    params = served()
    result = hive_statistics(params, COLUMNS)
    assert result.echo
    assert result.statistics == [] and result.basic == {}
    assert result.parameters == every_type_parameters()  # no spark keys, no digest


def raw_frame(text: str) -> str:
    """TEXT's histogram in an uncompressed block: another text of the same histogram, as
    Spark's own compressor may give."""
    payload = histogram_payload(decode_histogram(text))
    check = xxhash.xxh32_intdigest(payload, seed=0x9747B28C) & 0x0FFFFFFF
    header = struct.pack("<8sBiii", b"LZ4Block", 0x16, len(payload), len(payload), check)
    end = struct.pack("<8sBiii", b"LZ4Block", 0x16, 0, 0, 0)
    return base64.b64encode(header + payload + end).decode()


def test_an_echo_recompressed_and_split_otherwise_is_still_an_echo() -> None:
    params = served()
    key = f"{P}c_int.histogram"
    text = raw_frame(params.pop(key))
    assert len(text) > 8000
    params.update(split_value(key, text, limit=1000))
    assert hive_statistics(params, COLUMNS).echo


def test_a_new_analyze_of_one_column_converts_that_column_only() -> None:
    params = served()
    params[f"{P}c_int.max"] = "2000"
    params[f"{P}c_new.version"] = "2"  # a column added since; no such column in the table
    result = hive_statistics(params, COLUMNS)
    assert not result.echo
    assert [row["COLUMN_NAME"] for row in result.statistics] == ["c_int"]
    assert result.statistics[0]["LONG_HIGH_VALUE"] == 2000
    assert "" in result.echoed and "c_str" in result.echoed
    assert result.basic == {}


def test_a_new_row_count_converts_the_basic_statistics_only() -> None:
    params = served()
    params["spark.sql.statistics.numRows"] = "5000"
    result = hive_statistics(params, COLUMNS)
    assert result.statistics == []
    assert result.basic == {"numRows": "5000", "totalSize": "123456"}
    assert result.parameters["numRows"] == "5000"


@pytest.mark.parametrize("digest", [None, "", "not json", "[1]", json.dumps({"": "0" * 16})])
def test_without_a_matching_digest_everything_is_converted(digest: str | None) -> None:
    params = served()
    params.pop(DIGEST_KEY)
    if digest is not None:
        params[DIGEST_KEY] = digest
    result = hive_statistics(params, COLUMNS)
    assert not result.echo
    assert len(result.statistics) == len(COLUMNS)
    assert result.basic["numRows"] == str(NUM_ROWS)


def test_hive_to_spark_to_hive_keeps_what_spark_can_hold() -> None:
    params = served()
    params.pop(DIGEST_KEY)
    back = members(hive_statistics(params, COLUMNS).statistics)
    original = {row["COLUMN_NAME"]: row for row in every_type()}
    for name in ("c_int", "c_long", "c_short", "c_tiny", "c_double", "c_float", "c_date", "c_ts"):
        low = back[name].lowValue
        expected = (
            original[name]["LONG_LOW_VALUE"]
            if original[name]["LONG_LOW_VALUE"] is not None
            else original[name]["DOUBLE_LOW_VALUE"]
        )
        assert getattr(low, "daysSinceEpoch", getattr(low, "secondsSinceEpoch", low)) == expected
        assert back[name].numNulls == original[name]["NUM_NULLS"]
    assert back["c_int"].numDVs == 991  # 990 + NULL
    assert kll_count(back["c_int"].histogram) == NUM_ROWS - 10
    assert back["c_bool"].numTrues == -1  # lost: Spark keeps no counts
