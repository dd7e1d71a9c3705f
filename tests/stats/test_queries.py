"""metastore.stats.queries, called directly on SQLite and PostgreSQL: the bulk upsert of
statistics rows (one statement whatever their number; unset fields kept only for the same
kind; COLUMN_TYPE kept; the owner's names written), deletes by owner, column and engine, and
the reads by names and by owner ids (one statement each, unknown names absent, empty lists
answered without a statement)."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from core_builders import (
    add_database,
    add_partition,
    add_table,
    rolled_back,
    statement_count,
    stats_row,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.stats import queries
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL, StatsLevel
from metastore.stats.rows import STATS_COLUMNS, StatsRow, as_row
from metastore.store import models as m

# Text values that a PostgreSQL array's text must quote or escape.
AWKWARD = ['a"b', "back\\slash", "{x,y}", "NULL", " spaced ", "ünï€😀", "it's"]
SKETCH = bytes(range(256))


def stored(s: Session, level: StatsLevel, owner_id: int) -> dict[tuple[str, str], dict[str, Any]]:
    """(COLUMN_NAME, ENGINE) -> the stored row of OWNER_ID (every column but CS_ID)."""
    table = level.stats.__table__
    rows = s.execute(
        sa.select(table).where(level.stats_owner() == owner_id).order_by(table.c.CS_ID)
    ).mappings()
    return {
        (r["COLUMN_NAME"], r["ENGINE"]): {k: v for k, v in r.items() if k != "CS_ID"} for r in rows
    }


def long_row(column: str, low: int, high: int, **fields: Any) -> StatsRow:
    return stats_row(column, "long", LONG_LOW_VALUE=low, LONG_HIGH_VALUE=high, **fields)


# -- upsert_stats ------------------------------------------------------------------------------


def test_rows_are_stored_as_given_with_their_owners_names(store: sa.Engine) -> None:
    extremes = [
        long_row("big", -(2**63), 2**63 - 1, NUM_DISTINCTS=2**62, BIT_VECTOR=SKETCH),
        stats_row(
            "d",
            "double",
            "double",
            DOUBLE_LOW_VALUE=float("-inf"),
            DOUBLE_HIGH_VALUE=0.1 + 0.2,
            HISTOGRAM=b"",
        ),
        stats_row("tiny", "double", "float", DOUBLE_LOW_VALUE=5e-324, DOUBLE_HIGH_VALUE=1e308),
        stats_row(
            "dec",
            "decimal",
            "decimal(38,10)",
            BIG_DECIMAL_LOW_VALUE="-10.50",
            BIG_DECIMAL_HIGH_VALUE="9" * 28 + ".0000000000",
        ),
        stats_row("s", "string", "string", AVG_COL_LEN=12.345678901234567, MAX_COL_LEN=2**40),
        stats_row("b", "boolean", "boolean", NUM_TRUES=0, NUM_FALSES=7, NUM_NULLS=2**63 - 1),
        *(stats_row(name, "binary", "binary", LAST_ANALYZED=-1) for name in AWKWARD),
    ]
    with rolled_back(store) as s:
        table = add_table(s, add_database(s, "Dé b"), "T x", keys=[("ds", "string")])
        part = add_partition(s, table, ["a/b"])
        queries.upsert_stats(
            s,
            TABLE_LEVEL,
            [(table.tbl_id, r) for r in extremes],
            {table.tbl_id: ("hive", "Dé b", "T x")},
        )
        queries.upsert_stats(
            s,
            PARTITION_LEVEL,
            [(part.part_id, r) for r in extremes[:2]],
            {part.part_id: ("cat", "d", "t", part.name)},
        )
        rows = stored(s, TABLE_LEVEL, table.tbl_id)
        assert {key: {c: row[c] for c in STATS_COLUMNS} for key, row in rows.items()} == {
            (r["COLUMN_NAME"], "hive"): r for r in extremes
        }
        assert {
            (r["CAT_NAME"], r["DB_NAME"], r["TABLE_NAME"], r["TBL_ID"]) for r in rows.values()
        } == {("hive", "Dé b", "T x", table.tbl_id)}
        parts = stored(s, PARTITION_LEVEL, part.part_id)
        assert {
            (r["CAT_NAME"], r["DB_NAME"], r["TABLE_NAME"], r["PARTITION_NAME"])
            for r in parts.values()
        } == {("cat", "d", "t", "ds=a%2Fb")}
        assert parts[("big", "hive")]["BIT_VECTOR"] == SKETCH


def test_nothing_to_upsert_sends_nothing(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        add_database(s)
        before = statement_count(trace)
        queries.upsert_stats(s, TABLE_LEVEL, [], {})
        assert statement_count(trace) == before


@pytest.mark.parametrize("count", [1, 40])
def test_an_upsert_is_one_statement_whatever_the_number_of_rows(
    store: sa.Engine, count: int
) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        table = add_table(s, add_database(s), "t", keys=[("ds", "int")])
        parts = [add_partition(s, table, [str(i)]) for i in range(count)]
        names = {p.part_id: ("hive", "db", "t", p.name) for p in parts}
        rows = [(p.part_id, long_row(c, 0, 1)) for p in parts for c in ("a", "b")]
        before = statement_count(trace)
        queries.upsert_stats(s, PARTITION_LEVEL, rows, names)
        assert statement_count(trace) - before == 1
        total = sa.select(sa.func.count()).select_from(m.PartitionColumnStats)
        assert s.execute(total).scalar_one() == 2 * count
        # Written again: an update of every row, one statement still.
        before = statement_count(trace)
        queries.upsert_stats(s, PARTITION_LEVEL, rows, names)
        assert statement_count(trace) - before == 1
        assert s.execute(total).scalar_one() == 2 * count


def test_unset_fields_keep_the_stored_values_of_the_same_kind(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(s, add_database(s), "t")
        names = {table.tbl_id: ("hive", "db", "t")}
        first = long_row("id", 1, 9, NUM_DISTINCTS=9, BIT_VECTOR=b"v1", NUM_NULLS=3)
        queries.upsert_stats(s, TABLE_LEVEL, [(table.tbl_id, first)], names)

        update = stats_row("id", "long", "int", LONG_HIGH_VALUE=20, NUM_NULLS=0, LAST_ANALYZED=5)
        queries.upsert_stats(s, TABLE_LEVEL, [(table.tbl_id, update)], names)
        row = stored(s, TABLE_LEVEL, table.tbl_id)[("id", "hive")]
        assert (row["LONG_LOW_VALUE"], row["LONG_HIGH_VALUE"]) == (1, 20)
        assert (row["NUM_DISTINCTS"], row["BIT_VECTOR"]) == (9, b"v1")
        # NUM_NULLS and LAST_ANALYZED are the new row's; COLUMN_TYPE is kept, as in HMS.
        assert (row["NUM_NULLS"], row["LAST_ANALYZED"], row["COLUMN_TYPE"]) == (0, 5, "bigint")

        # Another kind: what the new row leaves unset is unknown, not the old kind's values.
        other = stats_row("id", "double", "double", DOUBLE_HIGH_VALUE=2.5)
        queries.upsert_stats(s, TABLE_LEVEL, [(table.tbl_id, other)], names)
        row = stored(s, TABLE_LEVEL, table.tbl_id)[("id", "hive")]
        assert row["STATS_KIND"] == "double"
        assert (row["DOUBLE_LOW_VALUE"], row["DOUBLE_HIGH_VALUE"]) == (None, 2.5)
        assert (row["LONG_LOW_VALUE"], row["NUM_DISTINCTS"], row["BIT_VECTOR"]) == (
            None,
            None,
            None,
        )


def test_without_keep_unset_a_row_is_replaced_whole(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(s, add_database(s), "t")
        names = {table.tbl_id: ("hive", "db", "t")}
        queries.upsert_stats(
            s, TABLE_LEVEL, [(table.tbl_id, long_row("id", 1, 9, NUM_DISTINCTS=9))], names
        )
        merged = long_row("id", 0, 10)
        queries.upsert_stats(s, TABLE_LEVEL, [(table.tbl_id, merged)], names, keep_unset=False)
        row = stored(s, TABLE_LEVEL, table.tbl_id)[("id", "hive")]
        assert (row["LONG_LOW_VALUE"], row["LONG_HIGH_VALUE"], row["NUM_DISTINCTS"]) == (
            0,
            10,
            None,
        )


def test_rows_are_keyed_by_owner_column_and_engine_and_renamed_owners_are_renamed(
    store: sa.Engine,
) -> None:
    with rolled_back(store) as s:
        db_id = add_database(s)
        one, two = add_table(s, db_id, "one"), add_table(s, db_id, "two")
        rows = [
            (one.tbl_id, long_row("id", 1, 1)),
            (one.tbl_id, stats_row("id", "long", engine="spark", LONG_LOW_VALUE=2)),
            (one.tbl_id, long_row("ID", 3, 3)),  # names are as given: another column
            (two.tbl_id, long_row("id", 4, 4)),
        ]
        names = {one.tbl_id: ("hive", "db", "one"), two.tbl_id: ("hive", "db", "two")}
        queries.upsert_stats(s, TABLE_LEVEL, rows, names)
        assert sorted(stored(s, TABLE_LEVEL, one.tbl_id)) == [
            ("ID", "hive"),
            ("id", "hive"),
            ("id", "spark"),
        ]
        renamed = {one.tbl_id: ("hive", "db2", "uno")}
        queries.upsert_stats(s, TABLE_LEVEL, [(one.tbl_id, long_row("id", 5, 5))], renamed)
        row = stored(s, TABLE_LEVEL, one.tbl_id)[("id", "hive")]
        assert (row["DB_NAME"], row["TABLE_NAME"], row["LONG_LOW_VALUE"]) == ("db2", "uno", 5)
        assert stored(s, TABLE_LEVEL, two.tbl_id)[("id", "hive")]["LONG_LOW_VALUE"] == 4


# -- delete_stats ------------------------------------------------------------------------------


def test_deletes_by_column_and_engine(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db_id = add_database(s)
        table, other = add_table(s, db_id, "t"), add_table(s, db_id, "u")
        rows = [
            (table.tbl_id, stats_row(column, "long", engine=engine))
            for column in ("a", "b", "c")
            for engine in ("hive", "spark")
        ]
        rows.append((other.tbl_id, stats_row("a", "long")))
        names = {table.tbl_id: ("hive", "db", "t"), other.tbl_id: ("hive", "db", "u")}
        queries.upsert_stats(s, TABLE_LEVEL, rows, names)

        assert queries.delete_stats(s, TABLE_LEVEL, table.tbl_id, "a", "hive") == 1
        assert queries.delete_stats(s, TABLE_LEVEL, table.tbl_id, "a", "hive") == 0
        assert queries.delete_stats(s, TABLE_LEVEL, table.tbl_id, "b", None) == 2
        assert queries.delete_stats(s, TABLE_LEVEL, table.tbl_id, "zz", None) == 0
        assert sorted(stored(s, TABLE_LEVEL, table.tbl_id)) == [
            ("a", "spark"),
            ("c", "hive"),
            ("c", "spark"),
        ]
        assert queries.delete_stats(s, TABLE_LEVEL, table.tbl_id, None, "spark") == 2
        assert queries.delete_stats(s, TABLE_LEVEL, table.tbl_id, None, None) == 1
        assert stored(s, TABLE_LEVEL, table.tbl_id) == {}
        assert list(stored(s, TABLE_LEVEL, other.tbl_id)) == [("a", "hive")]


# -- reads -------------------------------------------------------------------------------------


def _fill(s: Session) -> tuple[int, list[int]]:
    """Table db.t with statistics of a, b (hive) and a (spark), partitions ds=1..3 (with
    numRows 10, none and 'many') with statistics of a and b, ds=4 with none."""
    table = add_table(s, add_database(s), "t", keys=[("ds", "string")])
    rows = [(table.tbl_id, long_row("b", 2, 2)), (table.tbl_id, long_row("a", 1, 1))]
    rows.append((table.tbl_id, stats_row("a", "long", engine="spark", LONG_LOW_VALUE=7)))
    queries.upsert_stats(s, TABLE_LEVEL, rows, {table.tbl_id: ("hive", "db", "t")})
    parts = []
    for ds, num_rows in (("1", "10"), ("2", None), ("3", "many"), ("4", "0")):
        params = {"numRows": num_rows} if num_rows is not None else None
        parts.append(add_partition(s, table, [ds], params=params))
    queries.upsert_stats(
        s,
        PARTITION_LEVEL,
        [(p.part_id, long_row(c, i, i)) for i, p in enumerate(parts[:3]) for c in ("b", "a")],
        {p.part_id: ("hive", "db", "t", p.name) for p in parts},
    )
    return table.tbl_id, [p.part_id for p in parts]


def test_table_statistics_by_name(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _fill(s)
        found = queries.table_stats_by_name(s, "hive", "db", "t", ["b", "zz", "a"], "hive")
        assert [(r.COLUMN_NAME, r.LONG_LOW_VALUE) for r in found] == [("a", 1), ("b", 2)]
        assert tuple(found[0]) == as_row(long_row("a", 1, 1) | {"COLUMN_TYPE": "bigint"})
        spark = queries.table_stats_by_name(s, "hive", "db", "t", ["a", "b"], "spark")
        assert [(r.COLUMN_NAME, r.LONG_LOW_VALUE) for r in spark] == [("a", 7)]
        assert queries.table_stats_by_name(s, "hive", "db", "t", [], "hive") == []
        for where in (("other", "db", "t"), ("hive", "DB", "t"), ("hive", "db", "T")):
            assert queries.table_stats_by_name(s, *where, ["a"], "hive") == []


def test_partition_statistics_by_name(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        _fill(s)
        names = ["ds=3", "ds=9", "ds=1", "ds=4"]
        found = queries.partition_stats_by_name(s, "hive", "db", "t", names, ["b", "a"], "hive")
        assert [row[:2] for row in found] == [
            ("ds=1", "a"),
            ("ds=1", "b"),
            ("ds=3", "a"),
            ("ds=3", "b"),
        ]
        assert len(found[0]) == len(queries.PARTITION_STATS_FIELDS) - 1
        assert found[0][1:] == as_row(long_row("a", 0, 0) | {"COLUMN_TYPE": "bigint"})
        counted = queries.partition_stats_by_name(
            s, "hive", "db", "t", ["ds=1", "ds=2", "ds=3"], ["a"], "hive", with_row_counts=True
        )
        num_rows = queries.PARTITION_STATS_FIELDS.index("NUM_ROWS")
        # NUM_ROWS is the parameter's text, whatever it holds, or None.
        assert [(row[0], row[num_rows]) for row in counted] == [
            ("ds=1", "10"),
            ("ds=2", None),
            ("ds=3", "many"),
        ]
        assert queries.partition_stats_by_name(s, "hive", "db", "t", [], ["a"], "hive") == []
        assert queries.partition_stats_by_name(s, "hive", "db", "t", ["ds=1"], [], "hive") == []
        assert queries.partition_stats_by_name(s, "hive", "db", "t", names, ["a"], "spark") == []
        assert queries.partition_stats_by_name(s, "hive", "db", "u", names, ["a"], "hive") == []


@pytest.mark.parametrize("count", [1, 3])
def test_partition_statistics_are_one_statement(store: sa.Engine, count: int) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        _fill(s)
        names = [f"ds={i}" for i in range(1, count + 1)]
        before = statement_count(trace)
        found = queries.partition_stats_by_name(
            s, "hive", "db", "t", names, ["a", "b"], "hive", with_row_counts=True
        )
        assert statement_count(trace) - before == 1
        assert [row[:2] for row in found][::2] == [(name, "a") for name in names]


def test_stats_rows_by_owner_ids(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        tbl_id, part_ids = _fill(s)
        found = queries.stats_rows(s, TABLE_LEVEL, [tbl_id], None, "hive")
        assert sorted((owner, row["COLUMN_NAME"]) for owner, row in found) == [
            (tbl_id, "a"),
            (tbl_id, "b"),
        ]
        assert all(set(row) == set(STATS_COLUMNS) for _, row in found)
        by_part = queries.stats_rows(s, PARTITION_LEVEL, [*part_ids, 10**9], ["a"], "hive")
        assert sorted((owner, row["LONG_LOW_VALUE"]) for owner, row in by_part) == [
            (part_ids[0], 0),
            (part_ids[1], 1),
            (part_ids[2], 2),
        ]
        assert queries.stats_rows(s, PARTITION_LEVEL, [], None, "hive") == []
        assert queries.stats_rows(s, PARTITION_LEVEL, part_ids, [], "hive") == []
        assert (
            queries.stats_rows(s, TABLE_LEVEL, [tbl_id], ["a"], "spark")[0][1]["LONG_LOW_VALUE"]
            == 7
        )


def test_sketches_read_as_memoryview_become_bytes() -> None:
    """psycopg2 reads bytea as memoryview: the rows read on the driver give bytes."""
    row = as_row(long_row("a", 1, 2))
    at = {name: STATS_COLUMNS.index(name) for name in ("BIT_VECTOR", "HISTOGRAM")}
    viewed = list(row)
    viewed[at["BIT_VECTOR"]] = memoryview(b"\x01\x02")
    viewed[at["HISTOGRAM"]] = memoryview(b"")
    (converted,) = queries.table_stats_rows([viewed])
    assert converted["BIT_VECTOR"] == b"\x01\x02" and type(converted["BIT_VECTOR"]) is bytes
    assert converted["HISTOGRAM"] == b"" and type(converted["HISTOGRAM"]) is bytes
    assert queries.table_stats_rows([]) == []


def test_levels_name_their_tables() -> None:
    assert (TABLE_LEVEL.stats, TABLE_LEVEL.params, TABLE_LEVEL.owner) == (
        m.TableColumnStats,
        m.TableParam,
        "TBL_ID",
    )
    assert (PARTITION_LEVEL.stats, PARTITION_LEVEL.params, PARTITION_LEVEL.owner) == (
        m.PartitionColumnStats,
        m.PartitionParam,
        "PART_ID",
    )
    assert PARTITION_LEVEL.owner_names == ("CAT_NAME", "DB_NAME", "TABLE_NAME", "PARTITION_NAME")
    for level in (TABLE_LEVEL, PARTITION_LEVEL):
        assert level.stats_owner() is level.stats.__table__.c[level.owner]
