"""Trino's Hive connector against colstats, call by call with the argument shapes Trino's
ThriftHiveMetastoreClient sends (no catalog names, no engine; engines.md section 3), on SQLite
and PostgreSQL."""

from __future__ import annotations

import base64

import pytest
from metadata_builders import fields, storage

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client
NO_STATS_UPDATE = t.EnvironmentContext(properties={"DO_NOT_UPDATE_STATS": "true"})


def trino_table(db: str, name: str, **kwargs: object) -> t.Table:
    kwargs.setdefault("parameters", {"trino_version": "470", "trino_query_id": "q1"})
    kwargs.setdefault("tableType", "MANAGED_TABLE")
    return t.Table(
        tableName=name,
        dbName=db,
        owner="trino",
        sd=storage(fields(("id", "bigint"), ("name", "varchar(20)"))),
        partitionKeys=fields(("ds", "string")) if kwargs.pop("partitioned", True) else [],
        **kwargs,
    )


def trino_view(db: str, name: str) -> t.Table:
    text = base64.b64encode(b'{"originalSql":"SELECT 1"}').decode()
    return t.Table(
        tableName=name,
        dbName=db,
        owner="trino",
        sd=storage(fields(("dummy", "string")), location=""),
        partitionKeys=[],
        tableType="VIRTUAL_VIEW",
        viewOriginalText=f"/* Presto View: {text} */",
        viewExpandedText="/* Presto View */",
        parameters={"presto_view": "true", "comment": "Presto View", "trino_created_by": "x"},
    )


def test_schema_discovery_and_views(client: Client, db_name: str) -> None:
    client.create_database(t.Database(name=db_name, parameters={}, ownerName="trino"))
    assert db_name in client.get_all_databases()
    assert client.get_database(db_name).name == db_name
    client.create_table(trino_table(db_name, "orders"))
    client.create_table(trino_view(db_name, "v_orders"))
    assert client.get_all_tables(db_name) == ["orders", "v_orders"]
    table = client.get_table_req(t.GetTableRequest(dbName=db_name, tblName="orders")).table
    assert table.partitionKeys == fields(("ds", "string"))
    assert client.get_fields(db_name, "orders") == fields(("id", "bigint"), ("name", "varchar(20)"))
    # Trino finds its views by a parameter filter, and retries with LIKE.
    views = 'hive_filter_field_params__presto_view = "true"'
    assert client.get_table_names_by_filter(db_name, views, -1) == ["v_orders"]
    like = 'hive_filter_field_params__presto_view LIKE "true"'
    assert client.get_table_names_by_filter(db_name, like, -1) == ["v_orders"]
    assert client.get_tables_by_type(db_name, "*", "VIRTUAL_VIEW") == ["v_orders"]
    owner = 'hive_filter_field_owner__ = "trino"'
    assert client.get_table_names_by_filter(db_name, owner, 1) == ["orders"]
    with pytest.raises(t.InvalidOperationException, match="Error parsing"):
        client.get_table_names_by_filter(db_name, "presto_view ==", -1)


def test_partitions_and_basic_statistics(client: Client, db_name: str) -> None:
    client.create_database(t.Database(name=db_name, parameters={}))
    client.create_table(trino_table(db_name, "orders"))
    parts = [
        t.Partition(values=[day], dbName=db_name, tableName="orders", parameters={}, sd=None)
        for day in ("2024-01-01", "2024-01-02")
    ]
    assert client.add_partitions(parts) == 2
    names = client.get_partition_names_ps(db_name, "orders", [""], -1)
    assert names == ["ds=2024-01-01", "ds=2024-01-02"]
    found = client.get_partitions_by_names(db_name, "orders", names)
    # Trino writes basic statistics with alter_partition(s) and alter_table.
    for part in found:
        part.parameters = {**part.parameters, "numRows": "10", "totalSize": "100", "numFiles": "1"}
    client.alter_partitions(db_name, "orders", found)
    got = client.get_partitions_by_names(db_name, "orders", names)
    assert {p.parameters["numRows"] for p in got} == {"10"}
    table = client.get_table(db_name, "orders")
    table.parameters = {**table.parameters, "numRows": "20"}
    client.alter_table_with_environment_context(db_name, "orders", table, NO_STATS_UPDATE)
    assert client.get_table(db_name, "orders").parameters["numRows"] == "20"
    # Column statistics, one call per partition, as Trino writes them (no bit vectors).
    long_data = t.LongColumnStatsData(lowValue=1, highValue=9, numNulls=0, numDVs=9)
    obj = t.ColumnStatisticsObj("id", "bigint", t.ColumnStatisticsData(longStats=long_data))
    for name in names:
        desc = t.ColumnStatisticsDesc(False, db_name, "orders", name)
        assert client.update_partition_column_statistics(t.ColumnStatistics(desc, [obj]))
    stats = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(dbName=db_name, tblName="orders", colNames=["id"], partNames=names)
    ).partStats
    assert sorted(stats) == names
    assert client.delete_partition_column_statistics(db_name, "orders", names[0], "id", None)
    assert client.drop_partition(db_name, "orders", ["2024-01-02"], True)
    assert client.get_partition_names(db_name, "orders", -1) == ["ds=2024-01-01"]


def test_table_changes_trino_makes(client: Client, db_name: str) -> None:
    client.create_database(t.Database(name=db_name, parameters={}))
    client.create_table(trino_table(db_name, "t", partitioned=False))
    changed = client.get_table(db_name, "t")
    changed.parameters = {**changed.parameters, "comment": "orders of the day"}
    changed.sd.cols = [*changed.sd.cols, t.FieldSchema("price", "decimal(10,2)", "in EUR")]
    client.alter_table_with_environment_context(db_name, "t", changed, NO_STATS_UPDATE)
    renamed = client.get_table(db_name, "t")
    renamed.tableName = "t2"
    client.alter_table_with_environment_context(db_name, "t", renamed, NO_STATS_UPDATE)
    after = client.get_table(db_name, "t2")
    assert after.parameters["comment"] == "orders of the day"
    assert after.sd.cols[-1] == t.FieldSchema("price", "decimal(10,2)", "in EUR")
    client.drop_table(db_name, "t2", True)
    client.drop_database(db_name, True, False)
