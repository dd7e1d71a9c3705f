"""The metadata calls Spark (Hive 2.3 client) and Trino make besides create/get/drop, with
their argument shapes, on SQLite and PostgreSQL: databases altered and dropped with their
data, tables by name/type/filter and their fields, partial partition specifications,
appends, renames, drops by request, and the folders HMS creates, moves and deletes."""

from __future__ import annotations

from pathlib import Path

import pytest
from metadata_builders import (
    WAREHOUSE,
    add_stats,
    database,
    fields,
    make_partitioned,
    partition,
    storage,
    table,
)

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client


def local(location: str) -> Path:
    return Path(location.removeprefix("file:"))


# -- databases ------------------------------------------------------------------------------


def test_default_database_exists_and_cannot_be_dropped(client: Client) -> None:
    default = client.get_database("default")
    assert (default.name, default.ownerName, default.ownerType) == (
        "default",
        "public",
        t.PrincipalType.ROLE,
    )
    with pytest.raises(t.MetaException, match="Can not drop default database"):
        client.drop_database("default", False, False)


def test_set_ugi_answers_the_groups(client: Client) -> None:
    assert client.set_ugi("alice", ["etl", "analysts"]) == ["etl", "analysts"]


def test_alter_database(client: Client, db_name: str) -> None:
    client.create_database(database(db_name, description="before", parameters={"a": "1"}))
    new = client.get_database(db_name)
    new.description, new.parameters = "after", {"b": "2"}
    new.ownerName, new.ownerType = "etl", t.PrincipalType.GROUP
    new.locationUri = f"file:{WAREHOUSE}/moved.db"
    client.alter_database(db_name.upper(), new)
    got = client.get_database(db_name)
    assert (got.description, got.parameters, got.ownerName, got.ownerType) == (
        "after",
        {"b": "2"},
        "etl",
        t.PrincipalType.GROUP,
    )
    assert got.locationUri == new.locationUri
    with pytest.raises(t.NoSuchObjectException):
        client.alter_database(f"{db_name}_missing", new)
    new.name = "other"
    with pytest.raises(t.MetaException, match="cannot rename database"):
        client.alter_database(db_name, new)


def test_database_folders_are_made_and_dropped_with_data(client: Client, db_name: str) -> None:
    client.create_database(t.Database(name=db_name, parameters={}))  # no location given
    location = client.get_database(db_name).locationUri
    assert location.endswith(f"/{db_name}.db") and local(location).is_dir()
    client.create_table(table(db_name, "managed", sd=storage()))
    managed = local(client.get_table(db_name, "managed").sd.location)
    assert managed == local(location) / "managed" and managed.is_dir()
    (managed / "part-0").write_text("x")
    with pytest.raises(t.InvalidOperationException, match="is not empty"):
        client.drop_database(db_name, True, False)
    client.drop_database(db_name, True, True)
    assert not managed.exists() and not local(location).exists()


# -- tables ---------------------------------------------------------------------------------


