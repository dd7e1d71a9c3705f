"""`metastore db import --from thrift://...`: a copy of a real Hive Metastore 2.3.10 (the
session's oracle) with thousands of partitions and their statistics, as a user runs it: a dry
run, the copy, the counts and statistics compared with HMS's, and a copy interrupted and run
again."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import metadata_builders as mb
import pytest
import sqlalchemy as sa
from cli_runs import error_lines, metastore
from conftest import RunningServer, connect
from hms_oracle import client as hms_client
from hms_process import HiveMetastoreProcess

from hive_metastore_thrift import ttypes as t
from metastore.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from metastore.config import Settings

pytestmark = pytest.mark.hms

DAYS, HOURS = 84, 24  # 2,016 partitions
COLUMNS = (("id", "bigint"), ("amount", "double"), ("note", "string"))


def _names(day: int) -> list[str]:
    return [f"ds=2024-{day // 28 + 1:02d}-{day % 28 + 1:02d}/hr={h}" for h in range(HOURS)]


def _partition_stats(db: str, name: str, seed: int) -> t.ColumnStatistics:
    desc = t.ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName="events", partName=name)
    long_data = t.ColumnStatisticsData(
        longStats=t.LongColumnStatsData(lowValue=seed, highValue=seed + 9, numNulls=0, numDVs=10)
    )
    double_data = t.ColumnStatisticsData(
        doubleStats=t.DoubleColumnStatsData(
            lowValue=0.5, highValue=seed + 0.5, numNulls=1, numDVs=7
        )
    )
    string_data = t.ColumnStatisticsData(
        stringStats=t.StringColumnStatsData(maxColLen=12, avgColLen=4.5, numNulls=2, numDVs=3)
    )
    objs = [
        t.ColumnStatisticsObj("id", "bigint", long_data),
        t.ColumnStatisticsObj("amount", "double", double_data),
        t.ColumnStatisticsObj("note", "string", string_data),
    ]
    return t.ColumnStatistics(desc, objs)


@pytest.fixture(scope="module")
def source(
    hms_oracle: HiveMetastoreProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database of the HMS oracle with a table of DAYS x HOURS partitions, statistics of
    the table and of every partition, a view, a function and a transactional table; dropped
    afterwards, since the oracle is the session's (other tests list its databases)."""
    db = f"imp_{uuid.uuid4().hex[:8]}"
    warehouse = tmp_path_factory.mktemp("import-source")
    hive, transport = hms_client(hms_oracle.port)
    try:
        hive.create_database(mb.database(db, locationUri=f"file:{warehouse}/{db}.db"))
        cols = mb.fields(*COLUMNS)
        table = mb.table(db, "events", cols=cols, keys=mb.fields(("ds", "string"), ("hr", "int")))
        table.sd.location = f"file:{warehouse}/{db}.db/events"
        hive.create_table(table)
        days = [(day, name) for day in range(DAYS) for name in _names(day)]
        for start in range(0, len(days), 504):
            batch = days[start : start + 504]
            hive.add_partitions(
                [
                    mb.partition(
                        db,
                        "events",
                        [name.split("/")[0][3:], name.split("=")[-1]],
                        sd=mb.storage(cols, f"{table.sd.location}/{name}"),
                        parameters={"numRows": str(day)},
                    )
                    for day, name in batch
                ]
            )
            # Statistics for one partition in four: HMS 2.3 on Derby takes 30 ms for each.
            entries = [_partition_stats(db, name, day) for day, name in batch[::4]]
            hive.set_aggr_stats_for(t.SetPartitionsStatsRequest(entries, needMerge=False))
        hive.update_table_column_statistics(
            mb.column_stats(db, "events", [mb.long_stats("id", 0, 999)])
        )
        view = mb.table(db, "recent", tableType="VIRTUAL_VIEW", viewOriginalText="select 1",
                        viewExpandedText="select 1")  # fmt: skip
        view.sd.location = None
        hive.create_table(view)
        hive.create_function(
            t.Function("f", db, "com.example.F", "hive", t.PrincipalType.USER, 0, 1, [])
        )
        orc = mb.storage(
            cols,
            f"file:{warehouse}/{db}.db/acid",
            inputFormat="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            serdeInfo=t.SerDeInfo("orc", "org.apache.hadoop.hive.ql.io.orc.OrcSerde", {}),
            numBuckets=2,
            bucketCols=["id"],
        )
        acid = mb.table(db, "acid", sd=orc, parameters={"transactional": "true"})
        hive.create_table(acid)
    finally:
        transport.close()
    yield db
    hive, transport = hms_client(hms_oracle.port)
    try:
        hive.drop_function(db, "f")
        hive.drop_database(db, True, True)
    finally:
        transport.close()


@pytest.fixture
def target(tmp_path: Path) -> Iterator[str]:
    yield f"sqlite:///{tmp_path / 'colstats.db'}"


def _partitions(url: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.scalar(sa.text('SELECT count(*) FROM "PARTITIONS"')) or 0)
    except sa.exc.OperationalError:  # no schema yet
        return 0
    finally:
        engine.dispose()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("source", "code", "said"),
    [
        ("http://hms:9083", EXIT_USAGE, "thrift://"),
        ("thrift://hms:notaport", EXIT_USAGE, "port"),
    ],
)
def test_a_source_that_is_not_a_thrift_uri_is_refused_with_2(
    source: str, code: int, said: str, target: str
) -> None:
    done = metastore("db", "import", "--from", source, "--db", target)
    assert done.returncode == code, done.stderr
    [line] = error_lines(done.stderr)
    assert said in line
    assert _partitions(target) == 0


