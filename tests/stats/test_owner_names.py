"""Statistics rows name their owner as HMS's do (CAT_NAME, DB_NAME, TABLE_NAME and, for a
partition's, PARTITION_NAME), since HMS finds statistics by these names: every write sets
them, and renames of the table, of its database and of a partition move them."""

from __future__ import annotations

import sqlalchemy as sa
from metadata_builders import (
    Client,
    add_stats,
    column_stats,
    database,
    long_stats,
    make_partitioned,
    partition,
    table,
)


def _names(engine: sa.Engine, db: str) -> set[tuple[str, ...]]:
    """(level, CAT_NAME, DB_NAME, TABLE_NAME[, PARTITION_NAME], owner as stored) of every
    statistics row of the tables of databases DB*."""
    with engine.connect() as conn:
        tables = conn.execute(
            sa.text(
                'SELECT s."CAT_NAME", s."DB_NAME", s."TABLE_NAME", d."NAME", t."TBL_NAME" '
                'FROM "TAB_COL_STATS" s JOIN "TBLS" t ON t."TBL_ID" = s."TBL_ID" '
                'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" LIKE :db'
            ),
            {"db": f"{db}%"},
        ).all()
        partitions = conn.execute(
            sa.text(
                'SELECT s."CAT_NAME", s."DB_NAME", s."TABLE_NAME", s."PARTITION_NAME", '
                'd."NAME", t."TBL_NAME", p."PART_NAME" FROM "PART_COL_STATS" s '
                'JOIN "PARTITIONS" p ON p."PART_ID" = s."PART_ID" '
                'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" LIKE :db'
            ),
            {"db": f"{db}%"},
        ).all()
    return {("table", *row) for row in tables} | {("partition", *row) for row in partitions}


def _consistent(rows: set[tuple[str, ...]]) -> bool:
    """Whether every row's names are its owner's."""
    for row in rows:
        if row[0] == "table" and (row[1], row[2:4]) != ("hive", row[4:6]):
            return False
        if row[0] == "partition" and (row[1], row[2:5]) != ("hive", row[5:8]):
            return False
    return True


def test_writes_name_the_owner_and_renames_move_the_names(
    client: Client, engine: sa.Engine, db_name: str
) -> None:
    make_partitioned(client, db_name, "p", ["1", "2"])
    add_stats(client, db_name, "p", ["ds=1", "ds=2"])
    client.create_table(table(db_name, "u"))
    client.update_table_column_statistics(column_stats(db_name, "u", [long_stats("id", 1, 2)]))
    rows = _names(engine, db_name)
    assert _consistent(rows)
    assert {(r[0], r[3]) for r in rows} == {("table", "p"), ("partition", "p"), ("table", "u")}

    client.create_database(database(f"{db_name}_other"))
    moved = client.get_table(db_name, "p")
    moved.dbName, moved.tableName = f"{db_name}_other", "p2"
    client.alter_table(db_name, "p", moved)
    client.rename_partition(
        f"{db_name}_other", "p2", ["1"], partition(f"{db_name}_other", "p2", ["9"])
    )
    rows = _names(engine, db_name)
    assert _consistent(rows)
    renamed = {(r[0], r[2], r[3], r[4] if r[0] == "partition" else None) for r in rows}
    assert renamed == {
        ("table", f"{db_name}_other", "p2", None),
        ("partition", f"{db_name}_other", "p2", "ds=9"),
        ("partition", f"{db_name}_other", "p2", "ds=2"),
        ("table", db_name, "u", None),
    }
    # A write after the renames names the row anew.
    client.update_partition_column_statistics(
        column_stats(f"{db_name}_other", "p2", [long_stats("id", 5, 6)], "ds=9")
    )
    assert _consistent(_names(engine, db_name))
    stats = client.get_partition_column_statistics(f"{db_name}_other", "p2", "ds=9", "id")
    written = stats.statsObj[0].statsData.longStats
    assert (written.lowValue, written.highValue) == (5, 6)
