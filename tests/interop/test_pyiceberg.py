"""Iceberg tables through pyiceberg's HiveCatalog (the `test` extra pins its version), on both
backends through servers on loopback: a table's whole life, and writers in processes of their
own appending to one table at once, through two servers on PostgreSQL, where no commit may be
lost without its writer being told (CommitFailedException).

Every commit of pyiceberg takes an HMS lock (lock, check_lock while WAITING, get_table,
alter_table_with_environment_context, unlock): without the lock calls, no commit succeeds; with
a lock that is not exclusive, concurrent appends silently drop each other.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RunningServer, connect

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings

if importlib.util.find_spec("pyiceberg") is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("pyiceberg is required when CI=true (pip install -e '.[test]')")
    pytest.skip("pyiceberg is not installed (pip install -e '.[test]')", allow_module_level=True)

import pyarrow as pa
from pyiceberg.catalog.hive import HiveCatalog
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import DayTransform
from pyiceberg.types import (
    DoubleType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
)

WRITER = Path(__file__).with_name("iceberg_writer.py")
LOCK_WAITS = {
    "lock-check-min-wait-time": "0.01",
    "lock-check-max-wait-time": "0.1",
    "lock-check-retries": "200",
}


def catalog(port: int, warehouse: Path) -> HiveCatalog:
    return HiveCatalog(
        "colstats", uri=f"thrift://127.0.0.1:{port}", warehouse=warehouse.as_uri(), **LOCK_WAITS
    )


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    folder = tmp_path / "warehouse"
    folder.mkdir()
    return folder


def _parameters(server: RunningServer, db: str, table: str) -> dict[str, str]:
    client, transport = connect(server.port)
    try:
        return dict(client.get_table(db, table).parameters)
    finally:
        transport.close()


def test_an_iceberg_table_lives_its_whole_life_through_colstats(
    server: RunningServer, warehouse: Path, db_name: str
) -> None:
    ice = catalog(server.port, warehouse)
    ice.create_namespace(db_name)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False),
    )
    spec = PartitionSpec(PartitionField(3, 1000, DayTransform(), "ts_day"))
    table = ice.create_table(f"{db_name}.events", schema=schema, partition_spec=spec)
    created = _parameters(server, db_name, "events")
    assert created["table_type"] == "ICEBERG"

    day = datetime.datetime(2026, 11, 28, 9, 30)
    arrow = pa.schema([("id", pa.int64()), ("name", pa.string()), ("ts", pa.timestamp("us"))])
    table.append(pa.table({"id": [1, 2], "name": ["a", "b"], "ts": [day, day]}, schema=arrow))
    first = _parameters(server, db_name, "events")
    next_day = day + datetime.timedelta(days=1)
    table = ice.load_table(f"{db_name}.events")
    table.append(pa.table({"id": [3], "name": ["c"], "ts": [next_day]}, schema=arrow))
    second = _parameters(server, db_name, "events")
    assert second["previous_metadata_location"] == first["metadata_location"]
    assert second["metadata_location"] != first["metadata_location"]

    table = ice.load_table(f"{db_name}.events")  # through the cache of answers: current
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert len(table.snapshots()) == 2

    with table.update_schema() as update:
        update.add_column("amount", DoubleType())
        update.rename_column("name", "label")
    table = ice.load_table(f"{db_name}.events")
    assert [f.name for f in table.schema().fields] == ["id", "label", "ts", "amount"]
    evolved = pa.schema(
        [("id", pa.int64()), ("label", pa.string()), ("ts", pa.timestamp("us")),
         ("amount", pa.float64())]
    )  # fmt: skip
    table.append(
        pa.table({"id": [4], "label": ["d"], "ts": [day], "amount": [9.5]}, schema=evolved)
    )
    rows = ice.load_table(f"{db_name}.events").scan().to_arrow().sort_by("id").to_pylist()
    assert [(r["id"], r["label"], r["amount"]) for r in rows] == [
        (1, "a", None), (2, "b", None), (3, "c", None), (4, "d", 9.5)
    ]  # fmt: skip
    client, transport = connect(server.port)
    try:
        columns = [c.name for c in client.get_table(db_name, "events").sd.cols]
        assert columns == ["id", "label", "ts", "amount"]  # the HMS columns mirror the schema
        assert client.show_locks(t.ShowLocksRequest(dbname=db_name)).locks == []
    finally:
        transport.close()

    _users_see_an_iceberg_table(server, db_name, "events")

    ice.rename_table(f"{db_name}.events", f"{db_name}.events_2026")
    renamed = ice.load_table(f"{db_name}.events_2026")
    assert renamed.scan().to_arrow().num_rows == 4
    ice.drop_table(f"{db_name}.events_2026")
    with pytest.raises(NoSuchTableError):
        ice.load_table(f"{db_name}.events_2026")
    ice.drop_namespace(db_name)


@pytest.fixture
def second_server(server: RunningServer) -> Iterator[RunningServer | None]:
    """On PostgreSQL, a second server on the module's database; on SQLite none."""
    if server.engine.dialect.name != "postgresql":
        yield None
        return
    running = RunningServer(server.url, Settings(fetch_bitvector=True, fetch_histogram=True))
    yield running
    running.stop()


