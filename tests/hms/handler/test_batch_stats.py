"""The batch and aggregate statistics calls, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any, cast

import numpy as np
import pytest
import sqlalchemy as sa
from conftest import RunningServer
from driver_trace import DriverStatements
from metadata_builders import WAREHOUSE
from stats_builders import PART, column_stats, dec, make_table, obj, row_count, stats_data

from hive_metastore_thrift import ttypes as t
from metastore.sketches import HyperLogLog, kll_build, kll_count

N_PARTS = 1000
N_COLS = 20
HLL_BOUND = 3 * 1.04 / math.sqrt(1024)


def make_wide_table(client: Any, db: str, table: str = "w", n_parts: int = N_PARTS) -> list[str]:
    """A table with N_COLS bigint columns and N_PARTS partitions; returns partition names."""
    client.create_database(t.Database(name=db, locationUri=f"file:{WAREHOUSE}/{db}", parameters={}))
    cols = [t.FieldSchema(f"c{i}", "bigint", None) for i in range(N_COLS)]
    cols += [t.FieldSchema("d", "decimal(38,0)", None), t.FieldSchema("s", "string", None)]
    sd = t.StorageDescriptor(
        cols=cols,
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
            partitionKeys=[t.FieldSchema("p", "int", None)],
        )
    )
    parts = [
        t.Partition(values=[str(i)], dbName=db, tableName=table, parameters={"numRows": "100"})
        for i in range(n_parts)
    ]
    client.add_partitions_req(
        t.AddPartitionsRequest(
            dbName=db, tblName=table, parts=parts, ifNotExists=False, needResult=False
        )
    )
    return [f"p={i}" for i in range(n_parts)]


def long_obj(
    column: str, low: int, high: int, nulls: int, ndv: int, sketch: bytes | None = None
) -> t.ColumnStatisticsObj:
    return t.ColumnStatisticsObj(
        column,
        "bigint",
        stats_data(
            "longStats", lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv, bitVectors=sketch
        ),
    )


def part_stats(
    db: str, part: str | None, objs: list[t.ColumnStatisticsObj], table: str = "w"
) -> t.ColumnStatistics:
    return t.ColumnStatistics(
        statsDesc=t.ColumnStatisticsDesc(
            isTblLevel=part is None, dbName=db, tableName=table, partName=part
        ),
        statsObj=objs,
    )


def wide_stats(db: str, parts: list[str]) -> list[t.ColumnStatistics]:
    return [
        part_stats(db, part, [long_obj(f"c{c}", -i - c, i + c, i, c + 1) for c in range(N_COLS)])
        for i, part in enumerate(parts)
    ]


@pytest.fixture(scope="module")
def wide(server: RunningServer) -> Iterator[tuple[str, list[str]]]:
    """A database with table w of N_PARTS x N_COLS statistics written by set_aggr_stats_for."""
    from conftest import connect

    client, transport = connect(server.port)
    db = "wide_db"
    parts = make_wide_table(client, db)
    assert (
        client.set_aggr_stats_for(
            t.SetPartitionsStatsRequest(colStats=wide_stats(db, parts), needMerge=False)
        )
        is True
    )
    transport.close()
    yield db, parts


# ------------------------------------------------------------------------------------------
# Reads


def test_bulk_write_and_reads_of_1000_partitions_by_20_columns(
    client: Any, server: RunningServer, wide: tuple[str, list[str]]
) -> None:
    db, parts = wide
    columns = [f"c{c}" for c in range(N_COLS)]
    request = t.PartitionsStatsRequest(dbName=db, tblName="w", colNames=columns, partNames=parts)
    # The first read: the table's version (for the cache of answers), then one query (the
    # rows with the versions the parts of answers are kept by: metastore.hms.pieces).
    with DriverStatements(server.engine) as statements:
        result = client.get_partitions_statistics_req(request)
        assert statements.selects() == 2
    # Again: the answer from the cache, after the version only.
    with DriverStatements(server.engine) as statements:
        assert client.get_partitions_statistics_req(request) == result
        assert statements.selects() == 1
    assert len(result.partStats) == N_PARTS
    for i, part in enumerate(parts):
        objs = result.partStats[part]
        assert [o.colName for o in objs] == sorted(columns)
        c5 = next(o for o in objs if o.colName == "c5").statsData.longStats
        assert (c5.lowValue, c5.highValue, c5.numNulls, c5.numDVs) == (-i - 5, i + 5, i, 6)

    with DriverStatements(server.engine) as statements:
        aggr = client.get_aggr_stats_for(request)
        assert statements.selects() == 2
    with DriverStatements(server.engine) as statements:
        assert client.get_aggr_stats_for(request) == aggr
        assert statements.selects() == 1
    assert aggr.partsFound == N_PARTS
    by_name = {o.colName: o.statsData.longStats for o in aggr.colStats}
    assert set(by_name) == set(columns)
    c3 = by_name["c3"]
    assert c3.lowValue == -(N_PARTS - 1) - 3 and c3.highValue == N_PARTS - 1 + 3
    assert c3.numNulls == sum(range(N_PARTS))
    assert c3.numDVs == 4  # no bit vectors: the largest NDV


def test_reads_leave_out_unknown_columns_and_partitions(
    client: Any, wide: tuple[str, list[str]]
) -> None:
    db, parts = wide
    result = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(
            dbName=db.upper(),
            tblName="W",
            colNames=["C1", "nope"],
            partNames=[parts[0], "p=99999", "not a name", "P=1"],
        )
    )
    assert sorted(result.partStats) == ["p=0", "p=1"]
    assert [o.colName for o in result.partStats["p=0"]] == ["c1"]
    empty = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(dbName=db, tblName="w", colNames=["nope"], partNames=parts[:3])
    )
    assert empty.partStats == {}
    aggr = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(
            dbName=db, tblName="w", colNames=["c1", "nope"], partNames=parts[:3]
        )
    )
    assert aggr.partsFound == 0  # no partition has every requested column
    assert [o.colName for o in aggr.colStats] == ["c1"]
    assert client.get_aggr_stats_for(
        t.PartitionsStatsRequest(dbName=db, tblName="w", colNames=[], partNames=parts)
    ) == t.AggrStats([], 0)


def test_reads_of_more_names_than_a_statement_has_parameters(
    client: Any, wide: tuple[str, list[str]]
) -> None:
    """The names are one parameter whatever their number (SQLite takes at most 32,766):
    12,000 names, most of them of no partition and some with characters an array's text
    or JSON escapes, find the table's 1,000 partitions."""
    db, parts = wide
    odd = ['p="1"', "p=\\2", "p={3,4}", "p=é,ß", "p=a'b"]
    names = parts + [f"p={n}" for n in range(N_PARTS, 12_000 - len(odd))] + odd
    request = t.PartitionsStatsRequest(dbName=db, tblName="w", colNames=["c2"], partNames=names)
    result = client.get_partitions_statistics_req(request)
    assert sorted(result.partStats) == sorted(parts)
    aggr = client.get_aggr_stats_for(request)
    assert aggr.partsFound == N_PARTS
    assert aggr.colStats[0].statsData.longStats.highValue == N_PARTS - 1 + 2


