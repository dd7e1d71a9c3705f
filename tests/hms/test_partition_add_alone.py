"""An add of partitions on PostgreSQL is one statement, a transaction of its own, once the
server has added to the table (metastore.store.partition_add: the table as last seen,
checked in that statement; tests/store/test_partition_add counts the statements): it
answers the partitions as stored, refuses what the call's transaction refuses and then
adds none of the request, adds to the table as it is now after it changed, and concurrent
adds of one partition add it once. SQLite, which takes the general path, answers the
same."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from at_once import at_once
from metadata_builders import Client, database, fields, partition, storage, table
from two_backends import Servers, two_servers

from hive_metastore_thrift import ttypes as t
from metastore.hms.handler import partitions as partition_calls
from metastore.warehouse import WarehouseError

pytestmark = pytest.mark.postgres

CREATED = 1_700_000_000


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """A server on SQLite and one on PostgreSQL (two_backends)."""
    yield from two_servers(tmp_path_factory.mktemp)


COLUMNS = fields(("id", "bigint", "the id"), ("name", "string"))


def _new_table(servers: Servers, keys: tuple[str, ...] = ("ds",)) -> dict[str, str]:
    """A new database with table t of COLUMNS partitioned by KEYS on each server (each its
    own name: the servers share the warehouse, and an add whose folder exists reads its
    files); the names by backend."""
    out = {}
    for backend, (_, client) in servers.items():
        db = f"a{uuid.uuid4().hex[:8]}"
        client.create_database(database(db))
        _create(client, db, keys)
        out[backend] = db
    return out


def _create(client: Client, db: str, keys: tuple[str, ...]) -> None:
    client.create_table(table(db, "t", cols=COLUMNS, keys=fields(*((k, "string") for k in keys))))


def _described(location: str | None = None, **kwargs: Any) -> t.StorageDescriptor:
    """A descriptor with something in every part the add writes below the partition."""
    return storage(
        list(COLUMNS),
        location,
        serdeInfo=t.SerDeInfo("serde", "org.example.Serde", {"field.delim": "|", "empty": ""}),
        bucketCols=["id"],
        sortCols=[t.Order("id", 1), t.Order("name", 0)],
        parameters={"sd.key": "sd value"},
        numBuckets=4,
        **kwargs,
    )


def _part(db: str, values: list[str], sd: t.StorageDescriptor | None = None) -> t.Partition:
    return partition(
        db, "t", values, sd or _described(), parameters={"k": "v", "blank": ""}, createTime=CREATED
    )


def test_the_answer_is_the_partition_as_stored(servers: Servers) -> None:
    """The partition answered is the one a read gives, from the first add (which reads it
    back) to those made in one statement (which build it from what they wrote), and its
    folder is made."""
    dbs = _new_table(servers)
    for backend, (_, client) in servers.items():
        db = dbs[backend]
        added = [client.add_partition(_part(db, [v])) for v in "abc"]
        assert added == client.get_partitions_by_names(db, "t", ["ds=a", "ds=b", "ds=c"])
        last = added[-1]
        assert last.parameters["blank"] == "" and last.sd.serdeInfo.parameters["empty"] == ""
        assert last.sd.cols == COLUMNS
        assert last.sd.sortCols == [t.Order("id", 1), t.Order("name", 0)]
        for part in added:
            assert os.path.isdir(part.sd.location.removeprefix("file:")), part.sd.location


def _alter_location(client: Client, db: str) -> None:
    changed = client.get_table(db, "t")
    changed.sd.location = f"{changed.sd.location}-moved"
    client.alter_table(db, "t", changed)


def _alter_columns(client: Client, db: str) -> None:
    changed = client.get_table(db, "t")
    changed.sd.cols = [*COLUMNS, t.FieldSchema("extra", "int", None)]
    client.alter_table(db, "t", changed)


def _rename(client: Client, db: str) -> None:
    renamed = client.get_table(db, "t")
    renamed.tableName = "u"
    client.alter_table(db, "t", renamed)


def _recreate(keys: tuple[str, ...]) -> Any:
    def change(client: Client, db: str) -> None:
        client.drop_table(db, "t", True)
        _create(client, db, keys)

    return change


CHANGES = {
    "location": _alter_location,
    "columns": _alter_columns,
    "renamed": _rename,
    "recreated": _recreate(("ds",)),
    "recreated with two keys": _recreate(("ds", "hr")),
}


def _outcome(call: Any, *args: Any) -> Any:
    """What CALL(*ARGS) answers, or the type and message of the exception it raises."""
    try:
        return call(*args)
    except (
        t.InvalidObjectException,
        t.AlreadyExistsException,
        t.MetaException,
        t.NoSuchObjectException,
    ) as e:
        return (type(e).__name__, e.message)


@pytest.mark.parametrize("change", list(CHANGES))
def test_an_add_after_the_table_changed_is_made_on_the_table_as_it_is(
    servers: Servers, change: str
) -> None:
    """The server has added to the table, so knows it; then the table changed: the next add
    goes to the table as it is now, or is refused as on SQLite (the general path)."""
    dbs = _new_table(servers)
    seen: dict[str, list[Any]] = {}
    for backend, (_, client) in servers.items():
        db = dbs[backend]
        client.add_partition(_part(db, ["before"]))
        CHANGES[change](client, db)
        sd = _described()
        if change == "columns":
            sd.cols = [*COLUMNS, t.FieldSchema("extra", "int", None)]
        seen[backend] = [
            _outcome(client.add_partition, _part(db, values, sd))
            for values in (["after"], ["after", "0"])
        ]
        names = _outcome(client.get_partition_names, db, "t", -1)
        now = client.get_table(db, "u" if change == "renamed" else "t")
        for answer in seen[backend]:
            if isinstance(answer, t.Partition):
                assert answer == client.get_partition(db, "t", answer.values)
                keys = [key.name for key in now.partitionKeys]
                name = "/".join(f"{k}={v}" for k, v in zip(keys, answer.values, strict=True))
                assert answer.sd.location == f"{now.sd.location}/{name}"
                assert answer.sd.cols == sd.cols
        seen[backend].append(names)
    pg, lite = seen["postgresql"], seen["sqlite"]
    assert [_shape(a, dbs["postgresql"]) for a in pg] == [_shape(a, dbs["sqlite"]) for a in lite]
    expected = {
        "location": ["added", "InvalidObjectException", ["ds=after", "ds=before"]],
        "columns": ["added", "InvalidObjectException", ["ds=after", "ds=before"]],
        "renamed": ["InvalidObjectException", "InvalidObjectException", "NoSuchObjectException"],
        "recreated": ["added", "InvalidObjectException", ["ds=after"]],
        "recreated with two keys": ["InvalidObjectException", "added", ["ds=after/hr=0"]],
    }
    assert [_kind(a) for a in pg] == expected[change], pg


def _shape(answer: Any, db: str) -> Any:
    """ANSWER with the name of its database taken out (each backend has its own)."""
    if isinstance(answer, tuple):
        return (answer[0], answer[1].replace(db, "DB"))
    if isinstance(answer, t.Partition):
        return (answer.values, answer.parameters, answer.sd.cols, answer.sd.serdeInfo)
    return answer


def _kind(answer: Any) -> Any:
    if isinstance(answer, tuple):
        return answer[0]
    return "added" if isinstance(answer, t.Partition) else answer


def test_an_existing_partition_is_refused_and_nothing_of_the_request_is_added(
    servers: Servers,
) -> None:
    """A partition that exists is refused as on SQLite, and the request's other partitions
    are not added: the statement, its own transaction, adds all or none."""
    dbs = _new_table(servers)
    seen = {}
    for backend, (_, client) in servers.items():
        db = dbs[backend]
        client.add_partition(_part(db, ["1"]))
        client.add_partition(_part(db, ["2"]))  # made alone on PostgreSQL
        again = _outcome(client.add_partition, _part(db, ["2"]))
        request = t.AddPartitionsRequest(db, "t", [_part(db, ["3"]), _part(db, ["1"])], False)
        together = _outcome(client.add_partitions_req, request)
        seen[backend] = (
            _shape(again, db),
            _shape(together, db),
            client.get_partition_names(db, "t", -1),
        )
    assert seen["postgresql"] == seen["sqlite"]
    assert seen["postgresql"] == (
        ("AlreadyExistsException", "partition ds=2 of DB.t already exists"),
        ("AlreadyExistsException", "partition ds=1 of DB.t already exists"),
        ["ds=1", "ds=2"],
    )


ADDERS = 16


def _version(engine: sa.Engine, db: str) -> int:
    with engine.connect() as conn:
        return int(
            conn.execute(
                sa.text(
                    'SELECT v."VERSION" FROM "TBL_VERSIONS" v JOIN "TBLS" t '
                    'ON t."TBL_ID" = v."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                    'WHERE d."NAME" = :db AND t."TBL_NAME" = \'t\''
                ),
                {"db": db},
            ).scalar_one()
        )


@pytest.mark.parametrize("same", [True, False], ids=["one partition", "each its own"])
def test_concurrent_adds(servers: Servers, same: bool) -> None:
    """ADDERS clients add at once one partition (one is added, the others refused) or each
    its own (all added); the table's version moves with each add."""
    running, client = servers["postgresql"]
    db = _new_table(servers)["postgresql"]
    client.add_partition(_part(db, ["first"]))  # the server knows the table
    before = _version(running.engine, db)

    def add(n: int, adder: Client) -> t.Partition:
        added: t.Partition = adder.add_partition(_part(db, ["same" if same else str(n)]))
        return added

    outcomes = at_once(running.port, ADDERS, add)
    added = [o for o in outcomes if isinstance(o, t.Partition)]
    refused = [o for o in outcomes if not isinstance(o, t.Partition)]
    names = client.get_partition_names(db, "t", -1)
    if same:
        assert len(added) == 1 and names == ["ds=first", "ds=same"], outcomes
        assert {type(o).__name__ for o in refused} == {"AlreadyExistsException"}, refused
        assert _version(running.engine, db) >= before + 1
    else:
        assert refused == [] and len(names) == ADDERS + 1, outcomes
        assert _version(running.engine, db) >= before + ADDERS
    for part in added:
        assert part == client.get_partition(db, "t", part.values)


