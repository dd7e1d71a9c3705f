"""The commands' and the job's client against secured metastores: colstats with Kerberos (a
real MIT KDC: a ticket cache, a keytab, every protection, Hive's settings in hive-site.xml
and core-site.xml) and with TLS (a CA, client certificates that say who calls, a Java
truststore), rights by principal and by certificate; the refusals in one line each. And Hive
Metastore 2.3.10, plain, told who calls with set_ugi as Hive's client tells it."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runs import metastore
from conftest import RunningServer
from hms_process import HiveMetastoreProcess
from kdc import REALM, SERVICE, KerberosRealm
from metadata_builders import database
from pki import Pki

from metastore import sample_data
from metastore.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from metastore.config import Settings
from metastore.job.client import MetastoreClient
from metastore.job.connection import Connection, Kerberos, Tls
from metastore.job.errors import MetastoreRefused, MetastoreUnreachable
from metastore.store import migrate

WRITERS = "(granted by the writers or admins setting of the metastore)"


def site(path: Path, **settings: str) -> Path:
    properties = "".join(
        f"<property><name>{name}</name><value>{value}</value></property>"
        for name, value in settings.items()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<configuration>{properties}</configuration>")
    return path


@pytest.fixture(scope="module")
def start_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., RunningServer]]:
    """Servers over one database, alice a writer, stopped with the module."""
    url = f"sqlite:///{tmp_path_factory.mktemp('secure') / 'metastore.db'}"
    migrate.upgrade(url)
    started: list[RunningServer] = []

    def start(**settings: Any) -> RunningServer:
        server = RunningServer(url, Settings(**{"writers": ("alice",), **settings}))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def one_line(done: Any, command: str, code: int = EXIT_FAILED) -> str:
    """The error line of DONE, the only line on stderr."""
    assert done.returncode == code, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    prefix = f"metastore {command}: error: "
    assert done.stderr.startswith(prefix), done.stderr
    line: str = done.stderr[len(prefix) : -1]
    return line


# ------------------------------------------------------------------------------------------
# Kerberos


@pytest.fixture(scope="module")
def kerberized(
    kerberos_realm: KerberosRealm, start_server: Callable[..., RunningServer]
) -> RunningServer:
    """Kerberos with its default protection, privacy (auth-conf) only."""
    return start_server(
        security="kerberos",
        kerberos_keytab=str(kerberos_realm.service_keytab),
        kerberos_principal=SERVICE,
    )


@pytest.fixture
def ticket(kerberos_realm: KerberosRealm, tmp_path: Path) -> Callable[[str | None], dict[str, str]]:
    """The environment of a process with a ticket of USER in its cache (None: no ticket)."""

    def of(user: str | None) -> dict[str, str]:
        ccache = tmp_path / f"{user or 'nobody'}.ccache"
        if user is not None:
            kerberos_realm.kinit(user, ccache)
        return {"KRB5CCNAME": f"FILE:{ccache}"}

    return of


def test_kerberos_with_a_ticket_cache(
    kerberized: RunningServer, ticket: Callable[[str | None], dict[str, str]]
) -> None:
    uri = f"thrift://localhost:{kerberized.port}"
    options = ("--uri", uri, "--kerberos-principal", SERVICE, "--kerberos-qop", "privacy")
    done = metastore("ping", *options, env=ticket("alice"))
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.startswith(f"{uri}: a Hive Metastore answered in ")
    done = metastore("ls", *options, env=ticket("bob"))
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.splitlines()[0].split() == ["database", "tables", "location"]


def test_kerberos_from_hive_settings_with_a_keytab(
    kerberized: RunningServer,
    kerberos_realm: KerberosRealm,
    ticket: Callable[[str | None], dict[str, str]],
    tmp_path: Path,
) -> None:
    """hive-site.xml ($HIVE_CONF_DIR) turns SASL on and names the service with _HOST;
    core-site.xml ($HADOOP_CONF_DIR) asks for privacy; the keytab's ticket stays in the
    process (the user's cache is not written)."""
    site(
        tmp_path / "hive" / "hive-site.xml",
        **{
            "hive.metastore.uris": f"thrift://localhost:{kerberized.port}",
            "hive.metastore.sasl.enabled": "true",
            "hive.metastore.kerberos.principal": f"hive/_HOST@{REALM}",
        },
    )
    site(tmp_path / "hadoop" / "core-site.xml", **{"hadoop.rpc.protection": "privacy"})
    env = {
        **ticket(None),
        "HIVE_CONF_DIR": str(tmp_path / "hive"),
        "HADOOP_CONF_DIR": str(tmp_path / "hadoop"),
    }
    keytab = ("--keytab", str(kerberos_realm.keytab("alice")), "--principal", f"alice@{REALM}")
    done = metastore("ls", *keytab, env=env)
    assert done.returncode == EXIT_OK, done.stderr
    assert not (tmp_path / "nobody.ccache").exists()
    # Without credentials, and with a protection the metastore does not offer:
    line = one_line(metastore("ls", env=env), "ls")
    assert line.startswith(
        f"cannot reach the metastore at thrift://localhost:{kerberized.port}: Kerberos: No "
        "Kerberos credentials available (default cache: FILE:"
    )
    assert line.endswith("(run kinit, or give --keytab and --principal)")
    line = one_line(metastore("ls", *keytab, "--kerberos-qop", "authentication", env=env), "ls")
    assert line == (
        f"cannot reach the metastore at thrift://localhost:{kerberized.port}: Kerberos: no "
        "protection in common: the metastore offers auth-conf, this client accepts auth "
        "(hadoop.rpc.protection, or --kerberos-qop)"
    )


def test_kerberos_refusals_are_one_line(
    kerberized: RunningServer,
    ticket: Callable[[str | None], dict[str, str]],
) -> None:
    uri = f"thrift://localhost:{kerberized.port}"
    other = f"hive/otherhost@{REALM}"
    line = one_line(
        metastore("ping", "--uri", uri, "--kerberos-principal", other, env=ticket("alice")), "ping"
    )
    assert line == (
        f"cannot reach the metastore at {uri}: Kerberos: Server {other} not found in Kerberos "
        "database"
    )
    line = one_line(metastore("ping", "--uri", uri), "ping")  # no Kerberos
    assert line.startswith(f"cannot reach the metastore at {uri}: it does not answer as a Hive ")
    assert line.endswith("and does it require Kerberos or TLS?")
    line = one_line(metastore("ping", "--uri", uri, "--keytab", "k"), "ping", EXIT_USAGE)
    assert line.startswith("--keytab applies to Kerberos: give the metastore's principal too")


@pytest.mark.parametrize("qop", ["auth", "auth-int", "auth-conf"])
def test_each_protection_and_the_rights_of_principals(
    kerberos_realm: KerberosRealm,
    start_server: Callable[..., RunningServer],
    db_name: str,
    qop: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """In process, with the users' keytabs: alice may write, bob is refused by name."""
    caplog.set_level(logging.INFO)
    server = start_server(
        security="kerberos",
        kerberos_keytab=str(kerberos_realm.service_keytab),
        kerberos_principal=SERVICE,
        kerberos_qop="auth,auth-int,auth-conf",
    )

    def as_user(user: str) -> Connection:
        kerberos = Kerberos(SERVICE, (qop,), f"{user}@{REALM}", str(kerberos_realm.keytab(user)))
        return Connection((f"thrift://localhost:{server.port}",), kerberos=kerberos)

    big = "x" * 300_000  # frames of 300 KB each way
    with MetastoreClient(as_user("alice")) as alice:
        alice.call("create_database", database(db_name, parameters={"big": big}))
        assert alice.call("get_database", db_name).parameters["big"] == big
    with MetastoreClient(as_user("bob")) as bob, pytest.raises(MetastoreRefused) as refused:
        bob.call("create_database", database(f"{db_name}_bob"))
    assert str(refused.value) == (
        f"the metastore refused: bob lacks the write right that create_database needs {WRITERS}"
    )
    assert any(f"authenticated as alice@{REALM} ({qop})" in r.message for r in caplog.records)
    audit = [r.message for r in caplog.records if r.name == "metastore.audit"]
    assert audit[0].startswith(f"ugi=alice principal=alice@{REALM} ip=127.0.0.1 ")


@pytest.mark.spark
def test_the_job_writes_with_kerberos(
    kerberized: RunningServer,
    kerberos_realm: KerberosRealm,
    ticket: Callable[[str | None], dict[str, str]],
    tmp_path: Path,
) -> None:
    """metastore analyze, as alice from her keytab: registration and statistics."""
    sample_data.write_orders(tmp_path / "orders", rows=700)
    done = metastore(
        "analyze", "krb.orders", "--path", str(tmp_path / "orders"),
        "--uri", f"thrift://localhost:{kerberized.port}",
        "--kerberos-principal", f"hive/_HOST@{REALM}", "--kerberos-qop", "privacy",
        "--keytab", str(kerberos_realm.keytab("alice")), "--principal", f"alice@{REALM}",
        env=ticket(None),
    )  # fmt: skip
    assert done.returncode == EXIT_OK, done.stderr
    client = MetastoreClient(
        Connection(
            (f"thrift://localhost:{kerberized.port}",),
            kerberos=Kerberos(
                SERVICE, ("auth-conf",), f"alice@{REALM}", str(kerberos_realm.keytab("alice"))
            ),
        )
    )
    with client:
        assert client.call("get_table", "krb", "orders").parameters["numRows"] == "700"


# ------------------------------------------------------------------------------------------
# TLS


@pytest.fixture(scope="module")
def tls_server(pki: Pki, start_server: Callable[..., RunningServer]) -> RunningServer:
    return start_server(
        security="tls", tls_cert=str(pki.cert("server")), tls_key=str(pki.key("server"))
    )


def test_tls_from_options_and_hive_settings(
    tls_server: RunningServer, pki: Pki, tmp_path: Path
) -> None:
    uri = f"thrift://localhost:{tls_server.port}"
    done = metastore("ping", "--uri", uri, "--tls-ca", str(pki.ca))
    assert done.returncode == EXIT_OK, done.stderr
    hive_site = site(
        tmp_path / "hive-site.xml",
        **{
            "hive.metastore.uris": uri,
            "hive.metastore.use.SSL": "true",
            "hive.metastore.truststore.path": str(pki.ca),
        },
    )
    done = metastore("ls", "--hive-site", str(hive_site))
    assert done.returncode == EXIT_OK, done.stderr
    line = one_line(metastore("ping", "--uri", uri), "ping")  # plain text
    assert line.startswith(f"cannot reach the metastore at {uri}: it does not answer as a Hive ")
    if pki.truststore.exists():  # a JKS truststore, as Hive's client takes
        jks = site(
            tmp_path / "jks.xml",
            **{
                "hive.metastore.use.SSL": "true",
                "hive.metastore.truststore.path": str(pki.truststore),
            },
        )
        line = one_line(
            metastore("ping", "--uri", uri, "--hive-site", str(jks)), "ping", EXIT_USAGE
        )
        assert "is a Java keystore, which this client cannot read: give the CA's" in line


def test_an_untrusted_certificate_is_one_line(
    pki: Pki, start_server: Callable[..., RunningServer]
) -> None:
    untrusted = start_server(
        security="tls",
        tls_cert=str(pki.cert("untrusted-server")),
        tls_key=str(pki.key("untrusted-server")),
    )
    uri = f"thrift://localhost:{untrusted.port}"
    line = one_line(metastore("ping", "--uri", uri, "--tls-ca", str(pki.ca)), "ping")
    assert line.startswith(f"cannot reach the metastore at {uri}: TLS: its certificate is not ")
    assert line.endswith("check --tls-ca (or hive.metastore.truststore.path)")


def test_client_certificates_say_who_writes(
    pki: Pki, start_server: Callable[..., RunningServer], db_name: str
) -> None:
    server = start_server(
        security="tls",
        tls_cert=str(pki.cert("server")),
        tls_key=str(pki.key("server")),
        tls_client_ca=str(pki.ca),
    )

    def as_user(user: str | None) -> Connection:
        cert, key = (str(pki.cert(user)), str(pki.key(user))) if user else (None, None)
        return Connection((f"thrift://localhost:{server.port}",), tls=Tls(str(pki.ca), cert, key))

    with MetastoreClient(as_user("alice")) as alice:
        alice.call("create_database", database(db_name))
    with MetastoreClient(as_user("bob")) as bob, pytest.raises(MetastoreRefused) as refused:
        bob.call("create_database", database(f"{db_name}_bob"))
    assert str(refused.value) == (
        f"the metastore refused: bob lacks the write right that create_database needs {WRITERS}"
    )
    with MetastoreClient(as_user(None)) as nobody, pytest.raises(MetastoreUnreachable) as no:
        nobody.call("get_all_databases")
    assert "TLS: the metastore ended the connection (" in str(no.value)
    assert str(no.value).endswith(
        "does it require a client certificate (--tls-cert, --tls-key) of a CA it trusts?"
    )


# ------------------------------------------------------------------------------------------
# Hive Metastore 2.3.10


class Recorder:
    """A TCP proxy to PORT that keeps what the first connection's client sent and heard."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.sent = bytearray()
        self.heard = bytearray()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        upstream = socket.create_connection(("127.0.0.1", self.target))
        threading.Thread(target=self._pipe, args=(conn, upstream, self.sent), daemon=True).start()
        self._pipe(upstream, conn, self.heard)

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket, kept: bytearray) -> None:
        try:
            while data := source.recv(65536):
                kept += data
                sink.sendall(data)
        except OSError:
            pass
        finally:
            sink.close()
            source.close()

    def close(self) -> None:
        self.listener.close()


@pytest.mark.hms
def test_hive_metastore_2_3_is_told_who_calls(
    hms_oracle: HiveMetastoreProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = f"thrift://127.0.0.1:{hms_oracle.port}"
    done = metastore("ping", "--uri", f"thrift://127.0.0.1:1,{uri}")  # the first is down
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.startswith(f"{uri}: a Hive Metastore answered in ")
    done = metastore("ls", "--uri", uri)
    assert done.returncode == EXIT_OK, done.stderr
    line = one_line(metastore("describe", "no_such_db.t", "--uri", uri), "describe", EXIT_USAGE)
    assert line.startswith(f"no database no_such_db in {uri}; it has default")
    monkeypatch.setenv("HADOOP_USER_NAME", "etl")
    recorder = Recorder(hms_oracle.port)
    try:
        with MetastoreClient(f"thrift://127.0.0.1:{recorder.port}") as client:
            assert "default" in client.call("get_all_databases")
    finally:
        recorder.close()
    # The first call: set_ugi("etl", [groups]) in the strict binary protocol; HMS's answer
    # is a reply to it whose first field is its success (field 0, a list), no exception.
    sent, heard = bytes(recorder.sent), bytes(recorder.heard)
    assert sent[4:15] == b"\x00\x00\x00\x07set_ugi"
    assert sent.index(b"set_ugi") < sent.index(b"get_all_databases")
    assert b"\x00\x00\x00\x03etl" in sent[: sent.index(b"get_all_databases")]
    assert heard[:15] == b"\x80\x01\x00\x02\x00\x00\x00\x07set_ugi"
    assert heard[19:22] == b"\x0f\x00\x00"
