"""metastore.stats.writes, called directly on SQLite and PostgreSQL: statistics written for
tables and partitions with COLUMN_STATS_ACCURATE marked beside them, checked against the
owner's columns (each mistake refused with the error and message that name it), merged with
accurate stored statistics on request, in a fixed number of statements per table whatever
the number of partitions; deletes that unmark what they delete; renames that move the names
HMS finds statistics by."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from core_builders import (
    BuiltTable,
    add_column_list,
    add_database,
    add_partition,
    add_table,
    raises,
    rolled_back,
    statement_count,
    stats_row,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.errors import InvalidInput, InvalidObject, NotFound
from metastore.stats import accurate, writes
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL, StatsLevel
from metastore.stats.rows import StatsRow
from metastore.stats.writes import StatsEntry
from metastore.store import models as m

COLUMNS = {"a": "bigint", "b": "string", "c": "double"}
BASIC = '{"BASIC_STATS":"true"}'


def long_row(column: str, low: int, high: int, **fields: Any) -> StatsRow:
    """A row as a door decodes it: no type named."""
    return stats_row(column, "long", "", LONG_LOW_VALUE=low, LONG_HIGH_VALUE=high, **fields)


def make(
    s: Session, *, keys: bool = True, params: dict[str, str | None] | None = None
) -> BuiltTable:
    """db.t with COLUMNS, partitioned by ds (unless not KEYS), partitions ds=1..3."""
    table = add_table(
        s,
        add_database(s),
        "t",
        columns=COLUMNS,
        keys=[("ds", "string")] if keys else [],
        params=params,
    )
    if keys:
        for day in ("1", "2", "3"):
            add_partition(s, table, [day], params=params)
    return table


def stored(s: Session, level: StatsLevel) -> dict[tuple[Any, ...], dict[str, Any]]:
    """(TBL_ID or PARTITION_NAME, COLUMN_NAME, ENGINE) -> the stored row."""
    table = level.stats.__table__
    key = "TBL_ID" if level is TABLE_LEVEL else "PARTITION_NAME"
    return {
        (r[key], r["COLUMN_NAME"], r["ENGINE"]): dict(r)
        for r in s.execute(sa.select(table)).mappings()
    }


def accurate_of(s: Session, model: type[Any], owner: str, owner_id: int) -> dict[str, Any] | None:
    value = s.execute(
        sa.select(model.PARAM_VALUE).where(
            getattr(model, owner) == owner_id, model.PARAM_KEY == accurate.KEY
        )
    ).scalar_one_or_none()
    return None if value is None else dict(json.loads(value))


def part_id(s: Session, name: str, tbl_id: int | None = None) -> int:
    """The PART_ID of partition NAME (of table TBL_ID, or the only one of that name)."""
    query = sa.select(m.Partition.PART_ID).where(m.Partition.PART_NAME == name)
    if tbl_id is not None:
        query = query.where(m.Partition.TBL_ID == tbl_id)
    found: int = s.execute(query).scalar_one()
    return found


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "error", "message"),
    [
        (StatsEntry("db", "nope", None, []), NotFound, "table db.nope does not exist"),
        (StatsEntry("nodb", "t", None, []), NotFound, "database hive.nodb does not exist"),
        (
            StatsEntry("db", "t", None, [long_row("zz", 1, 2)]),
            InvalidObject,
            "table db.t has no column 'zz'",
        ),
        (
            StatsEntry("db", "t", None, [long_row("a", 1, 2), long_row("a", 1, 3)]),
            InvalidInput,
            "column 'a' appears twice in one request",
        ),
        (
            StatsEntry("db", "t", None, [stats_row("a", "string", "")]),
            InvalidInput,
            "column 'a': stringStats does not fit a column of type 'bigint'; expected longStats",
        ),
        (
            StatsEntry("db", "t", None, [long_row("a", 2, 1)]),
            InvalidInput,
            "column 'a': lowValue 2 is greater than highValue 1",
        ),
        (
            StatsEntry("db", "t", "ds=9", [long_row("a", 1, 2)]),
            NotFound,
            "partition ds=9 of table db.t does not exist",
        ),
        (
            StatsEntry("db", "t", "nonsense", [long_row("a", 1, 2)]),
            InvalidObject,
            "partition name 'nonsense': 'nonsense' is not of the form key=value",
        ),
        (
            StatsEntry("db", "t", "ds=1/hr=2", [long_row("a", 1, 2)]),
            InvalidObject,
            "partition name 'ds=1/hr=2' does not match the table's partition keys (ds): "
            "unknown key(s) hr",
        ),
        (
            StatsEntry("db", "t", "ds=1", [long_row("zz", 1, 2)]),
            InvalidObject,
            "partition ds=1 of db.t has no column 'zz'",
        ),
    ],
)
def test_what_is_wrong_is_refused(
    store: sa.Engine, entry: StatsEntry, error: type[Exception], message: str
) -> None:
    with rolled_back(store) as s:
        make(s)
        with raises(error, message):
            writes.write_statistics(s, [entry], "hive")


def test_partitions_of_an_unpartitioned_table_are_refused(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        make(s, keys=False)
        with raises(InvalidObject, "table db.t is not partitioned"):
            writes.write_statistics(
                s, [StatsEntry("db", "t", "ds=1", [long_row("a", 1, 2)])], "hive"
            )


def test_an_engine_name_too_long_is_refused_before_anything_is_looked_up(store: sa.Engine) -> None:
    too_long = "engine is 129 characters long; at most 128 are kept"
    with rolled_back(store) as s, raises(InvalidInput, too_long):
        writes.write_statistics(s, [StatsEntry("nodb", "t", None, [])], "e" * 129)


def test_a_partition_whose_columns_differ_is_checked_against_its_own(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = make(s)
        own = add_column_list(s, {"a": "string"})
        add_partition(s, table, ["old"], cd_id=own)
        with raises(
            InvalidInput,
            "column 'a': longStats does not fit a column of type 'string'; expected stringStats",
        ):
            writes.write_statistics(
                s, [StatsEntry("db", "t", "ds=old", [long_row("a", 1, 2)])], "hive"
            )
        writes.write_statistics(
            s,
            [StatsEntry("db", "t", "ds=old", [stats_row("a", "string", "", MAX_COL_LEN=3)])],
            "hive",
        )
        assert stored(s, PARTITION_LEVEL)[("ds=old", "a", "hive")]["COLUMN_TYPE"] == "string"


def test_a_write_with_one_bad_entry_leaves_nothing_once_rolled_back(store: sa.Engine) -> None:
    """The rows of the entries before the bad one are written, and go with the caller's
    rollback (here, to a savepoint) as the module's docstring says."""
    with rolled_back(store) as s:
        make(s)
        good = StatsEntry("db", "t", None, [long_row("a", 1, 2)])
        bad = StatsEntry("db", "t", "ds=1", [long_row("zz", 1, 2)])
        savepoint = s.begin_nested()
        with raises(InvalidObject, "partition ds=1 of db.t has no column 'zz'"):
            writes.write_statistics(s, [good, bad], "hive")
        savepoint.rollback()
        assert stored(s, TABLE_LEVEL) == {}


