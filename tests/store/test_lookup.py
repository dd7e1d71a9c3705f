"""metastore.store.lookup, called directly on SQLite and PostgreSQL: databases (with the
catalog prefix), tables and partitions found by the names a request gives, or NotFound in
the words clients match; tables marked as changed by a change that looks them up; a table's
row with its storage, statistics or keys in one statement; partition names checked against
the table's keys and stored as Hive makes them."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from core_builders import (
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

from metastore import names
from metastore.errors import NotFound
from metastore.stats import queries
from metastore.stats.queries import TABLE_LEVEL
from metastore.store import lookup, versions
from metastore.store import models as m
from metastore.store.partition_rows import SD_ID


def test_missing_is_not_found_in_clients_words() -> None:
    error = lookup.missing("table db.t")
    assert isinstance(error, NotFound) and error.message == "table db.t does not exist"


@pytest.mark.parametrize(
    ("db_arg", "catalog", "found"),
    [
        ("sales", None, ("hive", "sales")),
        ("SALES", None, ("hive", "sales")),
        ("@spark#Sales", None, ("spark", "sales")),
        ("@SPARK#sales", None, ("spark", "sales")),
        ("sales", "Spark", ("spark", "sales")),
        ("@hive#sales", "spark", ("spark", "sales")),  # the catalog argument wins
    ],
)
def test_a_database_by_name_and_catalog(
    store: sa.Engine, db_arg: str, catalog: str | None, found: tuple[str, str]
) -> None:
    with rolled_back(store) as s:
        add_database(s, "sales")
        add_database(s, "sales", catalog="spark")
        db = lookup.database(s, db_arg, catalog)
        assert (db.CTLG_NAME, db.NAME) == found


@pytest.mark.parametrize(
    ("db_arg", "catalog", "message"),
    [
        (None, None, "no database name given"),
        ("", None, "no database name given"),
        ("@hive#", None, "no database name given"),
        ("@hive#!", None, "no database name given"),  # the empty database
        ("Nope", None, "database hive.nope does not exist"),
        ("sales", "other", "database other.sales does not exist"),
        ("@Other#X", None, "database other.x does not exist"),
    ],
)
def test_a_database_that_is_not_there(
    store: sa.Engine, db_arg: str | None, catalog: str | None, message: str
) -> None:
    with rolled_back(store) as s:
        add_database(s, "sales")
        with raises(NotFound, message):
            lookup.database(s, db_arg, catalog)


def test_a_catalog_prefix_without_its_end_is_an_invalid_name(store: sa.Engine) -> None:
    with (
        rolled_back(store) as s,
        raises(
            names.InvalidNameError, "database name '@hive' has a catalog prefix '@' without '#'"
        ),
    ):
        lookup.database(s, "@hive")


def _version_after_bump(s: Session, tbl_id: int) -> int | None:
    versions.bump(s)
    found: int | None = s.execute(
        sa.select(m.TableVersion.VERSION).where(m.TableVersion.TBL_ID == tbl_id)
    ).scalar_one_or_none()
    return found


@pytest.mark.parametrize("write", [True, False])
def test_a_table_with_its_database_marked_by_a_change(store: sa.Engine, write: bool) -> None:
    with rolled_back(store, write=write) as s:
        table = add_table(s, add_database(s, "db"), "t")
        db, found = lookup.table(s, "DB", "T")
        assert (db.NAME, found.TBL_ID) == ("db", table.tbl_id)
        assert (_version_after_bump(s, table.tbl_id) is not None) is write


@pytest.mark.parametrize(
    ("db_arg", "table_name", "message"),
    [
        ("db", "nope", "table db.nope does not exist"),
        ("DB", "Nope", "table db.nope does not exist"),
        ("db", None, "no table name given"),
        ("db", "", "no table name given"),
        ("nodb", "t", "database hive.nodb does not exist"),
        ("nodb", None, "database hive.nodb does not exist"),  # the database first
        (None, "t", "no database name given"),
    ],
)
def test_a_table_that_is_not_there(
    store: sa.Engine, db_arg: str | None, table_name: str | None, message: str
) -> None:
    with rolled_back(store) as s:
        add_table(s, add_database(s, "db"), "t")
        with raises(NotFound, message):
            lookup.table(s, db_arg, table_name)
        with raises(NotFound, message):
            lookup.stored_table(s, db_arg, table_name)


def test_a_stored_table_with_its_storage_statistics_or_keys(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(
            s, add_database(s, "db", catalog="spark"), "t", keys=[("ds", "string"), ("hr", "int")]
        )
        queries.upsert_stats(
            s, TABLE_LEVEL, [(table.tbl_id, stats_row("id"))], {table.tbl_id: ("spark", "db", "t")}
        )
        found = lookup.stored_table(s, "@spark#db", "T")
        assert found.database.NAME == "db" and found.database.CTLG_NAME == "spark"
        assert found.table.TBL_ID == table.tbl_id
        assert found.storage is not None and found.storage[SD_ID] == table.sd_id
        assert (found.stats, found.keys) == (None, None)
        with_stats = lookup.stored_table(s, "db", "t", "spark", stats_engine="hive")
        assert with_stats.stats is not None and [r[0] for r in with_stats.stats] == ["id"]
        with_keys = lookup.stored_table(s, "db", "t", "spark", with_keys=True)
        assert with_keys.keys == [("ds", "string"), ("hr", "int")]
        assert _version_after_bump(s, table.tbl_id) is not None
        view = add_table(s, table.db_id, "v", storage=False)
        assert lookup.stored_table(s, "@spark#db", "v").storage is None
        assert view.sd_id is None


def test_a_stored_table_is_one_statement(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        add_table(s, add_database(s), "t", keys=[("ds", "string")])
        before = statement_count(trace)
        lookup.stored_table(s, "db", "t", with_keys=True)
        assert statement_count(trace) - before == 1


def test_partition_names_are_checked_against_the_keys_and_stored_as_hive_makes_them(
    store: sa.Engine,
) -> None:
    with rolled_back(store) as s:
        add_table(s, add_database(s), "t", keys=[("ds", "string"), ("Region", "string")])
        _, orm_table = lookup.table(s, "db", "t")
        assert lookup.partition_keys(s, orm_table) == ["ds", "Region"]
        expected = "ds=2024-01-01/region=a%2Fb"
        for given in (
            "ds=2024-01-01/region=a%2Fb",
            "DS=2024-01-01/REGION=a%2fb",
            "region=a%2Fb/ds=2024-01-01",  # keys in another order
            "ds=2024-01-01/region=a%2F%62",  # any character may be escaped
        ):
            assert lookup.partition_name(s, orm_table, given) == expected
            assert lookup.existing_name(s, orm_table, given) == expected
        # The keys may be given, sparing their read.
        assert lookup.partition_name(s, table_row(s), "x=1", ["X"]) == "x=1"
        keys = "does not match the table's partition keys (ds, region)"
        with raises(names.InvalidNameError, f"partition name 'ds=1' {keys}: missing key(s) region"):
            lookup.partition_name(s, orm_table, "ds=1")
        with raises(NotFound, f"partition name 'ds=1/hr=2/region=x' {keys}: unknown key(s) hr"):
            lookup.existing_name(s, orm_table, "ds=1/hr=2/region=x")
        with raises(NotFound, "partition name 'ds': 'ds' is not of the form key=value"):
            lookup.existing_name(s, orm_table, "ds")
        for nothing in (None, ""):
            with raises(NotFound, "no partition name given"):
                lookup.existing_name(s, orm_table, nothing)


def table_row(s: Session) -> m.Table:
    _, found = lookup.table(s, "db", "t")
    return found


def test_partitions_of_an_unpartitioned_table_are_not_found(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        add_table(s, add_database(s), "t")
        orm_table = table_row(s)
        with raises(NotFound, "table t is not partitioned"):
            lookup.partition_name(s, orm_table, "ds=1")
        with raises(NotFound, "table t is not partitioned"):
            lookup.partition(s, orm_table, "ds=1")


def test_a_partition_by_name(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(s, add_database(s), "t", keys=[("ds", "string")])
        part = add_partition(s, table, ["a b/c"])
        orm_table = table_row(s)
        assert lookup.partition(s, orm_table, "DS=a b%2Fc").PART_ID == part.part_id
        with raises(NotFound, "partition ds=9 of table t does not exist"):
            lookup.partition(s, orm_table, "ds=9")
        with raises(NotFound, "no partition name given"):
            lookup.partition(s, orm_table, None)
