"""`metastore describe` against a real server (SQLite and PostgreSQL) through its Thrift port:
statistics of every kind, histograms drawn from KLL sketches, basic statistics, partitions,
JSON, and one-line errors for what does not exist."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
from conftest import RunningServer
from metadata_builders import database, fields, partition, table

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.cli import EXIT_OK, EXIT_USAGE, main
from metastore.config import Settings
from metastore.sketches import kll_build

Client = ThriftHiveMetastore.Client
COLUMNS = (
    ("id", "bigint"),
    ("price", "decimal(10,2)"),
    ("name", "string"),
    ("paid", "boolean"),
    ("day", "date"),
    ("at", "timestamp"),
)
DAY = 86_400


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _stats(part_name: str | None, db: str, ids: np.ndarray) -> t.ColumnStatistics:
    long = t.LongColumnStatsData(
        lowValue=int(ids.min()),
        highValue=int(ids.max()),
        numNulls=3,
        numDVs=len(ids),
        histogram=kll_build(ids),
    )
    price = t.DecimalColumnStatsData(
        lowValue=t.Decimal(scale=2, unscaled=(150).to_bytes(2, "big")),
        highValue=t.Decimal(scale=2, unscaled=(99999).to_bytes(3, "big")),
        numNulls=0,
        numDVs=42,
    )
    name = t.StringColumnStatsData(maxColLen=12, avgColLen=6.5, numNulls=1, numDVs=7)
    paid = t.BooleanColumnStatsData(numTrues=60, numFalses=40, numNulls=0)
    day = t.DateColumnStatsData(
        lowValue=t.Date(19723), highValue=t.Date(19729), numNulls=0, numDVs=7
    )
    at = t.TimestampColumnStatsData(
        lowValue=t.Timestamp(19723 * DAY),
        highValue=t.Timestamp(19730 * DAY - 1),
        numNulls=0,
        numDVs=100,
        histogram=kll_build(np.arange(19723 * DAY, 19730 * DAY, 3600)),
    )
    objs = [
        t.ColumnStatisticsObj("id", "bigint", t.ColumnStatisticsData(longStats=long)),
        t.ColumnStatisticsObj("price", "decimal(10,2)", t.ColumnStatisticsData(decimalStats=price)),
        t.ColumnStatisticsObj("name", "string", t.ColumnStatisticsData(stringStats=name)),
        t.ColumnStatisticsObj("paid", "boolean", t.ColumnStatisticsData(booleanStats=paid)),
        t.ColumnStatisticsObj("day", "date", t.ColumnStatisticsData(dateStats=day)),
        t.ColumnStatisticsObj("at", "timestamp", t.ColumnStatisticsData(timestampStats=at)),
    ]
    desc = t.ColumnStatisticsDesc(
        isTblLevel=part_name is None, dbName=db, tableName="orders", partName=part_name
    )
    return t.ColumnStatistics(statsDesc=desc, statsObj=objs)


@pytest.fixture
def described(client: Client, db_name: str) -> Iterator[str]:
    """DB_NAME.orders, partitioned by ds, with statistics on the table and on ds=2024-01-01
    (ids 1..1000 there, 1..500 on the table), numRows on the partition; and DB_NAME.plain,
    without partitions or statistics."""
    client.create_database(database(db_name))
    client.create_table(
        table(db_name, "orders", cols=fields(*COLUMNS), keys=fields(("ds", "string")))
    )
    client.add_partition(
        partition(db_name, "orders", ["2024-01-01"], parameters={"numRows": "1003"})
    )
    client.add_partition(partition(db_name, "orders", ["2024-01-02"]))
    client.create_table(table(db_name, "plain"))
    assert client.update_table_column_statistics(_stats(None, db_name, np.arange(1, 501)))
    assert client.update_partition_column_statistics(
        _stats("ds=2024-01-01", db_name, np.arange(1, 1001))
    )
    yield db_name
    client.drop_database(db_name, True, True)


def test_a_column_shows_every_statistic_and_its_histogram(
    capsys: pytest.CaptureFixture[str], server: RunningServer, described: str
) -> None:
    uri = f"thrift://127.0.0.1:{server.port}"
    code, out, err = run(
        capsys, "describe", f"{described}.orders", "id", "--partition", "ds=2024-01-01",
        "--uri", uri, "--bins", "4",
    )  # fmt: skip
    assert code == EXIT_OK, err
    lines = out.splitlines()
    assert lines[0] == f"# {described}.orders partition ds=2024-01-01"
    assert "numRows 1003" in out and "numFiles -" in out
    first_blank = lines.index("")
    block = lines[first_blank + 1 : lines.index("", first_blank + 1)]
    rows: dict[str, str] = {}
    for line in block:
        key, _, value = line.partition(" ")
        rows[key] = value.strip()
    assert rows["col_name"] == "id" and rows["data_type"] == "bigint"
    assert rows["min"] == "1" and rows["max"] == "1000"
    assert rows["num_nulls"] == "3" and rows["distinct_count"] == "1000"
    assert rows["engine"] == "hive" and rows["COLUMN_STATS_ACCURATE"] == "true"
    assert rows["last_analyzed"].endswith(" UTC")
    assert rows["histogram"].startswith("KLL sketch, ")
    bars = lines[lines.index("histogram of id (4 bins of equal width, KLL estimate):") + 1 :]
    assert len(bars) == 4
    assert bars[0].startswith("  [1, 250.75)") and bars[-1].split()[1] == "1000]"
    counts = [int(bar.split()[-1]) for bar in bars]
    assert sum(counts) == 1000 and all(240 <= c <= 260 for c in counts), counts
    assert all("#" * 35 in bar for bar in bars)  # equal counts, bars of about equal length


def test_the_table_lists_its_columns_with_values_in_their_notation(
    capsys: pytest.CaptureFixture[str], server: RunningServer, described: str
) -> None:
    code, out, _ = run(
        capsys, "describe", f"{described}.orders", "--uri", f"thrift://127.0.0.1:{server.port}"
    )
    assert code == EXIT_OK
    assert "partitioned by ds string" in out
    assert "basic statistics (not marked accurate): numRows -" in out
    table_rows = {line.split()[0]: line.split() for line in out.splitlines()[4:]}
    assert table_rows["id"][2:6] == ["1", "500", "3", "500"]
    assert table_rows["price"][2:4] == ["1.50", "999.99"]
    assert table_rows["day"][2:4] == ["2024-01-01", "2024-01-07"]
    assert table_rows["at"][2:6] == ["2024-01-01", "00:00:00", "2024-01-07", "23:59:59"]
    assert table_rows["name"][2:6] == ["1", "7", "6.5", "12"]
    assert table_rows["paid"][2:5] == ["0", "60", "40"]


def test_json_for_scripts(
    capsys: pytest.CaptureFixture[str], server: RunningServer, described: str
) -> None:
    uri = f"thrift://127.0.0.1:{server.port}"
    code, out, _ = run(capsys, "describe", f"{described}.orders", "at", "--uri", uri, "--json")
    assert code == EXIT_OK
    doc = json.loads(out)
    assert doc["table"] == f"{described}.orders" and doc["partition"] is None
    assert doc["partition_keys"] == [{"name": "ds", "type": "string"}]
    [column] = doc["columns"]
    assert column["kind"] == "timestamp" and column["accurate"] is True
    assert column["statistics"]["min"] == "2024-01-01 00:00:00"
    assert column["statistics"]["num_trues"] is None
    assert len(column["histogram"]["counts"]) == 10
    assert sum(column["histogram"]["counts"]) == 7 * 24
    code, out, _ = run(capsys, "describe", f"{described}.orders", "--uri", uri, "--json")
    doc = json.loads(out)
    by_name = {c["name"]: c for c in doc["columns"]}
    assert by_name["price"]["statistics"]["max"] == "999.99"  # decimals exact, as text
    assert by_name["paid"]["statistics"]["num_trues"] == 60
    assert by_name["id"]["histogram"] is not None and by_name["name"]["histogram"] is None


def test_a_partition_without_statistics_and_another_engine(
    capsys: pytest.CaptureFixture[str], server: RunningServer, described: str
) -> None:
    uri = f"thrift://127.0.0.1:{server.port}"
    code, out, _ = run(
        capsys, "describe", f"{described}.orders", "--partition", "ds=2024-01-02", "--uri", uri
    )
    assert code == EXIT_OK
    assert out.count("no statistics") == len(COLUMNS)
    code, out, _ = run(
        capsys, "describe", f"{described}.orders", "id", "--engine", "spark", "--uri", uri
    )
    assert code == EXIT_OK and "statistics  none for engine spark" in out


def test_without_histograms_from_the_server_it_says_how_to_get_them(
    capsys: pytest.CaptureFixture[str], migrated_url: str, described: str
) -> None:
    plain = RunningServer(migrated_url, Settings())
    try:
        code, out, _ = run(
            capsys, "describe", f"{described}.orders", "id",
            "--uri", f"thrift://127.0.0.1:{plain.port}",
        )  # fmt: skip
    finally:
        plain.stop()
    assert code == EXIT_OK
    assert "none returned (colstats: serve --fetch-histogram)" in out
    assert "histogram of id" not in out


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("nosuchdb.orders",), EXIT_USAGE, "no database nosuchdb in thrift://"),
        (("{db}.nosuch",), EXIT_USAGE, "no table {db}.nosuch in thrift://"),
        (("{db}.orders", "nosuch"), EXIT_USAGE, "has no column nosuch; its columns are id,"),
        (("{db}.orders", "ds"), EXIT_USAGE, "ds is a partition key of {db}.orders"),
        (
            ("{db}.orders", "--partition", "ds=2031-01-01"),
            EXIT_USAGE,
            "no partition ds=2031-01-01 of {db}.orders; it has ds=2024-01-01, ds=2024-01-02",
        ),
        (("{db}.orders", "--partition", "hr=1"), EXIT_USAGE, "must give a value for each key"),
        (("{db}.plain", "--partition", "ds=1"), EXIT_USAGE, "is not partitioned"),
        (("{db}.orders", "--partition", "ds"), EXIT_USAGE, "'ds' is not key=value"),
        (("{db}.orders", "--bins", "0"), EXIT_USAGE, "--bins must be at least 1"),
        (("orders",), EXIT_USAGE, "must be given as DB.TABLE"),
    ],
)
def test_what_does_not_exist_is_one_line_naming_what_does(
    capsys: pytest.CaptureFixture[str],
    server: RunningServer,
    described: str,
    args: tuple[str, ...],
    code: int,
    message: str,
) -> None:
    argv = [a.format(db=described) for a in args]
    got, out, err = run(capsys, "describe", *argv, "--uri", f"thrift://127.0.0.1:{server.port}")
    assert got == code
    assert out == "" and err.count("\n") == 1
    assert err.startswith("metastore describe: error: ")
    assert message.format(db=described) in err, err
