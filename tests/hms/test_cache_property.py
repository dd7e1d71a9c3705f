"""The cache of answers is exact: random interleavings of changes and reads over two servers
with caches on one database, every answer compared with the same read through a third server
of that database without a cache."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import RunningServer, connect
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metadata_builders import (
    Client,
    column_stats,
    database,
    fields,
    long_stats,
    partition,
    string_stats,
    table,
)
from thrift.Thrift import TApplicationException

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings

VALUES = ["a", "b", "c", "d"]
KEYS = fields(("ds", "string"))


@pytest.fixture(scope="module")
def servers(migrated_url: str) -> Iterator[list[RunningServer]]:
    """Two servers with caches and one without, on one database."""
    running = [
        RunningServer(migrated_url, Settings()),
        RunningServer(migrated_url, Settings()),
        RunningServer(migrated_url, Settings(cache_size=0)),
    ]
    yield running
    for server in running:
        server.stop()


@pytest.fixture(scope="module")
def clients(servers: list[RunningServer]) -> Iterator[tuple[Client, Client, Client]]:
    """Clients of the three servers."""
    connections = [connect(server.port) for server in servers]
    yield connections[0][0], connections[1][0], connections[2][0]
    for _, transport in connections:
        transport.close()


def _hits(servers: list[RunningServer]) -> int:
    return sum(
        server.server.cache.counters.hits.total() for server in servers if server.server.cache
    )


def _stats(db: str, low: int, part: str | None = None) -> t.ColumnStatistics:
    return column_stats(db, "t", [long_stats("id", low, low + 10), string_stats("name")], part)


def _changes(db: str) -> dict[str, Callable[[Client, str, int], Any]]:
    """Changes by name: each takes a client, a partition value and a number."""
    return {
        "add partition": lambda c, v, n: c.add_partitions_req(
            t.AddPartitionsRequest(db, "t", [partition(db, "t", [v])], True)
        ),
        "drop partition": lambda c, v, n: c.drop_partitions_req(
            t.DropPartitionsRequest(db, "t", t.RequestPartsSpec(names=[f"ds={v}"]), True)
        ),
        "partition statistics": lambda c, v, n: c.set_aggr_stats_for(
            t.SetPartitionsStatsRequest([_stats(db, n, f"ds={v}")], needMerge=n % 2 == 0)
        ),
        "table statistics": lambda c, v, n: c.update_table_column_statistics(_stats(db, n)),
        "delete statistics": lambda c, v, n: c.delete_partition_column_statistics(
            db, "t", f"ds={v}", "id", None
        ),
        "alter table": lambda c, v, n: c.alter_table(
            db, "t", table(db, "t", keys=KEYS, parameters={"n": str(n)})
        ),
        "alter partition": lambda c, v, n: c.alter_partition(
            db, "t", partition(db, "t", [v], parameters={"n": str(n)})
        ),
        "rename partition": lambda c, v, n: c.rename_partition(
            db, "t", [v], partition(db, "t", [VALUES[n % len(VALUES)]])
        ),
        "drop and create the table": lambda c, v, n: (
            c.drop_table(db, "t", True),
            c.create_table(table(db, "t", keys=KEYS)),
        ),
    }


def _reads(db: str) -> dict[str, Callable[[Client, str, int], Any]]:
    """Reads through the cache by name: each takes a client, a partition value, a number."""
    names = [f"ds={v}" for v in VALUES]
    return {
        "table": lambda c, v, n: c.get_table(db, "t"),
        "tables": lambda c, v, n: c.get_table_objects_by_name(db, ["t"]),
        "names": lambda c, v, n: c.get_partition_names(db, "t", -1),
        "partition": lambda c, v, n: c.get_partition(db, "t", [v]),
        "by names": lambda c, v, n: c.get_partitions_by_names(db, "t", names[: n % 4 + 1]),
        "by filter": lambda c, v, n: c.get_partitions_by_filter(db, "t", f'ds >= "{v}"', -1),
        "count by filter": lambda c, v, n: c.get_num_partitions_by_filter(db, "t", f'ds < "{v}"'),
        "partial": lambda c, v, n: c.get_partitions_ps(db, "t", [v], -1),
        "table statistics": lambda c, v, n: c.get_table_statistics_req(
            t.TableStatsRequest(db, "t", ["id", "name"])
        ),
        "partition statistics": lambda c, v, n: c.get_partitions_statistics_req(
            t.PartitionsStatsRequest(db, "t", ["id", "name"], names)
        ),
        "aggregate": lambda c, v, n: c.get_aggr_stats_for(
            t.PartitionsStatsRequest(db, "t", ["id", "name"], names[: n % 4 + 1])
        ),
        "column": lambda c, v, n: c.get_partition_column_statistics(db, "t", f"ds={v}", "id"),
    }


def _outcome(read: Callable[[Client, str, int], Any], client: Client, v: str, n: int) -> Any:
    """What a read answers: its answer, or its exception's type and message."""
    try:
        return read(client, v, n)
    except TApplicationException:
        raise
    except Exception as e:  # the IDL's exceptions: the same through every server
        return (type(e).__name__, getattr(e, "message", str(e)))


STEP = st.tuples(
    st.sampled_from([0, 1]),  # which server with a cache
    st.booleans(),  # a change or a read
    st.integers(0, 1000),  # which change or read
    st.sampled_from(VALUES),
    st.integers(0, 50),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=5, max_size=40))
def test_answers_through_the_cache_are_those_without_it(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    steps: list[tuple[int, bool, int, str, int]],
) -> None:
    db = f"prop_{uuid.uuid4().hex[:10]}"
    cached, uncached = clients[:2], clients[2]
    uncached.create_database(database(db))
    uncached.create_table(table(db, "t", keys=KEYS))
    changes, reads = _changes(db), _reads(db)
    hits, answered = _hits(servers), False
    for server, change, which, value, number in steps:
        client = cached[server]
        if change:
            name = sorted(changes)[which % len(changes)]
            _outcome(changes[name], client, value, number)
            continue
        name = sorted(reads)[which % len(reads)]
        # Twice through the cache (the second from memory when nothing changed between).
        for _ in range(2):
            answer = _outcome(reads[name], client, value, number)
            expected = _outcome(reads[name], uncached, value, number)
            assert answer == expected, f"{name} through server {server} after {steps}"
            answered |= not isinstance(answer, tuple)
    assert _hits(servers) > hits or not answered  # a read again, nothing changed: a hit
    uncached.drop_database(db, True, True)
