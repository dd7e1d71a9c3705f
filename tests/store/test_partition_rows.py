"""metastore.store.partition_rows, called directly on SQLite and PostgreSQL: partition names
by a partial specification and partition rows in byte order (whatever the database's
collation) with a limit, storage rows, a table's row with its statistics or keys in one
statement, and everything below partitions and tables in one more (`Below`)."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from core_builders import (
    NAMES_IN_BYTE_ORDER,
    BuiltTable,
    add_column_list,
    add_database,
    add_partition,
    add_table,
    collate_partition_names_as_a_language,
    rolled_back,
    set_params,
    statement_count,
    stats_row,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.stats import queries
from metastore.stats.queries import TABLE_LEVEL
from metastore.stats.rows import STATS_COLUMNS
from metastore.store import models as m
from metastore.store import partition_rows as pr

KEYS = [("ds", "string"), ("hr", "int")]


def _day_table(s: Session) -> BuiltTable:
    """db.t by (ds, hr): ds 2024-01-01 and 2024-01-02, hr 1, 2 and 10."""
    table = add_table(s, add_database(s), "t", keys=KEYS)
    for ds in ("2024-01-02", "2024-01-01"):
        for hr in ("10", "2", "1"):
            add_partition(s, table, [ds, hr])
    return table


# -- names_by_values ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "limit", "expected"),
    [
        (
            [],
            None,
            [
                "ds=2024-01-01/hr=1",
                "ds=2024-01-01/hr=10",
                "ds=2024-01-01/hr=2",
                "ds=2024-01-02/hr=1",
                "ds=2024-01-02/hr=10",
                "ds=2024-01-02/hr=2",
            ],
        ),
        (["2024-01-01"], None, ["ds=2024-01-01/hr=1", "ds=2024-01-01/hr=10", "ds=2024-01-01/hr=2"]),
        (["", "1"], None, ["ds=2024-01-01/hr=1", "ds=2024-01-02/hr=1"]),
        ([None, "10"], -1, ["ds=2024-01-01/hr=10", "ds=2024-01-02/hr=10"]),
        (["2024-01-02"], 2, ["ds=2024-01-02/hr=1", "ds=2024-01-02/hr=10"]),
        (["2024-01-02"], 0, []),
        (["2024-01-02", "1", ""], None, ["ds=2024-01-02/hr=1"]),  # an empty value beyond the keys
        (["2024-01-02", "1", "x"], None, []),  # a value beyond the keys matches nothing
        (["2024-01-03"], None, []),
        (["", "01"], None, []),  # values are text
    ],
)
def test_names_by_values(
    store: sa.Engine, values: list[str | None], limit: int | None, expected: list[str]
) -> None:
    with rolled_back(store) as s:
        _day_table(s)
        assert pr.names_by_values(s, "hive", "db", "t", values, limit) == expected


def test_names_by_values_of_an_unknown_table_are_none(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _day_table(s)
        assert pr.names_by_values(s, "hive", "db", "u", ["2024-01-01"]) == []
        assert pr.names_by_values(s, "spark", "db", "t", []) == []
        assert pr.names_by_values(s, "hive", "DB", "t", []) == []


def test_names_by_values_are_one_statement_in_byte_order(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        collate_partition_names_as_a_language(s)
        table = add_table(s, add_database(s), "t", keys=[("k", "string"), ("n", "int")])
        for value in reversed(NAMES_IN_BYTE_ORDER):
            add_partition(s, table, [value, "1"])
        before = statement_count(trace)
        found = pr.names_by_values(s, "hive", "db", "t", ["", "1"])
        assert statement_count(trace) - before == 1
        assert found == [f"k={v}/n=1" for v in NAMES_IN_BYTE_ORDER]


# -- partition_rows and storage_rows -----------------------------------------------------------


def test_partition_rows_in_byte_order_with_a_limit(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        collate_partition_names_as_a_language(s)
        table = add_table(s, add_database(s), "t", keys=[("k", "string")])
        built = {v: add_partition(s, table, [v]) for v in reversed(NAMES_IN_BYTE_ORDER)}
        bare = add_partition(s, table, ["zz"], storage=False)
        other = add_table(s, table.db_id, "u", keys=[("k", "string")])
        add_partition(s, other, ["a"])
        rows = pr.partition_rows(s, pr.of_table(table.tbl_id))
        ids = {value: part.part_id for value, part in built.items()} | {"zz": bare.part_id}
        in_bytes = sorted(ids, key=lambda value: value.encode())  # "zz" before "é"
        assert [row[pr.PART_ID] for row in rows] == [ids[value] for value in in_bytes]
        first = rows[0]
        assert (first[pr.CREATE_TIME], first[pr.LAST_ACCESS_TIME]) == (2, 0)
        assert first[pr.SD_ID] == built["B"].sd_id
        assert first[pr.LOCATION] == "file:/w/db/t/k=B"
        assert (first[pr.INPUT_FORMAT], first[pr.OUTPUT_FORMAT]) == ("in", "out")
        assert (first[pr.CD_ID], first[pr.SERDE_NAME], first[pr.SLIB]) == (table.cd_id, "s", "lib")
        assert not first[pr.IS_COMPRESSED] and first[pr.NUM_BUCKETS] == -1
        # A partition without a storage descriptor has none of its fields.
        assert rows[-2][pr.SD_ID :] == (None,) * (pr.SERDE_TYPE + 1 - pr.SD_ID)
        limited = pr.partition_rows(s, pr.of_table(table.tbl_id), 2)
        assert [row[pr.PART_ID] for row in limited] == [built["B"].part_id, built["Z"].part_id]
        assert len(pr.partition_rows(s, pr.of_table(table.tbl_id), -1)) == len(rows)
        assert pr.partition_rows(s, pr.of_table(table.tbl_id), 0) == []
        narrowed = pr.of_table(table.tbl_id).where(m.Partition.__table__.c.PART_NAME == "k=a")
        assert [row[pr.PART_ID] for row in pr.partition_rows(s, narrowed)] == [built["a"].part_id]


def test_storage_rows_are_shaped_as_partition_rows(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = _day_table(s)
        assert table.sd_id is not None
        assert pr.storage_rows(s, []) == {}
        found = pr.storage_rows(s, [table.sd_id, 10**9])
        assert list(found) == [table.sd_id]
        row = found[table.sd_id]
        assert row[: pr.SD_ID] == (None, None, None)
        assert row[pr.LOCATION] == "file:/w/db/t"
        assert row[pr.IS_COMPRESSED] in (False, 0)  # SQLite's driver gives 0 and 1
        (part_row,) = pr.partition_rows(s, pr.of_table(table.tbl_id), 1)
        assert len(part_row) == len(row)


# -- table_row ---------------------------------------------------------------------------------


def test_a_tables_row_alone_with_its_statistics_or_with_its_keys(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = _day_table(s)
        names = {table.tbl_id: ("hive", "db", "t")}
        rows = [(table.tbl_id, stats_row(c)) for c in ("name", "id")]
        rows.append((table.tbl_id, stats_row("id", engine="spark", LONG_LOW_VALUE=3)))
        queries.upsert_stats(s, TABLE_LEVEL, rows, names)

        alone = pr.table_row(s, "hive", "db", "t")
        assert alone is not None
        assert alone.database == pr.StoredDatabase("db", "hive")
        assert alone.table.TBL_ID == table.tbl_id and alone.table.TBL_NAME == "t"
        assert alone.table.IS_REWRITE_ENABLED is False
        assert alone.storage is not None and alone.storage[pr.SD_ID] == table.sd_id
        assert (alone.stats, alone.keys) == (None, None)

        with_stats = pr.table_row(s, "hive", "db", "t", stats_engine="spark")
        assert with_stats is not None and with_stats.stats is not None
        assert [(r[0], r[STATS_COLUMNS.index("LONG_LOW_VALUE")]) for r in with_stats.stats] == [
            ("id", 3)
        ]
        hive = pr.table_row(s, "hive", "db", "t", stats_engine="hive")
        assert hive is not None and hive.stats is not None
        assert sorted(r[0] for r in hive.stats) == ["id", "name"]
        assert all(len(r) == len(STATS_COLUMNS) for r in hive.stats)
        none = pr.table_row(s, "hive", "db", "t", stats_engine="trino")
        assert none is not None and none.stats == []

        with_keys = pr.table_row(s, "hive", "db", "t", with_keys=True)
        assert with_keys is not None and with_keys.keys == KEYS and with_keys.stats is None
        with pytest.raises(ValueError, match="statistics or its keys, not both"):
            pr.table_row(s, "hive", "db", "t", stats_engine="hive", with_keys=True)


def test_a_table_without_storage_keys_or_statistics(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        add_table(s, add_database(s), "view", storage=False, table_type="VIRTUAL_VIEW")
        found = pr.table_row(s, "hive", "db", "view", with_keys=True)
        assert found is not None
        assert (found.storage, found.keys, found.table.SD_ID) == (None, [], None)
        assert found.table.TBL_TYPE == "VIRTUAL_VIEW"
        stats = pr.table_row(s, "hive", "db", "view", stats_engine="hive")
        assert stats is not None and stats.stats == []
        for where in (("hive", "db", "nope"), ("hive", "nodb", "view"), ("spark", "db", "view")):
            assert pr.table_row(s, *where) is None


@pytest.mark.parametrize("joined", [{}, {"stats_engine": "hive"}, {"with_keys": True}])
def test_a_tables_row_is_one_statement(store: sa.Engine, joined: dict[str, Any]) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        _day_table(s)
        before = statement_count(trace)
        assert pr.table_row(s, "hive", "db", "t", **joined) is not None
        assert statement_count(trace) - before == 1


# -- Below -------------------------------------------------------------------------------------


def _below_fixture(s: Session) -> tuple[BuiltTable, list[Any]]:
    """db.t with parameters, partitions ds=1 (own column list, parameters, descriptor and
    serde parameters, bucket and sort columns) and ds=2 (the table's column list)."""
    table = add_table(
        s,
        add_database(s),
        "t",
        columns={"id": "bigint", "name": None},
        keys=[("ds", "string"), ("hr", "int")],
        params={"tp": "v", "empty": None},
    )
    s.execute(
        sa.update(m.PartitionKey).where(m.PartitionKey.PKEY_NAME == "ds").values(PKEY_COMMENT="day")
    )
    own = add_column_list(s, {"id": "int"})
    one = add_partition(s, table, ["1", "5"], cd_id=own, params={"pp": "x", "n": None})
    add_partition(s, table, ["2", ""])
    assert one.sd_id is not None
    set_params(s, m.StorageDescriptorParam, one.sd_id, {"sdp": "y"})
    serde_id = s.execute(
        sa.select(m.StorageDescriptor.SERDE_ID).where(m.StorageDescriptor.SD_ID == one.sd_id)
    ).scalar_one()
    assert serde_id is not None
    set_params(s, m.SerDeParam, serde_id, {"field.delim": ","})
    s.execute(
        sa.insert(m.BucketingColumn.__table__),
        [
            {"SD_ID": one.sd_id, "INTEGER_IDX": i, "BUCKET_COL_NAME": c}
            for i, c in enumerate(["b", "a"])
        ],
    )
    s.execute(
        sa.insert(m.SortColumn.__table__),
        [
            {"SD_ID": one.sd_id, "INTEGER_IDX": i, "COLUMN_NAME": c, "ORDER": o}
            for i, (c, o) in enumerate([("z", 0), ("a", 1)])
        ],
    )
    rows = list(pr.partition_rows(s, pr.of_table(table.tbl_id)))
    return table, rows


def test_below_partitions(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        table, rows = _below_fixture(s)
        one, two = rows
        before = statement_count(trace)
        below = pr.Below.of_partitions(s, rows)
        assert statement_count(trace) - before == 1
        assert below.values == {one[pr.PART_ID]: ["1", "5"], two[pr.PART_ID]: ["2", ""]}
        assert below.part_params == {one[pr.PART_ID]: {"pp": "x", "n": ""}}
        assert below.sd_params == {one[pr.SD_ID]: {"sdp": "y"}}
        assert below.serde_params == {one[pr.SERDE_ID]: {"field.delim": ","}}
        assert below.buckets == {one[pr.SD_ID]: ["b", "a"]}
        assert below.sorts == {one[pr.SD_ID]: [("z", 0), ("a", 1)]}
        # Each column list once: the partition's own, and the table's that ds=2 shares.
        assert below.columns == {
            one[pr.CD_ID]: [("id", "int", None)],
            table.cd_id: [("id", "bigint", None), ("name", None, None)],
        }
        assert (below.table_params, below.keys, below.skewed) == ({}, {}, {})


def test_below_a_table_and_alone_as_among_others(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table, rows = _below_fixture(s)
        assert table.sd_id is not None
        storage = pr.storage_rows(s, [table.sd_id]).values()
        below = pr.Below.read(s, tables=[table.tbl_id], storage=storage)
        assert below.table_params == {table.tbl_id: {"tp": "v", "empty": ""}}
        assert below.keys == {table.tbl_id: [("ds", "string", "day"), ("hr", "int", None)]}
        assert below.columns == {table.cd_id: [("id", "bigint", None), ("name", None, None)]}
        assert below.values == {}
        # One partition alone reads what it reads among others.
        together = pr.Below.of_partitions(s, rows)
        for row in rows:
            alone = pr.Below.of_partitions(s, [row])
            assert alone.values == {row[pr.PART_ID]: together.values[row[pr.PART_ID]]}
            assert alone.columns == {row[pr.CD_ID]: together.columns[row[pr.CD_ID]]}


def test_below_nothing_is_no_statement(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        add_database(s)
        before = statement_count(trace)
        below = pr.Below.read(s)
        assert statement_count(trace) == before
        assert (below.values, below.columns, below.table_params, below.skewed) == ({}, {}, {}, {})


def test_below_skewed_descriptors(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _, rows = _below_fixture(s)
        sd_id = rows[0][pr.SD_ID]
        s.execute(
            sa.insert(m.SkewedColumnName.__table__),
            [{"SD_ID": sd_id, "INTEGER_IDX": 0, "SKEWED_COL_NAME": "id"}],
        )
        list_id = s.execute(
            sa.insert(m.SkewedStringList.__table__).returning(
                m.SkewedStringList.__table__.c.STRING_LIST_ID
            )
        ).scalar_one()
        s.execute(
            sa.insert(m.SkewedStringListValue.__table__).values(
                STRING_LIST_ID=list_id, INTEGER_IDX=0, STRING_LIST_VALUE="7"
            )
        )
        s.execute(
            sa.insert(m.SkewedValue.__table__).values(
                SD_ID_OID=sd_id, INTEGER_IDX=0, STRING_LIST_ID_EID=list_id
            )
        )
        s.execute(
            sa.insert(m.SkewedValueLocation.__table__).values(
                SD_ID=sd_id, STRING_LIST_ID_KID=list_id, LOCATION="file:/w/7"
            )
        )
        below = pr.Below.of_partitions(s, rows)
        assert list(below.skewed) == [sd_id]
        skewed = below.skewed[sd_id]
        assert (skewed.names, skewed.values, skewed.locations) == (
            ["id"],
            [["7"]],
            [(["7"], "file:/w/7")],
        )
