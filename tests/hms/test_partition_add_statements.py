"""Adding partitions: the table is read with its keys in one statement; whether the
partitions have doubled since they were last analyzed (which then analyzes them again) is
checked only when it may be, so that an add between two doublings spares that statement
(three on SQLite); and the partitions added are built into an answer (on PostgreSQL from
what the add wrote, on SQLite read back) only for the calls that answer with them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect
from driver_trace import DriverStatements
from metadata_builders import Client, make_partitioned, partition

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import migrate
from metastore.store import partitions as store_partitions

ADDS = 40
# The adds that find the partitions doubled (their ids are 1, 2, ...: a new database) and
# analyze them, and those that check and find nothing due; the others skip the check.
ANALYZING = {1, 2, 4, 8, 16, 32}
CHECKING = {3, 5, 9, 17, 33}


@pytest.fixture
def server(database_url: str) -> Iterator[tuple[RunningServer, Client]]:
    """A server on a new database of its own: what it knows of the database's statistics
    starts empty."""
    migrate.upgrade(database_url)
    running = RunningServer(database_url, Settings(cache_size=0))
    client, transport = connect(running.port)
    make_partitioned(client, "adds", "t")
    yield running, client
    transport.close()
    running.stop()


def _analyzed_rows(engine: sa.Engine) -> int:
    """The rows of PARTITIONS when the database last analyzed it."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            stat = conn.exec_driver_sql(
                "SELECT stat FROM sqlite_stat1 WHERE tbl = 'PARTITIONS' AND idx IS NOT NULL"
            ).scalar()
            return int(str(stat).split()[0])
        return int(
            conn.exec_driver_sql(
                "SELECT reltuples FROM pg_class WHERE relname = 'PARTITIONS'"
            ).scalar_one()
        )


def _add_one_by_one(running: RunningServer, client: Client, count: int) -> list[int]:
    """Statements of each of COUNT adds of one partition, besides BEGIN and COMMIT."""
    statements = []
    for n in range(1, count + 1):
        with DriverStatements(running.engine) as trace:
            client.add_partition(partition("adds", "t", [str(n)]))
            statements.append(trace.selects())
    return statements


def test_partitions_are_analyzed_as_they_double_and_the_check_is_spared_between(
    server: tuple[RunningServer, Client],
) -> None:
    running, client = server
    statements = _add_one_by_one(running, client, ADDS)
    fewest = min(statements)
    check = 1 if running.engine.dialect.name == "postgresql" else 3
    by_add = dict(enumerate(statements, start=1))
    assert {n for n, count in by_add.items() if count == fewest} == (
        set(range(1, ADDS + 1)) - ANALYZING - CHECKING
    ), statements
    assert {by_add[n] for n in CHECKING} == {fewest + check}, statements
    assert all(by_add[n] > fewest + check for n in ANALYZING), statements
    assert _analyzed_rows(running.engine) == 32
    assert client.get_partition_names_ps("adds", "t", ["40"], -1) == ["ds=40"]


def test_the_check_runs_again_after_a_bounded_number_of_adds(
    server: tuple[RunningServer, Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another server may have analyzed the partitions since (after drops, lowering the
    doubling): what this one knows serves RECHECK_AFTER adds, then it checks again."""
    monkeypatch.setattr(store_partitions, "RECHECK_AFTER", 2)
    running, client = server
    statements = _add_one_by_one(running, client, 31)
    fewest = min(statements)
    # Between the checks of adds 17 and 32 (16 analyzes, 17 finds 32 the next doubling):
    # two adds spared, then a check.
    spared = [n for n in range(18, 32) if statements[n - 1] == fewest]
    assert spared == [18, 19, 21, 22, 24, 25, 27, 28, 30, 31], statements


def test_the_partitions_added_are_built_only_for_the_calls_that_answer_with_them(
    server: tuple[RunningServer, Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    """add_partitions (a count) and add_partitions_req with needResult false answer without
    the partitions, so they do not build them; the calls that answer with them give
    them as stored."""
    running, client = server
    answers = running.handler.answers
    built: list[int] = []
    original = answers.partitions_of_rows  # every answer of partitions is built there

    def spied(s: Any, db: Any, table: Any, rows: Sequence[Any], *below: Any) -> list[t.Partition]:
        built.append(len(rows))
        return original(s, db, table, rows, *below)

    monkeypatch.setattr(answers, "partitions_of_rows", spied)

    def request(values: list[str], need_result: bool) -> t.AddPartitionsRequest:
        parts = [partition("adds", "t", [v]) for v in values]
        return t.AddPartitionsRequest("adds", "t", parts, False, need_result)

    assert client.add_partitions_req(request(["a", "b", "c"], False)).partitions is None
    assert client.add_partitions([partition("adds", "t", [v]) for v in ["d", "e"]]) == 2
    assert built == []
    added = client.add_partitions_req(request(["f", "g"], True)).partitions
    one = client.add_partition(partition("adds", "t", ["h"]))
    assert built == [2, 1]
    assert added == client.get_partitions_by_names("adds", "t", ["ds=f", "ds=g"])
    assert one == client.get_partition("adds", "t", ["h"])
    assert client.get_partition_names("adds", "t", -1) == [f"ds={v}" for v in "abcdefgh"]
