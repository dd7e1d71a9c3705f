"""metastore.store.databases, called directly on SQLite and PostgreSQL: databases found by
catalog and name (as stored: no case folding here), listed by catalog, named by HMS's
patterns, added, and deleted with everything their tables own."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from core_builders import (
    add_database,
    add_partition,
    add_table,
    count_rows,
    rolled_back,
)

from metastore.name_patterns import InvalidPatternError
from metastore.store import databases
from metastore.store import models as m


def test_a_database_is_found_by_its_catalog_and_its_stored_name(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        hive = add_database(s, "sales")
        spark = add_database(s, "sales", catalog="spark")
        found = databases.find_database(s, "hive", "sales")
        assert found is not None and found.DB_ID == hive
        other = databases.find_database(s, "spark", "sales")
        assert other is not None and other.DB_ID == spark
        assert databases.find_database(s, "hive", "SALES") is None
        assert databases.find_database(s, "other", "sales") is None
        assert databases.find_database(s, "hive", "") is None
        assert databases.database_by_id(s, spark).CTLG_NAME == "spark"


def test_databases_of_a_catalog(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        for name in ("b", "a", "c"):
            add_database(s, name)
        add_database(s, "x", catalog="spark")
        assert sorted(db.NAME for db in databases.databases_of(s, "hive")) == ["a", "b", "c"]
        assert [db.NAME for db in databases.databases_of(s, "spark")] == ["x"]
        assert databases.databases_of(s, "none") == []


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (None, ["default_db", "sales", "sales_2024", "salesx", "tmp"]),
        ("*", ["default_db", "sales", "sales_2024", "salesx", "tmp"]),
        ("sales*", ["sales", "sales_2024", "salesx"]),
        ("SALES", ["sales"]),  # matches ignore case
        ("sales_*", ["sales_2024"]),  # _ stands for itself
        ("tmp|default*", ["default_db", "tmp"]),
        ("sales.", ["salesx"]),  # . is any one character
        ("", []),
        ("s?les", []),
    ],
)
def test_names_by_pattern_in_order(
    store: sa.Engine, pattern: str | None, expected: list[str]
) -> None:
    with rolled_back(store) as s:
        for name in ("tmp", "sales_2024", "salesx", "default_db", "sales"):
            add_database(s, name)
        add_database(s, "sales_spark", catalog="spark")
        assert databases.database_names(s, "hive", pattern) == expected


def test_a_pattern_hms_fails_on_is_refused(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        add_database(s, "a")
        with pytest.raises(InvalidPatternError):
            databases.database_names(s, "hive", "|")


def test_a_database_is_added_and_found(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db_id = databases.add_database(
            s, m.Database(NAME="new", DB_LOCATION_URI="file:/w/new", CTLG_NAME="hive")
        )
        found = databases.find_database(s, "hive", "new")
        assert found is not None and found.DB_ID == db_id
        with pytest.raises(sa.exc.IntegrityError):
            databases.add_database(s, m.Database(NAME="new", DB_LOCATION_URI="x", CTLG_NAME="hive"))


def test_a_database_is_deleted_with_what_its_tables_own(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        doomed, kept = add_database(s, "doomed"), add_database(s, "kept")
        table = add_table(s, doomed, "t", keys=[("ds", "string")], params={"p": "v"})
        add_partition(s, table, ["1"])
        add_table(s, doomed, "view", storage=False)
        survivor = add_table(s, kept, "t")
        s.execute(
            sa.insert(m.DatabaseParam.__table__).values(
                DB_ID=doomed, PARAM_KEY="k", PARAM_VALUE="v"
            )
        )
        s.execute(
            sa.insert(m.Function.__table__).values(
                DB_ID=doomed, FUNC_NAME="f", CREATE_TIME=0, FUNC_TYPE=1
            )
        )
        databases.delete_database(s, databases.database_by_id(s, doomed))
        s.flush()
        assert databases.find_database(s, "hive", "doomed") is None
        assert count_rows(s, m.Table, DB_ID=doomed) == 0
        assert count_rows(s, m.DatabaseParam, DB_ID=doomed) == 0
        assert count_rows(s, m.Function, DB_ID=doomed) == 0
        assert count_rows(s, m.Partition, TBL_ID=table.tbl_id) == 0
        # Storage went with the tables and partitions: only the survivor's is left.
        assert count_rows(s, m.StorageDescriptor) == 1
        assert count_rows(s, m.SerDe) == 1
        assert count_rows(s, m.ColumnDescriptor) == 1
        assert count_rows(s, m.Table, TBL_ID=survivor.tbl_id) == 1