def test_unknown_table_gives_no_such_object(client: Any, wide: tuple[str, list[str]]) -> None:
    db, parts = wide
    for call, request in [
        (
            client.get_table_statistics_req,
            t.TableStatsRequest(dbName=db, tblName="nope", colNames=["c1"]),
        ),
        (
            client.get_partitions_statistics_req,
            t.PartitionsStatsRequest(
                dbName=db, tblName="nope", colNames=["c1"], partNames=parts[:1]
            ),
        ),
        (
            client.get_aggr_stats_for,
            t.PartitionsStatsRequest(
                dbName="nope", tblName="w", colNames=["c1"], partNames=parts[:1]
            ),
        ),
    ]:
        with pytest.raises(t.NoSuchObjectException, match="nope"):
            call(request)
    with pytest.raises(t.MetaException, match="colNames"):
        client.get_table_statistics_req(t.TableStatsRequest(dbName=db, tblName="w"))


def test_table_statistics_req_and_engines(client: Any, db_name: str) -> None:
    make_wide_table(client, db_name, n_parts=1)
    req = t.SetPartitionsStatsRequest(
        colStats=[
            part_stats(db_name, None, [long_obj("c1", 1, 2, 0, 2), long_obj("c2", 3, 4, 0, 2)])
        ]
    )
    assert client.update_table_column_statistics_req(req).result is True
    req.engine = "impala"
    req.colStats[0].statsObj = [long_obj("c1", 7, 8, 0, 2)]
    client.update_table_column_statistics_req(req)
    hive = client.get_table_statistics_req(
        t.TableStatsRequest(dbName=f"@hive#{db_name}", tblName="w", colNames=["c1", "c2", "c3"])
    )
    assert [(o.colName, o.statsData.longStats.lowValue) for o in hive.tableStats] == [
        ("c1", 1),
        ("c2", 3),
    ]
    impala = client.get_table_statistics_req(
        t.TableStatsRequest(dbName=db_name, tblName="w", colNames=["c1", "c2"], engine="impala")
    )
    assert [(o.colName, o.statsData.longStats.lowValue) for o in impala.tableStats] == [("c1", 7)]


