"""metastore.stats.owners, called directly: the table a statistics write names (one
statement, its keys in order, its COLUMN_STATS_ACCURATE, marked as changed), its
partitions by name (one statement for one, two for several, missing ones absent) and the
column types of their column lists; lookup's errors for what is missing; on PostgreSQL the
table's row locked against other statistics writers but not against adding partitions."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from core_builders import (
    add_column_list,
    add_database,
    add_partition,
    add_table,
    committed,
    rolled_back,
    set_params,
    statement_count,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.errors import NotFound
from metastore.stats import accurate, owners
from metastore.store import models as m
from metastore.store import versions

KEYS = [("ds", "string"), ("Region", "string")]


def test_the_table_is_read_with_its_keys_in_order_and_its_accurate_parameter(
    store: sa.Engine,
) -> None:
    with rolled_back(store) as s:
        db_id = add_database(s, "db")
        value = '{"BASIC_STATS":"true","COLUMN_STATS":{"id":"true"}}'
        built = add_table(
            s,
            db_id,
            "t",
            keys=[("z", "int"), ("a", "string"), ("m", "date")],
            params={accurate.KEY: value, "other": "x"},
        )
        found = owners.table(s, "db", "t", None)
        assert found == owners.TableOwner(
            "db", built.tbl_id, "t", built.cd_id, ["z", "a", "m"], value, "hive"
        )
        assert found.where() == "db.t"
        assert owners.table_accurate(s, found) == value


def test_names_are_looked_up_as_stored_and_the_catalog_may_be_given_twice(
    store: sa.Engine,
) -> None:
    with rolled_back(store) as s:
        add_table(s, add_database(s, "sales", catalog="spark"), "orders", storage=False)
        for db_arg, catalog in (
            ("@SPARK#Sales", None),
            ("SALES", "Spark"),
            ("@hive#sales", "spark"),
        ):
            found = owners.table(s, db_arg, "ORDERS", catalog)
            assert (found.catalog, found.db_name, found.name) == ("spark", "sales", "orders")
            # No storage descriptor, no keys, no parameter.
            assert (found.cd_id, found.keys, found.accurate) == (None, [], None)
        with pytest.raises(NotFound, match=r"^database hive\.sales does not exist$"):
            owners.table(s, "sales", "orders", None)


@pytest.mark.parametrize(
    ("db_arg", "table_name", "message"),
    [
        ("nodb", "t", "database hive.nodb does not exist"),
        ("DB", "missing", "table db.missing does not exist"),
        (None, "t", "no database name given"),
        ("", "t", "no database name given"),
        ("db", None, "no table name given"),
        ("db", "", "no table name given"),
        ("@hive#", "t", "no database name given"),
    ],
)
def test_what_is_missing_is_not_found(
    store: sa.Engine, db_arg: str | None, table_name: str | None, message: str
) -> None:
    with rolled_back(store) as s:
        add_table(s, add_database(s, "db"), "t")
        with pytest.raises(NotFound) as raised:
            owners.table(s, db_arg, table_name, None)
        assert raised.value.message == message


def _versioned(s: Session, tbl_id: int) -> bool:
    query = sa.select(m.TableVersion.VERSION).where(m.TableVersion.TBL_ID == tbl_id)
    return s.execute(query).scalar_one_or_none() is not None


@pytest.mark.parametrize("write", [True, False])
def test_the_table_is_marked_as_changed_by_a_change(store: sa.Engine, write: bool) -> None:
    with rolled_back(store, write=write) as s:
        built = add_table(s, add_database(s), "t")
        owners.table(s, "db", "t", None)
        versions.bump(s)
        assert _versioned(s, built.tbl_id) is write


def test_the_table_is_one_statement(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        add_table(s, add_database(s), "t", keys=KEYS)
        before = statement_count(trace)
        found = owners.table(s, "db", "t", None)
        assert statement_count(trace) - before == 1
    assert found.keys == ["ds", "Region"]


def test_table_accurate_is_read_again_on_postgresql(store: sa.Engine) -> None:
    """On PostgreSQL the parameter is read in a statement of its own (what the writer the
    lock waited for committed); on SQLite the value read with the table is current."""
    with rolled_back(store) as s:
        built = add_table(s, add_database(s), "t", params={accurate.KEY: "true"})
        found = owners.table(s, "db", "t", None)
        s.execute(
            sa.update(m.TableParam)
            .where(m.TableParam.TBL_ID == built.tbl_id)
            .values(PARAM_VALUE='{"BASIC_STATS":"true"}')
        )
        expected = "true" if store.dialect.name == "sqlite" else '{"BASIC_STATS":"true"}'
        assert owners.table_accurate(s, found) == expected


def test_partitions_by_name_with_their_columns(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(s, add_database(s), "t", columns={"id": "bigint", "n": None}, keys=KEYS)
        one = add_partition(s, table, ["2024-01-01", "a/b"], params={accurate.KEY: "true"})
        other_cd = add_column_list(s, {"id": "int"})
        two = add_partition(s, table, ["2024-01-02", "x"], cd_id=other_cd)
        bare = add_partition(s, table, ["2024-01-03", "x"], storage=False)
        empty_cd = add_column_list(s, {})
        no_columns = add_partition(s, table, ["2024-01-04", "x"], cd_id=empty_cd)
        assert one.name == "ds=2024-01-01/region=a%2Fb"

        assert owners.partitions(s, table.tbl_id, []) == ({}, {})
        found, types = owners.partitions(s, table.tbl_id, [one.name])
        assert found == {one.name: owners.PartitionOwner(one.part_id, table.cd_id, "true")}
        # A column without a type is an empty one.
        assert types == {table.cd_id: {"id": "bigint", "n": ""}}

        names = [one.name, two.name, bare.name, no_columns.name, "ds=2024-01-09/region=x"]
        found, types = owners.partitions(s, table.tbl_id, names)
        assert found == {
            one.name: owners.PartitionOwner(one.part_id, table.cd_id, "true"),
            two.name: owners.PartitionOwner(two.part_id, other_cd, None),
            bare.name: owners.PartitionOwner(bare.part_id, None, None),
            no_columns.name: owners.PartitionOwner(no_columns.part_id, empty_cd, None),
        }
        assert types == {
            table.cd_id: {"id": "bigint", "n": ""},
            other_cd: {"id": "int"},
            empty_cd: {},
        }
        # One alone, without a storage descriptor or without columns.
        assert owners.partitions(s, table.tbl_id, [bare.name]) == (
            {bare.name: owners.PartitionOwner(bare.part_id, None, None)},
            {},
        )
        assert owners.partitions(s, table.tbl_id, [no_columns.name]) == (
            {no_columns.name: owners.PartitionOwner(no_columns.part_id, empty_cd, None)},
            {empty_cd: {}},
        )
        # Names are as stored: another spelling, or another table's partition, is absent.
        assert owners.partitions(s, table.tbl_id, ["DS=2024-01-01/region=a%2Fb"]) == ({}, {})
        assert owners.partitions(s, table.tbl_id + 1000, [one.name, two.name]) == ({}, {})


@pytest.mark.parametrize("count", [1, 2, 12])
def test_partitions_are_one_statement_for_one_and_two_for_several(
    store: sa.Engine, count: int
) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        table = add_table(s, add_database(s), "t", keys=[("ds", "int")])
        names = [add_partition(s, table, [str(day)]).name for day in range(count)]
        before = statement_count(trace)
        found, types = owners.partitions(s, table.tbl_id, names)
        assert statement_count(trace) - before == (1 if count == 1 else 2)
    assert sorted(found) == sorted(names)
    assert types == {table.cd_id: {"id": "bigint", "name": "string"}}


def test_column_types_of_column_lists(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        first = add_column_list(s, {"a": "int", "B c": "varchar(10)"})
        second = add_column_list(s, {})
        assert owners.column_types(s, []) == {}
        assert owners.column_types(s, [None, None]) == {}
        assert owners.column_types(s, [first, None, second, first, 10**9]) == {
            first: {"a": "int", "B c": "varchar(10)"},
            second: {},
            10**9: {},
        }


@pytest.mark.postgres
def test_a_writer_holds_the_table_against_writers_but_not_against_new_partitions(
    store: sa.Engine,
) -> None:
    """On PostgreSQL `table` locks the table's row until the transaction ends: a second
    writer waits (here: gives up at its lock timeout), a partition can still be added."""
    if store.dialect.name != "postgresql":
        pytest.skip("SQLite runs one writer at a time")
    with committed(store) as s:
        table = add_table(s, add_database(s, "locking"), "t", keys=[("ds", "string")])
    try:
        with rolled_back(store) as first:
            owners.table(first, "locking", "t", None)
            with rolled_back(store) as second:
                second.execute(sa.text("SET LOCAL lock_timeout = '200ms'"))
                add_partition(second, table, ["1"])  # the key's share lock does not wait
                with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
                    owners.table(second, "locking", "t", None)
    finally:
        with committed(store) as s:
            s.execute(sa.delete(m.Database).where(m.Database.NAME == "locking"))


def test_the_accurate_parameter_is_found_by_its_exact_key(store: sa.Engine) -> None:
    """The parameter is found by its key only: another key's value is not taken for it."""
    with rolled_back(store) as s:
        built = add_table(s, add_database(s), "t", params={"COLUMN_STATS": "x"})
        set_params(s, m.TableParam, built.tbl_id, {"column_stats_accurate": "y"})
        assert owners.table(s, "db", "t", None).accurate is None
