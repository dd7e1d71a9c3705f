"""metastore.store.partitions, called directly on SQLite and PostgreSQL: partitions found by
name (several in byte order, as HMS orders them, whatever the database's collation), their
ids, a partial specification of key values, renamed key values, deletes with what a
partition owns, and the ANALYZE of the partition tables as they double."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import empty_database
from core_builders import (
    NAMES_IN_BYTE_ORDER,
    BuiltTable,
    add_column_list,
    add_database,
    add_partition,
    add_table,
    collate_partition_names_as_a_language,
    committed,
    count_rows,
    rolled_back,
    statement_count,
    stats_row,
    store_engine,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.stats import queries
from metastore.stats.queries import PARTITION_LEVEL
from metastore.store import migrate, partitions
from metastore.store import models as m
from metastore.store.partition_rows import of_table
from metastore.store.partitions import RECHECK_AFTER


def _table(s: Session, keys: list[tuple[str, str]] | None = None) -> BuiltTable:
    return add_table(s, add_database(s), "t", keys=keys or [("ds", "string"), ("hr", "int")])


def test_a_partition_is_found_by_its_stored_name(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = _table(s)
        part = add_partition(s, table, ["2024-01-01", "1"])
        other = add_table(s, table.db_id, "u", keys=[("ds", "string"), ("hr", "int")])
        add_partition(s, other, ["2024-01-01", "1"])
        found = partitions.find_partition(s, table.tbl_id, "ds=2024-01-01/hr=1")
        assert found is not None and found.PART_ID == part.part_id
        assert partitions.find_partition(s, table.tbl_id, "DS=2024-01-01/hr=1") is None
        assert partitions.find_partition(s, table.tbl_id, "hr=1/ds=2024-01-01") is None


def test_several_partitions_are_found_in_byte_order(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        collate_partition_names_as_a_language(s)
        table = _table(s, [("k", "string")])
        for value in reversed(NAMES_IN_BYTE_ORDER):
            add_partition(s, table, [value])
        names = [f"k={v}" for v in NAMES_IN_BYTE_ORDER]
        found = partitions.find_partitions(s, table.tbl_id, [*names, "k=missing"])
        assert [p.PART_NAME for p in found] == names
        assert partitions.find_partitions(s, table.tbl_id, []) == []


def test_ids_of_partitions_by_name(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = _table(s, [("k", "string")])
        one = add_partition(s, table, ["a/b"])
        bare = add_partition(s, table, ["c"], storage=False)
        found = partitions.partition_ids(s, table.tbl_id, ["k=a%2Fb", "k=c", "k=a/b", "k=zz"])
        assert found == {"k=a%2Fb": (one.part_id, one.sd_id), "k=c": (bare.part_id, None)}
        assert partitions.partition_ids(s, table.tbl_id, []) == {}
        assert partitions.partition_ids(s, table.tbl_id + 1000, ["k=c"]) == {}


def _names(s: Session, selection: sa.Select[tuple[int]]) -> list[str]:
    name = m.Partition.__table__.c.PART_NAME
    return sorted(s.execute(selection.with_only_columns(name)).scalars())


def test_a_partial_specification_of_key_values(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = add_table(
            s, add_database(s), "t", keys=[("ds", "string"), ("hr", "int"), ("c", "string")]
        )
        for ds, hr, c in (("1", "0", "x"), ("1", "1", "x"), ("2", "0", "y"), ("2", "1", "")):
            add_partition(s, table, [ds, hr, c])
        base = of_table(table.tbl_id)
        assert _names(s, partitions.with_values(base, [])) == _names(s, base)
        assert len(_names(s, base)) == 4
        assert _names(s, partitions.with_values(base, ["1"])) == [
            "ds=1/hr=0/c=x",
            "ds=1/hr=1/c=x",
        ]
        # An empty or missing value matches any; the values are compared as stored text.
        assert _names(s, partitions.with_values(base, ["", "0"])) == [
            "ds=1/hr=0/c=x",
            "ds=2/hr=0/c=y",
        ]
        assert _names(s, partitions.with_values(base, [None, None, "x"])) == [
            "ds=1/hr=0/c=x",
            "ds=1/hr=1/c=x",
        ]
        assert _names(s, partitions.with_values(base, ["2", "1", "y"])) == []
        assert _names(s, partitions.with_values(base, ["", "00"])) == []
        # A bound value, for a statement built once.
        bound = partitions.with_values(base, [None, sa.bindparam("hr")])
        name = m.Partition.__table__.c.PART_NAME
        found = s.execute(bound.with_only_columns(name).order_by(name), {"hr": "1"}).scalars()
        assert list(found) == ["ds=1/hr=1/c=x", "ds=2/hr=1/c=__HIVE_DEFAULT_PARTITION__"]


def test_key_values_are_replaced(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = _table(s)
        part = add_partition(s, table, ["1", "2"])
        partitions.replace_key_values(s, part.part_id, ["9", "é/x"])
        s.flush()
        values = s.execute(
            sa.select(m.PartitionKeyValue.INTEGER_IDX, m.PartitionKeyValue.PART_KEY_VAL)
            .where(m.PartitionKeyValue.PART_ID == part.part_id)
            .order_by(m.PartitionKeyValue.INTEGER_IDX)
        ).all()
        assert [tuple(v) for v in values] == [(0, "9"), (1, "é/x")]


def test_a_partition_is_deleted_with_what_it_owns(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        table = _table(s)
        own = add_column_list(s, {"x": "int"})
        doomed = add_partition(s, table, ["1", "1"], params={"numRows": "3"})
        with_own = add_partition(s, table, ["1", "2"], cd_id=own)
        kept = add_partition(s, table, ["2", "1"])
        queries.upsert_stats(
            s,
            PARTITION_LEVEL,
            [(doomed.part_id, stats_row("id")), (kept.part_id, stats_row("id"))],
            {p.part_id: ("hive", "db", "t", p.name) for p in (doomed, kept)},
        )
        for part in (doomed, with_own):
            found = partitions.find_partition(s, table.tbl_id, part.name)
            assert found is not None
            partitions.delete_partition(s, found)
        s.flush()
        assert [
            p.PART_NAME
            for p in partitions.find_partitions(s, table.tbl_id, [doomed.name, kept.name])
        ] == [kept.name]
        for model in (m.PartitionKeyValue, m.PartitionParam, m.PartitionColumnStats):
            assert count_rows(s, model, PART_ID=doomed.part_id) == 0
        assert count_rows(s, m.PartitionColumnStats, PART_ID=kept.part_id) == 1
        assert count_rows(s, m.StorageDescriptor, SD_ID=doomed.sd_id) == 0
        # The table's column list, shared, is kept; the partition's own is not.
        assert count_rows(s, m.ColumnDescriptor, CD_ID=table.cd_id) == 1
        assert count_rows(s, m.ColumnDescriptor, CD_ID=own) == 0


# -- refresh_partition_statistics --------------------------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sa.Engine]:
    """An engine on a new migrated database (ANALYZE's statistics outlive a rollback on
    PostgreSQL, and the check's memory is kept per engine)."""
    for url in empty_database(request.param, tmp_path):
        migrate.upgrade(url)
        engine = store_engine(url)
        yield engine
        engine.dispose()


def _analyzed_rows(s: Session) -> int:
    """The rows of PARTITIONS when last analyzed (-1 or 0: never)."""
    if s.get_bind().dialect.name == "postgresql":
        return int(
            s.execute(
                sa.text("SELECT reltuples FROM pg_class WHERE relname = 'PARTITIONS'")
            ).scalar_one()
        )
    stat = (
        s.execute(
            sa.text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'PARTITIONS' AND idx IS NOT NULL")
        )
        .scalars()
        .first()
    )
    return int(stat.split()[0]) if stat else 0


def _add(s: Session, table: BuiltTable, values: range) -> list[int]:
    return [add_partition(s, table, [str(v)]).part_id for v in values]


def test_the_partition_tables_are_analyzed_when_they_double(fresh: sa.Engine) -> None:
    with committed(fresh) as s:
        table = add_table(s, add_database(s), "t", keys=[("ds", "int")])
        if fresh.dialect.name == "sqlite":
            assert not s.execute(
                sa.text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")
            ).first()
        first = _add(s, table, range(4))
        partitions.refresh_partition_statistics(s, first)  # never analyzed: now
    with committed(fresh) as s:
        assert _analyzed_rows(s) == 4
        if fresh.dialect.name == "postgresql":
            # The lookups' tables too, when they never were.
            never = s.execute(
                sa.text(
                    "SELECT relname FROM pg_class "
                    "WHERE relname IN ('TBLS', 'DBS') AND reltuples < 0"
                )
            ).all()
            assert never == []

    check = 1 if fresh.dialect.name == "postgresql" else 3
    with DriverStatements(fresh) as trace, committed(fresh) as s:
        more = _add(s, table, range(4, 7))  # ids up to 7, below the doubling (8)
        before = statement_count(trace)
        partitions.refresh_partition_statistics(s, more)
        assert statement_count(trace) - before == check  # checked: nothing due
        before = statement_count(trace)
        for _ in range(RECHECK_AFTER):
            partitions.refresh_partition_statistics(s, more)
        assert statement_count(trace) == before  # spared the check, RECHECK_AFTER times
        partitions.refresh_partition_statistics(s, more)
        assert statement_count(trace) - before == check
        # An add that reaches the doubling checks and analyzes.
        doubled = _add(s, table, range(7, 8))
        partitions.refresh_partition_statistics(s, doubled)
    with committed(fresh) as s:
        assert _analyzed_rows(s) == 8
        partitions.refresh_partition_statistics(s, [])  # nothing added: nothing due
        assert _analyzed_rows(s) == 8
