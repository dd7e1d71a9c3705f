"""The read calls a planner makes, without the cache of answers, cost a fixed number of
statements whatever the table's parts: a table with its storage descriptor, the rows below
it (columns, parameters, serde, keys) and its statistics; partitions the same way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import RunningServer, connect
from driver_trace import DriverStatements
from metadata_builders import Client, add_stats, make_partitioned

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings


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
    # TBLS with DBS, SDS and SERDES; the UNION ALL of the rows below; TAB_COL_STATS.
    "get_table": 3,
    # The table's lookup, its keys, the partitions with their storage, the rows below them.
    "get_partitions_by_filter": 4,
}


@pytest.mark.parametrize("call", sorted(EXPECTED))
def test_a_read_is_a_fixed_number_of_statements(
    uncached: tuple[RunningServer, Client], call: str
) -> None:
    server, client = uncached
    reads = {
        "get_table": lambda: client.get_table("reads", "p"),
        "get_partitions_by_filter": lambda: client.get_partitions_by_filter(
            "reads", "p", 'ds >= "1"', -1
        ),
    }
    answer = reads[call]()  # the dialect's own questions on a new connection
    with DriverStatements(server.engine) as statements:
        reads[call]()
        before = statements.selects()
        assert reads[call]() == answer
        assert statements.selects() - before == EXPECTED[call], statements.sent()
