"""Table changes HMS allows, through alter_table: renames (with statistics, partitions and
folders following), column changes (with the statistics of removed or retyped columns
deleted), and the rest of the table replaced."""

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


def table_stats(client: Client, db: str, tbl: str, columns: list[str]) -> list[str]:
    request = t.TableStatsRequest(dbName=db, tblName=tbl, colNames=columns)
    return sorted(o.colName for o in client.get_table_statistics_req(request).tableStats)


def part_stats(client: Client, db: str, tbl: str, parts: list[str]) -> dict[str, list[str]]:
    request = t.PartitionsStatsRequest(
        dbName=db, tblName=tbl, colNames=["id", "name"], partNames=parts
    )
    result = client.get_partitions_statistics_req(request).partStats
    return {p: sorted(o.colName for o in objs) for p, objs in result.items()}


def local(location: str) -> Path:
    assert location.startswith("file:")
    return Path(location.removeprefix("file:"))


def test_rename_moves_statistics_partitions_and_the_default_folder(
    client: Client, db_name: str
) -> None:
    make_partitioned(client, db_name, values=["1", "2"])
    add_stats(client, db_name, "t", ["ds=1", "ds=2"])
    before = client.get_table(db_name, "t")
    old_folder = local(before.sd.location)
    (old_folder / "ds=1").mkdir(parents=True, exist_ok=True)
    (old_folder / "ds=1" / "part-0.parquet").write_bytes(b"data")
    renamed = client.get_table(db_name, "t")
    renamed.tableName = "t_new"
    client.alter_table_with_environment_context(db_name, "t", renamed, None)

    with pytest.raises(t.NoSuchObjectException):
        client.get_table(db_name, "t")
    after = client.get_table(db_name, "t_new")
    assert after.sd.location == f"file:{WAREHOUSE}/{db_name}.db/t_new"
    assert (local(after.sd.location) / "ds=1" / "part-0.parquet").read_bytes() == b"data"
    assert not old_folder.exists()
    assert client.get_partition_names(db_name, "t_new", -1) == ["ds=1", "ds=2"]
    locations = [p.sd.location for p in client.get_partitions(db_name, "t_new", -1)]
    assert locations == [f"{after.sd.location}/ds=1", f"{after.sd.location}/ds=2"]
    assert table_stats(client, db_name, "t_new", ["id", "name"]) == ["id", "name"]
    assert part_stats(client, db_name, "t_new", ["ds=1", "ds=2"]) == {
        "ds=1": ["id", "name"],
        "ds=2": ["id", "name"],
    }


