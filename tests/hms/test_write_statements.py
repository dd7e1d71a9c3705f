"""A statistics write costs a fixed number of statements whatever the number of partitions
and columns it names: the table, its partitions by name, their column lists (with its
partition, for a write of one), the upsert of the rows, COLUMN_STATS_ACCURATE of their
owners and the version bump (one statement on PostgreSQL for one partition: the function of
schema 0010). The partitions are found through the index of (TBL_ID,
PART_NAME), not by a scan of the table's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import RunningServer, connect
from driver_trace import DriverStatements, large_table_plan
from metadata_builders import Client, column_stats, long_stats, make_partitioned, string_stats

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.stats import owners
from metastore.store import lists

PARTS = [str(day) for day in range(1, 9)]


@pytest.fixture(scope="module")
def server(migrated_url: str) -> Iterator[tuple[RunningServer, Client]]:
    running = RunningServer(migrated_url, Settings(cache_size=0))
    client, transport = connect(running.port)
    client.create_database(t.Database(name="writes", parameters={}))
    make_partitioned(client, "writes", "p", PARTS)
    yield running, client
    transport.close()
    running.stop()


def _write(client: Client, parts: list[str], low: int) -> None:
    objs = [long_stats("id", low, low + 10), string_stats("name")]
    stats = [column_stats("writes", "p", objs, f"ds={part}") for part in parts]
    assert client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=stats, needMerge=False))


def _statements(server: RunningServer, client: Client, parts: list[str], low: int) -> int:
    """The statements of one write of PARTS besides BEGIN and COMMIT: on PostgreSQL the
    executions, on SQLite the distinct statements (its trace shows each row of an
    executemany, with no round trip to count)."""
    with DriverStatements(server.engine) as statements:
        _write(client, parts, low)
        if server.engine.dialect.name == "postgresql":
            return statements.selects()
        sent = statements.sent()
    control = ("BEGIN", "COMMIT", "ROLLBACK")
    # Known by their first words: the trace expands the parameters.
    return len({" ".join(s.split()[:6]) for s in sent if not s.upper().startswith(control)})


def test_a_partition_statistics_write_is_a_fixed_number_of_statements(
    server: tuple[RunningServer, Client],
) -> None:
    running, client = server
    _write(client, PARTS[:3], 0)  # the first write of each partition, and the dialect's questions
    _write(client, PARTS[:1], 10)  # the first of one partition: the table's columns read first
    one = _statements(running, client, PARTS[:1], 20)
    three = _statements(running, client, PARTS[:3], 40)
    eight = _statements(running, client, PARTS, 60)  # five partitions written for the first time
    # The table; the partitions; their columns; the upsert; the version bump: its counter,
    # TBL_VERSIONS and PART_VERSIONS in one statement on PostgreSQL, three on SQLite. One
    # partition is read with its columns.
    assert three == (5 if running.engine.dialect.name == "postgresql" else 7), three
    # One partition is one statement on PostgreSQL (metastore.stats.one_statement).
    assert one == (1 if running.engine.dialect.name == "postgresql" else three - 1), (one, three)
    # Besides: COLUMN_STATS_ACCURATE of the partitions that had no statistics.
    assert eight == three + 1, (three, eight)
    got = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest(
            dbName="writes", tblName="p", colNames=["id"], partNames=[f"ds={p}" for p in PARTS]
        )
    ).partStats
    assert {name: stats[0].statsData.longStats.highValue for name, stats in got.items()} == {
        f"ds={part}": 70 for part in PARTS
    }


def test_the_partitions_of_a_write_are_found_by_their_names_index(
    server: tuple[RunningServer, Client],
) -> None:
    running, client = server
    # A table of many partitions beside the small one: SQLite's statistics of them (analyzed
    # as partitions are added) make a scan of a few rows cheaper than the index.
    make_partitioned(client, "writes", "big", [str(n) for n in range(500)])
    tbl_id = client.get_table("writes", "big").id
    dialect = running.engine.dialect.name
    params = {"tbl_id": tbl_id, "names": lists.values(dialect, ["ds=1", "ds=2"]), "key": "k"}
    one = {"tbl_id": tbl_id, "name": "ds=1", "key": "k"}
    for query, given in (
        (owners._partitions_query(dialect), params),
        (owners._partition_query(), one),
    ):
        plan = large_table_plan(running.engine, query, given)
        if running.engine.dialect.name == "sqlite":
            assert "SEARCH PARTITIONS USING" in plan and "PART_NAME=?" in plan, plan
        else:
            assert "Index" in plan and '"PART_NAME"' in plan.split("Index Cond")[1], plan
