"""The cache of answers (metastore.hms.cache) and the metrics (metastore.hms.metrics): answers
served from memory while the versions of their tables are those they were read at, read again
after a change through any server, bounded in bytes, counted for Prometheus."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import RunningServer, connect
from metadata_builders import (
    Client,
    add_stats,
    column_stats,
    database,
    fields,
    long_stats,
    make_partitioned,
    partition,
    table,
)

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.hms.cache import AnswerCache, Versions

T = ("hive", "d", "t")


def _versions(version: int, tbl_id: int = 1) -> Versions:
    return {T: (tbl_id, version)}


def test_an_answer_is_served_only_at_the_versions_it_was_read_at() -> None:
    cache = AnswerCache(10_000)
    key = ("get_table", "", b"args")
    cache.store(key, _versions(5), b"answer")
    assert cache.lookup(key, _versions(5)) == b"answer"
    assert cache.lookup(key, _versions(6)) is None
    assert cache.lookup(key, _versions(5, tbl_id=2)) is None  # another table of that name
    assert cache.lookup(("get_table", "", b"other"), _versions(5)) is None
    assert cache.counters.hits == {"get_table": 1}
    assert cache.counters.misses == {"get_table": 3}


def test_an_older_answer_never_replaces_a_newer_one() -> None:
    cache = AnswerCache(10_000)
    key = ("get_table", "", b"args")
    cache.store(key, _versions(7), b"newer")
    cache.store(key, _versions(6), b"older")  # read before the change, stored after
    assert cache.lookup(key, _versions(7)) == b"newer"
    cache.store(key, _versions(8), b"newest")
    assert cache.lookup(key, _versions(8)) == b"newest"
    # A table dropped and created again has a version drawn after the old one's.
    cache.store(key, _versions(9, tbl_id=2), b"again")
    assert cache.lookup(key, _versions(9, tbl_id=2)) == b"again"


def test_the_least_recently_used_answers_go_first_when_the_bytes_run_out() -> None:
    cache = AnswerCache(3 * (200 + 1 + 100))  # three entries of a 1-byte key, 100-byte answer
    keys = [("get_table", "", bytes([i])) for i in range(4)]
    for key in keys[:3]:
        cache.store(key, _versions(1), b"x" * 100)
    assert cache.lookup(keys[0], _versions(1)) is not None  # now the most recently used
    cache.store(keys[3], _versions(1), b"x" * 100)
    assert cache.lookup(keys[1], _versions(1)) is None
    assert all(cache.lookup(k, _versions(1)) is not None for k in (keys[0], keys[2], keys[3]))
    assert cache.counters.evictions == 1
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes
    cache.store(("get_table", "", b"big"), _versions(1), b"x" * 10_000)  # over the whole size
    assert len(cache) == 3


@pytest.fixture
def two_servers(migrated_url: str) -> Iterator[tuple[RunningServer, RunningServer]]:
    """Two servers with caches on one database, with metrics on free ports."""
    first = RunningServer(migrated_url, Settings())
    second = RunningServer(migrated_url, Settings())
    yield first, second
    first.stop()
    second.stop()


def _metrics(server: RunningServer) -> str:
    port = server.server.metrics.serve("127.0.0.1", 0)
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text: str = answer.read().decode()
    server.server.metrics.stop()
    return text


def _hits(server: RunningServer, call: str) -> int:
    cache = server.server.cache
    assert cache is not None
    hits: int = cache.counters.hits[call]
    return hits


def test_a_change_through_another_server_is_seen_by_the_next_read(
    two_servers: tuple[RunningServer, RunningServer], db_name: str
) -> None:
    reader_server, writer_server = two_servers
    reader, r = connect(reader_server.port)
    writer, w = connect(writer_server.port)
    make_partitioned(writer, db_name, "t", ["1", "2"])
    add_stats(writer, db_name, "t", ["ds=1", "ds=2"])
    request = t.PartitionsStatsRequest(db_name, "t", ["id", "name"], ["ds=1", "ds=2"])
    reads: dict[str, Callable[[Client], Any]] = {
        "get_table": lambda c: c.get_table(db_name, "t"),
        "get_partition_names": lambda c: c.get_partition_names(db_name, "t", -1),
        "get_partitions_by_filter": lambda c: c.get_partitions_by_filter(
            db_name, "t", 'ds = "2"', -1
        ),
        "get_aggr_stats_for": lambda c: c.get_aggr_stats_for(request),
    }
    first = {call: read(reader) for call, read in reads.items()}
    assert {call: read(reader) for call, read in reads.items()} == first
    assert all(_hits(reader_server, call) == 1 for call in reads)

    writer.add_partition(partition(db_name, "t", ["3"]))
    writer.update_partition_column_statistics(
        column_stats(db_name, "t", [long_stats("id", -50, 50)], "ds=2")
    )
    altered = table(db_name, "t", keys=fields(("ds", "string")), parameters={"owner.team": "x"})
    writer.alter_table(db_name, "t", altered)
    after = {call: read(reader) for call, read in reads.items()}
    assert after["get_partition_names"] == ["ds=1", "ds=2", "ds=3"]
    assert after["get_table"].parameters["owner.team"] == "x"
    assert after["get_aggr_stats_for"].colStats[0].statsData.longStats.lowValue == -50
    assert after["get_partitions_by_filter"][0].values == ["2"]
    assert all(_hits(reader_server, call) == 1 for call in reads)  # all read again
    assert {call: read(reader) for call, read in reads.items()} == after

    writer.drop_table(db_name, "t", True)
    with pytest.raises(t.NoSuchObjectException):
        reader.get_table(db_name, "t")
    writer.create_table(table(db_name, "t"))  # a new table of that name
    assert reader.get_table(db_name, "t").partitionKeys == []
    r.close()
    w.close()


def test_metrics_count_calls_errors_and_the_cache(
    two_servers: tuple[RunningServer, RunningServer], db_name: str
) -> None:
    server, _ = two_servers
    client, transport = connect(server.port)
    client.create_database(database(db_name))
    client.create_table(table(db_name, "t"))
    for _ in range(3):
        client.get_table(db_name, "t")
    with pytest.raises(t.NoSuchObjectException):
        client.get_table(db_name, "missing")
    text = _metrics(server)
    transport.close()
    assert 'colstats_call_seconds_count{call="get_table"} 4.0' in text
    assert 'colstats_call_seconds_bucket{call="get_table",le="0.25"}' in text
    assert 'colstats_call_errors_total{call="get_table",error="NoSuchObjectException"} 1.0' in text
    assert 'colstats_cache_hits_total{call="get_table"} 2.0' in text
    assert 'colstats_cache_misses_total{call="get_table"} 2.0' in text
    assert "colstats_cache_entries 1.0" in text
    assert "colstats_open_connections 1.0" in text
    assert "colstats_connections_accepted_total" in text


def test_without_a_cache_every_call_reads_the_database(migrated_url: str, db_name: str) -> None:
    server = RunningServer(migrated_url, Settings(cache_size=0))
    client, transport = connect(server.port)
    try:
        assert server.server.cache is None
        client.create_database(database(db_name))
        client.create_table(table(db_name, "t"))
        assert client.get_table(db_name, "t") == client.get_table(db_name, "t")
        assert "colstats_cache" not in _metrics(server)
    finally:
        transport.close()
        server.stop()


def test_answers_that_depend_on_which_tables_exist_are_not_served_from_the_cache(
    two_servers: tuple[RunningServer, RunningServer], db_name: str
) -> None:
    server, _ = two_servers
    client, transport = connect(server.port)
    client.create_database(database(db_name))
    client.create_table(table(db_name, "a"))
    ask: Client = client
    by_names = t.GetTablesRequest(dbName=db_name, tblNames=["a", "b"])
    every = t.GetTablesRequest(dbName=db_name)  # every table of the database
    assert [x.tableName for x in ask.get_table_objects_by_name_req(by_names).tables] == ["a"]
    assert [x.tableName for x in ask.get_table_objects_by_name_req(every).tables] == ["a"]
    client.create_table(table(db_name, "b"))
    assert [x.tableName for x in ask.get_table_objects_by_name_req(by_names).tables] == ["a", "b"]
    assert [x.tableName for x in ask.get_table_objects_by_name_req(every).tables] == ["a", "b"]
    transport.close()
