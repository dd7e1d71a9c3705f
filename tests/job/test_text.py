"""Reading csv and json as Spark reads them (metastore.job.text), without Spark: values that
do not parse are NULL and counted with the row and column, or with strict an error; json
lines of another JSON type than the column's; the --schema DDL read without a JVM; the
summary's dates and timestamps."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from hive_metastore_thrift import ttypes as t
from metastore.job.analyze import AnalyzeResult, summary_text
from metastore.job.ddl import parse_schema
from metastore.job.errors import JobError, OptionsError
from metastore.job.files import ReadSpec
from metastore.job.source import Plan, column_of
from metastore.job.text import Text, read_text
from metastore.thrift_stats import make_union
from metastore.vocabulary import Kind

COLUMNS = [column_of("i", "int"), column_of("s", "string"), column_of("d", "date")]


def _read(data: str, spec: ReadSpec, strict: bool = False) -> tuple[dict[str, list[object]], Text]:
    found = Text("/data/f", strict)
    batches = list(read_text(pa.BufferReader(data.encode()), spec, COLUMNS, found))
    table = pa.Table.from_batches(batches)
    return {name: table.column(name).to_pylist() for name in table.column_names}, found


def test_json_values_of_another_type_are_null_and_counted() -> None:
    data = (
        '{"i": 1, "s": "a", "d": "2024-01-01"}\n'
        '{"i": "two", "s": 5, "d": "2024-02-30"}\n'
        "\n"
        "[1, 2]\n"
        '{"i": 4, "s": null}\n'
    )
    values, found = _read(data, ReadSpec("json"))
    assert values == {
        "i": [1, None, None, 4],
        "s": ["a", "5", None, None],  # a number's text in a string column, as Spark reads it
        "d": [pa.scalar(19723, pa.date32()).as_py(), None, None, None],
    }
    assert found.unparsed == 3  # "two", 2024-02-30, the line that is not an object
    assert sorted(found.examples) == [
        "/data/f row 2, column d: '2024-02-30'",
        "/data/f row 2, column i: 'two'",
        "/data/f row 3: '[1, 2]'",
    ]
    with pytest.raises(JobError, match=r"^/data/f row 3: '\[1, 2\]' is not a JSON object"):
        _read(data, ReadSpec("json"), strict=True)
    strict_data = data.replace("[1, 2]", '{"i": 3}')
    with pytest.raises(JobError, match=r"^/data/f row 2, column i: 'two' does not parse as int"):
        _read(strict_data, ReadSpec("json"), strict=True)


def test_csv_rows_with_fields_missing_or_extra() -> None:
    spec = ReadSpec("csv", header=True, names=("i", "s", "d"))
    values, found = _read("i,s,d\n1,a,2024-01-01\n2,b\n3,c,2024-01-03,x\n", spec)
    assert values["i"] == [1, 2, 3] and values["s"] == ["a", "b", "c"]
    assert values["d"][1] is None
    assert found.unparsed == 2
    assert found.examples[0] == "/data/f row 2: '2,b'"


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
    columns = [column_of("day", "date"), column_of("at", "timestamp")]
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
