"""metastore.store.storage, called directly on SQLite and PostgreSQL: storage descriptors
inserted with all their parts in a fixed number of statements (a column list equal to one
given for reuse is shared, not copied), loaded back whole, their locations read and moved,
their column lists read, swapped and deleted when no descriptor uses them any more."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from core_builders import (
    add_column_list,
    add_database,
    add_partition,
    add_storage,
    add_table,
    count_rows,
    rolled_back,
    statement_count,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.store import models as m
from metastore.store import storage as st
from metastore.store.storage import ColumnDef, Skewed, Storage

COLUMNS = [ColumnDef("id", "bigint", "the id", 0), ColumnDef("name", "string", None, 1)]


def storage(
    location: str | None = "file:/w/t",
    columns: list[ColumnDef] | None = None,
    *,
    serde: bool = True,
    skewed: Skewed | None = None,
) -> Storage:
    return Storage(
        sd=m.StorageDescriptor(
            LOCATION=location,
            INPUT_FORMAT="in",
            OUTPUT_FORMAT="out",
            IS_COMPRESSED=True,
            NUM_BUCKETS=4,
            IS_STOREDASSUBDIRECTORIES=False,
        ),
        columns=COLUMNS if columns is None else columns,
        serde=m.SerDe(NAME="s", SLIB="org.example.Serde", SERDE_TYPE=1) if serde else None,
        serde_params={"field.delim": ",", "null": ""} if serde else {},
        sd_params={"sdp": "v"},
        bucket_cols=["id", "name"],
        sort_cols=[("name", 1), ("id", 0)],
        skewed=skewed or Skewed([], [], []),
    )


def test_storages_are_inserted_and_loaded_back_whole(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        skewed = Skewed(["id", "name"], [["1", "a"], ["2", "b"]], [(["1", "a"], "file:/w/t/1a")])
        given = [storage("file:/w/t", skewed=skewed), storage(None, [], serde=False)]
        sd_ids = st.insert_storages(s, given)
        s.flush()
        assert [g.sd.SD_ID for g in given] == sd_ids
        loaded = st.load_storages(s, [*sd_ids, None, 10**9])
        assert sorted(loaded) == sorted(sd_ids)
        first, second = loaded[sd_ids[0]], loaded[sd_ids[1]]
        assert first.sd.LOCATION == "file:/w/t" and first.sd.IS_COMPRESSED is True
        assert first.columns == COLUMNS
        assert first.serde is not None and first.serde.SLIB == "org.example.Serde"
        assert first.serde_params == {"field.delim": ",", "null": ""}
        assert first.sd_params == {"sdp": "v"}
        assert first.bucket_cols == ["id", "name"]
        assert first.sort_cols == [("name", 1), ("id", 0)]
        assert first.skewed == skewed
        assert st.load_skewed(s, sd_ids) == {sd_ids[0]: skewed}
        # No serde, no columns: a column list of none, and nothing below.
        assert (second.serde, second.serde_params, second.columns) == (None, {}, [])
        assert second.sd.CD_ID is not None and second.sd.CD_ID != first.sd.CD_ID
        assert second.skewed == Skewed([], [], [])
        assert st.load_storages(s, []) == {}
        assert st.load_storages(s, [None]) == {}
        assert st.load_skewed(s, []) == {}


def test_a_column_list_given_for_reuse_is_shared_not_copied(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        (table_sd,) = st.insert_storages(s, [storage()])
        table_cd = st.storage_descriptor(s, table_sd)
        assert table_cd is not None and table_cd.CD_ID is not None
        lists_before = count_rows(s, m.ColumnDescriptor)
        same = [storage(f"file:/w/t/ds={i}") for i in range(3)]
        # The same columns in another order of INTEGER_IDX are the same list.
        same.append(storage("file:/w/t/ds=r", list(reversed(COLUMNS))))
        changed = storage("file:/w/t/ds=x", [ColumnDef("id", "int", "the id", 0)])
        commented = storage("file:/w/t/ds=c", [ColumnDef("id", "bigint", None, 0), COLUMNS[1]])
        st.insert_storages(s, [*same, changed, commented], reuse_cd_ids=[None, table_cd.CD_ID])
        assert {x.sd.CD_ID for x in same} == {table_cd.CD_ID}
        assert changed.sd.CD_ID not in (None, table_cd.CD_ID)
        assert commented.sd.CD_ID not in (None, table_cd.CD_ID, changed.sd.CD_ID)
        assert count_rows(s, m.ColumnDescriptor) == lists_before + 2
        # Without reuse every list is a new one.
        alone = storage("file:/w/u")
        st.insert_storages(s, [alone])
        assert alone.sd.CD_ID not in (None, table_cd.CD_ID)


@pytest.mark.parametrize("count", [2, 25])
def test_inserting_storages_is_a_fixed_number_of_statements(store: sa.Engine, count: int) -> None:
    """Sharing the table's column list: its columns read, then the serdes, the descriptors,
    the serde and descriptor parameters, the bucket and the sort columns, a statement each."""
    with DriverStatements(store) as trace, rolled_back(store) as s:
        cd_id = add_column_list(s, {c.COLUMN_NAME: c.TYPE_NAME for c in COLUMNS})
        s.execute(sa.update(m.Column).where(m.Column.COLUMN_NAME == "id").values(COMMENT="the id"))
        before = statement_count(trace)
        st.insert_storages(s, [storage(f"file:/w/{i}") for i in range(count)], [cd_id])
        assert statement_count(trace) - before == 7


def test_columns_types_and_locations(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        cd_id = add_column_list(s, {"b": "int", "a": None, "Ü x": "map<string,int>"})
        sd_id = add_storage(s, cd_id, "file:/w/é")
        bare = add_storage(s, None, None)
        assert st.columns_of(s, cd_id) == [
            ColumnDef("b", "int", None, 0),
            ColumnDef("a", None, None, 1),
            ColumnDef("Ü x", "map<string,int>", None, 2),
        ]
        assert st.columns_of(s, None) == []
        assert st.column_signature(list(reversed(st.columns_of(s, cd_id)))) == [
            ("b", "int", None),
            ("a", None, None),
            ("Ü x", "map<string,int>", None),
        ]
        assert st.column_types(s, sd_id) == {"b": "int", "a": "", "Ü x": "map<string,int>"}
        assert st.column_types(s, bare) == {}
        assert st.column_types(s, None) == {}
        assert st.location(s, sd_id) == "file:/w/é"
        assert st.location(s, bare) is None
        assert st.location(s, None) is None
        assert st.storage_descriptor(s, None) is None
        st.set_location(s, sd_id, "s3://bucket/new place")
        assert st.location(s, sd_id) == "s3://bucket/new place"


def test_partition_locations_move_with_their_prefix_only(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s, "d_b")
        table = add_table(s, db, "t%é", keys=[("ds", "string")])
        moved = add_partition(s, table, ["1"])
        elsewhere = add_partition(s, table, ["2"])
        st.set_location(s, elsewhere.sd_id, "file:/w/dxb/t%éx")  # LIKE 'file:/w/d_b/t%' would match
        other = add_table(s, db, "u", keys=[("ds", "string")])
        not_mine = add_partition(s, other, ["1"])
        st.set_location(s, not_mine.sd_id, "file:/w/d_b/t%é/ds=1")
        st.move_partition_locations(s, table.tbl_id, "file:/w/d_b/t%é", "s3://b/t2")
        assert st.location(s, moved.sd_id) == "s3://b/t2/ds=1"
        assert st.location(s, elsewhere.sd_id) == "file:/w/dxb/t%éx"
        assert st.location(s, not_mine.sd_id) == "file:/w/d_b/t%é/ds=1"
        assert st.location(s, table.sd_id) == "file:/w/d_b/t%é"  # the table's is the caller's


def test_partition_column_lists_are_swapped(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(s, add_database(s), "t", keys=[("ds", "string")])
        one, two = add_partition(s, table, ["1"]), add_partition(s, table, ["2"])
        add_partition(s, table, ["3"], storage=False)
        assert sorted(st.partition_column_lists(s, table.tbl_id)) == [
            (one.part_id, one.sd_id, table.cd_id),
            (two.part_id, two.sd_id, table.cd_id),
        ]
        new = add_column_list(s, {"x": "int"})
        assert one.sd_id is not None
        st.set_column_list(s, [one.sd_id], new)
        assert st.column_types(s, one.sd_id) == {"x": "int"}
        st.set_column_list(s, [one.sd_id], None)
        assert st.column_types(s, one.sd_id) == {}
        st.set_column_list(s, [], new)  # nothing
        assert st.partition_column_lists(s, 10**9) == []


def test_deleted_storages_take_their_serdes_skew_and_unused_column_lists(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        skewed = Skewed(["id"], [["1"]], [(["1"], "file:/w/1")])
        doomed = [storage("a", skewed=skewed), storage("b", [ColumnDef("x", "int", None, 0)])]
        kept = storage("c")
        st.insert_storages(s, doomed)
        st.insert_storages(s, [kept], [doomed[0].sd.CD_ID])  # shares the first's columns
        s.flush()
        serdes, lists = count_rows(s, m.SerDe), count_rows(s, m.ColumnDescriptor)
        st.delete_storages(s, [d.sd.SD_ID for d in doomed] + [None])
        assert {x for x in s.execute(sa.select(m.StorageDescriptor.SD_ID)).scalars()} == {
            kept.sd.SD_ID
        }
        assert count_rows(s, m.SerDe) == serdes - 2
        assert count_rows(s, m.ColumnDescriptor) == lists - 1
        assert count_rows(s, m.ColumnDescriptor, CD_ID=doomed[0].sd.CD_ID) == 1
        for model in (
            m.SkewedStringList,
            m.SkewedStringListValue,
            m.SkewedColumnName,
            m.SkewedValue,
        ):
            assert count_rows(s, model) == 0
        st.delete_storages(s, [])
        st.delete_storages(s, [None])


def test_column_lists_are_deleted_only_when_unused(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        used, unused = add_column_list(s, {"a": "int"}), add_column_list(s, {"b": "int"})
        add_storage(s, used, "file:/w")
        st.delete_unused_column_lists(s, {used, unused, None})
        st.delete_unused_column_lists(s, set())
        st.delete_unused_column_lists(s, {None})
        assert _lists(s) == {used}
        assert count_rows(s, m.Column, CD_ID=unused) == 0


def _lists(s: Session) -> set[int]:
    return set(s.execute(sa.select(m.ColumnDescriptor.CD_ID)).scalars())