def test_rename_to_another_database_and_of_a_table_with_its_own_location(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    client.create_database(database(db_name))
    other = f"{db_name}_2"
    client.create_database(database(other))
    own = f"file:{tmp_path / 'mine'}"
    client.create_table(table(db_name, "t", sd=storage(location=own)))
    moved = client.get_table(db_name, "t")
    moved.dbName, moved.tableName = other, "u"
    client.alter_table(db_name, "t", moved)
    assert client.get_all_tables(db_name) == []
    assert client.get_table(other, "u").sd.location == own  # the user's folder stays
    assert (tmp_path / "mine").is_dir()
    # A name that is taken, or a database that does not exist, is refused.
    client.create_table(table(other, "v"))
    clash = client.get_table(other, "u")
    clash.tableName = "v"
    with pytest.raises(t.InvalidOperationException, match="already exists"):
        client.alter_table(other, "u", clash)
    clash.tableName, clash.dbName = "u", f"{db_name}_missing"
    with pytest.raises(t.InvalidOperationException, match="does not exist"):
        client.alter_table(other, "u", clash)


def test_external_tables_keep_their_location_on_rename(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(table(db_name, "e", parameters={"EXTERNAL": "TRUE"}))
    got = client.get_table(db_name, "e")
    assert got.tableType == "EXTERNAL_TABLE"
    location = got.sd.location
    got.tableName = "e2"
    client.alter_table(db_name, "e", got)
    assert client.get_table(db_name, "e2").sd.location == location


def test_column_changes_delete_the_statistics_of_removed_or_retyped_columns(
    client: Client, db_name: str
) -> None:
    make_partitioned(client, db_name, values=["1"])
    add_stats(client, db_name, "t", ["ds=1"])
    accurate = client.get_table(db_name, "t").parameters["COLUMN_STATS_ACCURATE"]
    assert '"id":"true"' in accurate
    changed = client.get_table(db_name, "t")
    # id retyped, name kept (new comment), score added
    changed.sd.cols = fields(("id", "string"), ("name", "string", "the name"), ("score", "int"))
    client.alter_table(db_name, "t", changed)
    after = client.get_table(db_name, "t")
    assert after.sd.cols == changed.sd.cols
    assert table_stats(client, db_name, "t", ["id", "name", "score"]) == ["name"]
    assert '"id"' not in after.parameters.get("COLUMN_STATS_ACCURATE", "")
    # Without CASCADE partitions keep their columns and statistics, as in HMS.
    (part,) = client.get_partitions(db_name, "t", -1)
    assert part.sd.cols == fields(("id", "bigint"), ("name", "string"))
    assert part_stats(client, db_name, "t", ["ds=1"]) == {"ds=1": ["id", "name"]}
    # Replace columns with CASCADE: partitions follow, their statistics of name go.
    replaced = client.get_table(db_name, "t")
    replaced.sd.cols = fields(("id", "string"))
    context = t.EnvironmentContext(properties={"CASCADE": "true"})
    client.alter_table_with_environment_context(db_name, "t", replaced, context)
    (part,) = client.get_partitions(db_name, "t", -1)
    assert part.sd.cols == fields(("id", "string"))
    assert part_stats(client, db_name, "t", ["ds=1"]) == {}


def test_storage_owner_parameters_and_formats_are_replaced(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    got = client.get_table(db_name, "t")
    got.owner = "etl"
    got.parameters = {"comment": "orders", "team": "growth"}
    got.sd.inputFormat = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
    got.sd.outputFormat = "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat"
    got.sd.serdeInfo = t.SerDeInfo("orc", "org.apache.hadoop.hive.ql.io.orc.OrcSerde", {"k": "v"})
    got.sd.bucketCols, got.sd.numBuckets = ["id"], 4
    got.sd.sortCols = [t.Order("id", 1)]
    got.sd.skewedInfo = t.SkewedInfo(["id"], [["7"]], {})
    got.partitionKeys = fields(("ds", "string", "the day"))  # a key's comment may change
    client.alter_table(db_name, "t", got)
    after = client.get_table(db_name, "t")
    assert after.owner == "etl"
    assert {k: v for k, v in after.parameters.items() if k != "transient_lastDdlTime"} == {
        "comment": "orders",
        "team": "growth",
    }
    for field in ("inputFormat", "outputFormat", "serdeInfo", "bucketCols", "numBuckets"):
        assert getattr(after.sd, field) == getattr(got.sd, field), field
    assert after.sd.sortCols == got.sd.sortCols
    assert after.sd.skewedInfo.skewedColValues == [["7"]]
    assert after.partitionKeys == got.partitionKeys


def test_transactional_tables_are_refused(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.MetaException, match="transactional"):
        client.create_table(table(db_name, parameters={"transactional": "true"}))
    client.create_table(table(db_name))
    acid = client.get_table(db_name, "t")
    acid.parameters = {"transactional": "TRUE"}
    with pytest.raises(t.InvalidOperationException, match="transactional"):
        client.alter_table(db_name, "t", acid)


def test_a_view_stays_a_view(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    view = table(
        db_name,
        "v",
        tableType="VIRTUAL_VIEW",
        viewOriginalText="select 1",
        viewExpandedText="select 1",
        sd=storage(),
    )
    client.create_table(view)
    got = client.get_table(db_name, "v")
    assert (got.tableType, got.sd.location) == ("VIRTUAL_VIEW", None)
    got.viewOriginalText = got.viewExpandedText = "select 2"
    client.alter_table(db_name, "v", got)
    assert client.get_table(db_name, "v").viewExpandedText == "select 2"
    got.tableType = "MANAGED_TABLE"
    with pytest.raises(t.InvalidOperationException, match="VIRTUAL_VIEW cannot become"):
        client.alter_table(db_name, "v", got)
    with pytest.raises(t.InvalidObjectException, match="no query text"):
        client.create_table(table(db_name, "w", tableType="VIRTUAL_VIEW", sd=storage()))


def test_partition_of_a_renamed_table_keeps_its_own_location(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    make_partitioned(client, db_name)
    elsewhere = f"file:{tmp_path / 'p'}"
    client.add_partition(partition(db_name, "t", ["x"], sd=storage(location=elsewhere)))
    renamed = client.get_table(db_name, "t")
    renamed.tableName = "t2"
    client.alter_table(db_name, "t", renamed)
    (part,) = client.get_partitions(db_name, "t2", -1)
    assert part.sd.location == elsewhere