# -- writes ------------------------------------------------------------------------------------


def test_a_write_stores_the_rows_and_marks_their_columns_accurate(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = make(s, params={accurate.KEY: BASIC})
        entries = [
            StatsEntry(
                "DB", "T", None, [long_row("A", 1, 9), stats_row("b", "string", "", MAX_COL_LEN=4)]
            ),
            # Names in another case, keys in another order are the stored partition's.
            StatsEntry("db", "t", "DS=1", [long_row("a", 1, 2)]),
            StatsEntry("db", "t", "ds=2", [stats_row("c", "double", "", DOUBLE_HIGH_VALUE=2.5)]),
        ]
        entries[0].rows[0]["COLUMN_NAME"] = "a"  # a door gives column names as stored
        writes.write_statistics(s, entries, "spark")
        tables = stored(s, TABLE_LEVEL)
        assert set(tables) == {(table.tbl_id, "a", "spark"), (table.tbl_id, "b", "spark")}
        row = tables[(table.tbl_id, "a", "spark")]
        # The column's type, names as HMS finds them.
        assert (row["COLUMN_TYPE"], row["DB_NAME"], row["TABLE_NAME"], row["CAT_NAME"]) == (
            "bigint",
            "db",
            "t",
            "hive",
        )
        assert set(stored(s, PARTITION_LEVEL)) == {("ds=1", "a", "spark"), ("ds=2", "c", "spark")}
        assert accurate_of(s, m.TableParam, "TBL_ID", table.tbl_id) == {
            "BASIC_STATS": "true",
            "COLUMN_STATS": {"a": "true", "b": "true"},
        }
        assert accurate_of(s, m.PartitionParam, "PART_ID", part_id(s, "ds=2")) == {
            "BASIC_STATS": "true",
            "COLUMN_STATS": {"c": "true"},
        }
        assert accurate_of(s, m.PartitionParam, "PART_ID", part_id(s, "ds=3")) == {
            "BASIC_STATS": "true"
        }


def test_partition_names_are_stored_as_the_table_keys_make_them(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(
            s,
            add_database(s, "other", catalog="spark"),
            "t",
            columns=COLUMNS,
            keys=[("ds", "string"), ("region", "string")],
        )
        add_partition(s, table, ["2024-01-01", "a/b"])
        entry = StatsEntry("@spark#OTHER", "t", "Region=a%2fb/DS=2024-01-01", [long_row("a", 1, 2)])
        writes.write_statistics(s, [entry], "hive")
        (row,) = stored(s, PARTITION_LEVEL).values()
        assert (row["CAT_NAME"], row["DB_NAME"], row["PARTITION_NAME"]) == (
            "spark",
            "other",
            "ds=2024-01-01/region=a%2Fb",
        )
        # The catalog may be given apart.
        writes.write_statistics(
            s, [StatsEntry("other", "t", None, [long_row("a", 1, 2)], catalog="SPARK")], "hive"
        )
        assert len(stored(s, TABLE_LEVEL)) == 1


def test_without_merge_the_later_entry_wins_and_unset_fields_keep_the_stored(
    store: sa.Engine,
) -> None:
    with rolled_back(store) as s:
        table = make(s)
        writes.write_statistics(
            s, [StatsEntry("db", "t", None, [long_row("a", 1, 9, NUM_DISTINCTS=9)])], "hive"
        )
        entries = [
            StatsEntry("db", "t", None, [long_row("a", 0, 5)]),
            StatsEntry("db", "t", None, [long_row("a", 3, 4)]),
        ]
        writes.write_statistics(s, entries, "hive")
        row = stored(s, TABLE_LEVEL)[(table.tbl_id, "a", "hive")]
        assert (row["LONG_LOW_VALUE"], row["LONG_HIGH_VALUE"], row["NUM_DISTINCTS"]) == (3, 4, 9)


def test_with_merge_accurate_statistics_are_merged_and_the_others_replaced(
    store: sa.Engine,
) -> None:
    with rolled_back(store) as s:
        table = make(s)
        first = [
            long_row("a", 5, 9, NUM_NULLS=1, NUM_DISTINCTS=5),
            stats_row("b", "string", "", MAX_COL_LEN=7, AVG_COL_LEN=1.0),
        ]
        writes.write_statistics(s, [StatsEntry("db", "t", None, first)], "hive")
        # b's statistics are no longer accurate (a change of the table's data, say).
        s.execute(
            sa.update(m.TableParam)
            .where(m.TableParam.TBL_ID == table.tbl_id, m.TableParam.PARAM_KEY == accurate.KEY)
            .values(PARAM_VALUE='{"COLUMN_STATS":{"a":"true"}}')
        )
        second = [long_row("a", 1, 6, NUM_NULLS=2), stats_row("b", "string", "", AVG_COL_LEN=2.0)]
        writes.write_statistics(s, [StatsEntry("db", "t", None, second)], "hive", merge=True)
        rows = stored(s, TABLE_LEVEL)
        a, b = rows[(table.tbl_id, "a", "hive")], rows[(table.tbl_id, "b", "hive")]
        assert (a["LONG_LOW_VALUE"], a["LONG_HIGH_VALUE"], a["NUM_NULLS"]) == (1, 9, 3)
        # No bit vectors: the largest NDV, capped by the range.
        assert a["NUM_DISTINCTS"] == 5
        # b is written as given, whole: MAX_COL_LEN, unset, is not kept.
        assert (b["AVG_COL_LEN"], b["MAX_COL_LEN"]) == (2.0, None)
        assert accurate_of(s, m.TableParam, "TBL_ID", table.tbl_id) == {
            "COLUMN_STATS": {"a": "true", "b": "true"}
        }


def test_with_merge_entries_of_one_owner_are_merged_together(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        make(s)
        entries = [
            StatsEntry("db", "t", "ds=1", [long_row("a", 0, 5, NUM_NULLS=1)]),
            StatsEntry("db", "t", "ds=1", [long_row("a", 3, 8, NUM_NULLS=1)]),
            StatsEntry("db", "t", "ds=2", [long_row("a", 7, 7, NUM_NULLS=1)]),
        ]
        writes.write_statistics(s, entries, "hive", merge=True)
        rows = stored(s, PARTITION_LEVEL)
        one, two = rows[("ds=1", "a", "hive")], rows[("ds=2", "a", "hive")]
        assert (one["LONG_LOW_VALUE"], one["LONG_HIGH_VALUE"], one["NUM_NULLS"]) == (0, 8, 2)
        assert (two["LONG_LOW_VALUE"], two["LONG_HIGH_VALUE"], two["NUM_NULLS"]) == (7, 7, 1)


@pytest.mark.parametrize("count", [2, 3])
def test_a_tables_partitions_cost_a_fixed_number_of_statements(
    store: sa.Engine, count: int
) -> None:
    """The table, its partitions, their column lists, the upsert, COLUMN_STATS_ACCURATE:
    five statements whatever the number of partitions and columns. A single partition is
    read with its columns, and a parameter that already marks the columns is not written
    again: three; on PostgreSQL one, the function of schema 0009 (metastore.stats.one_statement),
    which also moves the versions."""
    with DriverStatements(store) as trace, rolled_back(store) as s:
        make(s)
        columns = [long_row("a", 1, 2), stats_row("b", "string", ""), stats_row("c", "double", "")]
        entries = [
            StatsEntry("db", "t", f"ds={day}", columns[:count]) for day in range(1, count + 1)
        ]
        before = statement_count(trace)
        writes.write_statistics(s, entries, "hive")
        assert statement_count(trace) - before == 5
        before = statement_count(trace)
        writes.write_statistics(s, entries[:1], "spark")
        assert statement_count(trace) - before == (1 if store.dialect.name == "postgresql" else 3)


# -- deletes -----------------------------------------------------------------------------------


def test_deleting_one_column_unmarks_it_and_deleting_all_unmarks_all(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = make(s, params={accurate.KEY: BASIC})
        rows = [long_row("a", 1, 2), stats_row("b", "string", ""), stats_row("c", "double", "")]
        writes.write_statistics(s, [StatsEntry("db", "t", None, rows)], "hive")
        writes.write_statistics(s, [StatsEntry("db", "t", None, rows[:1])], "spark")
        where = "table db.t"
        writes.delete_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, "A", "hive", where)
        assert set(stored(s, TABLE_LEVEL)) == {
            (table.tbl_id, "b", "hive"),
            (table.tbl_id, "c", "hive"),
            (table.tbl_id, "a", "spark"),
        }
        # COLUMN_STATS_ACCURATE is per column, not per engine.
        assert accurate_of(s, m.TableParam, "TBL_ID", table.tbl_id) == {
            "BASIC_STATS": "true",
            "COLUMN_STATS": {"b": "true", "c": "true"},
        }
        with raises(NotFound, "no statistics for column 'a' of table db.t"):
            writes.delete_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, "a", "hive", where)
        with raises(InvalidObject, "table db.t has no column 'zz'"):
            writes.delete_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, "zz", None, where)
        writes.delete_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, None, None, where)
        assert stored(s, TABLE_LEVEL) == {}
        assert accurate_of(s, m.TableParam, "TBL_ID", table.tbl_id) == {"BASIC_STATS": "true"}
        # Deleting all of none succeeds, and leaves an owner without the parameter without it.
        writes.delete_statistics(s, TABLE_LEVEL, table.tbl_id, table.sd_id, None, None, where)
        pid = part_id(s, "ds=1")
        s.execute(sa.delete(m.PartitionParam).where(m.PartitionParam.PART_ID == pid))
        writes.delete_statistics(s, PARTITION_LEVEL, pid, None, None, "hive", "partition ds=1")
        assert accurate_of(s, m.PartitionParam, "PART_ID", pid) is None


