"""Concurrent writers of one object: exactly one wins, the others get AlreadyExistsException."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from at_once import at_once
from metadata_builders import database, make_partitioned, partition, table

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client

# -- concurrent writers -----------------------------------------------------------------------


RACERS = 6  # with the `client` fixture's, fewer connections than the test server's 8 workers


def race(server: Any, call: Callable[..., object]) -> list[Exception | None]:
    """CALL made by RACERS clients at the same moment; what each got (None for success)."""
    outcomes = at_once(server.port, RACERS, lambda _, client: call(client))
    return [o if isinstance(o, Exception) else None for o in outcomes]


def outcome(results: list[Exception | None]) -> list[str]:
    return sorted("ok" if r is None else type(r).__name__ for r in results)


ONE_WINNER = sorted(["ok"] + ["AlreadyExistsException"] * (RACERS - 1))


def test_concurrent_create_database(server: Any, client: Client, db_name: str) -> None:
    """The losers of a race get AlreadyExistsException, which clients catch for IF NOT
    EXISTS, not the unique-constraint violation of the database."""
    for i in range(5):
        name = f"{db_name}_{i}"
        results = race(server, lambda c, name=name: c.create_database(database(name)))
        assert outcome(results) == ONE_WINNER, [str(r) for r in results if r is not None]
        assert client.get_databases(name) == [name]


def test_concurrent_create_table(server: Any, client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    for i in range(5):
        name = f"t{i}"
        results = race(server, lambda c, name=name: c.create_table(table(db_name, name)))
        assert outcome(results) == ONE_WINNER, [str(r) for r in results if r is not None]
    assert client.get_all_tables(db_name) == [f"t{i}" for i in range(5)]


def test_concurrent_add_partition(server: Any, client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    for i in range(5):
        part = partition(db_name, "t", [str(i)])
        results = race(server, lambda c, part=part: c.add_partition(part))
        assert outcome(results) == ONE_WINNER, [str(r) for r in results if r is not None]
    assert client.get_partition_names(db_name, "t", -1) == [f"ds={i}" for i in range(5)]


def test_concurrent_add_partitions_if_not_exists(server: Any, client: Client, db_name: str) -> None:
    """Parallel jobs that each register the same partitions with ifNotExists all succeed."""
    make_partitioned(client, db_name)
    for i in range(5):
        request = t.AddPartitionsRequest(
            dbName=db_name,
            tblName="t",
            ifNotExists=True,
            parts=[partition(db_name, "t", [f"{i}{v}"]) for v in "ab"],
        )
        results = race(server, lambda c, request=request: c.add_partitions_req(request))
        assert outcome(results) == ["ok"] * RACERS, [str(r) for r in results if r is not None]
    assert len(client.get_partition_names(db_name, "t", -1)) == 10
