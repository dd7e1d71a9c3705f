"""Upgrades keep data: a database filled at each earlier revision comes out of the upgrade to
head, and of a downgrade of one step and the upgrade again, with every row it had.

For each revision R before head, on SQLite and PostgreSQL: upgrade an empty database to R,
fill it through R's own schema (SQLAlchemy Core on the tables reflected at R, never the models
of head) with databases, managed and external tables and a view, partitions, functions,
skewed values and statistics of six kinds (long, double, decimal, string, boolean, date) with
their sketches, and take every row of every table. Then, at
head, at the revision before head and at head again, each of those tables must still hold the
same rows in the columns it had at R (compared as multisets of tuples, floats exactly, blobs by
bytes). A column a later revision added to one of them must hold its server default in every
filled row (an upgrade that computes values for it must say so here). Tables a later revision
added are not compared: they hold what their revision puts in them, which that revision's own
tests check. Last, a server on the upgraded database answers the filled metadata and
statistics through the Thrift client, and takes new partitions and statistics.

The revisions come from the migration scripts, so a new revision is covered without a change
here; a table that a new revision adds must be filled below before the next revision is added
(the fill fails on an empty table).
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect
from revision_data import (
    CREATED,
    EARLIER,
    EVENTS_COLUMNS,
    EVENTS_PARAMS,
    EVENTS_SERDE_PARAMS,
    EVENTS_STATS,
    FUNCTION_RESOURCES,
    HEAD,
    IMPALA_STATS,
    OLD_ORDERS_COLUMNS,
    ORDERS_COLUMNS,
    ORDERS_KEYS,
    ORDERS_PARAMS,
    ORDERS_SD_PARAMS,
    ORDERS_SERDE,
    ORDERS_SERDE_PARAMS,
    ORDERS_STATS,
    PARTITION_PARAMS,
    PARTITION_STATS,
    PARTITIONS,
    SALES_PARAMS,
    SCRIPTS,
    SKEWED_VALUES,
    VIEW_EXPANDED,
    VIEW_TEXT,
    Columns,
    Filled,
    fill,
    long_obj,
    reflect,
    skewed_location,
)

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.spark_stats.properties import PREFIX as SPARK_PREFIX
from metastore.store import migrate

# ------------------------------------------------------------------------------------------
# Every row of every table, and the check that they are all still there


class TableRows(NamedTuple):
    columns: tuple[str, ...]
    key: tuple[str, ...]
    """The primary key's columns, which name a row in a message."""
    rows: collections.Counter[tuple[Any, ...]]


