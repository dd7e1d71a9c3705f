"""The table calls through the generated client, on SQLite and PostgreSQL."""

from __future__ import annotations

import time

import pytest
import sqlalchemy as sa
from metadata_builders import (
    add_stats,
    database,
    fields,
    make_partitioned,
    remaining,
    stats_rows,
    storage,
    table,
    table_rows,
)

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client

# -- tables -----------------------------------------------------------------------------------


def full_table(db: str) -> t.Table:
    """A table that sets every field colstats keeps."""
    sd = t.StorageDescriptor(
        cols=fields(
            ("id", "bigint", "primary key"),
            ("name", "varchar(20)", "full name"),
            ("amount", "decimal(10,2)"),
            ("tags", "array<string>", ""),
        ),
        location=f"hdfs://nn:8020/warehouse/{db}.db/sales",
        inputFormat="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        compressed=True,
        numBuckets=8,
        serdeInfo=t.SerDeInfo(
            name="orc",
            serializationLib="org.apache.hadoop.hive.ql.io.orc.OrcSerde",
            parameters={"serialization.format": "1", "field.delim": "\t"},
        ),
        bucketCols=["id", "name"],
        sortCols=[t.Order("id", 1), t.Order("name", 0)],
        parameters={"sd.key": "sd value", "orc.compress": "ZLIB"},
    )
    return t.Table(
        tableName="sales",
        dbName=db,
        owner="alice",
        createTime=1_700_000_000,
        lastAccessTime=1_700_000_100,
        retention=7,
        sd=sd,
        partitionKeys=fields(("ds", "string", "day"), ("region", "varchar(8)")),
        parameters={"EXTERNAL": "TRUE", "comment": "sales by day", "empty": ""},
        tableType="EXTERNAL_TABLE",
        ownerType=t.PrincipalType.GROUP,
    )


@pytest.mark.parametrize("call", ["create_table", "create_table_with_environment_context"])
def test_table_round_trip(client: Client, db_name: str, call: str) -> None:
    client.create_database(database(db_name))
    sent = full_table(db_name)
    before = int(time.time())
    if call == "create_table":
        client.create_table(sent)
    else:
        client.create_table_with_environment_context(
            sent, t.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"})
        )
    got = client.get_table(db_name, "sales")

    assert got.tableName == "sales"
    assert got.dbName == db_name
    assert got.catName == "hive"
    assert got.owner == "alice"
    assert got.ownerType == t.PrincipalType.GROUP
    assert got.createTime == 1_700_000_000
    assert got.lastAccessTime == 1_700_000_100
    assert got.retention == 7
    assert got.tableType == "EXTERNAL_TABLE"
    assert got.partitionKeys == sent.partitionKeys
    ddl_time = got.parameters.pop("transient_lastDdlTime")
    assert got.parameters == sent.parameters
    assert ddl_time.isdigit()
    assert int(ddl_time) == 1_700_000_000 or int(ddl_time) >= before - 1

    sd = got.sd
    assert sd.cols == sent.sd.cols
    assert sd.location == sent.sd.location
    assert sd.inputFormat == sent.sd.inputFormat
    assert sd.outputFormat == sent.sd.outputFormat
    assert sd.compressed is True
    assert sd.numBuckets == 8
    assert sd.serdeInfo.name == "orc"
    assert sd.serdeInfo.serializationLib == sent.sd.serdeInfo.serializationLib
    assert sd.serdeInfo.parameters == sent.sd.serdeInfo.parameters
    assert sd.bucketCols == ["id", "name"]
    assert sd.sortCols == [t.Order("id", 1), t.Order("name", 0)]
    assert sd.parameters == sent.sd.parameters
    assert not sd.skewedInfo or not (
        sd.skewedInfo.skewedColNames
        or sd.skewedInfo.skewedColValues
        or sd.skewedInfo.skewedColValueLocationMaps
    )
    assert not sd.storedAsSubDirectories


