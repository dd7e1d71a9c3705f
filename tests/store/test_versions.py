"""Table versions (metastore.store.versions): every changing call moves the version of each
table it changes, in the transaction of the change, and of no other table; a failed call
moves none; a version is never given twice to one table id; reading the versions of the
tables a call names is one statement."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
import sqlalchemy as sa
from conftest import RunningServer
from driver_trace import DriverStatements
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
from metastore.hms.call import CHANGING_CALLS
from metastore.store import versions
from metastore.store.driver import bound
from metastore.store.driver import cursor as driver_cursor
from metastore.store.transactions import Transactions


@dataclasses.dataclass(frozen=True)
class Tables:
    """The tables each call starts from: P partitioned (ds=1, ds=2) and U unpartitioned in
    database DB, O in database OTHER; all with statistics, and a function DB.f."""

    db: str
    other: str


Call = Callable[[Client, Tables], object]


def _table_of(tables: Tables) -> t.Table:
    return table(tables.db, "u", keys=[])


def _lock(client: Client, tables: Tables) -> int:
    """The id of an exclusive lock of table P."""
    component = t.LockComponent(
        type=t.LockType.EXCLUSIVE, level=t.LockLevel.TABLE, dbname=tables.db, tablename="p"
    )
    return int(client.lock(t.LockRequest([component], user="u", hostname="h")).lockid)


# What each changing call does, and which of the tables (by their starting names) it changes.
# A dropped table's version goes with it; a new table gets one.
CALLS: dict[str, tuple[Call, set[str]]] = {
    "create_database": (lambda c, x: c.create_database(database(f"{x.db}_new")), set()),
    "alter_database": (
        lambda c, x: c.alter_database(x.db, database(x.db, description="changed")),
        set(),
    ),
    "drop_database": (lambda c, x: c.drop_database(x.other, True, True), {"o"}),
    "create_table_with_environment_context": (
        lambda c, x: c.create_table_with_environment_context(table(x.db, "new"), None),
        set(),
    ),
    "alter_table_with_environment_context": (
        lambda c, x: c.alter_table_with_environment_context(
            x.db,
            "p",
            table(x.db, "p", cols=fields(("id", "bigint")), keys=fields(("ds", "string"))),
            t.EnvironmentContext({"CASCADE": "true"}),
        ),
        {"p"},
    ),
    "alter_table_req": (
        lambda c, x: c.alter_table_req(
            t.AlterTableRequest(
                dbName=x.db, tableName="u", table=table(x.db, "u", parameters={"k": "v"})
            )
        ),
        {"u"},
    ),
    # Locks name tables but change none of them.
    "lock": (lambda c, x: _lock(c, x), set()),
    "check_lock": (lambda c, x: c.check_lock(t.CheckLockRequest(_lock(c, x))), set()),
    "heartbeat": (lambda c, x: c.heartbeat(t.HeartbeatRequest(lockid=_lock(c, x))), set()),
    "unlock": (lambda c, x: c.unlock(t.UnlockRequest(_lock(c, x))), set()),
    "drop_table_with_environment_context": (
        lambda c, x: c.drop_table_with_environment_context(x.db, "u", True, None),
        {"u"},
    ),
    "add_partition": (lambda c, x: c.add_partition(partition(x.db, "p", ["3"])), {"p"}),
    "add_partition_with_environment_context": (
        lambda c, x: c.add_partition_with_environment_context(partition(x.db, "p", ["3"]), None),
        {"p"},
    ),
    "add_partitions": (lambda c, x: c.add_partitions([partition(x.db, "p", ["3"])]), {"p"}),
    "add_partitions_req": (
        lambda c, x: c.add_partitions_req(
            t.AddPartitionsRequest(x.db, "p", [partition(x.db, "p", ["3"])], True)
        ),
        {"p"},
    ),
    "append_partition": (lambda c, x: c.append_partition(x.db, "p", ["3"]), {"p"}),
    "append_partition_with_environment_context": (
        lambda c, x: c.append_partition_with_environment_context(x.db, "p", ["3"], None),
        {"p"},
    ),
    "append_partition_by_name": (
        lambda c, x: c.append_partition_by_name(x.db, "p", "ds=3"),
        {"p"},
    ),
    "append_partition_by_name_with_environment_context": (
        lambda c, x: c.append_partition_by_name_with_environment_context(x.db, "p", "ds=3", None),
        {"p"},
    ),
    "alter_partitions": (
        lambda c, x: c.alter_partitions(x.db, "p", [partition(x.db, "p", ["1"])]),
        {"p"},
    ),
    "alter_partition_with_environment_context": (
        lambda c, x: c.alter_partition_with_environment_context(
            x.db, "p", partition(x.db, "p", ["1"]), None
        ),
        {"p"},
    ),
    "alter_partitions_with_environment_context": (
        lambda c, x: c.alter_partitions_with_environment_context(
            x.db, "p", [partition(x.db, "p", ["1"])], None
        ),
        {"p"},
    ),
    "alter_partitions_req": (
        lambda c, x: c.alter_partitions_req(
            t.AlterPartitionsRequest(
                dbName=x.db, tableName="p", partitions=[partition(x.db, "p", ["1"])]
            )
        ),
        {"p"},
    ),
    "rename_partition": (
        lambda c, x: c.rename_partition(x.db, "p", ["1"], partition(x.db, "p", ["9"])),
        {"p"},
    ),
    "drop_partition": (lambda c, x: c.drop_partition(x.db, "p", ["1"], True), {"p"}),
    "drop_partition_with_environment_context": (
        lambda c, x: c.drop_partition_with_environment_context(x.db, "p", ["1"], True, None),
        {"p"},
    ),
    "drop_partition_by_name": (
        lambda c, x: c.drop_partition_by_name(x.db, "p", "ds=1", True),
        {"p"},
    ),
    "drop_partition_by_name_with_environment_context": (
        lambda c, x: c.drop_partition_by_name_with_environment_context(
            x.db, "p", "ds=1", True, None
        ),
        {"p"},
    ),
    "drop_partitions_req": (
        lambda c, x: c.drop_partitions_req(
            t.DropPartitionsRequest(x.db, "p", t.RequestPartsSpec(names=["ds=1", "ds=2"]))
        ),
        {"p"},
    ),
    "create_function": (
        lambda c, x: c.create_function(
            t.Function("g", x.db, "com.example.G", "hive", t.PrincipalType.USER, 0, 1, [])
        ),
        set(),
    ),
    "alter_function": (
        lambda c, x: c.alter_function(
            x.db, "f", t.Function("f", x.db, "com.example.F2", "hive", t.PrincipalType.USER)
        ),
        set(),
    ),
    "drop_function": (lambda c, x: c.drop_function(x.db, "f"), set()),
    "update_table_column_statistics": (
        lambda c, x: c.update_table_column_statistics(
            column_stats(x.db, "u", [long_stats("id", 1, 2)])
        ),
        {"u"},
    ),
    "update_partition_column_statistics": (
        lambda c, x: c.update_partition_column_statistics(
            column_stats(x.db, "p", [long_stats("id", 1, 2)], "ds=1")
        ),
        {"p"},
    ),
    "update_table_column_statistics_req": (
        lambda c, x: c.update_table_column_statistics_req(
            t.SetPartitionsStatsRequest([column_stats(x.db, "u", [long_stats("id", 1, 2)])])
        ),
        {"u"},
    ),
    "update_partition_column_statistics_req": (
        lambda c, x: c.update_partition_column_statistics_req(
            t.SetPartitionsStatsRequest([column_stats(x.db, "p", [long_stats("id", 1, 2)], "ds=2")])
        ),
        {"p"},
    ),
    "set_aggr_stats_for": (
        lambda c, x: c.set_aggr_stats_for(
            t.SetPartitionsStatsRequest(
                [
                    column_stats(x.db, "p", [long_stats("id", 1, 2)], "ds=1"),
                    column_stats(x.other, "o", [long_stats("id", 1, 2)]),
                ],
                needMerge=True,
            )
        ),
        {"p", "o"},
    ),
    "delete_table_column_statistics": (
        lambda c, x: c.delete_table_column_statistics(x.db, "u", "id", "hive"),
        {"u"},
    ),
    "delete_partition_column_statistics": (
        lambda c, x: c.delete_partition_column_statistics(x.db, "p", "ds=1", None, None),
        {"p"},
    ),
}


def test_every_changing_call_is_driven() -> None:
    assert set(CALLS) == CHANGING_CALLS


@pytest.fixture
def tables(client: Client, db_name: str) -> Tables:
    tables = Tables(db_name, f"{db_name}_o")
    make_partitioned(client, tables.db, "p", ["1", "2"])
    add_stats(client, tables.db, "p", ["ds=1", "ds=2"])
    client.create_table(table(tables.db, "u"))
    add_stats(client, tables.db, "u", [])
    client.create_database(database(tables.other))
    client.create_table(table(tables.other, "o"))
    add_stats(client, tables.other, "o", [])
    client.create_function(
        t.Function("f", tables.db, "com.example.F", "hive", t.PrincipalType.USER, 0, 1, [])
    )
    return tables


def _versions(engine: sa.Engine, tables: Tables) -> dict[int, int]:
    """TBL_ID -> VERSION of every table of the two databases (and their new neighbours)."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                'SELECT v."TBL_ID", v."VERSION" FROM "TBL_VERSIONS" v '
                'JOIN "TBLS" t ON t."TBL_ID" = v."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" LIKE :prefix'
            ),
            {"prefix": f"{tables.db}%"},
        )
        return {tbl_id: version for tbl_id, version in rows}


