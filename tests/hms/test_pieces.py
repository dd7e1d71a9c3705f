"""Answers rebuilt by the partitions that changed: of get_partitions_statistics_req
(metastore.hms.pieces), get_aggr_stats_for (metastore.hms.aggr_pieces) and the calls that
list partitions (metastore.hms.partition_pieces): after a change only the changed
partitions are read again; and random changes and reads through two servers with caches
answer what a server without one answers (the bytes of the statistics parts are tested
against the generated code's in tests/hms/test_stats_wire.py, those of the partitions' in
tests/hms/test_partition_encoding.py)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect
from driver_trace import DriverStatements
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from metadata_builders import (
    Client,
    column_stats,
    fields,
    partition,
    storage,
    table,
)
from pieces_tables import (
    COLUMNS,
    KEYS,
    VALUES,
    Built,
    cache_counts,
    every_kind,
    every_partition,
    make_table,
)
from thrift.Thrift import TApplicationException

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.hms import aggr_pieces, held, partition_pieces, pieces
from metastore.store import partition_rows as pr


@pytest.fixture(scope="module", autouse=True)
def short_runs() -> Iterator[None]:
    """Runs of two partitions in get_aggr_stats_for's answers, so that an answer has
    several."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aggr_pieces, "RUN_LENGTH", 2)
        yield


@pytest.fixture(scope="module")
def servers(migrated_url: str) -> Iterator[list[RunningServer]]:
    """Two servers with caches and one without, on one database, returning sketches."""
    on = Settings(fetch_bitvector=True, fetch_histogram=True)
    running = [
        RunningServer(migrated_url, on),
        RunningServer(migrated_url, on),
        RunningServer(migrated_url, Settings(fetch_bitvector=True, cache_size=0)),
    ]
    yield running
    for server in running:
        server.stop()


@pytest.fixture(scope="module")
def clients(servers: list[RunningServer]) -> Iterator[tuple[Client, Client, Client]]:
    connections = [connect(server.port) for server in servers]
    yield connections[0][0], connections[1][0], connections[2][0]
    for _, transport in connections:
        transport.close()


