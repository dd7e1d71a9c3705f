"""Kerberos (SASL GSSAPI) on the Thrift port against a real MIT KDC, with Python's
TSaslClientTransport (pure-sasl + pykerberos): every QOP, large requests and replies, rights
by principal, and the refusals (no ticket, a plain client, another mechanism, no common QOP,
a silent client). Hive's Java client is tested in tests/interop/test_secure_java_client.py."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RunningServer, connect
from kdc import REALM, SERVICE, KerberosRealm
from metadata_builders import database
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import migrate


@pytest.fixture(scope="module")
def start_server(
    kerberos_realm: KerberosRealm, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., RunningServer]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('kerberos') / 'metastore.db'}"
    migrate.upgrade(url)
    started: list[RunningServer] = []

    def start(**settings: Any) -> RunningServer:
        defaults: dict[str, Any] = {
            "security": "kerberos",
            "kerberos_keytab": str(kerberos_realm.service_keytab),
            "kerberos_principal": SERVICE,
            "writers": ("alice",),
            "droppers": ("alice",),
        }
        server = RunningServer(url, Settings(**{**defaults, **settings}))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def server(start_server: Callable[..., RunningServer]) -> RunningServer:
    """Offers every QOP; alice may write and drop, bob may read."""
    return start_server(kerberos_qop="auth,auth-int,auth-conf")


@pytest.fixture
def login(
    kerberos_realm: KerberosRealm, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Callable[[str | None], None]:
    """Give this process's Kerberos clients a ticket of USER (None: no ticket at all)."""

    def as_user(user: str | None) -> None:
        ccache = tmp_path / f"{user or 'nobody'}.ccache"
        if user is not None:
            kerberos_realm.kinit(user, ccache)
        monkeypatch.setenv("KRB5CCNAME", f"FILE:{ccache}")
        monkeypatch.delenv("KRB5_CLIENT_KTNAME", raising=False)

    return as_user


