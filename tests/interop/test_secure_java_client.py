"""Hive 2.3.10's own HiveMetaStoreClient (pyspark's jars) against the secured port:
Kerberos with hive.metastore.sasl.enabled=true (a keytab login, a ticket cache, no ticket,
rights by principal) and TLS with hive.metastore.use.SSL=true and a truststore (and a
plain-text client refused there)."""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import RunningServer, wait_for
from java_tools import compile_java, pyspark_jars
from kdc import REALM, SERVICE, KerberosRealm
from pki import TRUSTSTORE_PASSWORD, Pki

from metastore.config import Settings
from metastore.store import migrate

pytestmark = pytest.mark.java

SOURCE = Path(__file__).parent / "java" / "HiveSecureClient.java"
# Each of these is needed: removing any one breaks the client with NoClassDefFoundError.
# hive-serde (serdeConstants), hive-shims-* (the SASL transport through HadoopThriftAuthBridge),
# hadoop-client-runtime (Hadoop's shaded dependencies), jcl-over-slf4j (Hadoop's logging).
JARS = (
    "hive-metastore-2.3.10.jar",
    "hive-common-2.3.10.jar",
    "hive-serde-2.3.10.jar",
    "hive-shims-common-2.3.10.jar",
    "hive-shims-0.23-2.3.10.jar",
    "hadoop-client-api-*.jar",
    "hadoop-client-runtime-*.jar",
    "libthrift-*.jar",
    "libfb303-*.jar",
    "guava-*.jar",
    "commons-lang3-*.jar",
    "slf4j-api-*.jar",
    "jcl-over-slf4j-*.jar",
)


@pytest.fixture(scope="module")
def classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    return compile_java(SOURCE, pyspark_jars(JARS), tmp_path_factory.mktemp("secure-classes"))


@pytest.fixture(scope="module")
def start_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., RunningServer]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('secure-java') / 'metastore.db'}"
    migrate.upgrade(url)
    started: list[RunningServer] = []

    def start(**settings: Any) -> RunningServer:
        server = RunningServer(url, Settings(**settings))
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def run_java(
    classpath: str, mode: str, port: int, *args: str, env: dict[str, str] | None = None
) -> tuple[int, list[str]]:
    """Run HiveSecureClient; its exit status and output lines (OK, FAILED, ERROR)."""
    command = ["java", "-Dslf4j.internal.verbosity=ERROR"]
    krb5_conf = os.environ.get("KRB5_CONFIG")
    if krb5_conf:
        command.append(f"-Djava.security.krb5.conf={krb5_conf}")
    command += ["-cp", classpath, "HiveSecureClient", mode, f"thrift://localhost:{port}", *args]
    done = subprocess.run(
        command,
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    lines = [
        line for line in done.stdout.splitlines() if line.split(" ")[0] in ("OK", "FAILED", "ERROR")
    ]
    return done.returncode, lines


@pytest.fixture(scope="module")
def kerberos_server(
    kerberos_realm: KerberosRealm, start_server: Callable[..., RunningServer]
) -> RunningServer:
    return start_server(
        security="kerberos",
        kerberos_keytab=str(kerberos_realm.service_keytab),
        kerberos_principal=SERVICE,
        kerberos_qop="auth,auth-conf",
        writers=("alice",),
        droppers=("alice",),
    )


@pytest.mark.parametrize("protection", ["privacy", "authentication"])
def test_hive_client_with_a_keytab_login(
    classpath: str,
    kerberos_realm: KerberosRealm,
    kerberos_server: RunningServer,
    db_name: str,
    protection: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "metastore")
    status, lines = run_java(
        classpath,
        "sasl",
        kerberos_server.port,
        f"user=alice@{REALM}",
        f"keytab={kerberos_realm.keytab('alice')}",
        f"protection={protection}",
        f"create:{db_name}",
        f"get:{db_name}",
        "list",
        f"drop:{db_name}",
    )
    assert (status, lines) == (
        0,
        [f"OK create:{db_name}", f"OK get:{db_name}", "OK list", f"OK drop:{db_name}"],
    ), kerberos_realm.kdc_log()[-2000:]
    qop = {"privacy": "auth-conf", "authentication": "auth"}[protection]
    assert f"authenticated as alice@{REALM} ({qop})" in caplog.text
    # The client's last call is fb303's oneway shutdown(): no reply, no warning.
    assert [r.message for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_hive_client_with_a_ticket_cache_and_rights_by_principal(
    classpath: str,
    kerberos_realm: KerberosRealm,
    kerberos_server: RunningServer,
    db_name: str,
    tmp_path: Path,
) -> None:
    alice = tmp_path / "alice.ccache"
    kerberos_realm.kinit("alice", alice)
    status, lines = run_java(
        classpath, "sasl", kerberos_server.port, f"create:{db_name}",
        env={"KRB5CCNAME": f"FILE:{alice}"},
    )  # fmt: skip
    assert (status, lines) == (0, [f"OK create:{db_name}"])
    bob = tmp_path / "bob.ccache"
    kerberos_realm.kinit("bob", bob)
    status, lines = run_java(
        classpath, "sasl", kerberos_server.port, f"get:{db_name}", f"drop:{db_name}",
        f"create:{db_name}_bob", env={"KRB5CCNAME": f"FILE:{bob}"},
    )  # fmt: skip
    assert status == 0
    assert lines[0] == f"OK get:{db_name}"
    assert lines[1].startswith(f"FAILED drop:{db_name}: ")
    assert "MetaException: bob lacks the drop right that drop_database needs" in lines[1]
    assert "MetaException: bob lacks the write right that create_database needs" in lines[2]


def test_hive_client_without_a_ticket_is_refused(
    classpath: str, kerberos_server: RunningServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    counters = kerberos_server.server.counters
    refused = counters.snapshot()["refused_authentication"]
    status, lines = run_java(
        classpath, "sasl", kerberos_server.port, "list",
        env={"KRB5CCNAME": f"FILE:{tmp_path / 'none.ccache'}"},
    )  # fmt: skip
    assert status == 2
    assert any("GSS initiate failed" in line for line in lines), lines
    # The client leaves without waiting for an answer: the refusal may still be on its way.
    wait_for(lambda: counters.snapshot()["refused_authentication"] > refused, 10)
    assert "Kerberos authentication failed: the client reported a failure: GSS initiate failed" in (
        caplog.text
    )


@pytest.fixture(scope="module")
def tls_server(pki: Pki, start_server: Callable[..., RunningServer]) -> RunningServer:
    return start_server(
        security="tls", tls_cert=str(pki.cert("server")), tls_key=str(pki.key("server"))
    )


def test_hive_client_over_tls(
    classpath: str, pki: Pki, tls_server: RunningServer, db_name: str
) -> None:
    if not pki.truststore.exists():
        pytest.fail("keytool (from the JDK) did not make the truststore")
    status, lines = run_java(
        classpath, "tls", tls_server.port, f"truststore={pki.truststore}",
        f"truststorePassword={TRUSTSTORE_PASSWORD}", f"create:{db_name}", f"get:{db_name}",
        f"drop:{db_name}",
    )  # fmt: skip
    assert (status, lines) == (
        0,
        [f"OK create:{db_name}", f"OK get:{db_name}", f"OK drop:{db_name}"],
    )


def test_plain_hive_client_on_the_tls_port_is_refused(
    classpath: str, tls_server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    status, lines = run_java(classpath, "plain", tls_server.port, "list")
    assert status == 2, lines
    assert "TLS handshake failed" in caplog.text
