"""--incremental runs of a registered table (metastore.job) on local Spark, against real
servers: new partition folders found and registered, and the table level as a full run
makes it, from a metastore that merges the sketches, from one whose merge returns none
(the job merges them itself, as it must with HMS) and from one that returns no sketches at
all (the table level is then written without them, never with stale ones)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from analyze_data import SMALL, expect_all, generate, write_partition
from conftest import RunningServer, connect
from job_checks import (
    KEY,
    assert_same_stats,
    check_objs,
    new_db,
    run_job,
    run_job_result,
    table_stats,
    union_member,
    write_parts,
)
from pyspark.sql import SparkSession

from metastore.config import Settings
from metastore.job.client import MetastoreClient
from metastore.store import migrate
from metastore.store import models as m

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]
NAMES: dict[str | None, str] = {"a": "ds=a", "b": "ds=b", "new": "ds=new"}


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """colstats as `metastore serve` starts it, returning no sketches (as HMS by default)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'metastore.db'}"
    migrate.upgrade(url)
    running = RunningServer(url, Settings())
    yield running
    running.stop()


def analyzed_then_new_folder(
    spark: SparkSession, server: RunningServer, path: Path, seed: int
) -> tuple[str, dict[str | None, dict[str, list[Any]]]]:
    """A table analyzed from PATH (two partitions), then a third partition folder written
    under its location; its database and the data by partition value."""
    data = write_parts(path, {"a": 400, "b": 300}, SMALL, seed=seed)
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path))
    data["new"] = generate(SMALL, 500, seed=seed + 1)
    write_partition(path, KEY, "new", SMALL, data["new"])
    return db, data


def test_the_job_merges_the_sketches_the_metastore_does_not(
    client: Any,
    spark: SparkSession,
    server: RunningServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HMS merges no sketches in get_aggr_stats_for but returns the partitions' (with its
    fetch of bit vectors on): the job merges those of the partitions it read with the
    others', and the table level has the sketches of all the data, each partition once."""
    path = tmp_path / "t"
    db, data = analyzed_then_new_folder(spark, server, path, seed=60)
    call = MetastoreClient.call

    def aggregate_without_sketches(self: MetastoreClient, method: str, *args: Any) -> Any:
        answer = call(self, method, *args)
        if method == "get_aggr_stats_for":
            for obj in answer.colStats:
                stats = union_member(obj)
                stats.bitVectors = None
                if hasattr(stats, "histogram"):
                    stats.histogram = None
        return answer

    monkeypatch.setattr(MetastoreClient, "call", aggregate_without_sketches)
    result = run_job_result(spark, server, f"{db}.t", "--incremental")
    assert (result.partitions, result.kept) == (1, 2)
    assert sorted(client.get_partition_names(db, "t", -1)) == sorted(NAMES.values())
    _, whole = expect_all(SMALL, {NAMES[v]: d for v, d in data.items()})
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table level")
    check_objs(list(result.table_stats.values()), whole, SMALL, "returned")

    # A partition named again is read again, and counted once: with its new data only.
    data["a"] = generate(SMALL, 250, seed=62)
    write_partition(path, KEY, "a", SMALL, data["a"])
    result = run_job_result(spark, server, f"{db}.t", "--incremental", "--partition", "ds=a")
    assert (result.partitions, result.kept) == (1, 2)
    _, whole = expect_all(SMALL, {NAMES[v]: d for v, d in data.items()})
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table level, ds=a again")
    assert client.get_table(db, "t").parameters["numRows"] == str(250 + 300 + 500)


def test_a_metastore_that_returns_no_sketches(
    spark: SparkSession, plain: RunningServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every figure as a full run's; the sketches, which the job cannot merge, neither
    written nor left as they were (they would describe the data without the new partition),
    and a warning that says how to keep them."""
    path = tmp_path / "t"
    db, _ = analyzed_then_new_folder(spark, plain, path, seed=70)
    with caplog.at_level(logging.WARNING, "metastore.job"):
        result = run_job_result(spark, plain, f"{db}.t", "--incremental")
    assert (result.partitions, result.kept) == (1, 2)
    (warning,) = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.name.startswith("metastore.job")
    ]
    assert warning.startswith("the metastore returned no bit vectors of ")
    assert "metastore serve --fetch-bitvector --fetch-histogram" in warning
    run_job(spark, plain, f"{db}.full", "--path", str(path))
    client, transport = connect(plain.port)
    try:
        assert_same_stats(
            table_stats(client, db, "t", SMALL), table_stats(client, db, "full", SMALL), "table"
        )
        for key in ("numRows", "numFiles", "totalSize", "rawDataSize"):
            assert (
                client.get_table(db, "t").parameters[key]
                == client.get_table(db, "full").parameters[key]
            ), key
    finally:
        transport.close()
    sketches = (
        sa.select(m.TableColumnStats.BIT_VECTOR, m.TableColumnStats.HISTOGRAM)
        .join(m.Table, m.Table.TBL_ID == m.TableColumnStats.TBL_ID)
        .join(m.Database, m.Database.DB_ID == m.Table.DB_ID)
        .where(m.Database.NAME == db, m.Table.TBL_NAME == "t")
    )
    with plain.engine.connect() as conn:
        assert conn.execute(sketches).all() == [(None, None)] * len(SMALL)