def _value(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def _rows(conn: sa.Connection, table: sa.Table, columns: tuple[str, ...]) -> TableRows:
    key = tuple(c.name for c in table.primary_key.columns)
    result = conn.execute(sa.select(*(table.c[c] for c in columns)))
    return TableRows(columns, key, collections.Counter(tuple(map(_value, r)) for r in result))


def snapshot(url: str) -> dict[str, TableRows]:
    """Every row of every table but alembic_version, in all its columns."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            tables = reflect(conn).tables
            return {
                name: _rows(conn, table, tuple(c.name for c in table.columns))
                for name, table in tables.items()
                if name != "alembic_version"
            }
    finally:
        engine.dispose()


def check_intact(url: str, before: dict[str, TableRows], where: str) -> None:
    """Each table of BEFORE still holds the same rows in its columns of BEFORE; a column added
    since holds its server default in every one of them."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            tables = reflect(conn).tables
            assert set(before) <= set(tables), f"{where}: tables gone: {set(before) - set(tables)}"
            for name, was in before.items():
                table = tables[name]
                gone = set(was.columns) - set(table.c.keys())
                assert not gone, f"{where}: columns of {name} gone: {sorted(gone)}"
                now = _rows(conn, table, was.columns).rows
                differences = _differences(was, now)
                assert not differences, f"{where}: rows of {name} differ: " + "; ".join(
                    differences[:5]
                )
                for column in table.c:
                    if (name, column.name) in OWNER_NAMES:
                        _check_owner_names(conn, table, column, where)
                    elif column.name not in was.columns:
                        _check_default(conn, table, column, where)
    finally:
        engine.dispose()


def _differences(was: TableRows, now: collections.Counter[tuple[Any, ...]]) -> list[str]:
    """What happened to the rows of WAS that NOW lacks: lost, or which of their columns
    changed (blobs shown by size), and rows that NOW has in addition."""
    positions = [was.columns.index(c) for c in was.key]

    def key(row: tuple[Any, ...]) -> dict[str, Any]:
        return {was.columns[i]: row[i] for i in positions}

    def shown(value: Any) -> Any:
        return f"<{len(value)} bytes>" if isinstance(value, bytes) else value

    lost, added = was.rows - now, now - was.rows
    added_by_key = {tuple(key(row).values()): row for row in added}
    found = []
    for row in lost:
        other = added_by_key.pop(tuple(key(row).values()), None)
        if other is None:
            found.append(f"lost {key(row)}")
        else:
            changed = [
                f"{c} {shown(a)!r} -> {shown(b)!r}"
                for c, a, b in zip(was.columns, row, other, strict=True)
                if a != b
            ]
            found.append(f"altered {key(row)}: {', '.join(changed)}")
    found += [f"added {key(row)}" for row in added_by_key.values()]
    return found


# Columns a revision computes: the names of a statistics row's owner (0007).
OWNER_NAMES = {
    ("TAB_COL_STATS", "DB_NAME"): 'd."NAME"',
    ("TAB_COL_STATS", "TABLE_NAME"): 't."TBL_NAME"',
    ("PART_COL_STATS", "DB_NAME"): 'd."NAME"',
    ("PART_COL_STATS", "TABLE_NAME"): 't."TBL_NAME"',
    ("PART_COL_STATS", "PARTITION_NAME"): 'p."PART_NAME"',
}


def _check_owner_names(
    conn: sa.Connection, table: sa.Table, column: sa.Column[Any], where: str
) -> None:
    """COLUMN of every statistics row of TABLE names its owner as the owner is named."""
    owner = 's."TBL_ID" = t."TBL_ID"'
    joins = ""
    if table.name == "PART_COL_STATS":
        joins = 'JOIN "PARTITIONS" p ON p."PART_ID" = s."PART_ID" '
        owner = 'p."TBL_ID" = t."TBL_ID"'
    wrong = conn.scalar(
        sa.text(
            f'SELECT count(*) FROM "{table.name}" s {joins}JOIN "TBLS" t ON {owner} '
            f'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
            f'WHERE s."{column.name}" IS DISTINCT FROM {OWNER_NAMES[table.name, column.name]}'
        )
    )
    assert wrong == 0, f"{where}: {wrong} rows of {table.name} misname their owner in {column}"


def _check_default(
    conn: sa.Connection, table: sa.Table, column: sa.Column[Any], where: str
) -> None:
    """COLUMN, added after the rows of TABLE were written, holds its server default in each
    (NULL when it has none), as the database itself evaluates it."""
    default = column.server_default
    if default is None:
        expected = None
    else:
        assert isinstance(default, sa.DefaultClause)
        expected_sql = sa.cast(sa.literal_column(str(default.arg)), column.type)
        expected = conn.scalar(sa.select(expected_sql))
    found = {_value(v) for v in conn.scalars(sa.select(column).distinct())}
    assert found == {expected}, (
        f"{where}: {table.name}.{column.name}, added after the rows were written, holds "
        f"{found} instead of its default {expected!r}; a revision that computes values for it "
        "must say here which ones"
    )


# ------------------------------------------------------------------------------------------
# A server on the upgraded database


def _stats_objs(
    stats: dict[str, t.ColumnStatisticsData], columns: Columns
) -> list[t.ColumnStatisticsObj]:
    types = {name: type_ for name, type_, _ in columns}
    return [t.ColumnStatisticsObj(c, types[c], data) for c, data in sorted(stats.items())]


def _by_name(objs: list[t.ColumnStatisticsObj]) -> list[t.ColumnStatisticsObj]:
    return sorted(objs, key=lambda o: o.colName)


def _fields(schema: list[t.FieldSchema]) -> Columns:
    return [(f.name, f.type, f.comment) for f in schema]


def _filled_parameters(parameters: dict[str, str]) -> dict[str, str]:
    """PARAMETERS of a table or partition without the ones the server derives from the
    statistics for Spark (spark.sql.statistics.*, see docs/engines/spark.md)."""
    return {k: v for k, v in parameters.items() if not k.startswith(SPARK_PREFIX)}


def check_server(url: str, filled: Filled, warehouse: Path) -> None:
    """A server on URL answers the filled metadata and statistics, and takes new ones."""
    server = RunningServer(
        url, Settings(fetch_bitvector=True, fetch_histogram=True, warehouse=str(warehouse))
    )
    try:
        client, transport = connect(server.port)
        try:
            _check_metadata(client, filled, warehouse)
            _check_statistics(client)
            _check_new_rows(client)
        finally:
            transport.close()
    finally:
        server.stop()


def _check_metadata(client: Any, filled: Filled, warehouse: Path) -> None:
    sales = client.get_database("sales")
    assert (sales.description, sales.parameters) == ("orders and events — ünïcode", SALES_PARAMS)
    assert sales.managedLocationUri == f"file:{warehouse}/managed/sales.db"
    assert client.get_database("staging").catalogName == "hive"
    assert client.get_all_databases() == ["default", "sales", "staging"]

    orders = client.get_table("sales", "orders")
    assert (orders.tableType, orders.owner, orders.createTime) == ("MANAGED_TABLE", "etl", CREATED)
    assert _filled_parameters(orders.parameters) == ORDERS_PARAMS
    assert _fields(orders.sd.cols) == ORDERS_COLUMNS
    assert _fields(orders.partitionKeys) == ORDERS_KEYS
    sd = orders.sd
    assert (sd.location, sd.compressed, sd.numBuckets) == (
        f"file:{warehouse}/sales.db/orders",
        True,
        4,
    )
    assert (sd.bucketCols, sd.sortCols, sd.parameters) == (
        ["id"],
        [t.Order("id", 1)],
        ORDERS_SD_PARAMS,
    )
    assert (sd.serdeInfo.name, sd.serdeInfo.serializationLib) == ORDERS_SERDE
    assert sd.serdeInfo.parameters == ORDERS_SERDE_PARAMS
    if filled.skewed:
        skewed = sd.skewedInfo
        assert (skewed.skewedColNames, skewed.skewedColValues) == (["region"], SKEWED_VALUES)
        assert skewed.skewedColValueLocationMaps == {
            tuple(v): skewed_location(warehouse, v) for v in SKEWED_VALUES
        }

    assert client.get_partition_names("sales", "orders", -1) == sorted(PARTITIONS)
    first = client.get_partition("sales", "orders", PARTITIONS["ds=2024-01-01/region=eu"])
    assert _fields(first.sd.cols) == OLD_ORDERS_COLUMNS
    assert _filled_parameters(first.parameters) == PARTITION_PARAMS["ds=2024-01-01/region=eu"]

    events = client.get_table("sales", "events")
    assert events.tableType == "EXTERNAL_TABLE"
    assert _filled_parameters(events.parameters) == EVENTS_PARAMS
    assert events.sd.serdeInfo.parameters == EVENTS_SERDE_PARAMS
    view = client.get_table("sales", "orders_eu")
    assert (view.tableType, view.viewOriginalText, view.viewExpandedText) == (
        "VIRTUAL_VIEW",
        VIEW_TEXT,
        VIEW_EXPANDED,
    )

    if filled.functions:
        function = client.get_function("sales", "to_upper")
        assert (function.className, function.ownerName) == ("com.example.udf.ToUpper", "etl")
        assert function.resourceUris == [t.ResourceUri(*r) for r in FUNCTION_RESOURCES]


def _check_statistics(client: Any) -> None:
    names = [name for name, _, _ in ORDERS_COLUMNS]
    table_stats = client.get_table_statistics_req(
        t.TableStatsRequest(dbName="sales", tblName="orders", colNames=names, engine="hive")
    ).tableStats
    assert _by_name(table_stats) == _stats_objs(ORDERS_STATS, ORDERS_COLUMNS)
    impala = client.get_table_statistics_req(
        t.TableStatsRequest(dbName="sales", tblName="orders", colNames=names, engine="impala")
    ).tableStats
    assert _by_name(impala) == _stats_objs(IMPALA_STATS, ORDERS_COLUMNS)
    events_stats = client.get_table_statistics_req(
        t.TableStatsRequest(dbName="sales", tblName="events", colNames=list(EVENTS_STATS))
    ).tableStats
    assert _by_name(events_stats) == _stats_objs(EVENTS_STATS, EVENTS_COLUMNS)

    partition_stats = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(
            dbName="sales", tblName="orders", colNames=names, partNames=list(PARTITIONS)
        )
    ).partStats
    assert {part: _by_name(objs) for part, objs in partition_stats.items()} == {
        part: _stats_objs(stats, ORDERS_COLUMNS) for part, stats in PARTITION_STATS.items()
    }