def test_req_calls_take_exactly_one_entry_without_merge(client: Any, db_name: str) -> None:
    make_wide_table(client, db_name, n_parts=2)
    one = part_stats(db_name, "p=0", [long_obj("c1", 1, 2, 0, 2)])
    for req in [
        t.SetPartitionsStatsRequest(colStats=[one, one]),
        t.SetPartitionsStatsRequest(colStats=[]),
        t.SetPartitionsStatsRequest(colStats=[one], needMerge=True),
    ]:
        with pytest.raises(t.InvalidInputException):
            client.update_partition_column_statistics_req(req)
    assert (
        client.update_partition_column_statistics_req(
            t.SetPartitionsStatsRequest(colStats=[one])
        ).result
        is True
    )
    got = client.get_partition_column_statistics(db_name, "w", "p=0", "c1")
    assert got.statsObj[0].statsData.longStats.highValue == 2


# ------------------------------------------------------------------------------------------
# NDV, decimals, histograms


def _hll(values: np.ndarray) -> HyperLogLog:
    sketch = HyperLogLog(p=10)
    sketch.add_longs(values)
    return sketch


def test_ndv_of_the_union_uses_the_bit_vectors(client: Any, db_name: str) -> None:
    """Overlapping partitions: the union's NDV is far from the largest partition NDV."""
    n = 40
    parts = make_wide_table(client, db_name, n_parts=n)
    entries = []
    for i, part in enumerate(parts):
        values = np.arange(i * 5000, i * 5000 + 20000, dtype=np.int64)
        sketch = _hll(values)
        entries.append(
            part_stats(
                db_name,
                part,
                [
                    long_obj(
                        "c1",
                        int(values[0]),
                        int(values[-1]),
                        0,
                        sketch.estimate(),
                        sketch.to_bytes(),
                    )
                ],
            )
        )
    client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=entries))
    aggr = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(dbName=db_name, tblName="w", colNames=["c1"], partNames=parts)
    )
    true_ndv = (n - 1) * 5000 + 20000
    stats = aggr.colStats[0].statsData.longStats
    assert abs(stats.numDVs - true_ndv) / true_ndv <= HLL_BOUND
    union = HyperLogLog.from_bytes(stats.bitVectors)
    assert union.estimate() == stats.numDVs
    # One partition without a bit vector: HMS's fallback, the largest NDV.
    entries[0].statsObj[0].statsData.longStats.bitVectors = None
    client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=entries[:1]))
    stored = client.get_partition_column_statistics(db_name, "w", parts[0], "c1")
    assert stored.statsObj[0].statsData.longStats.bitVectors is not None  # unset keeps it
    client.delete_partition_column_statistics(db_name, "w", parts[0], "c1", None)
    client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=entries[:1]))
    fallback = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(dbName=db_name, tblName="w", colNames=["c1"], partNames=parts)
    )
    assert fallback.colStats[0].statsData.longStats.numDVs < 25000


