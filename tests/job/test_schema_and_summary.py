"""What the job reads and shows without Spark: the --schema of csv and json files
(metastore.job.ddl), and the summary of a run (metastore.job.analyze.summary_text)."""

from __future__ import annotations

import re

import pytest

from hive_metastore_thrift import ttypes as t
from metastore.columns import Column
from metastore.job.analyze import AnalyzeResult, summary_text
from metastore.job.ddl import parse_schema
from metastore.job.errors import OptionsError
from metastore.job.source import Plan
from metastore.thrift_stats import make_union
from metastore.vocabulary import Kind


def test_the_schema_is_read_without_spark() -> None:
    assert parse_schema("a INT, `b c` VARCHAR(5) NOT NULL, m MAP<STRING, ARRAY<LONG>>") == [
        ("a", "int"),
        ("b c", "varchar(5)"),
        ("m", "map<string,array<bigint>>"),
    ]
    for bad, message in (
        ("a INTT", "unknown type INTT"),
        ("a INT,", "it ends where more was expected"),
        ("a INT, A STRING", "column A is given twice"),
        ("a DECIMAL(40,2)", "decimal(40,2) is not a decimal type Hive keeps"),
    ):
        with pytest.raises(OptionsError, match=rf"cannot read the schema .*: {re.escape(message)}"):
            parse_schema(bad)


def test_the_summary_shows_dates_and_timestamps_as_people_read_them() -> None:
    columns = [Column("day", "date"), Column("at", "timestamp")]
    plan = Plan("d", "t", [], columns, columns)
    day = t.DateColumnStatsData(
        lowValue=t.Date(19723), highValue=t.Date(19754), numNulls=0, numDVs=2
    )
    at = t.TimestampColumnStatsData(
        lowValue=t.Timestamp(1704067200),
        highValue=t.Timestamp(1706745599),
        numNulls=1,
        numDVs=3,
    )
    result = AnalyzeResult(
        plan=plan,
        table_stats={
            "day": t.ColumnStatisticsObj("day", "date", make_union(Kind.DATE, day)),
            "at": t.ColumnStatisticsObj("at", "timestamp", make_union(Kind.TIMESTAMP, at)),
        },
        partitions=1,
        seconds=1.0,
    )
    lines = summary_text(result).splitlines()
    assert lines[3].split() == ["day", "date", "0", "2", "2024-01-01", "2024-02-01"]
    assert lines[4].split() == [
        "at", "timestamp", "1", "3", "2024-01-01", "00:00:00", "2024-01-31", "23:59:59",
    ]  # fmt: skip
