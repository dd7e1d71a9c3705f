"""The database calls through the generated client, on SQLite and PostgreSQL."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from metadata_builders import (
    Owned,
    add_stats,
    database,
    database_id,
    make_partitioned,
    remaining,
    stats_rows,
    table,
    table_rows,
)

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client

# -- databases --------------------------------------------------------------------------------


def test_database_round_trip(client: Client, db_name: str) -> None:
    before = int(time.time())
    client.create_database(
        t.Database(
            name=db_name,
            description="sales data",
            locationUri=f"s3a://bucket/{db_name}.db",
            parameters={"owner.team": "analytics", "empty": "", "unicode": "é€😀"},
            ownerName="etl",
            ownerType=t.PrincipalType.ROLE,
            catalogName="hive",
        )
    )
    got = client.get_database(db_name)
    assert got.name == db_name
    assert got.description == "sales data"
    assert got.locationUri == f"s3a://bucket/{db_name}.db"
    assert got.parameters == {"owner.team": "analytics", "empty": "", "unicode": "é€😀"}
    assert got.ownerName == "etl"
    assert got.ownerType == t.PrincipalType.ROLE
    assert got.catalogName == "hive"
    assert got.createTime is not None and got.createTime >= before - 1


def test_database_without_optional_fields(client: Client, db_name: str) -> None:
    client.create_database(t.Database(name=db_name, locationUri="file:/x"))
    got = client.get_database(db_name)
    assert got.name == db_name
    assert got.parameters == {}
    assert got.catalogName == "hive"
    assert got.ownerName is None


def test_database_names_are_lower_cased(client: Client, db_name: str) -> None:
    client.create_database(database(db_name.upper(), catalogName="HIVE"))
    for name in (db_name, db_name.upper(), db_name.capitalize()):
        got = client.get_database(name)
        assert got.name == db_name
        assert got.catalogName == "hive"
    assert db_name in client.get_all_databases()
    assert db_name.upper() not in client.get_all_databases()


@pytest.mark.parametrize("prefix", ["@hive#", "@HIVE#"])
def test_get_database_with_catalog_prefix(client: Client, db_name: str, prefix: str) -> None:
    client.create_database(database(db_name))
    assert client.get_database(f"{prefix}{db_name}").name == db_name
    assert client.get_database(f"{prefix}{db_name.upper()}").name == db_name


def test_catalog_prefix_of_another_catalog_or_malformed(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.NoSuchObjectException):
        client.get_database(f"@spark#{db_name}")
    with pytest.raises(t.MetaException, match="#"):
        client.get_database(f"@hive{db_name}")


def test_create_database_twice(client: Client, db_name: str) -> None:
    client.create_database(database(db_name, description="first"))
    for name in (db_name, db_name.upper()):
        with pytest.raises(t.AlreadyExistsException, match=db_name):
            client.create_database(database(name, description="second"))
    assert client.get_database(db_name).description == "first"


@pytest.mark.parametrize("name", ["", "a-b", "a b", "a.b", "d\u00e9j\u00e0", "db\n", "db;", "*"])
def test_create_database_with_invalid_name(client: Client, name: str) -> None:
    with pytest.raises(t.InvalidObjectException):
        client.create_database(database(name))
    assert name.lower() not in client.get_all_databases()


def test_create_database_without_name(client: Client) -> None:
    with pytest.raises(t.InvalidObjectException):
        client.create_database(t.Database(locationUri="file:/x", parameters={}))


def test_get_unknown_database(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.get_database(db_name)


def test_get_databases_with_patterns(client: Client, db_name: str) -> None:
    created = [f"{db_name}_alpha", f"{db_name}_beta", f"{db_name}_gamma"]
    for name in created:
        client.create_database(database(name))
    everything = client.get_databases("*")
    assert set(created) <= set(everything)
    assert everything == sorted(everything)
    assert client.get_databases(f"{db_name}_a*|{db_name}_b*") == created[:2]
    assert client.get_databases(f"{db_name}_a*|{db_name}_g*") == [created[0], created[2]]
    assert client.get_databases(f"{db_name.upper()}_BETA") == [created[1]]
    assert client.get_databases(f"@hive#{db_name}_*") == created
    assert client.get_databases(f"{db_name}_delta*") == []
    all_dbs = client.get_all_databases()
    assert set(created) <= set(all_dbs)
    assert "default" not in created


def test_drop_empty_database(client: Client, db_name: str, engine: sa.Engine) -> None:
    client.create_database(database(db_name, parameters={"k": "v", "k2": "v2"}))
    owned = Owned(db_ids=[database_id(engine, db_name)])
    assert remaining(engine, owned) == {"DBS.DB_ID": 1, "DATABASE_PARAMS.DB_ID": 2}
    client.drop_database(db_name, True, False)
    assert remaining(engine, owned) == {}
    with pytest.raises(t.NoSuchObjectException):
        client.get_database(db_name)
    assert db_name not in client.get_all_databases()
    client.create_database(database(db_name))
    assert client.get_database(db_name).parameters == {}


def test_drop_database_by_upper_case_and_prefixed_name(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.drop_database(f"@hive#{db_name.upper()}", False, False)
    assert db_name not in client.get_all_databases()


def test_drop_non_empty_database_without_cascade(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["1"])
    with pytest.raises(t.InvalidOperationException, match=db_name):
        client.drop_database(db_name, True, False)
    assert client.get_all_tables(db_name) == ["t"]
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1"]


def test_drop_database_cascade_removes_tables_partitions_and_statistics(
    client: Client, db_name: str, engine: sa.Engine
) -> None:
    make_partitioned(client, db_name, "t1", ["1", "2"])
    make_partitioned(client, db_name, "t2", ["x"])
    client.create_table(table(db_name, "plain"))
    add_stats(client, db_name, "t1", ["ds=1", "ds=2"])
    add_stats(client, db_name, "t2", ["ds=x"])
    add_stats(client, db_name, "plain", [])
    other = f"{db_name}_other"
    make_partitioned(client, other, "t1", ["1"])
    add_stats(client, other, "t1", ["ds=1"])
    owned = table_rows(engine, db_name, ["t1", "t2", "plain"])
    owned.db_ids.append(database_id(engine, db_name))
    kept = table_rows(engine, other, ["t1"])
    assert stats_rows(engine, owned) == (6, 6)

    client.drop_database(db_name, True, True)

    assert remaining(engine, owned) == {}
    with pytest.raises(t.NoSuchObjectException):
        client.get_database(db_name)
    assert stats_rows(engine, kept) == (2, 2)
    assert client.get_partition_names(other, "t1", -1) == ["ds=1"]
    client.create_database(database(db_name))
    assert client.get_all_tables(db_name) == []


def test_drop_unknown_database(client: Client, db_name: str) -> None:
    for cascade in (False, True):
        with pytest.raises(t.NoSuchObjectException, match=db_name):
            client.drop_database(db_name, False, cascade)