def test_decimals_with_38_digits_aggregate_exactly(client: Any, db_name: str) -> None:
    parts = make_wide_table(client, db_name, n_parts=3)
    values = [(-(10**37) - 1, 10**37 + 3), (-(10**38 - 1), 5), (7, 10**38 - 1)]
    entries = [
        part_stats(
            db_name,
            part,
            [
                t.ColumnStatisticsObj(
                    "d",
                    "decimal(38,0)",
                    stats_data(
                        "decimalStats",
                        lowValue=dec(low, 0),
                        highValue=dec(high, 0),
                        numNulls=1,
                        numDVs=2,
                    ),
                )
            ],
        )
        for part, (low, high) in zip(parts, values, strict=True)
    ]
    client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=entries))
    aggr = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(dbName=db_name, tblName="w", colNames=["d"], partNames=parts)
    )
    stats = aggr.colStats[0].statsData.decimalStats
    assert stats.lowValue == dec(-(10**38 - 1), 0)
    assert stats.highValue == dec(10**38 - 1, 0)
    assert stats.numNulls == 3


def test_histograms_are_merged(client: Any, db_name: str) -> None:
    parts = make_wide_table(client, db_name, n_parts=2)
    entries = [
        part_stats(
            db_name,
            part,
            [
                t.ColumnStatisticsObj(
                    "c1",
                    "bigint",
                    stats_data(
                        "longStats",
                        lowValue=0,
                        highValue=999,
                        numNulls=0,
                        numDVs=1000,
                        histogram=kll_build(np.arange(1000) + 1000 * i),
                    ),
                )
            ],
        )
        for i, part in enumerate(parts)
    ]
    client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=entries))
    aggr = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(dbName=db_name, tblName="w", colNames=["c1"], partNames=parts)
    )
    assert kll_count(aggr.colStats[0].statsData.longStats.histogram) == 2000


# ------------------------------------------------------------------------------------------
# set_aggr_stats_for with needMerge, COLUMN_STATS_ACCURATE, atomicity


def _accurate(client: Any, db: str, part: str | None) -> dict[str, Any]:
    params = (
        client.get_partition_by_name(db, "w", part).parameters
        if part
        else client.get_table(db, "w").parameters
    )
    accurate: dict[str, Any] = json.loads(params["COLUMN_STATS_ACCURATE"])
    return accurate


def test_merge_combines_with_accurate_stored_statistics(client: Any, db_name: str) -> None:
    parts = make_wide_table(client, db_name, n_parts=1)
    old_values, new_values = np.arange(0, 3000), np.arange(2000, 6000)
    old, new = _hll(old_values), _hll(new_values)
    string_old = t.ColumnStatisticsObj(
        "s", "string", stats_data("stringStats", maxColLen=10, avgColLen=4.0, numNulls=1, numDVs=5)
    )
    string_new = t.ColumnStatisticsObj(
        "s", "string", stats_data("stringStats", maxColLen=7, avgColLen=6.0, numNulls=2, numDVs=3)
    )
    client.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(
            colStats=[
                part_stats(
                    db_name,
                    parts[0],
                    [long_obj("c1", 0, 2999, 3, old.estimate(), old.to_bytes()), string_old],
                )
            ]
        )
    )
    assert _accurate(client, db_name, parts[0]) == {"COLUMN_STATS": {"c1": "true", "s": "true"}}
    client.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(
            needMerge=True,
            colStats=[
                part_stats(
                    db_name,
                    parts[0],
                    [long_obj("c1", 2000, 5999, 4, new.estimate(), new.to_bytes()), string_new],
                )
            ],
        )
    )
    c1 = client.get_partition_column_statistics(db_name, "w", parts[0], "c1").statsObj[0]
    long_stats = c1.statsData.longStats
    assert (long_stats.lowValue, long_stats.highValue, long_stats.numNulls) == (0, 5999, 7)
    assert abs(long_stats.numDVs - 6000) / 6000 <= HLL_BOUND
    s = client.get_partition_column_statistics(db_name, "w", parts[0], "s").statsObj[0]
    assert (
        s.statsData.stringStats.maxColLen,
        s.statsData.stringStats.avgColLen,
        s.statsData.stringStats.numNulls,
        s.statsData.stringStats.numDVs,
    ) == (10, 5.0, 3, 5)