def _ids(engine: sa.Engine, tables: Tables) -> dict[str, int]:
    """Starting name ('p', 'u', 'o') -> TBL_ID."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(
                'SELECT t."TBL_NAME", t."TBL_ID" FROM "TBLS" t JOIN "DBS" d '
                'ON d."DB_ID" = t."DB_ID" WHERE d."NAME" IN (:db, :other)'
            ),
            {"db": tables.db, "other": tables.other},
        )
        return {name: tbl_id for name, tbl_id in rows}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_change_moves_the_versions_of_the_tables_it_changes_and_no_other(
    name: str, client: Client, tables: Tables, engine: sa.Engine
) -> None:
    work, changed = CALLS[name]
    ids = _ids(engine, tables)
    before = _versions(engine, tables)
    assert set(before) == set(ids.values())  # every table has a version
    work(client, tables)
    after = _versions(engine, tables)
    for label, tbl_id in ids.items():
        if label not in changed:
            assert after.get(tbl_id) == before[tbl_id], f"{name} moved the version of {label}"
        elif tbl_id in after:
            assert after[tbl_id] > before[tbl_id], f"{name} did not move the version of {label}"
    new = set(after) - set(before)
    assert all(after[i] > max(before.values()) for i in new)  # a new table: a new version


def test_a_rename_moves_the_version_of_the_renamed_table(
    client: Client, tables: Tables, engine: sa.Engine
) -> None:
    ids = _ids(engine, tables)
    before = _versions(engine, tables)
    renamed = table(tables.other, "u2")
    client.alter_table_with_environment_context(tables.db, "u", renamed, None)
    after = _versions(engine, tables)
    assert after[ids["u"]] > before[ids["u"]]
    assert {i: v for i, v in after.items() if i != ids["u"]} == {
        i: v for i, v in before.items() if i != ids["u"]
    }


def test_a_failed_change_moves_no_version(
    client: Client, tables: Tables, engine: sa.Engine
) -> None:
    before = _versions(engine, tables)
    with pytest.raises(t.AlreadyExistsException):
        client.add_partitions([partition(tables.db, "p", ["3"]), partition(tables.db, "p", ["1"])])
    with pytest.raises(t.InvalidObjectException):
        client.set_aggr_stats_for(
            t.SetPartitionsStatsRequest(
                [
                    column_stats(tables.db, "u", [long_stats("id", 1, 2)]),
                    column_stats(tables.db, "p", [long_stats("nope", 1, 2)], "ds=1"),
                ]
            )
        )
    assert _versions(engine, tables) == before


def test_reads_move_no_version(client: Client, tables: Tables, engine: sa.Engine) -> None:
    before = _versions(engine, tables)
    client.get_table(tables.db, "p")
    client.get_partitions(tables.db, "p", -1)
    client.get_table_statistics_req(t.TableStatsRequest(tables.db, "u", ["id"]))
    client.get_aggr_stats_for(t.PartitionsStatsRequest(tables.db, "p", ["id"], ["ds=1"]))
    assert _versions(engine, tables) == before


def test_a_table_id_given_again_gets_a_version_never_seen(
    client: Client, tables: Tables, engine: sa.Engine
) -> None:
    """SQLite gives the id of a dropped table with the highest id to the next new table: the
    (TBL_ID, VERSION) pair of the new table was never that of the old one."""
    client.create_table(table(tables.db, "last"))
    last = _ids(engine, tables)["last"]
    old = _versions(engine, tables)[last]
    client.drop_table(tables.db, "last", True)
    client.create_table(table(tables.db, "again"))
    again = _ids(engine, tables)["again"]
    assert (again, _versions(engine, tables)[again]) != (last, old)
    assert _versions(engine, tables)[again] > old


def test_reading_the_versions_of_the_tables_of_a_call_is_one_statement(
    tables: Tables, server: RunningServer
) -> None:
    engine = sa.create_engine(server.url)
    names = [("hive", tables.db, "p"), ("hive", tables.db, "u"), ("hive", tables.other, "o")]
    tx = Transactions(engine)
    with DriverStatements(engine) as statements:
        versions.read(tx, names)  # the dialect's questions when it first connects
        before = len(statements.sent())
        found = versions.read(tx, [*names, ("hive", tables.db, "missing")])
        assert len(statements.sent()) - before == 1, statements.sent()[before:]
    engine.dispose()
    assert set(found) == set(names)
    assert all(version is not None for _, version in found.values())


def test_the_versions_of_several_tables_are_found_through_the_indexes(
    tables: Tables, server: RunningServer
) -> None:
    """Whatever the number of tables a call names, their versions are looked up by the
    unique indexes of DBS and TBLS, never by a scan of all the tables."""
    engine = sa.create_engine(server.url)
    db, other = tables.db, tables.other
    shapes = {
        (1,): {"catalog0": "hive", "db0": db, "table0_0": "p"},
        (3,): {"catalog0": "hive", "db0": db, "table0_0": "p", "table0_1": "u", "table0_2": "x"},
        (2, 1): {
            **{"catalog0": "hive", "db0": db, "table0_0": "p", "table0_1": "u"},
            **{"catalog1": "hive", "db1": other, "table1_0": "o"},
        },
    }
    with engine.connect() as connection:
        driver = connection.connection.driver_connection
        assert driver is not None
        cursor = driver_cursor(driver, engine.dialect)
        for shape, named in shapes.items():
            sql, params = bound(versions.read_statement(shape), engine.dialect, named)
            if engine.dialect.name == "sqlite":
                cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
                plan = [row[3] for row in cursor.fetchall()]
                assert not [step for step in plan if step.startswith("SCAN")], (shape, plan)
            else:
                cursor.execute("SET enable_seqscan = off")
                cursor.execute(f"EXPLAIN {sql}", params)
                plan = [row[0] for row in cursor.fetchall()]
                assert not [step for step in plan if "Seq Scan" in step], (shape, plan)
        cursor.close()
    engine.dispose()
