"""Permanent functions (FUNCS, FUNC_RU) through the generated client, on SQLite and
PostgreSQL, with HMS's messages (Spark recognises a missing function by its text)."""

from __future__ import annotations

import time

import pytest
from metadata_builders import database

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client
UPPER = "org.apache.hadoop.hive.ql.udf.generic.GenericUDFUpper"
LOWER = "org.apache.hadoop.hive.ql.udf.generic.GenericUDFLower"


def function(db: str, name: str, class_name: str = UPPER, **kwargs: object) -> t.Function:
    kwargs.setdefault("resourceUris", [])
    kwargs.setdefault("ownerType", t.PrincipalType.USER)
    kwargs.setdefault("functionType", t.FunctionType.JAVA)
    return t.Function(functionName=name, dbName=db, className=class_name, **kwargs)


def test_create_get_list_alter_drop(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    jar = t.ResourceUri(t.ResourceType.JAR, "file:/jars/udfs.jar")
    before = int(time.time())
    client.create_function(
        function(db_name, "My_Upper", resourceUris=[jar], ownerName="etl", createTime=5)
    )
    got = client.get_function(db_name.upper(), "my_upper")
    assert (got.functionName, got.dbName, got.className) == ("my_upper", db_name, UPPER)
    assert (got.ownerName, got.ownerType, got.functionType) == (
        "etl",
        t.PrincipalType.USER,
        t.FunctionType.JAVA,
    )
    assert got.resourceUris == [jar]
    assert got.createTime >= before  # the server's clock, as in HMS
    client.create_function(function(db_name, "other"))
    assert client.get_functions(db_name, "*") == ["my_upper", "other"]
    assert client.get_functions(db_name, "my*") == ["my_upper"]
    everything = client.get_all_functions().functions
    assert {(f.dbName, f.functionName) for f in everything} >= {
        (db_name, "my_upper"),
        (db_name, "other"),
    }

    client.alter_function(db_name, "my_upper", function(db_name, "my_upper", LOWER))
    altered = client.get_function(db_name, "my_upper")
    assert (altered.className, altered.resourceUris, altered.createTime) == (
        LOWER,
        [],
        got.createTime,
    )
    client.drop_function(db_name, "my_upper")
    assert client.get_functions(db_name, "*") == ["other"]


def test_errors_use_hms_messages(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.NoSuchObjectException, match=f"Function {db_name}.nope does not exist"):
        client.get_function(db_name, "nope")
    with pytest.raises(t.NoSuchObjectException, match="does not exist"):
        client.drop_function(db_name, "nope")
    with pytest.raises(t.InvalidOperationException, match="does not exist"):
        client.alter_function(db_name, "nope", function(db_name, "nope"))
    client.create_function(function(db_name, "f"))
    with pytest.raises(t.AlreadyExistsException, match="already exists"):
        client.create_function(function(db_name, "F"))
    with pytest.raises(t.InvalidObjectException, match="invalid function name"):
        client.create_function(function(db_name, "a-b"))
    with pytest.raises(t.InvalidObjectException, match="no class name"):
        client.create_function(function(db_name, "g", class_name=""))
    with pytest.raises(t.NoSuchObjectException, match="does not exist"):
        client.create_function(function(f"{db_name}_missing", "g"))
    with pytest.raises(t.InvalidOperationException, match="renaming"):
        client.alter_function(db_name, "f", function(db_name, "g"))
    bad_resource = function(db_name, "h", resourceUris=[t.ResourceUri(None, "x")])
    with pytest.raises(t.InvalidObjectException, match="JAR, FILE or ARCHIVE"):
        client.create_function(bad_resource)
    assert client.get_functions(db_name, "*") == ["f"]


def test_functions_go_with_their_database(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_function(function(db_name, "f"))
    with pytest.raises(t.InvalidOperationException, match="One or more functions exist"):
        client.drop_database(db_name, False, False)
    client.drop_database(db_name, False, True)
    client.create_database(database(db_name))
    assert client.get_functions(db_name, "*") == []
