"""The job's and the CLI's metastore client against colstats servers on loopback: the
metastore's refusals as the job's own exceptions (which pass through a context manager made
with contextlib, as the job's units of writes are), set_ugi as Hive's client sends it,
several URIs (a stopped one skipped, a lost connection failed over, a random order)."""

from __future__ import annotations

import grp
import logging
import os
import pwd
from collections.abc import Iterator

import pytest
from conftest import RunningServer
from metadata_builders import database

from metastore.config import Settings
from metastore.job import interrupts
from metastore.job.client import MetastoreClient, local_groups, login_user
from metastore.job.connection import Connection
from metastore.job.errors import MetastoreRefused, MetastoreUnreachable, NoSuchObject
from metastore.store import migrate


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('client') / 'metastore.db'}"
    migrate.upgrade(url)
    return url


@pytest.fixture(scope="module")
def guarded(url: str) -> Iterator[RunningServer]:
    """Alice may write; everyone may read."""
    server = RunningServer(url, Settings(writers=("alice",)))
    yield server
    server.stop()


def uri(server: RunningServer) -> str:
    return f"thrift://127.0.0.1:{server.port}"


def test_refusals_are_the_metastores_words_through_a_unit_of_writes(
    guarded: RunningServer,
    db_name: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The generated exceptions are frozen: through interrupts.deferred() (contextlib) one
    became "TypeError: can't modify immutable instance"."""
    caplog.set_level(logging.INFO, "metastore.audit")
    monkeypatch.setenv("HADOOP_USER_NAME", "bob")
    with MetastoreClient(uri(guarded)) as client:
        with pytest.raises(MetastoreRefused) as refused, interrupts.deferred():
            client.call("create_database", database(db_name))
        assert (refused.value.call, refused.value.kind) == ("create_database", "MetaException")
        assert str(refused.value) == (
            "the metastore refused: bob lacks the write right that create_database needs "
            "(granted by the writers or admins setting of the metastore)"
        )
        with pytest.raises(NoSuchObject, match=f"database hive.{db_name} does not exist"):
            client.call("get_database", db_name)
    monkeypatch.setenv("HADOOP_USER_NAME", "alice")
    with MetastoreClient(uri(guarded)) as client:
        client.call("create_database", database(db_name))
        assert client.call("get_database", db_name).name == db_name
    audit = [r.message for r in caplog.records if r.name == "metastore.audit"]
    users = [line.split(" ip=")[0] for line in audit]
    assert users == ["ugi=bob claimed=true", "ugi=alice claimed=true"]


def test_the_user_is_hadoops(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HADOOP_USER_NAME", raising=False)
    me = pwd.getpwuid(os.getuid())
    assert login_user() == me.pw_name
    assert local_groups(me.pw_name)[0] == grp.getgrgid(me.pw_gid).gr_name
    monkeypatch.setenv("HADOOP_USER_NAME", "etl-nobody-knows")
    assert login_user() == "etl-nobody-knows"
    assert local_groups("etl-nobody-knows") == []


def test_the_first_uri_that_answers(url: str) -> None:
    stopped, live = RunningServer(url, Settings()), RunningServer(url, Settings())
    stopped.stop()
    try:
        with MetastoreClient(f"{uri(stopped)},{uri(live)}", retries=0) as client:
            assert "default" in client.call("get_all_databases")
            assert client.uri == uri(live)
        live.stop()
        with (
            MetastoreClient(f"{uri(stopped)},{uri(live)}", retries=0) as client,
            pytest.raises(MetastoreUnreachable) as unreachable,
        ):
            client.call("get_all_databases")
        refused = "connection refused (is `metastore serve` running there, and is the port right?)"
        assert str(unreachable.value) == (
            f"cannot reach the metastore at any of its URIs: {uri(stopped)}: {refused}; "
            f"{uri(live)}: {refused}"
        )
    finally:
        live.stop()


def test_a_lost_connection_fails_over_to_the_next_uri(
    url: str, db_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    first, second = RunningServer(url, Settings()), RunningServer(url, Settings())
    try:
        with MetastoreClient(f"{uri(first)},{uri(second)}") as client:
            client.call("create_database", database(db_name))
            assert client.uri == uri(first)
            first.stop()
            assert client.call("get_database", db_name).name == db_name
            assert client.uri == uri(second)
        assert any(
            f"get_database failed ({uri(first)}: " in r.message and "retrying" in r.message
            for r in caplog.records
        )
    finally:
        first.stop()
        second.stop()


def test_random_order_picks_each_uri_first(url: str) -> None:
    one, two = RunningServer(url, Settings()), RunningServer(url, Settings())
    try:
        both = Connection((uri(one), uri(two)), random_order=True)
        chosen = set()
        for _ in range(40):  # each misses one of the two with odds of 2 ** -39
            with MetastoreClient(both, retries=0) as client:
                client.call("get_all_databases")
                chosen.add(client.uri)
        assert chosen == {uri(one), uri(two)}
    finally:
        one.stop()
        two.stop()
