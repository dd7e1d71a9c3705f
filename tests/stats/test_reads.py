"""metastore.stats.reads, called directly on SQLite and PostgreSQL: what a request asks for
(StatsTarget: names as stored, missing names refused, impossible partition names left out),
one column's statistics (InvalidInput, InvalidObject or NotFound for what is wrong), many
columns of a table or of its partitions (unknown ones absent, an unknown table NotFound),
and the merge of many partitions into one row per column with HMS's count of partitions
found and its extrapolation of sums."""

from __future__ import annotations

import logging

import pytest
import sqlalchemy as sa
from core_builders import (
    add_database,
    add_partition,
    add_table,
    raises,
    rolled_back,
    stats_row,
)
from sqlalchemy.orm import Session

from metastore.errors import InvalidInput, InvalidObject, NotFound
from metastore.sketches import kll_build, kll_count
from metastore.stats import queries, reads
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL
from metastore.stats.rows import StatsRow


def target(
    columns: list[str | None] | None = None,
    partitions: list[str] | None = None,
    *,
    db: str | None = "db",
    table: str | None = "t",
) -> reads.StatsTarget:
    return reads.target(
        db,
        table,
        ["a", "b"] if columns is None else columns,
        partitions,
        catalog=None,
        engine=None,
        with_partitions=partitions is not None,
    )


# -- target ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("db", "table", "columns", "partitions", "with_partitions"),
    [
        (None, "t", ["a"], None, False),
        ("", "t", ["a"], None, False),
        ("db", None, ["a"], None, False),
        ("db", "", ["a"], None, False),
        ("db", "t", None, None, False),
        ("db", "t", ["a"], None, True),
        (None, None, None, None, True),
    ],
)
def test_a_request_without_the_names_it_needs_is_refused(
    db: str | None,
    table: str | None,
    columns: list[str | None] | None,
    partitions: list[str] | None,
    with_partitions: bool,
) -> None:
    needed = "dbName, tblName, colNames" + (" and partNames" if with_partitions else "")
    with raises(InvalidInput, f"the request needs {needed}"):
        reads.target(
            db,
            table,
            columns,
            partitions,
            catalog=None,
            engine=None,
            with_partitions=with_partitions,
        )


def test_a_target_names_everything_as_stored() -> None:
    found = reads.target(
        "@Spark#Sales",
        "Orders",
        ["B", None, "a", "", "b", "Ü"],
        ["DS=a%2fb/HR=1", "nonsense", "ds=2", "ds=a%2Fb/hr=1", "", "=x", "ds="],
        catalog=None,
        engine="Spark",
        with_partitions=True,
    )
    assert found == reads.StatsTarget(
        catalog="spark",
        db="sales",
        table="orders",
        columns=["a", "b", "ü"],
        partitions=["ds=2", "ds=a%2Fb/hr=1"],
        engine="Spark",  # an engine's name is as given
    )
    assert found.where == "sales.orders"
    # The catalog argument wins over the prefix; no engine is Hive's; an empty list is one.
    other = reads.target(
        "@spark#db", "t", [], [], catalog="HIVE", engine=None, with_partitions=True
    )
    assert (other.catalog, other.engine, other.columns, other.partitions) == (
        "hive",
        "hive",
        [],
        [],
    )
    # Partitions are not read from a request that has none.
    assert target(partitions=None).partitions == []
    assert (
        reads.target(
            "db", "t", ["a"], ["ds=1"], catalog=None, engine=None, with_partitions=False
        ).partitions
        == []
    )


# -- column_statistics ------------------------------------------------------------------------