def test_writers_appending_at_once_lose_no_commit_silently(
    server: RunningServer, second_server: RunningServer | None, warehouse: Path, db_name: str
) -> None:
    """Four writers in processes of their own append one row at a time, five rounds each, to
    one table (on PostgreSQL, two writers through each of two servers): every append that
    returned is in the table, and every one that raised CommitFailedException is not."""
    ice = catalog(server.port, warehouse)
    ice.create_namespace(db_name)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "writer", StringType(), required=False),
    )
    name = f"{db_name}.appends"
    ice.create_table(name, schema=schema)
    ports = [server.port] + ([second_server.port] if second_server else [])
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                str(WRITER),
                f"thrift://127.0.0.1:{ports[n % len(ports)]}",
                warehouse.as_uri(),
                name,
                str(n + 1),
                "5",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    outcomes: dict[int, str] = {}
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
        for line in out.splitlines():
            row_id, outcome = line.split()
            outcomes[int(row_id)] = outcome
    assert len(outcomes) == 20
    stored = ice.load_table(name).scan().to_arrow()["id"].to_pylist()
    committed = {row_id for row_id, outcome in outcomes.items() if outcome == "ok"}
    assert sorted(stored) == sorted(committed), "a commit was lost or a failed one kept"
    assert committed, "no append succeeded"
    snapshots: list[Any] = ice.load_table(name).snapshots()
    assert len(snapshots) == len(committed)


def metastore(*argv: str) -> subprocess.CompletedProcess[str]:
    """`metastore ARGV` as a user types it."""
    return subprocess.run(
        [sys.executable, "-m", "metastore.cli", *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )


def _users_see_an_iceberg_table(server: RunningServer, db: str, name: str) -> None:
    """`metastore ls` and `describe` say that the table is Iceberg's, where its metadata is,
    and where its statistics are (not in the metastore until the job writes them)."""
    uri = f"thrift://127.0.0.1:{server.port}"
    metadata = _parameters(server, db, name)["metadata_location"]
    listed = metastore("ls", db, "--uri", uri)
    assert listed.returncode == 0, listed.stderr
    header, _, row = listed.stdout.splitlines()[:3]
    assert header.split()[:4] == ["table", "type", "format", "metadata_location"]
    assert row.split()[:4] == [name, "EXTERNAL_TABLE", "iceberg", metadata]
    as_json = json.loads(metastore("ls", f"{db}.{name}", "--uri", uri, "--json").stdout)
    assert as_json[0]["format"] == "iceberg" and as_json[0]["metadata_location"] == metadata
    described = metastore("describe", f"{db}.{name}", "--uri", uri)
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    assert lines[2] == f"iceberg table, metadata {metadata}"
    assert lines[-1].startswith(
        "column statistics: none in the metastore; Iceberg keeps this table's statistics in "
        "its own metadata"
    )
    described = json.loads(metastore("describe", f"{db}.{name}", "--uri", uri, "--json").stdout)
    assert described["iceberg_metadata_location"] == metadata