def test_after_a_write_only_the_partition_written_is_read_again(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = f"pieces_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    request = every_partition(db)
    built = Built(monkeypatch)
    first = b.get_partitions_statistics_req(request)
    assert first == plain.get_partitions_statistics_req(request)
    assert len(first.partStats) == len(VALUES) - 1
    with_statistics = [f"ds={v}" for v in VALUES[:-1]]
    assert sorted(built.entries) == sorted(with_statistics)
    # A write through the other server: server b reads the one partition again (in the
    # statement that tells which changed) and encodes its part only.
    a.update_partition_column_statistics(column_stats(db, "t", every_kind(40), f"ds={VALUES[1]}"))
    built.clear()
    after = b.get_partitions_statistics_req(request)
    assert built.entries == [f"ds={VALUES[1]}"]
    assert after == plain.get_partitions_statistics_req(request)
    written = {o.colName: o for o in after.partStats[f"ds={VALUES[1]}"]}
    assert written["i"].statsData.longStats.highValue == 40
    # An alter of a partition moves its version only: that one is read again.
    cache = servers[1].server.cache
    assert cache is not None
    stored = cache.counters.stored
    a.alter_partition(db, "t", partition(db, "t", [VALUES[2]], parameters={"k": "v"}))
    built.clear()
    assert b.get_partitions_statistics_req(request) == plain.get_partitions_statistics_req(request)
    assert built.entries == [f"ds={VALUES[2]}"]
    assert cache.counters.stored == stored + 2  # what is held (with the parts), the answer
    # Any other change to the table: every partition is read again (with their versions,
    # in one statement), and held.
    stored = cache.counters.stored
    a.alter_table(db, "t", table(db, "t", keys=KEYS, cols=COLUMNS, parameters={"k": "v"}))
    built.clear()
    assert b.get_partitions_statistics_req(request) == plain.get_partitions_statistics_req(request)
    assert sorted(built.entries) == sorted(with_statistics)
    assert cache.counters.stored == stored + 2
    plain.drop_database(db, True, True)


def test_after_a_write_only_the_run_of_the_partition_written_is_merged_again(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    db = f"aggr_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    request = every_partition(db)
    built = Built(monkeypatch)
    assert b.get_aggr_stats_for(request) == plain.get_aggr_stats_for(request)
    runs = len(VALUES) // aggr_pieces.RUN_LENGTH
    assert runs == 3
    assert built.runs == [aggr_pieces.RUN_LENGTH] * runs
    # A write through the other server: server b reads the one partition again (in the
    # statement that tells which changed), and merges its run again from its partitions
    # (the others held).
    a.update_partition_column_statistics(column_stats(db, "t", every_kind(41), f"ds={VALUES[1]}"))
    built.clear()
    after = b.get_aggr_stats_for(request)
    assert built.runs == [aggr_pieces.RUN_LENGTH]
    assert after == plain.get_aggr_stats_for(request)
    assert {o.colName: o for o in after.colStats}["i"].statsData.longStats.highValue == 41
    plain.drop_database(db, True, True)


def test_after_a_write_only_the_partition_written_is_built_again(
    servers: list[RunningServer], clients: tuple[Client, Client, Client]
) -> None:
    db = f"parts_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    names = [f"ds={v}" for v in VALUES]
    first = b.get_partitions_by_names(db, "t", names)
    assert first == plain.get_partitions_by_names(db, "t", names)
    assert len(first) == len(VALUES)
    hits, misses = cache_counts(servers[1], partition_pieces.PIECE)
    assert misses >= len(VALUES)
    # Another call that lists them shares the parts.
    assert b.get_partitions(db, "t", -1) == plain.get_partitions(db, "t", -1)
    assert cache_counts(servers[1], partition_pieces.PIECE) == (hits + len(VALUES), misses)
    # A write through the other server changes one partition (its COLUMN_STATS_ACCURATE):
    # server b builds that one again, and copies the others.
    a.update_partition_column_statistics(
        column_stats(db, "t", every_kind(7)[:1], f"ds={VALUES[-1]}")
    )
    for call, args in [
        ("get_partitions_by_names", (names,)),
        ("get_partitions_by_filter", (f"ds >= '{VALUES[0]}'", -1)),
    ]:
        hits, misses = cache_counts(servers[1], partition_pieces.PIECE)
        after = getattr(b, call)(db, "t", *args)
        assert after == getattr(plain, call)(db, "t", *args)
        assert "COLUMN_STATS_ACCURATE" in after[-1].parameters
        built = 1 if call == "get_partitions_by_names" else 0  # then kept
        assert cache_counts(servers[1], partition_pieces.PIECE) == (
            hits + len(VALUES) - built,
            misses + built,
        )
    # An alter of a partition: that one is built again.
    a.alter_partition(db, "t", partition(db, "t", [VALUES[0]], parameters={"k": "v"}))
    hits, misses = cache_counts(servers[1], partition_pieces.PIECE)
    after = b.get_partitions(db, "t", -1)
    assert after == plain.get_partitions(db, "t", -1)
    assert after[0].parameters["k"] == "v"
    assert cache_counts(servers[1], partition_pieces.PIECE) == (hits + len(VALUES) - 1, misses + 1)
    # Any other change to the table: every partition is built again.
    a.alter_table(db, "t", table(db, "t", keys=KEYS, cols=COLUMNS, parameters={"k": "v"}))
    hits, misses = cache_counts(servers[1], partition_pieces.PIECE)
    assert b.get_partitions(db, "t", -1) == plain.get_partitions(db, "t", -1)
    assert cache_counts(servers[1], partition_pieces.PIECE) == (hits, misses + len(VALUES))
    plain.drop_database(db, True, True)


def test_errors_of_the_calls_that_list_partitions_are_those_without_a_cache(
    servers: list[RunningServer], clients: tuple[Client, Client, Client]
) -> None:
    db = f"perr_{uuid.uuid4().hex[:10]}"
    _, b, plain = clients
    make_table(plain, db)
    calls: list[tuple[str, tuple[Any, ...]]] = [
        ("get_partitions", (db, "nope", -1)),
        ("get_partitions", ("nope", "t", -1)),
        ("get_partitions_by_names", (db, "nope", ["ds=x"])),
        ("get_partitions_by_names", (db, "t", ["nope=1", "ds"])),
        ("get_partitions_ps", (db, "t", ["a", "b"], -1)),
        ("get_partitions_ps_with_auth", (db, "nope", [], -1, "u", [])),
        ("get_partitions_by_filter", (db, "t", "ds >>> 'x", -1)),
        ("get_partitions_by_filter", (db, "t", "nokey = 'x'", -1)),
        ("get_partitions_by_filter", (db, "nope", "ds = 'x'", -1)),
    ]
    for call, args in calls:
        answers = []
        for client in (b, plain):
            try:
                answers.append(getattr(client, call)(*args))
            except TApplicationException:
                raise
            except Exception as e:  # the IDL's exceptions
                answers.append((type(e).__name__, getattr(e, "message", str(e))))
        assert answers[0] == answers[1], call
    plain.drop_database(db, True, True)


def test_a_change_by_another_writer_is_read_whole(
    servers: list[RunningServer], clients: tuple[Client, Client, Client]
) -> None:
    """A change that moves the table's version only (as HMS's triggers in an adopted
    database do, metastore.store.adopt) moves no partition's version: the parts kept are
    not served until colstats changes the table again."""
    db = f"other_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    names = [f"ds={v}" for v in VALUES]
    request = t.PartitionsStatsRequest(db, "t", [f.name for f in COLUMNS], names)
    reads: list[tuple[str, tuple[Any, ...]]] = [
        ("get_partitions_by_names", (db, "t", names)),
        ("get_partitions_by_filter", (db, "t", "ds > 'a'", -1)),
        (pieces.CALL, (request,)),
        (aggr_pieces.CALL, (request,)),
    ]
    for call, args in reads:  # the parts kept
        assert getattr(b, call)(*args) == getattr(plain, call)(*args)
    # Rebuilt after a write by colstats: the statistics reads are next read with what
    # changed, in one statement.
    a.update_partition_column_statistics(column_stats(db, "t", every_kind(90), f"ds={VALUES[1]}"))
    for call, args in reads:
        assert getattr(b, call)(*args) == getattr(plain, call)(*args)
    with servers[1].engine.begin() as conn:
        (part_id, tbl_id) = conn.execute(
            sa.text(
                'SELECT p."PART_ID", p."TBL_ID" FROM "PARTITIONS" p '
                'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" = :db AND p."PART_NAME" = :name'
            ),
            {"db": db, "name": names[0]},
        ).one()
        conn.execute(
            sa.text(
                'INSERT INTO "PARTITION_PARAMS" ("PART_ID", "PARAM_KEY", "PARAM_VALUE") '
                "VALUES (:p, 'written by', 'hms')"
            ),
            {"p": part_id},
        )
        conn.execute(
            sa.text(
                'UPDATE "PART_COL_STATS" SET "LONG_HIGH_VALUE" = 999 '
                """WHERE "PART_ID" = :p AND "COLUMN_NAME" = 'i'"""
            ),
            {"p": part_id},
        )
        conn.execute(
            sa.text('UPDATE "TBL_VERSIONS" SET "VERSION" = "VERSION" + 1 WHERE "TBL_ID" = :t'),
            {"t": tbl_id},
        )
    for call, args in reads:
        answer = getattr(b, call)(*args)
        assert answer == getattr(plain, call)(*args), call
    partitions = b.get_partitions_by_names(db, "t", names)
    assert partitions[0].parameters["written by"] == "hms"
    written = {o.colName: o for o in b.get_partitions_statistics_req(request).partStats[names[0]]}
    assert written["i"].statsData.longStats.highValue == 999
    plain.drop_database(db, True, True)


def test_a_part_read_across_a_change_is_not_kept(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read outside a transaction (PostgreSQL's) sees each statement's own state: when a
    change to the table commits between the statement of the partitions' rows and that of
    the rows below them, the parts built from them are not kept (under the versions read
    with the rows)."""
    db = f"across_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    names = [f"ds={v}" for v in VALUES]
    below = pr.Below.of_partitions.__func__  # type: ignore[attr-defined]
    changed: list[bool] = []

    def of_partitions(cls: type[pr.Below], /, s: Any, rows: Any, **kwargs: Any) -> pr.Below:
        if kwargs.get("version_of") is not None and not changed:
            changed.append(True)
            a.alter_partition(db, "t", partition(db, "t", [VALUES[3]], parameters={"k": "v"}))
        return below(cls, s, rows, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(pr.Below, "of_partitions", classmethod(of_partitions))
    cache = servers[1].server.cache
    assert cache is not None
    stored = cache.counters.stored
    b.get_partitions_by_names(db, "t", names)
    assert changed
    # The whole answer (under the versions read first), and on SQLite the parts: a read
    # there is one transaction, whose statements see one state (before the alter).
    kept = 0 if servers[1].engine.dialect.name == "postgresql" else len(VALUES)
    assert cache.counters.stored == stored + kept + 1
    after = b.get_partitions_by_names(db, "t", names)
    assert after == plain.get_partitions_by_names(db, "t", names)
    assert {p.values[0]: p for p in after}[VALUES[3]].parameters["k"] == "v"
    plain.drop_database(db, True, True)


def _changes(db: str) -> dict[str, Callable[[Client, str, int], Any]]:
    """Changes by name: each takes a client, a partition value and a number."""
    return {
        "statistics": lambda c, v, n: c.update_partition_column_statistics(
            column_stats(db, "t", every_kind(n)[n % 8 :], f"ds={v}")
        ),
        "merged statistics": lambda c, v, n: c.set_aggr_stats_for(
            t.SetPartitionsStatsRequest(
                [column_stats(db, "t", every_kind(n)[: n % 8 + 1], f"ds={v}")],
                needMerge=n % 2 == 0,
            )
        ),
        "two partitions": lambda c, v, n: c.set_aggr_stats_for(
            t.SetPartitionsStatsRequest(
                [
                    column_stats(db, "t", every_kind(n), f"ds={v}"),
                    column_stats(db, "t", every_kind(n + 1), f"ds={VALUES[n % len(VALUES)]}"),
                ]
            )
        ),
        "delete statistics": lambda c, v, n: c.delete_partition_column_statistics(
            db, "t", f"ds={v}", COLUMNS[n % 8].name if n % 3 else None, None
        ),
        "add partition": lambda c, v, n: c.add_partition(partition(db, "t", [v])),
        "drop partition": lambda c, v, n: c.drop_partition(db, "t", [v], True),
        "alter partition": lambda c, v, n: c.alter_partition(
            db, "t", partition(db, "t", [v], parameters={"n": str(n)})
        ),
        "alter partitions": lambda c, v, n: c.alter_partitions(
            db,
            "t",
            [
                partition(db, "t", [v], parameters={"n": str(n)}),
                partition(
                    db,
                    "t",
                    [VALUES[n % len(VALUES)]],
                    # Another column list (a type changed, one left out): its statistics go.
                    storage(fields(("b", "string"), *((f.name, f.type) for f in COLUMNS[2:]))),
                ),
            ],
        ),
        "alter table": lambda c, v, n: c.alter_table(
            db, "t", table(db, "t", keys=KEYS, cols=COLUMNS, parameters={"n": str(n)})
        ),
        "rename partition": lambda c, v, n: c.rename_partition(
            db, "t", [v], partition(db, "t", [VALUES[n % len(VALUES)]])
        ),
        "table statistics": lambda c, v, n: c.update_table_column_statistics(
            column_stats(db, "t", every_kind(n))
        ),
    }


def _change(change: Callable[[Client, str, int], Any], client: Client, v: str, n: int) -> None:
    """CHANGE made, or refused with one of the IDL's exceptions (the same through any
    server: a partition that exists already, or does not)."""
    try:
        change(client, v, n)
    except TApplicationException:
        raise
    except Exception:  # the IDL's exceptions: the state is what it was
        pass


def _arguments(db: str, n: int, names: list[str], call: str) -> tuple[Any, ...]:
    """The arguments of CALL for the Nth read of partitions NAMES."""
    value, limit = names[0].split("=", 1)[1], n % 7 - 1  # -1: all
    if call == "get_partitions":
        return db, "t", limit
    if call == "get_partitions_by_names":
        return db, "t", names
    if call == "get_partitions_ps":
        return db, "t", [value if n % 2 else ""], limit
    if call == "get_partitions_ps_with_auth":
        return db, "t", [value], limit, "user", ["group"]
    if call == "get_partitions_by_filter":
        return db, "t", f"ds {'<=' if n % 2 else '>'} '{value}'", limit
    columns = [f.name for i, f in enumerate(COLUMNS) if (n >> i) & 1 or n % 5 == 0]
    return (t.PartitionsStatsRequest(db, "t", columns, names),)


def _read(client: Client, db: str, n: int, names: list[str], call: str) -> Any:
    try:
        return getattr(client, call)(*_arguments(db, n, names, call))
    except TApplicationException:
        raise
    except Exception as e:  # the IDL's exceptions: the same through every server
        return (type(e).__name__, getattr(e, "message", str(e)))


STEP = st.tuples(
    st.sampled_from([0, 1]),  # which server with a cache
    st.booleans(),  # a change or a read
    st.integers(0, 1000),  # which change
    st.sampled_from(VALUES),
    st.integers(0, 255),  # the columns read, the change's number
    st.lists(st.sampled_from(VALUES), min_size=1, max_size=6),  # the partitions read
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(STEP, min_size=5, max_size=30))
def test_answers_rebuilt_by_partition_are_those_without_a_cache(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    steps: list[tuple[int, bool, int, str, int, list[str]]],
) -> None:
    db = f"pprop_{uuid.uuid4().hex[:10]}"
    cached, plain = clients[:2], clients[2]
    make_table(plain, db)
    changes = _changes(db)
    for server, change, which, value, number, read in steps:
        client = cached[server]
        if change:
            name = sorted(changes)[which % len(changes)]
            _change(changes[name], client, value, number)
            continue
        names = [f"ds={v}" for v in read]
        for call in (pieces.CALL, aggr_pieces.CALL, *sorted(partition_pieces.CALLS)):
            for _ in range(2):  # the second from memory when nothing changed between
                answer = _read(client, db, number, names, call)
                expected = _read(plain, db, number, names, call)
                assert answer == expected, f"{call} through server {server}: {steps}"
    plain.drop_database(db, True, True)


@pytest.mark.parametrize("call", [pieces.CALL, aggr_pieces.CALL])
def test_reads_after_writes_are_one_statement(
    servers: list[RunningServer], clients: tuple[Client, Client, Client], call: str
) -> None:
    """A read after a write whose last read found its table unchanged: the table's version,
    then the versions with what changed since the partitions held (two statements, as the
    read of the whole answer took before partition versions). Once a read found the table
    moved, the next reads are one statement: the versions with what changed, and an answer
    whose table did not change is one statement too, as are those after it (the version
    alone)."""
    db = f"reads_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    request = every_partition(db)
    read = getattr(b, call)
    with DriverStatements(servers[1].engine) as statements:
        read(request)  # the dialect's own questions on new connections
        for n in range(3):
            a.update_partition_column_statistics(
                column_stats(db, "t", every_kind(50 + n), f"ds={VALUES[n]}")
            )
            before = statements.selects()
            assert read(request) == getattr(plain, call)(request)
            assert statements.selects() - before == (2 if n == 0 else 1), statements.sent()[-4:]
        held_name = pieces.HELD if call == pieces.CALL else aggr_pieces.HELD
        for with_changes in (True, False):  # the answer kept: the version alone next time
            before, (held_before, _) = statements.selects(), cache_counts(servers[1], held_name)
            read(request)
            assert statements.selects() - before == 1
            # What is held is looked up for the statement of what changed only.
            assert cache_counts(servers[1], held_name)[0] - held_before == int(with_changes)
    plain.drop_database(db, True, True)


@pytest.mark.parametrize("call", [pieces.CALL, aggr_pieces.CALL])
def test_a_read_after_a_write_with_what_is_held_evicted_is_read_whole(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    call: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What is held of the request (with the parts of its answer) evicted from the cache:
    the table's version, then the call as any call (every partition read with its
    versions), the same answer; and the next read after a write is two statements again."""
    db = f"evicted_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    request = every_partition(db)
    read, expected = getattr(b, call), getattr(plain, call)
    assert read(request) == expected(request)
    cache = servers[1].server.cache
    assert cache is not None
    evicted_names = {pieces.HELD, aggr_pieces.HELD}
    lookup_object = cache.lookup_object
    built = Built(monkeypatch)
    with DriverStatements(servers[1].engine) as statements:
        with monkeypatch.context() as evicted:
            evicted.setattr(
                cache,
                "lookup_object",
                lambda key, versions: (
                    None if key[0] in evicted_names else lookup_object(key, versions)
                ),
            )
            a.update_partition_column_statistics(
                column_stats(db, "t", every_kind(60), f"ds={VALUES[0]}")
            )
            before = statements.selects()
            built.clear()
            assert read(request) == expected(request)
            assert statements.selects() - before == 2, statements.sent()[-4:]
            # every partition built again, and held
            if call == pieces.CALL:
                assert sorted(built.entries) == sorted(f"ds={v}" for v in VALUES[:-1])
            else:
                assert built.runs == [aggr_pieces.RUN_LENGTH] * (len(VALUES) // 2)
        a.update_partition_column_statistics(
            column_stats(db, "t", every_kind(61), f"ds={VALUES[1]}")
        )
        before = statements.selects()
        built.clear()
        assert read(request) == expected(request)
        assert statements.selects() - before == 2, statements.sent()[-4:]
        # rebuilt from what was held: the partition written only, or its run
        if call == pieces.CALL:
            assert built.entries == [f"ds={VALUES[1]}"]
        else:
            assert built.runs == [aggr_pieces.RUN_LENGTH]
    plain.drop_database(db, True, True)


@pytest.mark.parametrize("call", [pieces.CALL, aggr_pieces.CALL])
def test_partitions_written_in_one_run_and_in_another_are_built_again_once(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    call: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two partitions of one run and one of another written since the last read: each
    partition built again once, each of the two runs merged again once, the answer that of
    a server without a cache."""
    db = f"several_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    request = every_partition(db)
    read, expected = getattr(b, call), getattr(plain, call)
    assert read(request) == expected(request)
    # By name: runs of two (2024-01-01, 2024-01-02), (2024-01-03, 2024-01-05), ...
    written = [VALUES[0], VALUES[1], VALUES[4]]
    for n, value in enumerate(written):
        a.update_partition_column_statistics(
            column_stats(db, "t", every_kind(80 + n), f"ds={value}")
        )
    built = Built(monkeypatch)
    assert read(request) == expected(request)
    if call == pieces.CALL:
        assert sorted(built.entries) == sorted(f"ds={v}" for v in written)
    else:
        assert built.runs == [aggr_pieces.RUN_LENGTH, aggr_pieces.RUN_LENGTH]
    plain.drop_database(db, True, True)


@pytest.mark.parametrize("call", [pieces.CALL, aggr_pieces.CALL])
def test_another_request_of_the_same_partitions_is_rebuilt_from_their_parts(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    call: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The same columns in another order are another request (another whole answer) of the
    partitions held: at the same table version, the statement of what changed finds
    nothing, and the answer is built from the parts held (none read or built again)."""
    db = f"reordered_{uuid.uuid4().hex[:10]}"
    _, b, plain = clients
    make_table(plain, db)
    names = [f"ds={v}" for v in VALUES]
    columns = [f.name for f in COLUMNS]
    read, expected = getattr(b, call), getattr(plain, call)
    first = t.PartitionsStatsRequest(db, "t", columns, names)
    assert read(first) == expected(first)
    reordered = t.PartitionsStatsRequest(db, "t", columns[::-1], names)
    built = Built(monkeypatch)
    with DriverStatements(servers[1].engine) as statements:
        assert read(reordered) == expected(reordered)
        assert statements.selects() == 2, statements.sent()
    assert built.entries == [] and built.runs == []
    plain.drop_database(db, True, True)


@pytest.mark.parametrize("moved", [False, True], ids=["in-its-statement", "after-it"])
@pytest.mark.parametrize("call", [pieces.CALL, aggr_pieces.CALL])
def test_a_failure_of_the_rebuild_is_logged_and_the_call_answered_whole(
    servers: list[RunningServer],
    clients: tuple[Client, Client, Client],
    call: str,
    moved: bool,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failure of the rebuild from what changed that is not the database's (a bug) is a
    warning with its traceback, and the call answers as a server without a cache: in the
    reading of what changed (after the table's version), or, for a request whose table
    MOVED at its last read (its versions read with what changed, in one statement), in the
    rebuild after that statement."""
    db = f"failed_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    request = every_partition(db)
    read, expected = getattr(b, call), getattr(plain, call)
    assert read(request) == expected(request)
    if moved:
        a.update_partition_column_statistics(
            column_stats(db, "t", every_kind(69), f"ds={VALUES[1]}")
        )
        assert read(request) == expected(request)  # rebuilt: the request's table moved
    a.update_partition_column_statistics(column_stats(db, "t", every_kind(70), f"ds={VALUES[2]}"))
    module = pieces if call == pieces.CALL else aggr_pieces
    since_answer = module.since_answer

    def broken(*args: Any) -> held.Read | None:
        if not moved:
            raise RuntimeError("a bug")
        found = since_answer(*args)
        assert found is not None and found[1] is not None  # what changed was told

        def fails() -> bytes:
            raise RuntimeError("a bug")

        return found[0], fails

    monkeypatch.setattr(module, "since_answer", broken)
    with caplog.at_level("WARNING", logger="metastore.hms.processor"):
        assert read(request) == expected(request)
    warned = [r for r in caplog.records if "not rebuilt from what changed" in r.getMessage()]
    assert len(warned) == 1 and warned[0].exc_info is not None
    plain.drop_database(db, True, True)


@pytest.mark.parametrize("call", [pieces.CALL, aggr_pieces.CALL])
def test_a_table_made_again_under_its_name_while_it_moved_is_read_whole(
    servers: list[RunningServer], clients: tuple[Client, Client, Client], call: str
) -> None:
    """A request whose table moved at its last read (so that its next read is the versions
    with what changed, of the table held) of a table dropped and made again under the same
    name: the new table's answer."""
    db = f"again_{uuid.uuid4().hex[:10]}"
    a, b, plain = clients
    make_table(plain, db)
    request = every_partition(db)
    read, expected = getattr(b, call), getattr(plain, call)
    assert read(request) == expected(request)
    a.update_partition_column_statistics(column_stats(db, "t", every_kind(91), f"ds={VALUES[0]}"))
    assert read(request) == expected(request)  # rebuilt: the request's table moved
    plain.drop_table(db, "t", True)
    plain.create_table(table(db, "t", keys=KEYS, cols=COLUMNS))
    plain.add_partitions([partition(db, "t", [v]) for v in VALUES])
    plain.update_partition_column_statistics(
        column_stats(db, "t", every_kind(92), f"ds={VALUES[2]}")
    )
    assert read(request) == expected(request)
    plain.drop_database(db, True, True)