def test_a_parameter_left_with_nothing_is_removed(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        make(s)
        writes.write_statistics(s, [StatsEntry("db", "t", "ds=1", [long_row("a", 1, 2)])], "hive")
        pid = part_id(s, "ds=1")
        assert accurate_of(s, m.PartitionParam, "PART_ID", pid) == {"COLUMN_STATS": {"a": "true"}}
        writes.delete_statistics(s, PARTITION_LEVEL, pid, None, "a", None, "partition ds=1")
        assert accurate_of(s, m.PartitionParam, "PART_ID", pid) is None


def test_statistics_of_removed_columns_are_deleted_for_every_engine(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = make(s, params={accurate.KEY: BASIC})
        rows = [long_row("a", 1, 2), stats_row("b", "string", "")]
        for engine in ("hive", "spark"):
            writes.write_statistics(
                s, [StatsEntry("db", "t", None, rows), StatsEntry("db", "t", "ds=1", rows)], engine
            )
        writes.delete_statistics_of_columns(s, TABLE_LEVEL, [table.tbl_id], ["a", "zz"])
        writes.delete_statistics_of_columns(s, PARTITION_LEVEL, [], ["b"])
        writes.delete_statistics_of_columns(s, PARTITION_LEVEL, [part_id(s, "ds=1")], [])
        assert set(stored(s, TABLE_LEVEL)) == {
            (table.tbl_id, "b", "hive"),
            (table.tbl_id, "b", "spark"),
        }
        assert len(stored(s, PARTITION_LEVEL)) == 4
        # The marks are the caller's to change.
        assert accurate_of(s, m.TableParam, "TBL_ID", table.tbl_id) == {
            "BASIC_STATS": "true",
            "COLUMN_STATS": {"a": "true", "b": "true"},
        }


# -- renames -----------------------------------------------------------------------------------


def test_renames_move_the_names_of_the_rows_of_that_table_only(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = make(s)
        other = add_table(s, table.db_id, "u", columns=COLUMNS, keys=[("ds", "string")])
        add_partition(s, other, ["1"])
        entries = [
            StatsEntry("db", name, part, [long_row("a", 1, 2)])
            for name in ("t", "u")
            for part in (None, "ds=1")
        ]
        writes.write_statistics(s, entries, "hive")
        writes.rename_table(s, table.tbl_id, "db2", "t2")
        writes.rename_partition(s, part_id(s, "ds=1", table.tbl_id), "ds=9")
        names = {
            (r["DB_NAME"], r["TABLE_NAME"], r["PARTITION_NAME"])
            for r in stored(s, PARTITION_LEVEL).values()
        } | {(r["DB_NAME"], r["TABLE_NAME"], None) for r in stored(s, TABLE_LEVEL).values()}
        assert names == {
            ("db2", "t2", "ds=9"),
            ("db2", "t2", None),
            ("db", "u", "ds=1"),
            ("db", "u", None),
        }