def sasl_connect(
    port: int, qop: str = "auth-conf", **sasl: Any
) -> tuple[ThriftHiveMetastore.Client, TTransport.TTransportBase]:
    """A client as pyhive, pyiceberg and friends connect: the host name is the service
    principal's host part (hive/localhost), the service its first part."""
    sock = TSocket.TSocket("localhost", port)
    sock.setTimeout(20_000)
    if "mechanism" not in sasl:
        sasl = {"mechanism": "GSSAPI", "qops": [qop.encode()], **sasl}
    transport = TTransport.TSaslClientTransport(sock, "localhost", "hive", **sasl)
    client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
    try:
        transport.open()
    except BaseException:
        sock.close()
        raise
    return client, transport


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_an_authenticated_client_calls_with_each_qop(
    server: RunningServer,
    login: Callable[[str | None], None],
    db_name: str,
    qop: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    login("alice")
    client, transport = sasl_connect(server.port, qop)
    try:
        assert transport.sasl.qop == qop.encode()
        # 300 KB each way: one frame from the client (it never splits), several from us.
        big = "x" * 300_000
        client.create_database(database(db_name, parameters={"big": big}))
        assert client.get_database(db_name).parameters["big"] == big
        client.drop_database(db_name, True, True)
    finally:
        transport.close()
    messages = [r.message for r in caplog.records]
    assert any(f"authenticated as alice@{REALM} ({qop})" in m for m in messages)
    audit = [r.message for r in caplog.records if r.name == "metastore.audit"]
    assert audit == [
        f"ugi=alice principal=alice@{REALM} ip=127.0.0.1 cmd=create_database db={db_name} "
        "outcome=ok",
        f"ugi=alice principal=alice@{REALM} ip=127.0.0.1 cmd=drop_database db={db_name} outcome=ok",
    ]


def test_rights_follow_the_principal(
    server: RunningServer, login: Callable[[str | None], None], db_name: str
) -> None:
    login("alice")
    alice, transport = sasl_connect(server.port)
    alice.create_database(database(db_name))
    transport.close()
    login("bob")
    bob, transport = sasl_connect(server.port)
    try:
        assert bob.get_database(db_name).name == db_name
        with pytest.raises(t.MetaException, match="bob lacks the write right that create_"):
            bob.create_database(database(f"{db_name}_bob"))
        with pytest.raises(t.MetaException, match="bob lacks the drop right that drop_database"):
            bob.drop_database(db_name, True, True)
    finally:
        transport.close()


def test_a_client_without_a_ticket_is_refused(
    server: RunningServer, login: Callable[[str | None], None]
) -> None:
    login(None)
    with pytest.raises(Exception, match="No Kerberos credentials available") as refused:
        sasl_connect(server.port)
    assert type(refused.value).__name__ == "GSSError"
    assert server.server.counters.snapshot()["calls"] >= 0  # nothing to call with


class _SlowHandler(logging.Handler):
    """Takes its time over each record, as a loaded machine may."""

    def emit(self, record: logging.LogRecord) -> None:
        time.sleep(0.3)


def test_a_plain_client_is_refused(server: RunningServer, caplog: pytest.LogCaptureFixture) -> None:
    """The refusal is on record before the client hears it: Python's client gives up as soon
    as the ERROR frame arrives (its length reads as 64 MB), before the connection closes."""
    server_log = logging.getLogger("metastore.hms.server")
    slow = _SlowHandler(logging.WARNING)
    server_log.addHandler(slow)
    client, transport = connect(server.port)
    try:
        with pytest.raises(TTransport.TTransportException):
            client.get_all_databases()
    finally:
        transport.close()
        server_log.removeHandler(slow)
    assert any(
        "not a SASL negotiation frame: Invalid status 128" in r.message for r in caplog.records
    )


def test_another_mechanism_is_refused(
    server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(TTransport.TTransportException, match="Unsupported mechanism type PLAIN"):
        sasl_connect(server.port, mechanism="PLAIN", username="alice", password="alice-pw")
    assert any(
        "Kerberos authentication failed: Unsupported mechanism type PLAIN" in r.message
        for r in caplog.records
    )


def test_no_common_qop_and_a_silent_client_are_refused(
    start_server: Callable[..., RunningServer],
    login: Callable[[str | None], None],
    caplog: pytest.LogCaptureFixture,
) -> None:
    strict = start_server(kerberos_qop="privacy")  # Hadoop's name
    login("alice")
    with pytest.raises(Exception, match="quality of protection"):
        sasl_connect(strict.port, "auth")
    client, transport = sasl_connect(strict.port, "auth-conf")
    assert isinstance(client.get_all_databases(), list)
    transport.close()
    import socket

    # A negotiation must finish within request_timeout; 1 s is kept away from the clients
    # above, which fetch a ticket from the KDC first.
    impatient = start_server(request_timeout=1.0)
    silent = socket.create_connection(("127.0.0.1", impatient.port))
    silent.settimeout(10)
    assert silent.recv(100) == b""  # closed by the server
    silent.close()
    assert any("authentication not completed within 1 s" in r.message for r in caplog.records)


def test_principal_names() -> None:
    from metastore.hms import sasl

    assert sasl.short_name("alice@R", "R") == "alice"
    assert sasl.short_name("hive/host.example@R", "R") == "hive"
    assert sasl.short_name("alice@OTHER", "R") == "alice@OTHER"
    assert sasl.parse_qop("privacy, authentication") == ("auth-conf", "auth")
    with pytest.raises(ValueError, match="unknown QOP 'secret'"):
        sasl.parse_qop("secret")
    assert sasl.service_principal(None) is None
    principal = sasl.service_principal("hive/_HOST@R") or ""
    assert principal.startswith("hive/") and principal.endswith("@R") and "_HOST" not in principal


def test_unusable_kerberos_settings_are_named(
    kerberos_realm: KerberosRealm, tmp_path: Path
) -> None:
    from metastore.config import SettingsError
    from metastore.hms.security import build

    keytab = str(kerberos_realm.service_keytab)
    with pytest.raises(SettingsError, match="needs kerberos_keytab"):
        build(Settings(security="kerberos"))
    with pytest.raises(SettingsError, match="cannot read the keytab"):
        build(Settings(security="kerberos", kerberos_keytab=str(tmp_path / "none")))
    with pytest.raises(SettingsError, match="kerberos_qop: unknown QOP"):
        build(Settings(security="kerberos", kerberos_keytab=keytab, kerberos_qop="x"))
    with pytest.raises(SettingsError, match=r"no Kerberos key for hive/other@COLSTATS\.TEST"):
        build(
            Settings(
                security="kerberos",
                kerberos_keytab=keytab,
                kerberos_principal="hive/other@COLSTATS.TEST",
            )
        )
    assert build(Settings(security="kerberos", kerberos_keytab=keytab)).realm == REALM