def test_one_columns_statistics_or_what_is_wrong(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(s, add_database(s), "t", columns={"id": "bigint", "name": "string"})
        row = stats_row("id", LONG_LOW_VALUE=1, LONG_HIGH_VALUE=2)
        spark = stats_row("name", "string", "string", engine="spark")
        queries.upsert_stats(
            s,
            TABLE_LEVEL,
            [(table.tbl_id, row), (table.tbl_id, spark)],
            {table.tbl_id: ("hive", "db", "t")},
        )
        where = "table db.t"
        found = reads.column_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, "ID", where)
        assert found == row
        with raises(InvalidInput, "no column name given"):
            reads.column_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, "", where)
        with raises(InvalidInput, "no column name given"):
            reads.column_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, None, where)
        # Only the Hive engine's statistics are read; a column of the table without them.
        with raises(NotFound, "no statistics for column 'name' of table db.t"):
            reads.column_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, "name", where)
        with raises(InvalidObject, "table db.t has no column 'zz'"):
            reads.column_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, "ZZ", where)
        # Without a storage descriptor no column is known.
        with raises(InvalidObject, "p has no column 'x'"):
            reads.column_statistics(s, PARTITION_LEVEL, 10**9, None, "x", "p")


# -- many columns ------------------------------------------------------------------------------


def _fill(s: Session) -> None:
    """db.t partitioned by ds, with statistics of a and b of the table, and of its
    partitions ds=1 (a, b), ds=2 (a, b), ds=3 (a); ds=4 has none."""
    table = add_table(
        s, add_database(s), "t", columns={"a": "bigint", "b": "string"}, keys=[("ds", "string")]
    )
    queries.upsert_stats(
        s,
        TABLE_LEVEL,
        [
            (table.tbl_id, stats_row("a", LONG_LOW_VALUE=0)),
            (table.tbl_id, stats_row("b", "string", "string")),
        ],
        {table.tbl_id: ("hive", "db", "t")},
    )
    rows: list[tuple[int, StatsRow]] = []
    names = {}
    for day, columns in ((1, "ab"), (2, "ab"), (3, "a"), (4, "")):
        part = add_partition(s, table, [str(day)], params={"numRows": str(10 * day)})
        names[part.part_id] = ("hive", "db", "t", part.name)
        for column in columns:
            if column == "a":
                row = stats_row(
                    "a",
                    LONG_LOW_VALUE=day,
                    LONG_HIGH_VALUE=day * 10,
                    NUM_NULLS=day,
                    NUM_DISTINCTS=day,
                    HISTOGRAM=kll_build([float(day)] * day),
                    LAST_ANALYZED=day,
                )
            else:
                row = stats_row(
                    "b", "string", "string", AVG_COL_LEN=float(day), MAX_COL_LEN=day, NUM_NULLS=0
                )
            rows.append((part.part_id, row))
    queries.upsert_stats(s, PARTITION_LEVEL, rows, names)


