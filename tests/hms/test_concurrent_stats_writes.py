"""Two statistics writes of one table or partition at once, each of other columns: the later
one reads COLUMN_STATS_ACCURATE after the earlier committed, so that both columns stay marked
accurate (on PostgreSQL the table's row is locked; SQLite's writers run one at a time)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
import stats_builders as sb
from conftest import RunningServer, connect, wait_for
from metadata_builders import Client
from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.hms.structs.statistics import stats_entries
from metastore.stats import accurate
from metastore.stats.writes import write_statistics

PARTITION = "ds=2024-01-01/region=a%2Fb"
EXAMPLES = {o.colName: o for o in sb.all_examples()}


@pytest.fixture(scope="module")
def server(migrated_url: str) -> Iterator[tuple[RunningServer, Client]]:
    running = RunningServer(migrated_url, Settings(cache_size=0))
    client, transport = connect(running.port)
    yield running, client
    transport.close()
    running.stop()


def _waiting_for_a_lock(engine: sa.Engine) -> bool:
    if engine.dialect.name == "sqlite":  # the writer waits in SQLite's busy handler: unseen
        time.sleep(0.5)
        return True
    with engine.connect() as conn:
        waiting = conn.execute(
            sa.text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()"
            )
        ).scalar_one()
    return bool(waiting)


def _accurate_columns(client: Client, db: str, part: str | None) -> frozenset[str]:
    if part is None:
        parameters = client.get_table(db, "t").parameters
    else:
        parameters = client.get_partition_by_name(db, "t", part).parameters
    return accurate.accurate_columns(parameters.get(accurate.KEY))


@pytest.mark.parametrize("part", [None, PARTITION], ids=["table", "partition"])
@pytest.mark.parametrize("marked", [False, True], ids=["unmarked", "marked"])
def test_concurrent_writes_keep_each_others_columns_accurate(
    server: tuple[RunningServer, Client], part: str | None, marked: bool
) -> None:
    running, client = server
    db = f"race_{uuid.uuid4().hex[:8]}"
    sb.make_table(client, db)
    if marked:  # COLUMN_STATS_ACCURATE exists before both writes
        client.update_table_column_statistics(sb.column_stats(db, [EXAMPLES["c_str"]]))
        if part is not None:
            client.update_partition_column_statistics(
                sb.column_stats(db, [EXAMPLES["c_str"]], part)
            )

    written, hold = threading.Event(), threading.Event()
    errors: list[Exception] = []

    def write(column: str, first: bool) -> None:
        entries = stats_entries([sb.column_stats(db, [EXAMPLES[column]], part)], "hive")

        def work(s: Session) -> None:
            write_statistics(s, entries, "hive")
            if first:  # the transaction stays open until the other writer waits
                written.set()
                assert hold.wait(30)

        try:
            running.handler.tx.run(work, name=f"write {column}", write=True)
        except Exception as e:  # reported by the test, not lost in the thread
            errors.append(e)

    first = threading.Thread(target=write, args=("c_long", True))
    first.start()
    assert written.wait(30)
    second = threading.Thread(target=write, args=("c_bool", False))
    second.start()
    assert wait_for(lambda: _waiting_for_a_lock(running.engine), 10)
    hold.set()
    first.join(30)
    second.join(30)
    assert errors == []
    expected = {"c_long", "c_bool"} | ({"c_str"} if marked else set())
    assert _accurate_columns(client, db, part) == expected
    stats = client.get_table_statistics_req(
        t.TableStatsRequest(dbName=db, tblName="t", colNames=list(EXAMPLES), engine="hive")
    ).tableStats
    if part is None:
        assert {o.colName for o in stats} == expected
