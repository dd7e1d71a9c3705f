"""Rights and audit: every changing call needs a right, who holds it is a setting, a refused
call names the missing right, and every changing call leaves one audit line.

The same rules with authenticated callers (Kerberos principals, TLS client certificates) are
tested in tests/hms/security."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import RunningServer, connect
from metadata_builders import database
from thrift.Thrift import TApplicationException

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore import audit
from metastore.access import (
    RIGHTS,
    ConnectionContext,
    Policy,
    Right,
    parse_group_mapping,
    release_connection,
    required_right,
    use_connection,
)
from metastore.config import Settings
from metastore.hms import audit_target
from metastore.hms.call import CHANGING_CALLS

# Calls of the IDL that change nothing although their name does not start with get_.
NOT_CHANGES = {"set_ugi", "shutdown", "show_locks"}  # none changes anything


def idl_methods() -> list[str]:
    return [n for n, _ in inspect.getmembers(ThriftHiveMetastore.Iface, inspect.isfunction)]


def test_every_changing_call_has_its_right_in_the_table() -> None:
    assert set(CHANGING_CALLS) - set(RIGHTS) == set(), "add these calls to access.RIGHTS"
    assert set(RIGHTS) - set(CHANGING_CALLS) == set(), "stale entries in access.RIGHTS"
    for name in set(RIGHTS) - LOCK_CALLS:
        declared = ThriftHiveMetastore.__dict__[f"{name}_result"].thrift_spec
        assert any(f and f[3] and f[3][0] is t.MetaException for f in declared), (
            f"{name} must declare MetaException to be refused with it"
        )


# The lock calls declare no MetaException (HMS 4's IDL): they are refused with the
# TApplicationException that carries the refusal's message (tests/hms/test_locks.py).
LOCK_CALLS = {"lock", "check_lock", "unlock", "heartbeat"}


def test_a_changing_call_missing_from_the_table_needs_admin() -> None:
    assert required_right("a_call_added_later", write=True) is Right.ADMIN
    assert required_right("a_call_added_later", write=False) is Right.READ
    assert required_right("drop_database", write=True) is Right.DROP


@pytest.fixture(scope="module")
def locked(migrated_url: str) -> Iterator[RunningServer]:
    """A server where nobody may change anything (rights configured, none granted)."""
    server = RunningServer(migrated_url, Settings(writers=(), droppers=(), admins=("nobody",)))
    yield server
    server.stop()


def test_every_changing_call_of_the_idl_is_refused_without_its_right(
    locked: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "metastore.audit")
    client, transport = connect(locked.port)
    changing = [n for n in idl_methods() if not n.startswith("get_") and n not in NOT_CHANGES]
    assert len(changing) >= 20
    try:
        for name in changing:
            arity = len(inspect.signature(getattr(ThriftHiveMetastore.Iface, name)).parameters)
            refusal = TApplicationException if name in LOCK_CALLS else t.MetaException
            with pytest.raises(refusal) as refused:
                getattr(client, name)(*[None] * (arity - 1))
            match = re.fullmatch(
                r"anonymous lacks the (\w+) right that (\w+) needs \(granted by .*\)",
                str(refused.value.message),
            )
            assert match, refused.value.message
            right, call = match.groups()
            assert right == required_right(call, write=True).value
            assert call in (name, f"{name}s", f"{name}_with_environment_context")
        assert isinstance(client.get_all_databases(), list)  # reads stay open
    finally:
        transport.close()
    refusals = [r.message for r in caplog.records if r.name == "metastore.audit"]
    assert len(refusals) == len(changing)
    assert all(line.endswith("outcome=refused") for line in refusals)


def test_audit_lines_name_the_caller_the_call_and_its_target(
    client: Any, db_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "metastore.audit")
    client.create_database(database(db_name))
    with pytest.raises(t.AlreadyExistsException):
        client.create_database(database(db_name))
    client.get_database(db_name)  # reads are not audited
    client.drop_database(db_name, True, True)
    lines = [r.message for r in caplog.records if r.name == "metastore.audit"]
    assert lines == [
        f"ugi=anonymous ip=127.0.0.1 cmd=create_database db={db_name} outcome=ok",
        f"ugi=anonymous ip=127.0.0.1 cmd=create_database db={db_name} "
        "outcome=failed:AlreadyExistsException",
        f"ugi=anonymous ip=127.0.0.1 cmd=drop_database db={db_name} outcome=ok",
    ]


def _stats(db: str, table: str, part: str | None) -> t.ColumnStatistics:
    desc = t.ColumnStatisticsDesc(isTblLevel=part is None, dbName=db, tableName=table)
    desc.partName = part
    data = t.ColumnStatisticsData(longStats=t.LongColumnStatsData(numNulls=0, numDVs=1))
    return t.ColumnStatistics(desc, [t.ColumnStatisticsObj("c", "bigint", data)])


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"database": t.Database(name="d")}, "db=d"),
        ({"name": "d", "deleteData": True, "cascade": True}, "db=d"),
        ({"dbname": "d", "name": "t", "deleteData": True}, "db=d tbl=t"),
        ({"tbl": t.Table(dbName="d", tableName="t"), "environment_context": None}, "db=d tbl=t"),
        ({"db_name": "d", "tbl_name": "t", "part_vals": ["1", "a"]}, "db=d tbl=t part=1/a"),
        ({"db_name": "d", "tbl_name": "t", "part_name": "ds=1", "col_name": "c"},
         "db=d tbl=t part=ds=1 col=c"),
        ({"stats_obj": _stats("d", "t", "ds=1")}, "db=d tbl=t part=ds=1 cols=c"),
        ({"request": t.SetPartitionsStatsRequest([_stats("d", "t", "ds=1")] * 3)},
         "db=d tbl=t cols=c entries=3"),
        ({"new_parts": [t.Partition(values=["1"], dbName="d", tableName="t")] * 2},
         "db=d tbl=t partitions=2"),
        ({"request": t.AddPartitionsRequest("d", "t", [t.Partition()] * 4)},
         "db=d tbl=t partitions=4"),
        ({"database": t.Database(name="evil\nugi=root x")}, 'db="evil\\nugi=root x"'),
    ],
)  # fmt: skip
def test_audit_targets(arguments: dict[str, Any], expected: str) -> None:
    assert audit_target.target(arguments) == expected


def test_audit_line_of_an_authenticated_caller(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "metastore.audit")
    context = ConnectionContext("10.0.0.7:40000")
    context.authenticate("kerberos", "alice@EXAMPLE.COM", "alice", "auth-conf")
    context.claim("root")  # a claim never replaces the authenticated user
    audit.record(context, True, "drop_database", "db=d", "refused")
    claimed = ConnectionContext("[::1]:5")
    claimed.claim("bob", ["etl"])
    audit.record(claimed, False, "create_database", "db=d", "ok")
    assert [r.message for r in caplog.records] == [
        "ugi=alice principal=alice@EXAMPLE.COM ip=10.0.0.7 cmd=drop_database db=d outcome=refused",
        "ugi=bob claimed=true ip=[::1] cmd=create_database db=d outcome=ok",
    ]


def _caller(
    user: str | None = None, *, principal: str | None = None, claimed: str | None = None,
    groups: tuple[str, ...] = (),
) -> ConnectionContext:  # fmt: skip
    context = ConnectionContext("127.0.0.1:1")
    if user is not None:
        context.authenticate("kerberos", principal or f"{user}@R", user, "auth-conf")
    if claimed is not None:
        context.claim(claimed, groups)
    return context


def test_without_authentication_and_rights_everyone_may_do_everything() -> None:
    policy = Policy(authentication=False)
    for right in Right:
        assert policy.allows(_caller(), right)
        assert policy.allows(_caller(claimed="bob"), right)


def test_with_authentication_and_no_rights_configured_everything_is_read_only() -> None:
    policy = Policy(authentication=True)
    assert policy.read_only
    assert policy.allows(_caller("alice"), Right.READ)
    for right in (Right.WRITE, Right.DROP, Right.ADMIN):
        assert not policy.allows(_caller("alice"), right)


def test_rights_by_user_principal_group_and_star() -> None:
    policy = Policy(
        authentication=True,
        writers=["alice", "@etl", "svc@OTHER.REALM"],
        droppers=["bob"],
        admins=["carol"],
        group_mapping=parse_group_mapping("dave=etl,ops; erin=ops"),
    )
    allowed = {
        (user, right)
        for user in ("alice", "bob", "carol", "dave", "erin", "svc@OTHER.REALM")
        for right in (Right.WRITE, Right.DROP, Right.ADMIN)
        if policy.allows(_caller(user, principal=f"{user}@R" if "@" not in user else user), right)
    }
    assert allowed == {
        ("alice", Right.WRITE),
        ("dave", Right.WRITE),  # by group
        ("svc@OTHER.REALM", Right.WRITE),  # by full principal
        ("bob", Right.DROP),
        ("carol", Right.WRITE),
        ("carol", Right.DROP),
        ("carol", Right.ADMIN),
    }
    assert Policy(authentication=True, writers=["*"]).allows(_caller("x"), Right.WRITE)
    assert not Policy(authentication=True, writers=["*"]).allows(_caller("x"), Right.DROP)


def test_set_ugi_claims_count_only_while_authentication_is_off() -> None:
    rules: dict[str, Any] = {"writers": ["alice", "@etl"], "droppers": []}
    off, on = Policy(authentication=False, **rules), Policy(authentication=True, **rules)
    assert off.allows(_caller(claimed="alice"), Right.WRITE)
    assert off.allows(_caller(claimed="zed", groups=("etl",)), Right.WRITE)
    assert not off.allows(_caller(claimed="zed"), Right.WRITE)
    # Authenticated as bob, claiming to be alice or in etl: bob's rights only.
    assert not on.allows(_caller("bob", claimed="alice", groups=("etl",)), Right.WRITE)
    assert not on.allows(_caller(claimed="alice"), Right.WRITE)  # not authenticated at all
    assert on.allows(_caller("alice", claimed="bob"), Right.WRITE)


def test_the_connection_context_reaches_the_call_decorator(
    migrated_url: str, db_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """What a set_ugi handler will do: claim a user on the current connection."""
    caplog.set_level(logging.INFO, "metastore.audit")
    server = RunningServer(migrated_url, Settings(writers=("alice",)))
    try:
        context = ConnectionContext("192.0.2.1:7")
        token = use_connection(context)
        try:
            with pytest.raises(t.MetaException, match="anonymous lacks the write right"):
                server.handler.create_database(database(db_name))
            context.claim("alice", [])
            server.handler.create_database(database(db_name))
            with pytest.raises(t.MetaException, match="alice lacks the drop right"):
                server.handler.drop_database(db_name, True, True)
        finally:
            release_connection(token)
        server.handler.drop_database(db_name, True, True)  # in process: no connection
    finally:
        server.stop()
    assert [r.message.split(" cmd=")[0] for r in caplog.records if r.name == "metastore.audit"] == [
        "ugi=anonymous ip=192.0.2.1",
        "ugi=alice claimed=true ip=192.0.2.1",
        "ugi=alice claimed=true ip=192.0.2.1",
        "ugi=(in-process) ip=-",
    ]


def test_group_mapping_and_rights_settings_are_checked() -> None:
    from metastore import config

    with pytest.raises(config.SettingsError, match="group_mapping"):
        config.load(group_mapping="alice")
    settings = config.load(writers="alice, @etl", droppers="")
    assert settings.writers == ("alice", "@etl") and settings.droppers == ()


def test_set_ugi_names_the_caller_of_a_connection(migrated_url: str, db_name: str) -> None:
    """Spark calls set_ugi first on each connection (SASL off): its user then holds rights."""
    server = RunningServer(migrated_url, Settings(writers=("alice",), droppers=(), admins=()))
    try:
        alice, alice_transport = connect(server.port)
        bob, bob_transport = connect(server.port)
        assert alice.set_ugi("alice", ["etl"]) == ["etl"]
        bob.set_ugi("bob", [])
        alice.create_database(database(db_name))
        with pytest.raises(t.MetaException, match="bob lacks the write right"):
            bob.create_database(database(f"{db_name}_b"))
        alice_transport.close()
        bob_transport.close()
    finally:
        server.stop()