def test_counts_that_add_up_past_the_largest_i64_are_kept_at_it(client: Any, db_name: str) -> None:
    """A merged write, and the aggregate of two partitions, whose numNulls add up past
    2^63-1: kept at 2^63-1, not an error of the database or of the answer's encoding."""
    largest = 2**63 - 1
    parts = make_wide_table(client, db_name, n_parts=2)
    for part in parts:
        client.set_aggr_stats_for(
            t.SetPartitionsStatsRequest(
                colStats=[part_stats(db_name, part, [long_obj("c1", 0, 9, largest - 1, 10)])]
            )
        )
    request = t.PartitionsStatsRequest(db_name, "w", ["c1"], parts)
    aggregate = client.get_aggr_stats_for(request).colStats[0].statsData.longStats
    assert aggregate.numNulls == largest
    client.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(
            needMerge=True,
            colStats=[part_stats(db_name, parts[0], [long_obj("c1", 5, 20, largest - 1, 10)])],
        )
    )
    c1 = client.get_partition_column_statistics(db_name, "w", parts[0], "c1").statsObj[0]
    stored = c1.statsData.longStats
    assert (stored.lowValue, stored.highValue, stored.numNulls) == (0, 20, largest)


def test_merge_overwrites_statistics_not_marked_accurate(
    client: Any, db_name: str, server: RunningServer
) -> None:
    parts = make_wide_table(client, db_name, n_parts=1)
    client.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(
            colStats=[part_stats(db_name, parts[0], [long_obj("c1", 0, 10, 3, 5)])]
        )
    )
    engine = sa.create_engine(server.url)
    with engine.begin() as conn:
        conn.execute(
            sa.text('DELETE FROM "PARTITION_PARAMS" WHERE "PARAM_KEY" = \'COLUMN_STATS_ACCURATE\'')
        )
    engine.dispose()
    client.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(
            needMerge=True, colStats=[part_stats(db_name, parts[0], [long_obj("c1", 5, 20, 1, 2)])]
        )
    )
    got = client.get_partition_column_statistics(db_name, "w", parts[0], "c1").statsObj[0]
    assert (
        got.statsData.longStats
        == stats_data("longStats", lowValue=5, highValue=20, numNulls=1, numDVs=2).longStats
    )


def test_column_stats_accurate_follows_updates_and_deletes(client: Any, db_name: str) -> None:
    parts = make_wide_table(client, db_name, n_parts=1)
    client.update_table_column_statistics(
        part_stats(db_name, None, [long_obj("c2", 1, 2, 0, 2), long_obj("c1", 1, 2, 0, 2)])
    )
    params = client.get_table(db_name, "w").parameters
    assert params["COLUMN_STATS_ACCURATE"] == '{"COLUMN_STATS":{"c1":"true","c2":"true"}}'
    client.delete_table_column_statistics(db_name, "w", "c1", None)
    assert _accurate(client, db_name, None) == {"COLUMN_STATS": {"c2": "true"}}
    client.update_partition_column_statistics(
        part_stats(db_name, parts[0], [long_obj("c3", 1, 2, 0, 2)])
    )
    assert _accurate(client, db_name, parts[0]) == {"COLUMN_STATS": {"c3": "true"}}
    client.delete_partition_column_statistics(db_name, "w", parts[0], None, None)
    assert (
        "COLUMN_STATS_ACCURATE"
        not in client.get_partition_by_name(db_name, "w", parts[0]).parameters
    )


def test_a_bad_entry_fails_the_whole_batch(
    client: Any, db_name: str, server: RunningServer
) -> None:
    parts = make_wide_table(client, db_name, n_parts=20)
    before = row_count(server.url, "PART_COL_STATS")
    entries = wide_stats(db_name, parts)
    entries[-1].statsObj[-1].statsData = stats_data("doubleStats", numNulls=0, numDVs=1)
    with pytest.raises(t.InvalidInputException, match="c19"):
        client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=entries))
    entries = wide_stats(db_name, parts)
    entries[7].statsDesc.partName = "p=12345"
    with pytest.raises(t.NoSuchObjectException, match="p=12345"):
        client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=entries))
    assert row_count(server.url, "PART_COL_STATS") == before
    assert (
        "COLUMN_STATS_ACCURATE"
        not in client.get_partition_by_name(db_name, "w", parts[0]).parameters
    )