def test_table_defaults(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    before = int(time.time())
    client.create_table(
        t.Table(tableName="t", dbName=db_name, sd=storage(location="file:/t"), partitionKeys=[])
    )
    got = client.get_table(db_name, "t")
    assert got.tableType == "MANAGED_TABLE"
    assert got.createTime >= before - 1
    assert int(got.parameters["transient_lastDdlTime"]) >= before - 1
    assert got.partitionKeys == []
    assert got.sd.numBuckets == -1
    assert got.sd.compressed is False


def test_view_round_trip(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(
        table(
            db_name,
            "v",
            sd=storage(location=None),
            tableType="VIRTUAL_VIEW",
            viewOriginalText="select id from t",
            viewExpandedText=f"select `t`.`id` from `{db_name}`.`t`",
        )
    )
    got = client.get_table(db_name, "v")
    assert got.tableType == "VIRTUAL_VIEW"
    assert got.viewOriginalText == "select id from t"
    assert got.viewExpandedText == f"select `t`.`id` from `{db_name}`.`t`"
    assert got.sd.location is None


def test_table_column_and_table_names_are_lower_cased(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(
        table(
            db_name.upper(),
            "MyTable",
            cols=fields(("ID", "bigint"), ("Name", "string")),
            keys=fields(("DS", "string")),
        )
    )
    got = client.get_table(db_name.upper(), "MYTABLE")
    assert (got.dbName, got.tableName) == (db_name, "mytable")
    assert [c.name for c in got.sd.cols] == ["id", "name"]
    assert [k.name for k in got.partitionKeys] == ["ds"]
    assert client.get_table(f"@hive#{db_name}", "mytable").tableName == "mytable"
    assert client.get_all_tables(db_name) == ["mytable"]


def test_create_table_twice(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(table(db_name, "t", owner="first"))
    for name in ("t", "T"):
        with pytest.raises(t.AlreadyExistsException, match=f"{db_name}.t"):
            client.create_table(table(db_name, name, owner="second"))
    assert client.get_table(db_name, "t").owner == "first"


def test_create_table_in_unknown_database(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.create_table(table(db_name))
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.create_table_with_environment_context(table(db_name), None)


@pytest.mark.parametrize("name", ["", "a-b", "a b", "a.b", "t\u00e9", "t\n", "t;", "t/u"])
def test_create_table_with_invalid_name(client: Client, db_name: str, name: str) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.InvalidObjectException):
        client.create_table(table(db_name, name))
    assert client.get_all_tables(db_name) == []


@pytest.mark.parametrize(
    ("cols", "keys"),
    [
        (fields(("a", "int"), ("a", "string")), []),
        (fields(("a", "int"), ("A", "int")), []),
        (fields(("a", "int")), fields(("a", "string"))),
        (fields(("a", "int")), fields(("A", "string"))),
        (fields(("a", "int")), fields(("p", "string"), ("P", "int"))),
        (fields(("a", "int"), ("", "int")), []),
        (fields(("a", "int"), ("b", "")), []),
        (fields(("a", "int")), fields(("p", ""))),
    ],
    ids=[
        "dup-column",
        "dup-column-case",
        "key-is-column",
        "key-is-column-case",
        "dup-key",
        "unnamed-column",
        "untyped-column",
        "untyped-key",
    ],
)
def test_create_table_with_invalid_columns(
    client: Client, db_name: str, cols: list[t.FieldSchema], keys: list[t.FieldSchema]
) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.InvalidObjectException):
        client.create_table(table(db_name, cols=cols, keys=keys))
    assert client.get_all_tables(db_name) == []


def test_skewed_info_is_stored_and_returned(client: Client, db_name: str) -> None:
    """List bucketing: skewed columns, their skewed values and the folders of some values."""
    client.create_database(database(db_name))
    skewed = t.SkewedInfo(
        skewedColNames=["ID", "name"],
        skewedColValues=[["1", "a"], ["2", "b b"], ["3", "é/%"]],
        skewedColValueLocationMaps={("1", "a"): "file:/t/id=1/name=a", ("3", "é/%"): "file:/x"},
    )
    client.create_table(table(db_name, sd=storage(location="file:/t", skewedInfo=skewed)))
    got = client.get_table(db_name, "t").sd.skewedInfo
    assert got.skewedColNames == ["id", "name"]
    assert got.skewedColValues == skewed.skewedColValues
    assert got.skewedColValueLocationMaps == skewed.skewedColValueLocationMaps
    bad = t.SkewedInfo(skewedColNames=["id"], skewedColValues=[["1", "2"]])
    with pytest.raises(t.InvalidObjectException, match="one value per skewed column"):
        client.create_table(table(db_name, "t2", sd=storage(location="file:/t2", skewedInfo=bad)))
    empty = t.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
    client.create_table(table(db_name, "t3", sd=storage(location="file:/t", skewedInfo=empty)))
    assert client.get_table(db_name, "t3").sd.skewedInfo == empty
    client.drop_table(db_name, "t", False)  # the skewed rows go with it (checked by row counts)


def test_get_unknown_table(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.get_table(db_name, "t")
    client.create_database(database(db_name))
    with pytest.raises(t.NoSuchObjectException, match="nope"):
        client.get_table(db_name, "nope")


def test_get_tables_with_patterns(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    names = ["apples", "apricots", "bananas", "cherries"]
    for name in reversed(names):
        client.create_table(table(db_name, name))
    assert client.get_all_tables(db_name) == names
    assert client.get_tables(db_name, "*") == names
    assert client.get_tables(db_name, "ap*") == ["apples", "apricots"]
    assert client.get_tables(db_name, "AP*|b*") == ["apples", "apricots", "bananas"]
    assert client.get_tables(db_name, "cherries") == ["cherries"]
    assert client.get_tables(db_name, "z*") == []
    assert client.get_tables(f"@hive#{db_name.upper()}", "*s") == names
    other = f"{db_name}_empty"
    client.create_database(database(other))
    assert client.get_all_tables(other) == []


@pytest.mark.parametrize("call", ["drop_table", "drop_table_with_environment_context"])
def test_drop_table_removes_partitions_storage_and_statistics(
    client: Client, db_name: str, engine: sa.Engine, call: str
) -> None:
    make_partitioned(client, db_name, "t", ["1", "2"])
    make_partitioned(client, db_name, "kept", ["1"])
    add_stats(client, db_name, "t", ["ds=1", "ds=2"])
    add_stats(client, db_name, "kept", ["ds=1"])
    owned = table_rows(engine, db_name, ["t"])
    kept = table_rows(engine, db_name, ["kept"])
    assert stats_rows(engine, owned) == (2, 4)
    assert len(owned.sd_ids) == 3

    if call == "drop_table":
        client.drop_table(db_name, "T", True)
    else:
        client.drop_table_with_environment_context(
            f"@hive#{db_name}", "t", False, t.EnvironmentContext({"ifPurge": "TRUE"})
        )

    assert remaining(engine, owned) == {}
    assert client.get_all_tables(db_name) == ["kept"]
    with pytest.raises(t.NoSuchObjectException):
        client.get_table(db_name, "t")
    assert stats_rows(engine, kept) == (2, 2)
    assert client.get_partition_names(db_name, "kept", -1) == ["ds=1"]
    assert client.get_table(db_name, "kept").sd.cols == fields(("id", "bigint"), ("name", "string"))

    make_partitioned(client, db_name, "t", ["1"])
    with pytest.raises(t.NoSuchObjectException):
        client.get_table_column_statistics(db_name, "t", "id")
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_column_statistics(db_name, "t", "ds=1", "id")


def test_drop_unknown_table(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException):
        client.drop_table(db_name, "t", False)
    client.create_database(database(db_name))
    with pytest.raises(t.NoSuchObjectException, match=rf"{db_name}\.t\b"):
        client.drop_table(db_name, "t", False)
    with pytest.raises(t.NoSuchObjectException, match=rf"{db_name}\.t\b"):
        client.drop_table_with_environment_context(db_name, "t", False, None)


# -- alter_table / alter_partition(s): how engines write basic statistics ----------------------


def test_alter_table_replaces_parameters_owner_and_location(client: Client, db_name: str) -> None:
    """Trino and Hive write numRows and friends by sending back the table they read with
    new parameters."""
    make_partitioned(client, db_name)
    got = client.get_table(db_name, "t")
    got.parameters = {"numRows": "42", "totalSize": "1000", "EXTERNAL": "TRUE"}
    got.owner = "etl"
    got.sd.location = "file:/elsewhere/t"
    client.alter_table_with_environment_context(db_name.upper(), "T", got, None)
    after = client.get_table(db_name, "t")
    assert {k: v for k, v in after.parameters.items() if k != "transient_lastDdlTime"} == {
        "numRows": "42",
        "totalSize": "1000",
        "EXTERNAL": "TRUE",
    }
    assert after.parameters["transient_lastDdlTime"].isdigit()
    assert (after.owner, after.sd.location) == ("etl", "file:/elsewhere/t")
    assert after.sd.cols == got.sd.cols and after.partitionKeys == got.partitionKeys
    after.parameters = {"numRows": "7", "transient_lastDdlTime": "123"}
    client.alter_table(db_name, "t", after)
    assert client.get_table(db_name, "t").parameters == after.parameters


def test_alter_table_refuses_what_hms_refuses(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    with pytest.raises(t.InvalidOperationException, match="does not exist"):
        client.alter_table(db_name, "missing", table(db_name, "missing"))
    changed_keys = client.get_table(db_name, "t")
    changed_keys.partitionKeys = fields(("ds", "int"))
    with pytest.raises(t.InvalidOperationException, match="partition keys cannot be changed"):
        client.alter_table(db_name, "t", changed_keys)
    with pytest.raises(t.InvalidOperationException, match="no new table"):
        client.alter_table(db_name, "t", None)
    same = client.get_table(db_name, "t")
    same.dbName, same.tableName, same.parameters = db_name.upper(), "T", {"numRows": "3"}
    client.alter_table(db_name, "t", same)  # names in another case are the same names
    assert client.get_table(db_name, "t").parameters["numRows"] == "3"
    assert client.get_table(db_name, "t").sd.cols == fields(("id", "bigint"), ("name", "string"))
