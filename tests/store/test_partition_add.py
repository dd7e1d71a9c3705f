"""Adding partitions on PostgreSQL in one statement (metastore.store.partition_add) answers and
stores what SQLite's general path does, for every shape of partition (the shapes it leaves to
the general path too), raises the same errors, moves the table's version once per add, and
costs a fixed, small number of statements."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from core_builders import statement_count
from driver_trace import DriverStatements
from metadata_builders import WAREHOUSE, database, fields, storage, table
from two_backends import Servers, on_both, two_servers

from hive_metastore_thrift import ttypes as t
from metastore.hms.handler import partitions as partition_calls

pytestmark = pytest.mark.postgres

CREATED = 1_700_000_000


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """A server on SQLite and one on PostgreSQL (two_backends)."""
    yield from two_servers(tmp_path_factory.mktemp)


def _new_table(servers: Servers) -> str:
    """A new database with table t (keys ds, hr) on both servers."""
    db = f"p{uuid.uuid4().hex[:8]}"
    for backend, (_, client) in servers.items():
        client.create_database(database(db))
        # Folders of each server's own: a server counts the files of a partition's folder
        # that exists (as the other server's would).
        sd = storage(location=f"file:{WAREHOUSE}/{backend}/{db}/t")
        client.create_table(table(db, "t", sd=sd, keys=fields(("ds", "string"), ("hr", "int"))))
    return db


def _part(db: str, values: list[str], sd: t.StorageDescriptor | None, **params: str) -> t.Partition:
    return t.Partition(
        values=values, dbName=db, tableName="t", sd=sd, parameters=params, createTime=CREATED
    )


def _located(sd: t.StorageDescriptor | None, base: str) -> t.StorageDescriptor | None:
    """SD with a location of its own, under BASE (each server's own warehouse: a server
    makes the folder, and counts the files of one that exists)."""
    if sd is not None and sd.location is None:
        sd.location = f"{base}/elsewhere"
    return sd


SHAPES: dict[str, Any] = {
    "the table's columns": lambda: storage(),
    "parameters everywhere, buckets and sorts": lambda: storage(
        serdeInfo=t.SerDeInfo("s", "lib.Serde", {"a": "1", "b": ""}),
        parameters={"sd": "x"},
        bucketCols=["id"],
        sortCols=[t.Order("id", 1), t.Order("name", 0)],
        numBuckets=4,
        compressed=True,
    ),
    "no descriptor": lambda: None,
    "no location": lambda: storage(location=None),
    "other columns": lambda: storage(cols=fields(("id", "bigint"), ("extra", "string", "c"))),
    "a comment on a column": lambda: storage(
        cols=fields(("id", "bigint", "c"), ("name", "string"))
    ),
    "no serde": lambda: storage(serdeInfo=None),
    "skewed values": lambda: storage(
        skewedInfo=t.SkewedInfo(["id"], [["1"]], {}), storedAsSubDirectories=True
    ),
}

GENERAL_PATH_SHAPES = {"no descriptor", "other columns", "a comment on a column", "no serde"}
GENERAL_PATH_SHAPES |= {"skewed values"}
"""The shapes not added alone on PostgreSQL: a partition without a descriptor (it gets a
copy of the table's, read in the call's transaction), and those the general path adds (a
column list of their own, no serde, skewed values)."""


def _comparable(servers: Servers, db: str, answer: Any) -> Any:
    """ANSWER (partitions, or lists or tuples of them) with each server's own warehouse in
    their locations replaced by one name."""
    if isinstance(answer, list | tuple):
        return [_comparable(servers, db, item) for item in answer]
    if isinstance(answer, t.AddPartitionsResult):
        return _comparable(servers, db, answer.partitions)
    if isinstance(answer, t.Partition) and answer.sd is not None and answer.sd.location:
        for _, client in servers.values():
            location = client.get_table(db, "t").sd.location
            answer.sd.location = answer.sd.location.replace(location, "<table>")
    return answer


@pytest.mark.parametrize("shape", list(SHAPES))
def test_an_add_answers_and_stores_what_the_general_path_does(servers: Servers, shape: str) -> None:
    db = _new_table(servers)
    answers = {}
    for backend, (_, client) in servers.items():
        base = client.get_table(db, "t").sd.location
        sd = _located(SHAPES[shape](), base) if shape != "no location" else SHAPES[shape]()
        added = client.add_partition(_part(db, ["2024-01-01", "1"], sd, k="v"))
        read = client.get_partitions(db, "t", -1)
        assert [added] == read  # the answer is what was stored (skewed values included)
        answers[backend] = _comparable(servers, db, (added, read))
    assert answers["postgresql"] == answers["sqlite"]


def test_several_partitions_in_one_add_get_each_its_own_rows(servers: Servers) -> None:
    """The ids of the serdes and descriptors one statement inserts go to their partitions."""
    db = _new_table(servers)
    answers = {}
    for backend, (_, client) in servers.items():
        base = client.get_table(db, "t").sd.location
        parts = [
            _part(
                db,
                [f"2024-01-{n:02}", str(n)],
                storage(
                    location=f"{base}/{n}",
                    serdeInfo=t.SerDeInfo(f"s{n}", "lib", {"n": str(n)}),
                    parameters={"sd": str(n)},
                    bucketCols=[f"b{n}"],
                ),
                p=str(n),
            )
            for n in (3, 1, 2, 5, 4)
        ]
        request = t.AddPartitionsRequest(db, "t", parts, ifNotExists=False, needResult=True)
        added = client.add_partitions_req(request).partitions
        for part in added:
            n = part.values[1]
            assert part.sd.location == f"{base}/{n}"
            assert part.sd.serdeInfo.name == f"s{n}" and part.sd.serdeInfo.parameters == {"n": n}
            assert part.sd.parameters == {"sd": n} and part.sd.bucketCols == [f"b{n}"]
            assert part.parameters["p"] == n
        assert [p.values[1] for p in added] == ["1", "2", "3", "4", "5"]  # by name
        answers[backend] = _comparable(servers, db, (added, client.get_partitions(db, "t", -1)))
    assert answers["postgresql"] == answers["sqlite"]


def _count(running: Any, db: str) -> int:
    with running.engine.connect() as conn:
        count: int = conn.execute(
            sa.text(
                'SELECT count(*) FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" '
                'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" = :db'
            ),
            {"db": db},
        ).scalar_one()
    return count


def test_existing_partitions_are_refused_or_skipped_as_before(servers: Servers) -> None:
    db = _new_table(servers)
    for _, client in servers.values():
        client.add_partition(_part(db, ["a", "1"], storage()))

    def request(if_not_exists: bool, *days: str) -> t.AddPartitionsRequest:
        parts = [_part(db, [day, "1"], storage()) for day in days]
        return t.AddPartitionsRequest(db, "t", parts, if_not_exists, True)

    cases = [
        lambda c: c.add_partition(_part(db, ["a", "1"], storage())),
        lambda c: c.add_partitions_req(request(False, "b", "a")),
        lambda c: c.add_partitions_req(request(False, "c", "c")),
        lambda c: c.add_partitions_req(request(True, "d", "a")),
        lambda c: c.add_partitions_req(request(True, "a")),
        lambda c: c.add_partitions([_part("nodb", ["x", "1"], storage())]),
        # Shapes the general path adds on PostgreSQL too.
        lambda c: c.add_partition(_part(db, ["a", "1"], storage(cols=fields(("x", "int"))))),
        lambda c: c.add_partition(_part(db, ["a", "1"], storage(serdeInfo=None))),
        lambda c: c.add_partitions_req(request(True, "a")),
    ]
    for case in cases:
        answers = on_both(servers, case)
        assert _comparable(servers, db, answers["postgresql"]) == _comparable(
            servers, db, answers["sqlite"]
        )
    for running, client in servers.values():
        assert client.get_partition_names(db, "t", -1) == ["ds=a/hr=1", "ds=d/hr=1"]
        assert _count(running, db) == 2


def _versions(running: Any, db: str) -> tuple[int, int, int]:
    with running.engine.connect() as conn:
        row = conn.execute(
            sa.text(
                'SELECT v."VERSION", v."PARTS_VERSION", v."SEEN_VERSION" FROM "TBL_VERSIONS" v '
                'JOIN "TBLS" t ON t."TBL_ID" = v."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" = :db'
            ),
            {"db": db},
        ).one()
    return (row[0], row[1], row[2])


def test_each_add_moves_the_tables_version_and_its_partitions(servers: Servers) -> None:
    db = _new_table(servers)
    for running, client in servers.values():
        before = _versions(running, db)
        for n in range(3):
            client.add_partition(_part(db, [f"v{n}", "1"], storage()))
            version, parts_version, seen = now = _versions(running, db)
            assert version > before[0] and parts_version == seen == version, (before, now)
            before = now
        # An add of nothing new moves it too, as any change the table's lookup marks.
        client.add_partitions_req(
            t.AddPartitionsRequest(db, "t", [_part(db, ["v0", "1"], storage())], True, False)
        )
        assert _versions(running, db)[0] > before[0]


def test_an_add_is_one_statement_once_the_server_has_added_to_the_table(
    servers: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL, the first add to a table looks it up and adds in the call's
    transaction: two statements between BEGIN and COMMIT; the next, whatever the shape of
    the descriptor, are one statement, a transaction of its own (no BEGIN, no COMMIT). On
    SQLite each is one transaction. (Left out: the check of whether the partitions are due
    to be analyzed, a statement now and then, which test_partition_add_statements counts.)"""
    monkeypatch.setattr(partition_calls, "refresh_partition_statistics", lambda s, ids: None)
    db = _new_table(servers)
    for backend, (running, client) in servers.items():
        seen = []
        for n, shape in enumerate(["plain", *SHAPES]):
            sd = SHAPES[shape]() if shape in SHAPES else storage()
            with DriverStatements(running.engine) as trace:
                client.add_partition(_part(db, [f"w{n}", "1"], sd))
                count = statement_count(trace)
                sent = [line.upper() for line in trace.sent()]
            control = [line for line in sent if "BEGIN" in line or "COMMIT" in line]
            seen.append((shape, count, len(control)))
        if backend == "postgresql":
            first, *others = seen
            assert first == ("plain", 2, 2), seen
            general = {shape for shape, count, control in others if (count, control) != (1, 0)}
            assert general == GENERAL_PATH_SHAPES, seen
        else:
            assert {control for _, _, control in seen} == {2}, seen
