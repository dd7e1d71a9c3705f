"""The read calls a planner makes, without the cache of answers, cost a fixed number of
statements whatever the table's parts: a table with its storage descriptor and its
statistics, then the rows below it (columns, parameters, serde, keys); partitions the same
way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import RunningServer, connect
from driver_trace import DriverStatements, large_table_plan
from metadata_builders import (
    Client,
    add_stats,
    column_stats,
    long_stats,
    make_partitioned,
    string_stats,
)

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.stats import queries
from metastore.store import lists


@pytest.fixture(scope="module")
def uncached(migrated_url: str) -> Iterator[tuple[RunningServer, Client]]:
    server = RunningServer(migrated_url, Settings(cache_size=0))
    client, transport = connect(server.port)
    client.create_database(t.Database(name="reads", parameters={}))
    make_partitioned(client, "reads", "p", ["1", "2", "3"])
    add_stats(client, "reads", "p", ["ds=1", "ds=2", "ds=3"])
    yield server, client
    transport.close()
    server.stop()


# Statements besides BEGIN and COMMIT, whichever the backend.
EXPECTED = {
    # TBLS with DBS, SDS, SERDES and TAB_COL_STATS; the UNION ALL of the rows below.
    "get_table": 2,
    # The table with its keys; the partitions with their storage; the rows below them.
    "get_partitions_by_filter": 3,
    # The statistics rows of the partitions by name, joined to their table by its name.
    "get_partitions_statistics_req": 1,
    "get_aggr_stats_for": 1,
}


@pytest.mark.parametrize("call", sorted(EXPECTED))
def test_a_read_is_a_fixed_number_of_statements(
    uncached: tuple[RunningServer, Client], call: str
) -> None:
    server, client = uncached
    stats = t.PartitionsStatsRequest(
        dbName="reads", tblName="p", colNames=["id", "name"], partNames=["ds=1", "ds=3"]
    )
    reads = {
        "get_table": lambda: client.get_table("reads", "p"),
        "get_partitions_by_filter": lambda: client.get_partitions_by_filter(
            "reads", "p", 'ds >= "1"', -1
        ),
        "get_partitions_statistics_req": lambda: client.get_partitions_statistics_req(stats),
        "get_aggr_stats_for": lambda: client.get_aggr_stats_for(stats),
    }
    answer = reads[call]()  # the dialect's own questions on a new connection
    with DriverStatements(server.engine) as statements:
        reads[call]()
        before = statements.selects()
        assert reads[call]() == answer
        assert statements.selects() - before == EXPECTED[call], statements.sent()


def test_partition_statistics_are_found_by_the_partitions_names_index(
    uncached: tuple[RunningServer, Client],
) -> None:
    """The read of many partitions' statistics goes from the partitions, found by name in
    the index of (TBL_ID, PART_NAME), to their statistics by PART_ID: planned as for large
    tables, it scans neither."""
    server, client = uncached
    days = [str(n) for n in range(500)]
    make_partitioned(client, "reads", "big", days)
    objs = [long_stats("id", 1, 10), string_stats("name")]
    stats = [column_stats("reads", "big", objs, f"ds={day}") for day in days]
    assert client.set_aggr_stats_for(t.SetPartitionsStatsRequest(colStats=stats))
    engine = server.engine
    dialect = engine.dialect.name
    params = {
        "catalog": "hive",
        "db": "reads",
        "table": "big",
        "engine": "hive",
        "parts": lists.values(dialect, ["ds=1", "ds=2"]),
        "columns": lists.values(dialect, ["id"]),
    }
    plan = large_table_plan(engine, queries._partition_stats_query(dialect, True), params)
    if dialect == "sqlite":
        assert "SEARCH PARTITIONS USING" in plan and "PART_NAME=?" in plan, plan
        assert "SEARCH PART_COL_STATS USING" in plan and "PART_ID=?" in plan, plan
    else:
        assert "Seq Scan" not in plan, plan
        conditions = plan.split("Index Cond")
        assert any('"PART_NAME"' in c.split("\n")[0] for c in conditions[1:]), plan
        assert any('"PART_ID"' in c.split("\n")[0] for c in conditions[1:]), plan
