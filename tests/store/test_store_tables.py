"""metastore.store.tables, called directly on SQLite and PostgreSQL: tables found by name
(with their database, in one query), listed, filtered, added with their partition keys and a
first version, their locations and keys read, deleted with everything they own; and a
parameter read under a lock that a second writer waits for on PostgreSQL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from core_builders import (
    add_column_list,
    add_database,
    add_partition,
    add_storage,
    add_table,
    committed,
    count_rows,
    rolled_back,
)

from metastore.store import models as m
from metastore.store import tables, versions
from metastore.store.partition_filter import parse_filter
from metastore.store.partition_filter.table_sql import table_filter_condition


def test_a_table_is_found_by_name_with_its_database(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s, "db")
        spark = add_database(s, "db", catalog="spark")
        table = add_table(s, db, "t")
        add_table(s, spark, "t")
        found = tables.find_table(s, db, "t")
        assert found is not None and found.TBL_ID == table.tbl_id
        assert tables.find_table(s, db, "T") is None
        pair = tables.find_database_table(s, "hive", "db", "t")
        assert pair is not None
        assert (pair[0].DB_ID, pair[1].TBL_ID) == (db, table.tbl_id)
        assert tables.find_database_table(s, "spark", "db", "t") != pair
        assert tables.find_database_table(s, "hive", "db", "u") is None
        assert tables.find_database_table(s, "hive", "other", "t") is None


def test_tables_of_a_database_by_name_type_and_pattern(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db, other = add_database(s, "db"), add_database(s, "other")
        add_table(s, db, "b_view", table_type="VIRTUAL_VIEW", storage=False)
        add_table(s, db, "a", params={"comment": "the a"})
        add_table(s, db, "c_ext", table_type="EXTERNAL_TABLE")
        add_table(s, other, "a")
        assert sorted(t.TBL_NAME for t in tables.tables_of(s, db)) == ["a", "b_view", "c_ext"]
        assert [t.TBL_NAME for t in tables.tables_named(s, db, ["c_ext", "zz", "a"])] == [
            "a",
            "c_ext",
        ]
        assert tables.tables_named(s, db, []) == []
        assert tables.table_names(s, db) == ["a", "b_view", "c_ext"]
        assert tables.table_names(s, db, "*_*") == ["b_view", "c_ext"]
        assert tables.table_names(s, db, "A|zz") == ["a"]
        assert tables.table_names(s, db, table_type="VIRTUAL_VIEW") == ["b_view"]
        assert tables.table_names(s, db, "a*", table_type="VIRTUAL_VIEW") == []
        with_comments = tables.tables_with_comments(s, [db, other], None)
        assert [(t.TBL_NAME, t.DB_ID, c) for t, c in with_comments] == [
            ("a", db, "the a"),
            ("a", other, None),
            ("b_view", db, None),
            ("c_ext", db, None),
        ]
        typed = tables.tables_with_comments(s, [db], ["EXTERNAL_TABLE", "VIRTUAL_VIEW"])
        assert [t.TBL_NAME for t, _ in typed] == ["b_view", "c_ext"]
        assert tables.tables_with_comments(s, [], None) == []


def test_table_names_by_a_filter_and_a_limit(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        for name, view in (("v2", "true"), ("t", None), ("v1", "true"), ("x", "false")):
            add_table(s, db, name, params={"presto_view": view} if view else None)
        dialect = store.dialect.name
        views = table_filter_condition(
            parse_filter('hive_filter_field_params__presto_view = "true"'), dialect
        )
        assert tables.table_names_by_filter(s, db, views, None) == ["v1", "v2"]
        assert tables.table_names_by_filter(s, db, views, 1) == ["v1"]
        assert tables.table_names_by_filter(s, db, views, 0) == []
        owner = table_filter_condition(parse_filter('hive_filter_field_owner__ = "hive"'), dialect)
        assert tables.table_names_by_filter(s, db, owner, None) == ["t", "v1", "v2", "x"]


def test_a_table_is_added_with_its_keys_and_a_first_version(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        row = m.Table(
            DB_ID=db, TBL_NAME="new", CREATE_TIME=1, LAST_ACCESS_TIME=0, RETENTION=0, SD_ID=None
        )
        keys = [("ds", "string", "the day"), ("hr", "int", None), ("a", "date", "")]
        tbl_id = tables.add_table(s, row, keys)
        versions.bump(s)
        s.flush()
        assert [
            (k.PKEY_NAME, k.PKEY_TYPE, k.PKEY_COMMENT, k.INTEGER_IDX)
            for k in tables.partition_keys(s, tbl_id)
        ] == [
            ("ds", "string", "the day", 0),
            ("hr", "int", None, 1),
            ("a", "date", "", 2),
        ]
        assert tables.partition_key_types(s, tbl_id) == [
            ("ds", "string"),
            ("hr", "int"),
            ("a", "date"),
        ]
        assert count_rows(s, m.TableVersion, TBL_ID=tbl_id) == 1
        unpartitioned = tables.add_table(
            s, m.Table(DB_ID=db, TBL_NAME="u", CREATE_TIME=1, LAST_ACCESS_TIME=0, RETENTION=0), []
        )
        assert tables.partition_keys(s, unpartitioned) == []
        assert tables.partition_key_types(s, unpartitioned) == []
        with pytest.raises(sa.exc.IntegrityError):
            tables.add_table(
                s,
                m.Table(DB_ID=db, TBL_NAME="new", CREATE_TIME=1, LAST_ACCESS_TIME=0, RETENTION=0),
                [],
            )


def test_keys_of_several_tables(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        one = add_table(s, db, "one", keys=[("z", "int"), ("a", "string")])
        two = add_table(s, db, "two", keys=[("ds", "date")])
        none = add_table(s, db, "none")
        found = tables.partition_keys_of(s, [one.tbl_id, two.tbl_id, none.tbl_id])
        assert {tbl: [k.PKEY_NAME for k in keys] for tbl, keys in found.items()} == {
            one.tbl_id: ["z", "a"],
            two.tbl_id: ["ds"],
        }
        assert tables.partition_keys_of(s, []) == {}


def test_locations_are_the_tables_and_its_partitions(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        table = add_table(s, db, "t", keys=[("ds", "string")])
        add_partition(s, table, ["1"])
        add_partition(s, table, ["2"], storage=False)
        other = add_table(s, db, "u", keys=[("ds", "string")])
        add_partition(s, other, ["1"])
        orm_table = tables.find_table(s, db, "t")
        assert orm_table is not None
        assert sorted(loc or "" for loc in tables.locations(s, orm_table)) == [
            "file:/w/db/t",
            "file:/w/db/t/ds=1",
        ]
        view = add_table(s, db, "v", storage=False)
        orm_view = tables.find_table(s, db, "v")
        assert orm_view is not None and view.sd_id is None
        assert tables.locations(s, orm_view) == []


def test_a_table_is_deleted_with_all_it_owns_and_shared_columns_kept(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        table = add_table(s, db, "t", keys=[("ds", "string")], params={"a": "b"})
        own = add_column_list(s, {"x": "int"})
        for day in ("1", "2"):
            add_partition(s, table, [day], params={"numRows": "1"})
        add_partition(s, table, ["3"], cd_id=own)
        other = add_table(s, db, "u")
        # A descriptor t does not own uses t's column list.
        sharing = add_storage(s, table.cd_id, "file:/elsewhere")
        orm_table = tables.find_table(s, db, "t")
        assert orm_table is not None
        tables.delete_table(s, orm_table)
        s.flush()
        assert tables.find_table(s, db, "t") is None
        for model in (m.Partition, m.TableParam, m.PartitionKey):
            assert count_rows(s, model, TBL_ID=table.tbl_id) == 0
        assert count_rows(s, m.PartitionKeyValue) == 0
        assert count_rows(s, m.PartitionParam) == 0
        # The descriptors of the table, its partitions and their serdes are gone; the column
        # list another descriptor still uses is kept, the partition's own is not.
        remaining = set(s.execute(sa.select(m.StorageDescriptor.SD_ID)).scalars())
        assert remaining == {other.sd_id, sharing}
        assert count_rows(s, m.SerDe) == 2
        assert set(s.execute(sa.select(m.ColumnDescriptor.CD_ID)).scalars()) == {
            table.cd_id,
            other.cd_id,
        }
        assert count_rows(s, m.Column, CD_ID=own) == 0


def test_a_locked_parameter_is_read_as_stored(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(
            s, add_database(s), "t", params={"metadata_location": "s3://a/1.json", "none": None}
        )
        assert tables.locked_param(s, table.tbl_id, "metadata_location") == "s3://a/1.json"
        assert tables.locked_param(s, table.tbl_id, "none") is None
        assert tables.locked_param(s, table.tbl_id, "missing") is None
        assert tables.locked_param(s, 10**9, "metadata_location") is None


@pytest.mark.postgres
def test_a_locked_parameter_holds_other_writers_on_postgresql(store: sa.Engine) -> None:
    if store.dialect.name != "postgresql":
        pytest.skip("SQLite's writers hold the database's write lock from their start")
    with committed(store) as s:
        table = add_table(s, add_database(s, "locked"), "t", params={"k": "1"})
    try:
        with rolled_back(store) as first:
            assert tables.locked_param(first, table.tbl_id, "k") == "1"
            with rolled_back(store) as second:
                second.execute(sa.text("SET LOCAL lock_timeout = '200ms'"))
                with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
                    tables.locked_param(second, table.tbl_id, "k")
    finally:
        with committed(store) as s:
            s.execute(sa.delete(m.Database).where(m.Database.NAME == "locked"))