def _check_new_rows(client: Any) -> None:
    """The upgraded database takes new rows: the ids it assigns to a new partition, its
    storage descriptor and its statistics do not collide with the filled ones."""
    client.add_partition(
        t.Partition(values=["2024-01-03", "eu"], dbName="sales", tableName="orders", parameters={})
    )
    name = "ds=2024-01-03/region=eu"
    stats = {"id": long_obj(1001, 1500, 0, 500, None, None)}
    client.update_partition_column_statistics(
        t.ColumnStatistics(
            statsDesc=t.ColumnStatisticsDesc(
                isTblLevel=False, dbName="sales", tableName="orders", partName=name
            ),
            statsObj=_stats_objs(stats, ORDERS_COLUMNS),
            engine="hive",
        )
    )
    read = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(
            dbName="sales", tblName="orders", colNames=["id"], partNames=[name]
        )
    ).partStats
    assert read == {name: _stats_objs(stats, ORDERS_COLUMNS)}


# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("revision", EARLIER)
def test_an_upgrade_keeps_every_row(revision: str, database_url: str, tmp_path: Path) -> None:
    migrate.upgrade(database_url, revision)
    warehouse = tmp_path / "warehouse"
    filled = fill(database_url, warehouse)
    before = snapshot(database_url)

    migrate.upgrade(database_url)
    assert migrate.current_revision(database_url) == migrate.head_revision() == HEAD
    check_intact(database_url, before, f"filled at {revision}, upgraded to {HEAD}")

    previous = SCRIPTS.get_revision(HEAD).down_revision
    migrate.downgrade(database_url, "-1")
    assert migrate.current_revision(database_url) == previous
    check_intact(database_url, before, f"filled at {revision}, downgraded to {previous}")
    migrate.upgrade(database_url)
    check_intact(database_url, before, f"filled at {revision}, upgraded again to {HEAD}")

    check_server(database_url, filled, warehouse)
