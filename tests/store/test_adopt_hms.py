"""Adopting the PostgreSQL database of a real Hive Metastore 2.3.10 (tests/hms_postgres.py: a
schema HMS made, filled through HMS's calls): colstats answers what HMS wrote as HMS answered
it, the two serve one database at once, and the database goes back to HMS (`--undo`) as it
was, with what both wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import metadata_builders as mb
import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect
from hms_oracle import client as hms_client
from hms_postgres import hive_metastore_on
from thrift.Thrift import TException

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import adopt

pytestmark = [pytest.mark.hms, pytest.mark.postgres]

Client = ThriftHiveMetastore.Client

# Fields HMS 2.3 does not have, which colstats fills: left out of the comparison.
_NEWER_FIELDS = {
    "catName",
    "catalogName",
    "ownerType",
    "writeId",
    "isStatsCompliant",
    "id",
    "accessType",
    "requiredReadCapabilities",
    "requiredWriteCapabilities",
    "colStats",
    "createTime",
    "managedLocationUri",
    "type",
    "engine",
    "bitVectors",
    "histogram",
    "description",
    "serializerClass",
    "deserializerClass",
    "serdeType",
    "connector_name",
    "remote_dbname",
}


def plain(value: Any, key: str = "") -> Any:
    """VALUE as JSON-like data, without the fields HMS 2.3 lacks and without unset ones;
    lists of structs sorted (HMS gives some in no order)."""
    if hasattr(value, "thrift_spec"):
        return {
            k: plain(v, k)
            for k, v in vars(value).items()
            if v is not None and k not in _NEWER_FIELDS
        }
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        items = [plain(v) for v in value]
        if key in ("cols", "partitionKeys", "sortCols", "bucketCols", "skewedColValues"):
            return items  # in their order
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if isinstance(value, bytes):
        return value.hex()
    return value


def _reads(client: Client) -> dict[str, Callable[[], Any]]:
    """The calls whose answers must not change with adoption: databases, tables (managed,
    external, view), partitions by every way of asking, functions, statistics of both
    levels and their aggregate."""
    parts = ["ds=2024-01-01", "ds=2024-01-02", "ds=2024-01-03"]
    return {
        "get_all_databases": lambda: client.get_all_databases(),
        "get_database sales": lambda: client.get_database("sales"),
        "get_database empty": lambda: client.get_database("empty"),
        "get_all_tables": lambda: client.get_all_tables("sales"),
        "get_tables_by_type": lambda: client.get_tables_by_type("sales", "*", "VIRTUAL_VIEW"),
        "get_table orders": lambda: client.get_table("sales", "orders"),
        "get_table events": lambda: client.get_table("sales", "events"),
        "get_table view": lambda: client.get_table("sales", "big_orders"),
        "get_table_objects_by_name": lambda: client.get_table_objects_by_name(
            "sales", ["orders", "events"]
        ),
        "get_fields": lambda: client.get_fields("sales", "orders"),
        "get_schema": lambda: client.get_schema("sales", "orders"),
        "get_partition_names": lambda: client.get_partition_names("sales", "orders", -1),
        "get_partitions": lambda: client.get_partitions("sales", "orders", -1),
        "get_partition": lambda: client.get_partition("sales", "orders", ["2024-01-02"]),
        "get_partitions_by_names": lambda: client.get_partitions_by_names(
            "sales", "orders", parts[1:]
        ),
        "get_partitions_ps": lambda: client.get_partitions_ps(
            "sales", "orders", ["2024-01-03"], -1
        ),
        "get_partitions_by_filter": lambda: client.get_partitions_by_filter(
            "sales", "orders", 'ds >= "2024-01-02"', -1
        ),
        "get_functions": lambda: client.get_functions("sales", "*"),
        "get_function": lambda: client.get_function("sales", "to_cents"),
        "get_table_column_statistics": lambda: client.get_table_column_statistics(
            "sales", "orders", "id"
        ),
        "get_table_statistics_req": lambda: client.get_table_statistics_req(
            t.TableStatsRequest("sales", "orders", ["id", "note", "amount"])
        ),
        "get_partition_column_statistics": lambda: client.get_partition_column_statistics(
            "sales", "orders", "ds=2024-01-01", "id"
        ),
        "get_partitions_statistics_req": lambda: client.get_partitions_statistics_req(
            t.PartitionsStatsRequest("sales", "orders", ["id"], parts)
        ),
        "get_aggr_stats_for": lambda: client.get_aggr_stats_for(
            t.PartitionsStatsRequest("sales", "orders", ["id"], parts)
        ),
    }


def answers(client: Client) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, call in _reads(client).items():
        try:
            out[name] = plain(call())
        except TException as e:
            out[name] = type(e).__name__
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def _schema(url: str) -> dict[str, Any]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return adopt.snapshot(conn)
    finally:
        engine.dispose()


@pytest.fixture
def colstats(hms_database: str) -> Iterator[Callable[[], tuple[RunningServer, Client]]]:
    """Starts a colstats server (its cache of answers on) on the database, closed after."""
    started: list[tuple[RunningServer, Any]] = []

    def start() -> tuple[RunningServer, Client]:
        server = RunningServer(hms_database, Settings())
        client, transport = connect(server.port)
        started.append((server, transport))
        return server, client

    yield start
    for server, transport in started:
        transport.close()
        server.stop()


def test_colstats_answers_what_hms_wrote_as_hms_answered_it(
    hms_database: str,
    home: Path,
    colstats: Callable[[], tuple[RunningServer, Client]],
) -> None:
    with hive_metastore_on(hms_database, home, verify=True) as hms:
        hive, transport = hms_client(hms.port)
        before = answers(hive)
        transport.close()
    adopted = adopt.adopt(hms_database)
    assert adopted.found.version == "2.3.0"
    _, ours = colstats()
    after = answers(ours)
    failed = {k: v for k, v in before.items() if isinstance(v, str) and v.endswith("Exception")}
    assert not failed, failed  # every call answers: the comparison compares answers
    differing = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
    assert not differing, json.dumps(differing, indent=1, default=str)[:4000]


def test_a_dry_run_changes_nothing_and_undo_gives_the_schema_back(
    hms_database: str, colstats: Callable[[], tuple[RunningServer, Client]]
) -> None:
    before = _schema(hms_database)
    engine = sa.create_engine(hms_database)
    with engine.connect() as conn:
        planned = adopt.plan(conn, merge_duplicates=False)
    engine.dispose()
    assert "create table TBL_VERSIONS (colstats's)" in planned.changes
    assert _schema(hms_database) == before
    adopt.adopt(hms_database)
    assert _schema(hms_database) != before
    adopt.undo(hms_database)
    assert _schema(hms_database) == before


def test_duplicate_statistics_are_reported_and_merged_only_when_asked(hms_database: str) -> None:
    engine = sa.create_engine(hms_database)
    with engine.begin() as conn:
        # What concurrent writers leave in HMS's schema (HIVE-28578): the same column twice.
        conn.execute(
            sa.text(
                'INSERT INTO "TAB_COL_STATS" SELECT "CS_ID" + 1000, "AVG_COL_LEN", '
                '"COLUMN_NAME", "COLUMN_TYPE", "DB_NAME", "BIG_DECIMAL_HIGH_VALUE", '
                '"BIG_DECIMAL_LOW_VALUE", "DOUBLE_HIGH_VALUE", "DOUBLE_LOW_VALUE", '
                '"LAST_ANALYZED" + 60, "LONG_HIGH_VALUE" + 1, "LONG_LOW_VALUE", "MAX_COL_LEN", '
                '"NUM_DISTINCTS", "NUM_FALSES", "NUM_NULLS", "NUM_TRUES", "TBL_ID", '
                '"TABLE_NAME" FROM "TAB_COL_STATS" WHERE "COLUMN_NAME" = \'id\''
            )
        )
    engine.dispose()
    with pytest.raises(adopt.AdoptionError, match=r"1 group\(s\) of duplicate statistics"):
        adopt.adopt(hms_database)
    merged = adopt.adopt(hms_database, merge_duplicates=True)
    assert len(merged.duplicates) == 1 and "column id" in merged.duplicates[0]
    server = RunningServer(hms_database, Settings())
    client, transport = connect(server.port)
    try:
        kept = client.get_table_column_statistics("sales", "orders", "id")
        assert kept.statsObj[0].statsData.longStats.highValue == 31  # the newer row
    finally:
        transport.close()
        server.stop()


def test_hms_and_colstats_serve_one_database_at_once_and_hms_takes_it_back(
    hms_database: str,
    home: Path,
    colstats: Callable[[], tuple[RunningServer, Client]],
) -> None:
    before = _schema(hms_database)
    adopt.adopt(hms_database)
    _, ours = colstats()
    ours.get_table("sales", "orders")  # in colstats's cache
    with hive_metastore_on(hms_database, home, verify=True) as hms:
        hive, transport = hms_client(hms.port)
        try:
            _in_turn(hive, ours, home)
        finally:
            transport.close()
    written = answers(ours)
    adopt.undo(hms_database)
    assert _schema(hms_database) == before
    with hive_metastore_on(hms_database, home, verify=True) as hms:
        hive, transport = hms_client(hms.port)
        try:
            assert hive.get_table("sales", "made_by_colstats").tableName == "made_by_colstats"
            assert answers(hive) == written
        finally:
            transport.close()


def _in_turn(hive: Client, ours: Client, home: Path) -> None:
    """Writes through each server, each read back through the other."""
    # HMS changes a table colstats has answered for: colstats sees the change at once.
    changed = hive.get_table("sales", "orders")
    changed.parameters = {**changed.parameters, "changed_by": "hms"}
    hive.alter_table("sales", "orders", changed)
    assert ours.get_table("sales", "orders").parameters["changed_by"] == "hms"
    hive.add_partition(
        mb.partition("sales", "orders", ["2024-01-04"], sd=mb.storage(
            location=f"file:{home}/orders/ds=2024-01-04",
            cols=hive.get_table("sales", "orders").sd.cols,
        ))
    )  # fmt: skip
    assert "ds=2024-01-04" in ours.get_partition_names("sales", "orders", -1)
    hive.update_partition_column_statistics(
        mb.column_stats("sales", "orders", [mb.long_stats("id", 40, 49)], "ds=2024-01-04")
    )
    stats = ours.get_partitions_statistics_req(
        t.PartitionsStatsRequest("sales", "orders", ["id"], ["ds=2024-01-04"])
    )
    assert stats.partStats["ds=2024-01-04"][0].statsData.longStats.highValue == 49

    # colstats writes; HMS reads it, ids taken from one sequence by both.
    ours.create_table(mb.table("sales", "made_by_colstats", keys=mb.fields(("ds", "string"))))
    hive.create_table(mb.table("sales", "made_by_hms"))
    ours.add_partition(
        mb.partition("sales", "made_by_colstats", ["1"], sd=mb.storage(
            location=f"file:{home}/made_by_colstats/ds=1"
        ))
    )  # fmt: skip
    ours.update_table_column_statistics(
        mb.column_stats("sales", "made_by_colstats", [mb.long_stats("id", 1, 5)])
    )
    ours.update_partition_column_statistics(
        mb.column_stats("sales", "made_by_colstats", [mb.long_stats("id", 1, 2)], "ds=1")
    )
    assert hive.get_table("sales", "made_by_colstats").partitionKeys[0].name == "ds"
    assert hive.get_partition_names("sales", "made_by_colstats", -1) == ["ds=1"]
    table_stats = hive.get_table_column_statistics("sales", "made_by_colstats", "id")
    assert table_stats.statsObj[0].statsData.longStats.highValue == 5
    part_stats = hive.get_partition_column_statistics("sales", "made_by_colstats", "ds=1", "id")
    assert part_stats.statsObj[0].statsData.longStats.highValue == 2
    assert sorted(ours.get_all_tables("sales")) == sorted(hive.get_all_tables("sales"))

    # Renames by each: the statistics follow, as each finds them.
    moved = ours.get_table("sales", "made_by_colstats")
    moved.tableName = "renamed_by_colstats"
    ours.alter_table("sales", "made_by_colstats", moved)
    renamed = hive.get_table_column_statistics("sales", "renamed_by_colstats", "id")
    assert renamed.statsObj[0].statsData.longStats.highValue == 5
    moved = hive.get_table("sales", "renamed_by_colstats")
    moved.tableName = "made_by_colstats"
    hive.alter_table("sales", "renamed_by_colstats", moved)
    back = ours.get_table_column_statistics("sales", "made_by_colstats", "id")
    assert back.statsObj[0].statsData.longStats.highValue == 5

    # Drops by each take what the table owns, whoever wrote it.
    ours.drop_table("sales", "made_by_hms", True)
    hive.drop_partition("sales", "orders", ["2024-01-04"], True)
    assert "made_by_hms" not in hive.get_all_tables("sales")
    assert "ds=2024-01-04" not in ours.get_partition_names("sales", "orders", -1)


def test_a_drop_takes_along_what_hms_keeps_beside_a_table(
    hms_database: str, colstats: Callable[[], tuple[RunningServer, Client]]
) -> None:
    """Privileges of the table, its columns and its partitions, and its constraints, which
    colstats has no model of and HMS's keys do not delete with the table."""
    adopt.adopt(hms_database)
    engine = sa.create_engine(hms_database)
    owned = {
        "TBL_PRIVS": ("TBL_GRANT_ID", "TBL_ID"),
        "TBL_COL_PRIVS": ("TBL_COLUMN_GRANT_ID", "TBL_ID"),
        "PART_PRIVS": ("PART_GRANT_ID", "PART_ID"),
        "PART_COL_PRIVS": ("PART_COLUMN_GRANT_ID", "PART_ID"),
    }
    with engine.begin() as conn:
        tbl_id = conn.scalar(sa.text('SELECT "TBL_ID" FROM "TBLS" WHERE "TBL_NAME" = \'orders\''))
        part_id = conn.scalar(
            sa.text('SELECT min("PART_ID") FROM "PARTITIONS" WHERE "TBL_ID" = :t'), {"t": tbl_id}
        )
        cd_id = conn.scalar(
            sa.text('SELECT s."CD_ID" FROM "SDS" s JOIN "TBLS" t ON t."SD_ID" = s."SD_ID" '
                    'WHERE t."TBL_ID" = :t'),
            {"t": tbl_id},
        )  # fmt: skip
        for n, (table, (key, owner)) in enumerate(owned.items()):
            conn.execute(
                sa.text(
                    f'INSERT INTO "{table}" ("{key}", "CREATE_TIME", "GRANT_OPTION", '
                    f'"PRINCIPAL_NAME", "PRINCIPAL_TYPE", "{owner}") '
                    "VALUES (:id, 0, 0, 'etl', 'USER', :owner)"
                ),
                {"id": 9000 + n, "owner": part_id if owner == "PART_ID" else tbl_id},
            )
        conn.execute(
            sa.text(
                'INSERT INTO "KEY_CONSTRAINTS" ("CONSTRAINT_NAME", "POSITION", "CHILD_CD_ID", '
                '"CHILD_TBL_ID", "PARENT_CD_ID", "PARENT_TBL_ID", "PARENT_INTEGER_IDX", '
                '"CONSTRAINT_TYPE", "ENABLE_VALIDATE_RELY") '
                "VALUES ('orders_pk', 1, NULL, NULL, :cd, :t, 0, 0, 0)"
            ),
            {"cd": cd_id, "t": tbl_id},
        )
    _, ours = colstats()
    ours.drop_partition("sales", "orders", ["2024-01-01"], True)
    ours.drop_table("sales", "orders", True)
    with engine.connect() as conn:
        for table in (*owned, "KEY_CONSTRAINTS"):
            assert conn.scalar(sa.text(f'SELECT count(*) FROM "{table}"')) == 0, table
    engine.dispose()
    assert "orders" not in ours.get_all_tables("sales")