def test_tables_by_request_name_type_and_meta(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(table(db_name, "a", parameters={"comment": "the a table"}))
    client.create_table(table(db_name, "b", parameters={"EXTERNAL": "TRUE"}))
    view = table(db_name, "v", tableType="VIRTUAL_VIEW", viewOriginalText="select 1", sd=storage())
    view.viewExpandedText = "select 1"
    client.create_table(view)
    got = client.get_table_req(t.GetTableRequest(dbName=db_name, tblName="A")).table
    assert got == client.get_table(db_name, "a")
    objects = client.get_table_objects_by_name(db_name, ["b", "A", "missing"])
    assert [o.tableName for o in objects] == ["a", "b"]
    request = t.GetTablesRequest(dbName=db_name, tblNames=["v", "nope"])
    assert [o.tableName for o in client.get_table_objects_by_name_req(request).tables] == ["v"]
    every = t.GetTablesRequest(dbName=db_name)
    assert [o.tableName for o in client.get_table_objects_by_name_req(every).tables] == [
        "a",
        "b",
        "v",
    ]
    with pytest.raises(t.UnknownDBException):
        client.get_table_objects_by_name(f"{db_name}_missing", ["a"])
    assert client.get_tables_by_type(db_name, "*", "VIRTUAL_VIEW") == ["v"]
    assert client.get_tables_by_type(db_name, "a|b", "EXTERNAL_TABLE") == ["b"]
    assert client.get_tables_by_type(db_name, "*", "") == ["a", "b", "v"]
    metas = client.get_table_meta(db_name, "*", ["MANAGED_TABLE", "VIRTUAL_VIEW"])
    assert [(m.dbName, m.tableName, m.tableType, m.comments) for m in metas] == [
        (db_name, "a", "MANAGED_TABLE", "the a table"),
        (db_name, "v", "VIRTUAL_VIEW", None),
    ]
    assert [m.tableName for m in client.get_table_meta(db_name, "b*", [])] == ["b"]


def test_fields_and_schema(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    columns = fields(("id", "bigint"), ("name", "string"))
    assert client.get_fields(db_name, "t") == columns
    assert client.get_schema(db_name, "T") == [*columns, *fields(("ds", "string"))]
    assert client.get_schema_with_environment_context(db_name, "t", None) == client.get_schema(
        db_name, "t"
    )
    assert client.get_fields_with_environment_context(db_name, "t.x", None) == columns
    with pytest.raises(t.UnknownTableException):
        client.get_fields(db_name, "missing")
    with pytest.raises(t.UnknownDBException):
        client.get_schema(f"{db_name}_missing", "t")


def test_invalid_column_types_are_refused(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    for bad in ("notatype", "varchar", "array<int,int>", "decimal(39,1)", "struct<a int>"):
        with pytest.raises(t.InvalidObjectException, match="is not a Hive type"):
            client.create_table(table(db_name, cols=fields(("c", bad))))
    complex_types = fields(
        ("a", "array<map<string,struct<x:int,y:decimal(10,2)>>>"), ("b", "varchar(20)")
    )
    client.create_table(table(db_name, cols=complex_types))
    assert client.get_fields(db_name, "t") == complex_types


def test_dropping_a_managed_table_with_data_deletes_its_folders(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    make_partitioned(client, db_name, values=["1"])
    folder = local(client.get_table(db_name, "t").sd.location)
    assert (folder / "ds=1").is_dir()  # made when the partition was added
    outside = tmp_path / "p2"
    client.add_partition(partition(db_name, "t", ["2"], sd=storage(location=f"file:{outside}")))
    assert outside.is_dir()
    client.drop_table_with_environment_context(db_name, "t", True, None)
    assert not folder.exists() and not outside.exists()
    # External tables keep their data.
    client.create_table(table(db_name, "e", parameters={"EXTERNAL": "TRUE"}))
    kept = local(client.get_table(db_name, "e").sd.location)
    client.drop_table(db_name, "e", True)
    assert kept.is_dir()


# -- partitions -----------------------------------------------------------------------------


def two_keys(client: Client, db: str) -> None:
    client.create_database(database(db))
    client.create_table(table(db, keys=fields(("ds", "string"), ("hr", "int"))))
    parts = [("2024-01-01", "1"), ("2024-01-01", "2"), ("2024-01-02", "1"), ("a/b", "3")]
    client.add_partitions([partition(db, "t", list(p)) for p in parts])


def test_partial_specifications(client: Client, db_name: str) -> None:
    """Spark lists a partial spec with "" for the keys it leaves open."""
    two_keys(client, db_name)
    day = client.get_partitions_ps_with_auth(db_name, "t", ["2024-01-01", ""], -1, "u", ["g"])
    assert [p.values for p in day] == [["2024-01-01", "1"], ["2024-01-01", "2"]]
    assert [p.values for p in client.get_partitions_ps(db_name, "t", ["", "1"], -1)] == [
        ["2024-01-01", "1"],
        ["2024-01-02", "1"],
    ]
    assert client.get_partition_names_ps(db_name, "t", ["a/b"], -1) == ["ds=a%2Fb/hr=3"]
    assert len(client.get_partition_names_ps(db_name, "t", ["", ""], -1)) == 4
    assert client.get_partition_names_ps(db_name, "t", [], 2) == [
        "ds=2024-01-01/hr=1",
        "ds=2024-01-01/hr=2",
    ]
    assert client.get_partitions_ps(db_name, "t", ["nope", ""], -1) == []
    with pytest.raises(t.MetaException, match="3 partition values given for the 2"):
        client.get_partitions_ps(db_name, "t", ["a", "b", "c"], -1)
    one = client.get_partition_with_auth(db_name, "t", ["2024-01-02", "1"], "u", [])
    assert one.values == ["2024-01-02", "1"]
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_with_auth(db_name, "t", ["2024-01-02", "9"], "u", [])
    with pytest.raises(t.NoSuchObjectException):
        client.get_partitions_ps(f"{db_name}_missing", "t", [], -1)


def test_partition_names_of_partial_specifications(client: Client, db_name: str) -> None:
    """get_partition_names_ps answers in one statement when it finds names, and as the other
    partial specification calls otherwise: the same names, limits and errors."""
    two_keys(client, db_name)

    def names(db: str, tbl: str, values: list[str] | None, limit: int) -> list[str]:
        found: list[str] = client.get_partition_names_ps(db, tbl, values, limit)
        return found

    assert names(db_name, "t", ["2024-01-01", ""], -1) == [
        "ds=2024-01-01/hr=1",
        "ds=2024-01-01/hr=2",
    ]
    assert names(db_name.upper(), "T", ["", "1"], -1) == [
        "ds=2024-01-01/hr=1",
        "ds=2024-01-02/hr=1",
    ]
    assert names(f"@hive#{db_name}", "t", ["2024-01-02", "1"], -1) == ["ds=2024-01-02/hr=1"]
    assert names(db_name, "t", ["a/b"], 1) == ["ds=a%2Fb/hr=3"]
    assert names(db_name, "t", ["", ""], 0) == []
    assert names(db_name, "t", ["nope"], -1) == []
    assert names(db_name, "t", None, -1) == names(db_name, "t", [], -1)
    # More values than keys, whether or not partitions match the first ones.
    for values in (["2024-01-01", "1", ""], ["2024-01-01", "", "", ""], ["nope", "1", "x"]):
        with pytest.raises(
            t.MetaException, match=f"{len(values)} partition values given for the 2"
        ):
            names(db_name, "t", values, -1)
    with pytest.raises(t.NoSuchObjectException, match="does not exist"):
        names(db_name, "missing", [], -1)
    with pytest.raises(t.NoSuchObjectException, match="does not exist"):
        names(f"{db_name}_missing", "t", ["2024-01-01"], -1)
    client.create_table(table(db_name, "flat"))
    assert names(db_name, "flat", [], -1) == []
    with pytest.raises(t.MetaException, match="1 partition values given for the 0"):
        names(db_name, "flat", ["x"], -1)


def test_append_and_add_with_environment_context(client: Client, db_name: str) -> None:
    two_keys(client, db_name)
    appended = client.append_partition(db_name, "t", ["2024-02-01", "0"])
    table_location = client.get_table(db_name, "t").sd.location
    assert appended.sd.location == f"{table_location}/ds=2024-02-01/hr=0"
    assert appended.sd.cols == client.get_table(db_name, "t").sd.cols
    by_name = client.append_partition_by_name(db_name, "t", "ds=x%2Fy/hr=5")
    assert by_name.values == ["x/y", "5"]
    client.append_partition_with_environment_context(db_name, "t", ["c", "1"], None)
    client.append_partition_by_name_with_environment_context(db_name, "t", "ds=d/hr=2", None)
    with pytest.raises(t.AlreadyExistsException):
        client.append_partition(db_name, "t", ["c", "1"])
    with pytest.raises(t.InvalidObjectException):
        client.append_partition_by_name(db_name, "t", "ds=only")
    added = client.add_partition_with_environment_context(
        partition(db_name, "t", ["e", "7"]), t.EnvironmentContext({})
    )
    assert added.values == ["e", "7"]
    assert len(client.get_partition_names(db_name, "t", -1)) == 9


def test_rename_partition_moves_statistics_and_the_default_folder(
    client: Client, db_name: str
) -> None:
    make_partitioned(client, db_name, values=["1", "2"])
    add_stats(client, db_name, "t", ["ds=1"])
    old = client.get_partition(db_name, "t", ["1"])
    (local(old.sd.location) / "data").write_text("rows")
    renamed = client.get_partition(db_name, "t", ["1"])
    renamed.values = ["9"]
    client.rename_partition(db_name, "t", ["1"], renamed)
    assert client.get_partition_names(db_name, "t", -1) == ["ds=2", "ds=9"]
    moved = client.get_partition(db_name, "t", ["9"])
    assert moved.sd.location.endswith("/t/ds=9")
    assert (local(moved.sd.location) / "data").read_text() == "rows"
    assert not local(old.sd.location).exists()
    stats = client.get_partition_column_statistics(db_name, "t", "ds=9", "id")
    assert stats.statsObj[0].statsData.longStats.highValue == 10
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_column_statistics(db_name, "t", "ds=1", "id")
    clash = client.get_partition(db_name, "t", ["9"])
    clash.values = ["2"]
    with pytest.raises(t.InvalidOperationException, match="already exists"):
        client.rename_partition(db_name, "t", ["9"], clash)
    clash.values = ["3"]
    with pytest.raises(t.InvalidOperationException, match="does not exist"):
        client.rename_partition(db_name, "t", ["1"], clash)


def test_alter_partitions_replace_storage_and_parameters(client: Client, db_name: str) -> None:
    """Spark's SET SERDEPROPERTIES / SET LOCATION on a partition and Trino's basic stats."""
    make_partitioned(client, db_name, values=["1", "2"])
    one, two = client.get_partitions(db_name, "t", -1)
    one.sd.serdeInfo.parameters = {"field.delim": ";"}
    one.sd.location = f"file:{WAREHOUSE}/{db_name}-moved"
    one.parameters = {"numRows": "5"}
    two.parameters = {"numRows": "7"}
    client.alter_partitions_with_environment_context(
        db_name, "t", [one, two], t.EnvironmentContext({})
    )
    got_one, got_two = client.get_partitions(db_name, "t", -1)
    assert got_one.sd.serdeInfo.parameters == {"field.delim": ";"}
    assert got_one.sd.location == one.sd.location
    assert got_one.parameters["numRows"] == "5" and got_two.parameters["numRows"] == "7"
    got_two.parameters = {"numRows": "8"}
    request = t.AlterPartitionsRequest(dbName=db_name, tableName="t", partitions=[got_two])
    client.alter_partitions_req(request)
    client.alter_partition_with_environment_context(db_name, "t", got_two, None)
    assert client.get_partition(db_name, "t", ["2"]).parameters["numRows"] == "8"
    missing = client.get_partition(db_name, "t", ["2"])
    missing.values = ["3"]
    with pytest.raises(t.InvalidOperationException, match="does not exist"):
        client.alter_partitions(db_name, "t", [got_two, missing])


def test_drops_by_request_and_with_environment_context(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["1", "2", "3", "4"])
    folder = local(client.get_partition(db_name, "t", ["1"]).sd.location)
    purge = t.EnvironmentContext({"ifPurge": "TRUE"})
    assert client.drop_partition_with_environment_context(db_name, "t", ["1"], True, purge)
    assert not folder.exists()
    assert client.drop_partition_by_name_with_environment_context(db_name, "t", "ds=2", False, None)
    request = t.DropPartitionsRequest(
        dbName=db_name,
        tblName="t",
        parts=t.RequestPartsSpec(names=["ds=3", "ds=9"]),
        deleteData=False,
        ifExists=False,
        needResult=True,
    )
    with pytest.raises(t.NoSuchObjectException, match="ds=9"):
        client.drop_partitions_req(request)
    request.ifExists = True
    dropped = client.drop_partitions_req(request).partitions
    assert [p.values for p in dropped] == [["3"]]
    assert client.get_partition_names(db_name, "t", -1) == ["ds=4"]
    request.parts = t.RequestPartsSpec(exprs=[t.DropPartitionsExpr(expr=b"kryo")])
    with pytest.raises(t.MetaException, match="expressions"):
        client.drop_partitions_req(request)


def test_partitions_by_filter_as_spark_sends_them(client: Client, db_name: str) -> None:
    two_keys(client, db_name)  # (2024-01-01, 1), (2024-01-01, 2), (2024-01-02, 1), (a/b, 3)

    def names(flt: str, max_parts: int = -1) -> list[str]:
        found = client.get_partitions_by_filter(db_name, "t", flt, max_parts)
        assert client.get_num_partitions_by_filter(db_name, "t", flt) == len(
            client.get_partitions_by_filter(db_name, "t", flt, -1)
        )
        return ["/".join(p.values) for p in found]

    assert names('ds = "2024-01-01" and hr = 1') == ["2024-01-01/1"]
    assert names('(ds = "2024-01-02" or hr = 3)') == ["2024-01-02/1", "a/b/3"]
    assert names("(hr) in (2, 3)") == ["2024-01-01/2", "a/b/3"]
    assert names('ds like "2024-01.*"') == ["2024-01-01/1", "2024-01-01/2", "2024-01-02/1"]
    assert names('"2024-01-02" <= ds') == ["2024-01-02/1", "a/b/3"]
    assert names("hr between 2 and 3") == ["2024-01-01/2", "a/b/3"]
    assert names("") == names("hr >= 0")
    assert names("hr > 0", max_parts=2) == ["2024-01-01/1", "2024-01-01/2"]
    with pytest.raises(t.MetaException) as parse_error:
        client.get_partitions_by_filter(db_name, "t", 'ds == "a"', -1)
    assert parse_error.value.message.startswith("Error parsing partition filter")
    with pytest.raises(t.MetaException, match="not a partitioning key"):
        client.get_num_partitions_by_filter(db_name, "t", 'id = "a"')
    with pytest.raises(t.MetaException, match="is an integer"):
        client.get_partitions_by_filter(db_name, "t", 'hr = "x"', -1)
    with pytest.raises(t.NoSuchObjectException):
        client.get_partitions_by_filter(db_name, "missing", "hr = 1", -1)
