"""TLS on the Thrift port with Python's TSSLSocket: encryption for every client, and with a
client CA, certificates that say who calls (rights by certificate). Refusals: a plain-text
client, a server certificate from an unknown CA, a client without a certificate or with one
from another CA. Hive's Java client is tested in tests/interop/test_secure_java_client.py."""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import RunningServer, connect, wait_for
from metadata_builders import database
from pki import Pki
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TSSLSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings, SettingsError
from metastore.store import migrate


@pytest.fixture(scope="module")
def start_server(
    pki: Pki, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., RunningServer]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('tls') / 'metastore.db'}"
    migrate.upgrade(url)
    started: list[RunningServer] = []

    def start(**settings: Any) -> RunningServer:
        defaults = {
            "security": "tls",
            "tls_cert": str(pki.cert("server")),
            "tls_key": str(pki.key("server")),
        }
        server = RunningServer(url, Settings(**{**defaults, **settings}))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def tls_connect(
    port: int, ca: str, cert: str | None = None, key: str | None = None, host: str = "localhost"
) -> tuple[ThriftHiveMetastore.Client, TTransport.TTransportBase]:
    sock = TSSLSocket.TSSLSocket(
        host, port, ca_certs=ca, certfile=cert, keyfile=key, server_hostname=host
    )
    sock.setTimeout(20_000)
    transport = TTransport.TBufferedTransport(sock)
    client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
    try:
        transport.open()
    except BaseException:
        if sock.handle is not None:  # TSSLSocket cleans up a failed open itself
            sock.close()
        raise
    return client, transport


def test_a_tls_client_calls_and_a_plain_one_is_refused(
    start_server: Callable[..., RunningServer],
    pki: Pki,
    db_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "metastore.audit")
    server = start_server()
    client, transport = tls_connect(server.port, str(pki.ca))
    try:
        big = "y" * 300_000
        client.create_database(database(db_name, parameters={"big": big}))
        assert client.get_database(db_name).parameters["big"] == big
    finally:
        transport.close()
    # Without client certificates TLS encrypts but does not say who calls.
    assert any(
        r.message.startswith("ugi=anonymous ip=127.0.0.1 cmd=create_database")
        for r in caplog.records
    )
    plain, transport = connect(server.port)
    try:
        with pytest.raises(TTransport.TTransportException):
            plain.get_all_databases()
    finally:
        transport.close()
    assert any(
        "TLS handshake failed" in r.message and r.levelno == logging.WARNING for r in caplog.records
    )


def test_a_server_certificate_from_an_unknown_ca_is_refused_by_the_client(
    start_server: Callable[..., RunningServer], pki: Pki
) -> None:
    untrusted = start_server(
        tls_cert=str(pki.cert("untrusted-server")), tls_key=str(pki.key("untrusted-server"))
    )
    with pytest.raises(TTransport.TTransportException) as refused:
        tls_connect(untrusted.port, str(pki.ca))
    assert isinstance(refused.value.inner, ssl.SSLCertVerificationError)


def test_client_certificates_say_who_calls(
    start_server: Callable[..., RunningServer],
    pki: Pki,
    db_name: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "metastore.audit")
    server = start_server(tls_client_ca=str(pki.ca), writers=("alice",), droppers=("alice",))
    ca = str(pki.ca)
    alice, transport = tls_connect(server.port, ca, str(pki.cert("alice")), str(pki.key("alice")))
    alice.create_database(database(db_name))
    transport.close()
    bob, transport = tls_connect(server.port, ca, str(pki.cert("bob")), str(pki.key("bob")))
    try:
        assert bob.get_database(db_name).name == db_name
        with pytest.raises(t.MetaException, match="bob lacks the drop right that drop_database"):
            bob.drop_database(db_name, True, True)
    finally:
        transport.close()
    audit = [r.message for r in caplog.records if r.name == "metastore.audit"]
    assert audit == [
        f"ugi=alice principal=O=colstats,CN=alice ip=127.0.0.1 cmd=create_database db={db_name} "
        "outcome=ok",
        f"ugi=bob principal=O=colstats,CN=bob ip=127.0.0.1 cmd=drop_database db={db_name} "
        "outcome=refused",
    ]
    # No certificate, or one from another CA (mallory's says CN=alice): no connection.
    for cert in (None, "mallory"):
        files = (str(pki.cert(cert)), str(pki.key(cert))) if cert else (None, None)
        with pytest.raises(TTransport.TTransportException):
            client, transport = tls_connect(server.port, ca, *files)
            try:  # TLS 1.3: the server's refusal arrives with the first read
                client.get_all_databases()
            finally:
                transport.close()
    # Both refused (and logged) before the next test, which shares the module's servers.
    assert wait_for(lambda: server.server.counters.snapshot()["refused_authentication"] >= 2, 10)


def test_unusable_tls_settings_are_named(pki: Pki) -> None:
    from metastore.hms.security import build

    with pytest.raises(SettingsError, match="needs tls_cert and tls_key"):
        build(Settings(security="tls", tls_cert=str(pki.cert("server"))))
    with pytest.raises(SettingsError, match="cannot use the TLS certificate"):
        build(Settings(security="tls", tls_cert=str(pki.ca), tls_key=str(pki.key("server"))))


def test_a_port_scan_of_the_tls_listener_is_no_warning(
    start_server: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture
) -> None:
    """A port scanner or a load balancer's check (connect, close) costs a debug line."""
    server = start_server()
    for _ in range(3):
        sock = TSocket.TSocket("127.0.0.1", server.port)
        sock.open()
        sock.close()
    wait_for(lambda: server.server.counters.snapshot()["accepted"] >= 3, 5)
    time.sleep(0.2)
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