def test_an_add_that_fits_the_keys_the_table_has_now_is_made(servers: Servers) -> None:
    """The server kept the table with one key; it was made again with two: an add of two
    values, which does not fit the keys kept, is checked against the table as it is."""
    dbs = _new_table(servers)
    for backend, (_, client) in servers.items():
        db = dbs[backend]
        client.add_partition(_part(db, ["before"]))
        _recreate(("ds", "hr"))(client, db)
        added = client.add_partition(_part(db, ["after", "0"]))
        assert added == client.get_partition(db, "t", ["after", "0"]), backend
        assert client.get_partition_names(db, "t", -1) == ["ds=after/hr=0"], backend


def _failing(error: Exception) -> Any:
    def fail(*_: Any, **__: Any) -> None:
        raise error

    return fail


@pytest.mark.parametrize("what", ["the folder", "the check of the statistics"])
def test_a_failure_after_the_add_committed_does_not_fail_the_call(
    servers: Servers, what: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """What follows an add made alone (its folder, the check of whether the partitions are
    due to be analyzed) may fail: the partition is added, so the call answers it and the
    failure is logged. (Had the call failed, a client's retry would be told that the
    partition exists; an error the call's transaction runs again for would do the same.)"""
    running, client = servers["postgresql"]
    db = _new_table(servers)["postgresql"]
    client.add_partition(_part(db, ["first"]))  # the server knows the table
    if what == "the folder":
        error: Exception = WarehouseError("cannot create the folder: Permission denied")
        monkeypatch.setattr(running.handler.warehouse, "make_folder", _failing(error))
    else:
        error = sa.exc.IntegrityError("ANALYZE", {}, Exception("a race, run it again"))
        monkeypatch.setattr(partition_calls, "refresh_partition_statistics", _failing(error))
        # The check runs (an add right after another is spared it, with no transaction).
        monkeypatch.setattr(partition_calls, "statistics_check_spared", lambda *_: False)
    added = client.add_partition(_part(db, ["second"]))
    assert added == client.get_partition(db, "t", ["second"])
    assert client.get_partition_names(db, "t", -1) == ["ds=first", "ds=second"]
    assert str(error) in caplog.text


def test_an_add_alone_whose_statistics_check_is_spared_opens_no_transaction(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an add alone, the check of whether the partitions are due to be analyzed runs
    in a transaction of its own, and not at all when it is spared (the adds that follow one
    that found nothing due): then the add is its one statement, and no transaction is
    opened for the check."""
    running, client = servers["postgresql"]
    db = _new_table(servers)["postgresql"]
    client.add_partition(_part(db, ["first"]))  # the server knows the table
    checks: list[str] = []
    run = running.handler.tx.run

    def counted(work: Any, *args: Any, name: str, **kwargs: Any) -> Any:
        checks.append(name)
        return run(work, *args, name=name, **kwargs)

    monkeypatch.setattr(running.handler.tx, "run", counted)
    monkeypatch.setattr(partition_calls, "statistics_check_spared", lambda *_: True)
    client.add_partition(_part(db, ["spared"]))
    monkeypatch.setattr(partition_calls, "statistics_check_spared", lambda *_: False)
    client.add_partition(_part(db, ["checked"]))
    assert checks.count("the check of the partitions' statistics") == 1, checks
    assert client.get_partition_names(db, "t", -1) == ["ds=checked", "ds=first", "ds=spared"]