def test_partial_coverage_extrapolates_sums(client: Any, db_name: str) -> None:
    parts = make_wide_table(client, db_name, n_parts=4)
    client.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(
            colStats=[
                part_stats(db_name, part, [long_obj("c1", 0, 10, 10, 5)]) for part in parts[:2]
            ]
        )
    )
    aggr = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(dbName=db_name, tblName="w", colNames=["c1"], partNames=parts)
    )
    assert aggr.partsFound == 2
    assert aggr.colStats[0].statsData.longStats.numNulls == 40


def test_decimal_text_is_compared_as_numbers() -> None:
    from metastore.stats.aggregate import merge_rows
    from metastore.stats.rows import STATS_COLUMNS, StatsRow

    def row(low: str, high: str) -> StatsRow:
        base: dict[str, Any] = dict.fromkeys(STATS_COLUMNS)
        base.update(
            STATS_KIND="decimal",
            BIG_DECIMAL_LOW_VALUE=low,
            BIG_DECIMAL_HIGH_VALUE=high,
            NUM_NULLS=0,
            NUM_DISTINCTS=1,
            LAST_ANALYZED=1,
        )
        return cast(StatsRow, base)

    merged = merge_rows([row("-10.50", "9.5"), row("-9.75", "10.25")])
    assert (merged["BIG_DECIMAL_LOW_VALUE"], merged["BIG_DECIMAL_HIGH_VALUE"]) == (
        "-10.50",
        "10.25",
    )
    assert Decimal(merged["BIG_DECIMAL_LOW_VALUE"] or "").as_tuple().exponent == -2


def test_aggregate_keeps_the_newest_kind_of_a_column(client: Any, db_name: str) -> None:
    """A timestamp column may hold longStats (as Trino writes) in some partitions and
    timestampStats (Hive 4) in others; the aggregate merges those of the kind written last
    and leaves the others out, as they cannot be merged."""
    make_table(client, db_name)
    old_part, new_part = PART, "ds=2024-01-02/region=a%2Fb"
    client.add_partition(
        t.Partition(values=["2024-01-02", "a/b"], dbName=db_name, tableName="t", parameters={})
    )
    as_long = stats_data("longStats", lowValue=-5, highValue=99, numNulls=1, numDVs=3)
    as_ts = stats_data(
        "timestampStats",
        lowValue=t.Timestamp(10),
        highValue=t.Timestamp(20),
        numNulls=2,
        numDVs=4,
    )
    for part, data, analyzed in ((old_part, as_long, 1_000), (new_part, as_ts, 2_000)):
        client.update_partition_column_statistics(
            column_stats(db_name, [obj("c_ts", data)], part, last_analyzed=analyzed)
        )
    aggr = client.get_aggr_stats_for(
        t.PartitionsStatsRequest(
            dbName=db_name, tblName="t", colNames=["c_ts"], partNames=[old_part, new_part]
        )
    )
    assert aggr.partsFound == 2
    (got,) = aggr.colStats
    assert got.statsData.longStats is None
    ts = got.statsData.timestampStats
    assert (ts.lowValue, ts.highValue, ts.numNulls, ts.numDVs) == (
        t.Timestamp(10),
        t.Timestamp(20),
        2,
        4,
    )


def test_merge_of_one_column_named_twice_in_a_request(client: Any, db_name: str) -> None:
    """With needMerge, entries for the same partition (or table) and column in one request
    are merged with each other as well as with what is stored."""
    parts = make_wide_table(client, db_name, n_parts=1)
    first = part_stats(db_name, parts[0], [long_obj("c1", 0, 10, 1, 11)])
    second = part_stats(db_name, parts[0], [long_obj("c1", 5, 20, 2, 16)])
    table_first = part_stats(db_name, None, [long_obj("c1", -3, 1, 0, 5)])
    table_second = part_stats(db_name, None, [long_obj("c1", 0, 9, 4, 10)])
    assert client.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(
            colStats=[first, second, table_first, table_second], needMerge=True
        )
    )
    part = client.get_partition_column_statistics(db_name, "w", parts[0], "c1").statsObj[0]
    got = part.statsData.longStats
    assert (got.lowValue, got.highValue, got.numNulls) == (0, 20, 3)
    table = client.get_table_column_statistics(db_name, "w", "c1").statsObj[0]
    got = table.statsData.longStats
    assert (got.lowValue, got.highValue, got.numNulls) == (-3, 9, 4)
