"""HMS's fast statistics through the Thrift calls, on SQLite and PostgreSQL: numFiles and
totalSize counted from a table's or partition's local folder on create and alter, what turns
the count off, and what it does to COLUMN_STATS_ACCURATE."""

from __future__ import annotations

import json
from pathlib import Path

from metadata_builders import database, fields, partition, storage, table

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client
ACCURATE = "COLUMN_STATS_ACCURATE"
TASK = t.EnvironmentContext({"STATS_GENERATED": "TASK"})
NO_COUNT = t.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"})


def folder_with_files(path: Path, *sizes: int) -> str:
    """A folder holding files of SIZES bytes, Spark's hidden _SUCCESS and a hidden folder."""
    path.mkdir(parents=True, exist_ok=True)
    for i, size in enumerate(sizes):
        (path / f"part-{i}.parquet").write_bytes(bytes(size))
    (path / "_SUCCESS").write_bytes(b"")
    (path / ".staging").mkdir(exist_ok=True)
    (path / ".staging" / "tmp").write_bytes(bytes(99))
    return f"file:{path}"


def fast(params: dict[str, str]) -> tuple[str | None, str | None]:
    return params.get("numFiles"), params.get("totalSize")


def test_a_table_on_an_existing_folder_is_counted(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    client.create_database(database(db_name))
    location = folder_with_files(tmp_path / "t", 100, 23)
    client.create_table(table(db_name, "t", sd=storage(location=location)))
    params = client.get_table(db_name, "t").parameters
    assert fast(params) == ("2", "123")
    assert "BASIC_STATS" not in params.get(ACCURATE, "")  # counted from files: not accurate


def test_a_new_folder_is_not_counted(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(table(db_name, "t"))  # the server makes its folder
    assert fast(client.get_table(db_name, "t").parameters) == (None, None)


def test_an_unpartitioned_table_is_counted_again_on_every_alter(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    client.create_database(database(db_name))
    folder = tmp_path / "t"
    client.create_table(table(db_name, "t", sd=storage(location=folder_with_files(folder, 10))))
    (folder / "part-9.parquet").write_bytes(bytes(5))
    current = client.get_table(db_name, "t")
    current.parameters = {**current.parameters, "numFiles": "7", "totalSize": "7"}
    client.alter_table(db_name, "t", current)
    assert fast(client.get_table(db_name, "t").parameters) == ("2", "15")


def test_a_statistics_task_marks_basic_statistics_accurate_and_keeps_column_flags(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    client.create_database(database(db_name))
    location = folder_with_files(tmp_path / "t", 64)
    client.create_table(table(db_name, "t", sd=storage(location=location)))
    current = client.get_table(db_name, "t")
    current.parameters = {
        **current.parameters,
        ACCURATE: json.dumps({"COLUMN_STATS": {"id": "true"}}),
    }
    client.alter_table_with_environment_context(db_name, "t", current, TASK)
    params = client.get_table(db_name, "t").parameters
    assert fast(params) == ("1", "64")
    assert json.loads(params[ACCURATE]) == {"BASIC_STATS": "true", "COLUMN_STATS": {"id": "true"}}
    # An engine's plain alter counts again: the basic statistics are no longer accurate, the
    # column statistics still are (HMS 2.3 drops both; the file count says nothing of columns).
    client.alter_table(db_name, "t", client.get_table(db_name, "t"))
    params = client.get_table(db_name, "t").parameters
    assert json.loads(params[ACCURATE]) == {"COLUMN_STATS": {"id": "true"}}


def test_do_not_update_stats_keeps_what_the_client_sent_and_is_not_stored(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    client.create_database(database(db_name))
    location = folder_with_files(tmp_path / "t", 64)
    client.create_table(table(db_name, "t", sd=storage(location=location)))
    current = client.get_table(db_name, "t")
    current.parameters = {**current.parameters, "numFiles": "5", "totalSize": "500"}
    client.alter_table_with_environment_context(db_name, "t", current, NO_COUNT)
    assert fast(client.get_table(db_name, "t").parameters) == ("5", "500")
    # Older clients put the flag among the parameters: honoured there, and never stored.
    current = client.get_table(db_name, "t")
    current.parameters = {**current.parameters, "totalSize": "600", "DO_NOT_UPDATE_STATS": "TRUE"}
    client.alter_table(db_name, "t", current)
    params = client.get_table(db_name, "t").parameters
    assert fast(params) == ("5", "600") and "DO_NOT_UPDATE_STATS" not in params


def test_partitions_are_counted_when_added_and_when_their_figures_change(
    client: Client, db_name: str, tmp_path: Path
) -> None:
    client.create_database(database(db_name))
    keys = fields(("ds", "string"))
    client.create_table(table(db_name, "p", keys=keys))
    located = folder_with_files(tmp_path / "p1", 7, 8)
    client.add_partition(partition(db_name, "p", ["1"], sd=storage(location=located)))
    assert fast(client.get_partition(db_name, "p", ["1"]).parameters) == ("2", "15")
    # Unchanged figures from the client are kept as they are (HMS does not count again) ...
    same = client.get_partition(db_name, "p", ["1"])
    (tmp_path / "p1" / "late.parquet").write_bytes(bytes(1))
    client.alter_partition(db_name, "p", same)
    assert fast(client.get_partition(db_name, "p", ["1"]).parameters) == ("2", "15")
    # ... a partition moved to a folder that does not exist holds nothing ...
    moved = client.get_partition(db_name, "p", ["1"])
    moved.sd.location = f"file:{tmp_path / 'nowhere'}"
    moved.parameters = {k: v for k, v in moved.parameters.items() if k not in ("numFiles",)}
    client.alter_partition(db_name, "p", moved)
    assert fast(client.get_partition(db_name, "p", ["1"]).parameters) == ("0", "0")
    # ... and a partition outside the local file system is left as the client sent it.
    remote = client.get_partition(db_name, "p", ["1"])
    remote.sd.location = "hdfs://namenode:8020/warehouse/p/ds=1"
    remote.parameters = {**remote.parameters, "numFiles": "3", "totalSize": "300"}
    client.alter_partition(db_name, "p", remote)
    assert fast(client.get_partition(db_name, "p", ["1"]).parameters) == ("3", "300")


def test_a_rename_is_not_counted(client: Client, db_name: str, tmp_path: Path) -> None:
    client.create_database(database(db_name))
    location = folder_with_files(tmp_path / "t", 64)
    client.create_table(table(db_name, "t", sd=storage(location=location)))
    current = client.get_table(db_name, "t")
    current.parameters = {k: v for k, v in current.parameters.items() if k != "numFiles"}
    current.tableName = "t2"
    client.alter_table(db_name, "t", current)
    assert fast(client.get_table(db_name, "t2").parameters) == (None, "64")
