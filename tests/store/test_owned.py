"""metastore.store.owned: where the database's keys cascade (colstats's own schema) deleting
what a row owns is left to them and costs no statement; in a database adopted from HMS,
whose keys do not cascade, the rows a table, partition, storage descriptor or column list
owns are deleted explicitly, their own rows first, HMS's tables colstats has no model for
included (those of them the database has)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import sqlalchemy as sa
from core_builders import (
    BuiltTable,
    add_database,
    add_partition,
    add_table,
    count_rows,
    rolled_back,
    statement_count,
    stats_row,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.stats import queries
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL
from metastore.store import migrate, owned
from metastore.store import models as m

# Some of HMS's tables colstats has no model for, as HMS 2.3's script makes them (the
# columns that matter here).
HMS_TABLES = (
    'CREATE TABLE "TBL_PRIVS" ("TBL_GRANT_ID" INTEGER PRIMARY KEY, "TBL_ID" BIGINT)',
    'CREATE TABLE "PART_PRIVS" ("PART_GRANT_ID" INTEGER PRIMARY KEY, "PART_ID" BIGINT)',
    'CREATE TABLE "KEY_CONSTRAINTS" ("CONSTRAINT_NAME" VARCHAR(400) PRIMARY KEY, '
    '"PARENT_TBL_ID" BIGINT, "CHILD_TBL_ID" BIGINT, "PARENT_CD_ID" BIGINT, "CHILD_CD_ID" BIGINT)',
    'CREATE TABLE "IDXS" ("INDEX_ID" INTEGER PRIMARY KEY, "ORIG_TBL_ID" BIGINT)',
    'CREATE TABLE "INDEX_PARAMS" ("INDEX_ID" BIGINT, "PARAM_KEY" VARCHAR(256))',
    'CREATE TABLE "COLSTATS_ADOPTION" ("KEY" VARCHAR(64) PRIMARY KEY)',
)


def test_the_models_ownership_is_their_cascading_keys() -> None:
    edges = owned._model_edges()
    assert ("PARTITIONS", "TBL_ID", "TBLS", "TBL_ID") in edges
    assert ("PARTITION_KEY_VALS", "PART_ID", "PARTITIONS", "PART_ID") in edges
    assert ("COLUMNS_V2", "CD_ID", "CDS", "CD_ID") in edges
    # A table refers to its storage descriptor; it does not own it through a key.
    assert not any(child == "SDS" for child, _, _, _ in edges)
    assert not any(child == "TBLS" and owner == "SDS" for child, _, owner, _ in edges)


def _filled(s: Session) -> tuple[BuiltTable, BuiltTable, list[int]]:
    """Tables t (with a parameter, a key, statistics and two partitions with theirs) and u
    (the same) of database db."""
    db_id = add_database(s)
    built = []
    part_ids = []
    for name in ("t", "u"):
        table = add_table(s, db_id, name, keys=[("ds", "string")], params={"p": "v"})
        queries.upsert_stats(
            s, TABLE_LEVEL, [(table.tbl_id, stats_row("id"))], {table.tbl_id: ("hive", "db", name)}
        )
        for day in ("1", "2"):
            part = add_partition(s, table, [day], params={"numRows": "1"})
            queries.upsert_stats(
                s,
                PARTITION_LEVEL,
                [(part.part_id, stats_row("id"))],
                {part.part_id: ("hive", "db", name, part.name)},
            )
            if name == "t":
                part_ids.append(part.part_id)
        built.append(table)
    return built[0], built[1], part_ids


def test_where_keys_cascade_nothing_is_deleted_and_nothing_sent(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        table, _, part_ids = _filled(s)
        owned.ownership(s)  # found once per engine
        before = statement_count(trace)
        owned.delete_owned(s, "TBLS", "TBL_ID", [table.tbl_id])
        owned.delete_owned(s, "PARTITIONS", "PART_ID", part_ids)
        assert statement_count(trace) == before
        assert count_rows(s, m.Partition, TBL_ID=table.tbl_id) == 2


@pytest.fixture
def adopted(tmp_path: Path) -> Iterator[sa.Engine]:
    """An engine on a SQLite database with colstats's schema and some of HMS's tables,
    marked as adopted, whose foreign keys are not enforced: as HMS's keys, they do not
    cascade."""
    url = f"sqlite:///{tmp_path / 'adopted.db'}"
    migrate.upgrade(url)
    engine = sa.create_engine(url)  # without PRAGMA foreign_keys: nothing cascades
    with engine.begin() as conn:
        for statement in HMS_TABLES:
            conn.execute(sa.text(statement))
    yield engine
    engine.dispose()


def _rows(s: Session, table: str, column: str, ids: Sequence[int | str]) -> int:
    query = sa.text(f'SELECT count(*) FROM "{table}" WHERE "{column}" IN :ids').bindparams(
        sa.bindparam("ids", expanding=True)
    )
    count: int = s.execute(query, {"ids": ids}).scalar_one()
    return count


def test_in_an_adopted_database_a_tables_rows_are_deleted_explicitly(adopted: sa.Engine) -> None:
    with DriverStatements(adopted) as trace, rolled_back(adopted) as s:
        table, other, part_ids = _filled(s)
        for tbl_id in (table.tbl_id, other.tbl_id):
            s.execute(sa.text('INSERT INTO "TBL_PRIVS" ("TBL_ID") VALUES (:id)'), {"id": tbl_id})
            s.execute(sa.text('INSERT INTO "IDXS" ("ORIG_TBL_ID") VALUES (:id)'), {"id": tbl_id})
        s.execute(sa.text('INSERT INTO "INDEX_PARAMS" SELECT "INDEX_ID", \'k\' FROM "IDXS"'))
        s.execute(sa.text('INSERT INTO "PART_PRIVS" ("PART_ID") VALUES (:id)'), {"id": part_ids[0]})
        s.execute(
            sa.text("INSERT INTO \"KEY_CONSTRAINTS\" VALUES ('fk', :t, :u, NULL, NULL)"),
            {"t": table.tbl_id, "u": other.tbl_id},
        )
        start = len(trace.sent())
        owned.delete_owned(s, "TBLS", "TBL_ID", [table.tbl_id, None])
        deletes = [sql.split('"')[1] for sql in trace.sent()[start:] if sql.startswith("DELETE")]

        for model in (m.TableParam, m.PartitionKey, m.TableColumnStats, m.Partition):
            assert count_rows(s, model, TBL_ID=table.tbl_id) == 0, model
        for name in ("PARTITION_KEY_VALS", "PARTITION_PARAMS", "PART_COL_STATS"):
            assert _rows(s, name, "PART_ID", part_ids) == 0, name
        assert _rows(s, "PART_PRIVS", "PART_ID", part_ids) == 0
        assert _rows(s, "TBL_PRIVS", "TBL_ID", [table.tbl_id]) == 0
        assert _rows(s, "IDXS", "ORIG_TBL_ID", [table.tbl_id]) == 0
        assert _rows(s, "INDEX_PARAMS", "PARAM_KEY", ["k"]) == 1  # the other table's index's
        # A constraint either side of which is the table goes with it.
        assert _rows(s, "KEY_CONSTRAINTS", "CONSTRAINT_NAME", ["fk"]) == 0
        # The table's own row and its storage are the caller's to delete; u is untouched.
        assert count_rows(s, m.Table, TBL_ID=table.tbl_id) == 1
        assert count_rows(s, m.StorageDescriptor, SD_ID=table.sd_id) == 1
        assert count_rows(s, m.Partition, TBL_ID=other.tbl_id) == 2
        assert count_rows(s, m.TableColumnStats, TBL_ID=other.tbl_id) == 1
        assert _rows(s, "TBL_PRIVS", "TBL_ID", [other.tbl_id]) == 1
        # Deepest first: a partition's rows before the partitions, an index's before it.
        assert deletes.index("PARTITION_KEY_VALS") < deletes.index("PARTITIONS")
        assert deletes.index("PART_PRIVS") < deletes.index("PARTITIONS")
        assert deletes.index("INDEX_PARAMS") < deletes.index("IDXS")


def test_in_an_adopted_database_column_lists_and_descriptors_own_their_rows(
    adopted: sa.Engine,
) -> None:
    with rolled_back(adopted) as s:
        table, other, _ = _filled(s)
        s.execute(
            sa.text("INSERT INTO \"KEY_CONSTRAINTS\" VALUES ('pk', NULL, NULL, :cd, NULL)"),
            {"cd": table.cd_id},
        )
        s.execute(
            sa.insert(m.StorageDescriptorParam.__table__).values(
                SD_ID=table.sd_id, PARAM_KEY="k", PARAM_VALUE="v"
            )
        )
        owned.delete_owned(s, "CDS", "CD_ID", [table.cd_id])
        owned.delete_owned(s, "SDS", "SD_ID", [table.sd_id])
        assert count_rows(s, m.Column, CD_ID=table.cd_id) == 0
        assert _rows(s, "KEY_CONSTRAINTS", "CONSTRAINT_NAME", ["pk"]) == 0
        assert count_rows(s, m.StorageDescriptorParam, SD_ID=table.sd_id) == 0
        assert count_rows(s, m.Column, CD_ID=other.cd_id) == 2


def test_nothing_to_delete_sends_nothing(adopted: sa.Engine) -> None:
    with DriverStatements(adopted) as trace, rolled_back(adopted) as s:
        add_database(s)
        owned.ownership(s)
        start = len(trace.sent())
        owned.delete_owned(s, "TBLS", "TBL_ID", [])
        owned.delete_owned(s, "TBLS", "TBL_ID", [None])
        owned.delete_owned(s, "FUNC_RU", "FUNC_ID", [1])  # a table that owns nothing
        assert trace.sent()[start:] == []