def test_without_from_the_command_says_so(target: str) -> None:
    done = metastore("db", "import", "--db", target)
    assert done.returncode == EXIT_USAGE
    assert "--from" in done.stderr


def test_a_source_that_does_not_answer_is_one_line_with_1(target: str) -> None:
    uri = f"thrift://127.0.0.1:{_free_port()}"
    done = metastore("db", "import", "--from", uri, "--db", target)
    assert done.returncode == EXIT_FAILED, done.stderr
    [line] = error_lines(done.stderr)
    assert uri in line
    assert not Path(target.removeprefix("sqlite:///")).exists()


def test_a_source_that_is_not_a_metastore_is_one_line_with_1(target: str) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        stop = threading.Event()

        def answer_nonsense() -> None:
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

        server = threading.Thread(target=answer_nonsense, daemon=True)
        server.start()
        done = metastore("db", "import", "--from", f"thrift://127.0.0.1:{port}", "--db", target)
        stop.set()
    assert done.returncode == EXIT_FAILED, done.stderr
    [line] = error_lines(done.stderr)
    assert "does not answer as a Hive Metastore" in line
    assert not Path(target.removeprefix("sqlite:///")).exists()


def test_a_dry_run_says_what_would_be_copied(
    hms_oracle: HiveMetastoreProcess, source: str, target: str
) -> None:
    uri = f"thrift://127.0.0.1:{hms_oracle.port}"
    done = metastore("db", "import", "--from", uri, "--databases", source, "--db", target,
                     "--dry-run")  # fmt: skip
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.splitlines() == [
        f"{uri} holds 1 database(s), 3 table(s) and view(s), {DAYS * HOURS:,} partition(s)",
        f"  {source}: 3 table(s) and view(s)",
        "nothing was written (--dry-run)",
    ]
    assert not Path(target.removeprefix("sqlite:///")).exists()


def test_a_copy_holds_what_hms_holds_and_goes_on_after_an_interruption(
    hms_oracle: HiveMetastoreProcess, source: str, target: str
) -> None:
    uri = f"thrift://127.0.0.1:{hms_oracle.port}"
    command = [sys.executable, "-m", "metastore.cli", "db", "import", "--from", uri,
               "--databases", source, "--db", target]  # fmt: skip
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _partitions(target) < 500 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=60)
    assert first.returncode in (0, 130), err
    interrupted = _partitions(target)
    assert 0 < interrupted <= DAYS * HOURS

    done = metastore(*command[3:])
    assert done.returncode == EXIT_OK, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1].startswith(f"copied into {target} in ")
    if interrupted < DAYS * HOURS:
        assert f"{interrupted:,} partitions" in lines[2]  # already there, kept
    assert f"skipped table {source}.acid: transactional (ACID) tables are not served" in (
        done.stdout
    )
    assert _partitions(target) == DAYS * HOURS
    _compare(hms_oracle.port, target, source)

    again = metastore(*command[3:])
    assert again.returncode == EXIT_OK, again.stderr
    assert f"already there, kept: 1 databases, 1 functions, 2 tables, {DAYS * HOURS:,} " in (
        again.stdout
    )


def _plain(value: Any) -> Any:
    if hasattr(value, "thrift_spec"):
        skip = {"catName", "engine", "isStatsCompliant", "writeId", "ownerType", "createTime",
                "id", "bitVectors", "histogram", "colStats"}  # fmt: skip
        return {k: _plain(v) for k, v in vars(value).items() if v is not None and k not in skip}
    if isinstance(value, list):
        items = [_plain(v) for v in value]
        if items and isinstance(items[0], dict) and "colName" in items[0]:
            return sorted(items, key=lambda item: str(item["colName"]))  # HMS: any order
        return items
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in sorted(value.items())}
    return value


def _shown(partitions: list[t.Partition]) -> list[Any]:
    """What a copy of PARTITIONS must keep, in the order of their values."""
    ordered = sorted(partitions, key=lambda p: list(p.values))
    return [(p.values, p.parameters["numRows"], _plain(p.sd)) for p in ordered]


def _compare(port: int, url: str, db: str) -> None:
    """The copy answers what HMS answers: tables, partitions (a sample of them whole, all by
    name), statistics of the table and of every partition, functions."""
    hive, transport = hms_client(port)
    server = RunningServer(url, Settings())
    ours, our_transport = connect(server.port)
    try:
        assert sorted(ours.get_all_tables(db)) == ["events", "recent"]
        assert _plain(ours.get_table(db, "events").sd) == _plain(hive.get_table(db, "events").sd)
        names = hive.get_partition_names(db, "events", -1)
        assert sorted(ours.get_partition_names(db, "events", -1)) == sorted(names)
        sample = names[::97]
        theirs = hive.get_partitions_by_names(db, "events", sample)
        mine = ours.get_partitions_by_names(db, "events", sample)
        assert _shown(mine) == _shown(theirs)
        columns = [name for name, _ in COLUMNS]
        request = t.PartitionsStatsRequest(db, "events", columns, names)
        assert _plain(ours.get_partitions_statistics_req(request).partStats) == _plain(
            hive.get_partitions_statistics_req(request).partStats
        )
        table_request = t.TableStatsRequest(db, "events", columns)
        assert _plain(ours.get_table_statistics_req(table_request).tableStats) == _plain(
            hive.get_table_statistics_req(table_request).tableStats
        )
        assert ours.get_functions(db, "*") == ["f"]
    finally:
        transport.close()
        our_transport.close()
        server.stop()