def test_table_statistics(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _fill(s)
        found = reads.table_statistics(s, target(["b", "zz", "A"]))
        assert [row.COLUMN_NAME for row in found] == ["a", "b"]
        assert reads.table_statistics(s, target(["zz"])) == []
        assert reads.table_statistics(s, target([])) == []
        with raises(NotFound, "table db.u does not exist"):
            reads.table_statistics(s, target(table="u"))
        with raises(NotFound, "database hive.nodb does not exist"):
            reads.table_statistics(s, target(db="nodb"))


def test_partition_statistics(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _fill(s)
        found = reads.partition_statistics(s, target(None, ["ds=3", "ds=9", "DS=1", "ds=4"]))
        assert [row[:2] for row in found] == [("ds=1", "a"), ("ds=1", "b"), ("ds=3", "a")]
        assert reads.partition_statistics(s, target(None, ["ds=4", "x=1"])) == []
        assert reads.partition_statistics(s, target(None, [])) == []
        with raises(NotFound, "table db.u does not exist"):
            reads.partition_statistics(s, target(None, ["ds=1"], table="u"))
        # An unknown table is found out even when no partition name could exist.
        with raises(NotFound, "table db.u does not exist"):
            reads.partition_statistics(s, target(None, ["nonsense"], table="u"))


# -- aggregate_statistics ----------------------------------------------------------------------


def test_partitions_merge_into_a_row_per_column(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _fill(s)
        names = ["ds=1", "ds=2", "ds=3", "ds=4"]
        merged, found = reads.aggregate_statistics(s, target(None, names), merge_histograms=True)
        # Only ds=1 and ds=2 have statistics of both columns.
        assert found == 2
        by_column = {row["COLUMN_NAME"]: row for row in merged}
        a, b = by_column["a"], by_column["b"]
        assert (a["LONG_LOW_VALUE"], a["LONG_HIGH_VALUE"], a["LAST_ANALYZED"]) == (1, 30, 3)
        # The sums of 3 partitions found are extrapolated to the 4 requested: 6 * 4 / 3.
        assert a["NUM_NULLS"] == 8
        histogram = a["HISTOGRAM"]
        assert histogram is not None and kll_count(histogram) == 1 + 2 + 3
        # Averages weighted by the partitions' numRows: (1 * 10 + 2 * 20) / 30.
        assert b["AVG_COL_LEN"] == pytest.approx(50 / 30)
        assert b["MAX_COL_LEN"] == 2

        without, _ = reads.aggregate_statistics(s, target(["a"], names), merge_histograms=False)
        assert [row["HISTOGRAM"] for row in without] == [None]
        # One partition found: nothing to extrapolate from.
        one, found = reads.aggregate_statistics(
            s, target(["a"], ["ds=3", "ds=4"]), merge_histograms=True
        )
        assert found == 1 and one[0]["NUM_NULLS"] == 3


def test_nothing_to_merge(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _fill(s)
        assert reads.aggregate_statistics(s, target([], ["ds=1"]), merge_histograms=True) == ([], 0)
        assert reads.aggregate_statistics(s, target(None, []), merge_histograms=True) == ([], 0)
        assert reads.aggregate_statistics(
            s, target(None, ["ds=4", "ds=9"]), merge_histograms=True
        ) == ([], 0)
        assert reads.aggregate_statistics(s, target(["zz"], ["ds=1"]), merge_histograms=True) == (
            [],
            0,
        )
        with raises(NotFound, "table db.u does not exist"):
            reads.aggregate_statistics(s, target(None, ["ds=1"], table="u"), merge_histograms=True)


def test_row_counts_that_are_no_numbers_weigh_nothing(store: sa.Engine) -> None:
    """A numRows that is not a number is an unknown count: the plain average is taken."""
    with rolled_back(store) as s:
        _fill(s)
        s.execute(
            sa.text(
                'UPDATE "PARTITION_PARAMS" SET "PARAM_VALUE" = \'many\' WHERE "PARAM_KEY" = '
                "'numRows' AND \"PARAM_VALUE\" = '10'"
            )
        )
        merged, _ = reads.aggregate_statistics(
            s, target(["b"], ["ds=1", "ds=2"]), merge_histograms=True
        )
        assert merged[0]["AVG_COL_LEN"] == 1.5


def test_partitions_of_another_kind_are_left_out_for_the_newest_kind(
    store: sa.Engine, caplog: pytest.LogCaptureFixture
) -> None:
    with rolled_back(store) as s:
        _fill(s)
        # ds=3's statistics of a, analyzed last, are doubles now.
        (part_id,) = s.execute(
            sa.text('SELECT "PART_ID" FROM "PARTITIONS" WHERE "PART_NAME" = \'ds=3\'')
        ).scalars()
        newest = stats_row(
            "a",
            "double",
            "double",
            DOUBLE_LOW_VALUE=-1.5,
            DOUBLE_HIGH_VALUE=2.5,
            NUM_NULLS=4,
            LAST_ANALYZED=99,
        )
        queries.upsert_stats(
            s,
            PARTITION_LEVEL,
            [(part_id, newest)],
            {part_id: ("hive", "db", "t", "ds=3")},
            keep_unset=False,
        )
        with caplog.at_level(logging.WARNING, logger="metastore.stats.reads"):
            merged, found = reads.aggregate_statistics(
                s, target(["a"], ["ds=1", "ds=2", "ds=3"]), merge_histograms=True
            )
        (row,) = merged
        assert (row["STATS_KIND"], row["DOUBLE_LOW_VALUE"], row["DOUBLE_HIGH_VALUE"]) == (
            "double",
            -1.5,
            2.5,
        )
        assert row["LONG_LOW_VALUE"] is None
        # One partition kept: nothing is extrapolated. Every partition has the column.
        assert (row["NUM_NULLS"], found) == (4, 3)
        assert [r.getMessage() for r in caplog.records] == [
            "db.t.a: 2 partitions hold statistics of another kind than double; they are left out"
        ]
