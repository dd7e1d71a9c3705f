"""The client of the job and of the CLI for any Hive Metastore (colstats or HMS): the
generated Thrift code over a connection as metastore.job.connection describes it (several
URIs, Kerberos or TLS), with failover and retries, and the metastore's answers as the job's
own exceptions.

As Hive's client does, it tries the URIs in order (or shuffled once) until one connects,
sends `set_ugi(user, groups)` right after connecting when Kerberos is off (the user is
Hadoop's HADOOP_USER_NAME, else this process's user), and on a lost connection goes on with
the next URI. Every exception comes out as a metastore.job.errors.MetastoreError: the
generated Thrift exceptions are frozen, and never leave this module.
"""

from __future__ import annotations

import grp
import logging
import os
import pwd
import random
import socket
import ssl
import time
from typing import TYPE_CHECKING, Any

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.protocol.TProtocol import TProtocolException
from thrift.Thrift import TApplicationException, TException
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.job.connection import Connection, Tls, address
from metastore.job.errors import (
    MetastoreCallFailed,
    MetastoreRefused,
    MetastoreUnreachable,
    NoSuchObject,
    OptionsError,
)

if TYPE_CHECKING:
    import gssapi

log = logging.getLogger(__name__)
RETRIES = 3
"""Calls made again after a lost connection, by default."""


class _NotConnected(Exception):
    """One URI could not be connected to: REASON in words; RETRYABLE when it may pass."""

    def __init__(self, reason: str, retryable: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


class MetastoreClient:
    """Calls a metastore; a call whose connection is lost is made again on a new connection
    (the next URI), up to RETRIES times with back-off.

    Only transport errors are retried (the statistics writes are upserts, so repeating one
    is harmless); the metastore's own answers (MetastoreRefused) reach the caller at once.
    """

    def __init__(
        self,
        connection: Connection | str,
        *,
        retries: int = RETRIES,
        timeout_s: float = 120.0,
        framed: bool = False,
    ) -> None:
        self.connection = Connection.of(connection) if isinstance(connection, str) else connection
        self.retries = retries
        self.timeout_s = timeout_s
        self.framed = framed
        self._uris = list(self.connection.uris)
        if self.connection.random_order:
            random.shuffle(self._uris)
        self._first = 0
        """The index in _uris of the URI to try first: the one connected to, or the next."""
        self._tls = _tls_context(self.connection.tls) if self.connection.tls else None
        self._credentials: gssapi.Credentials | None = None
        self._transport: TTransport.TTransportBase | None = None
        self._client: ThriftHiveMetastore.Client | None = None

    @property
    def uri(self) -> str:
        """The URI connected to (or to be tried first), for messages."""
        return self._uris[self._first]

    def call(self, method: str, *args: Any) -> Any:
        """The result of METHOD(*ARGS), retried with back-off on transport errors."""
        for attempt in range(self.retries + 1):
            try:
                client = self._connect()
            except MetastoreUnreachable as e:
                if attempt == self.retries or not e.retryable:
                    raise
                self._wait(attempt, method, str(e))
                continue
            try:
                return getattr(client, method)(*args)
            except (TTransport.TTransportException, OSError) as e:
                uri = self.uri
                self._lost()
                if attempt == self.retries:
                    raise MetastoreCallFailed(uri, method, _detail(e)) from e
                self._wait(attempt, method, f"{uri}: {_detail(e)}")
            except (TApplicationException, TProtocolException) as e:
                uri = self.uri
                self.close()
                raise MetastoreCallFailed(uri, method, _detail(e)) from e
            except TException as e:
                raise _refused(method, e) from e
        raise AssertionError("unreachable")  # the loop returns or raises

    def _wait(self, attempt: int, method: str, why: str) -> None:
        delay = 0.5 * 2**attempt
        log.warning("%s failed (%s); retrying in %.1f s", method, why, delay)
        time.sleep(delay)

    def _lost(self) -> None:
        """The connection broke: closed, and the next URI first on the next call."""
        self.close()
        self._first = (self._first + 1) % len(self._uris)

    def _connect(self) -> ThriftHiveMetastore.Client:
        """The client of the connection, made when there is none: each URI in turn from
        the first, the first that connects kept; MetastoreUnreachable when none does."""
        if self._client is not None:
            return self._client
        failures: list[tuple[str, str]] = []
        retryable = False
        for step in range(len(self._uris)):
            index = (self._first + step) % len(self._uris)
            uri = self._uris[index]
            try:
                self._client = self._open(uri)
            except _NotConnected as e:
                log.debug("cannot connect to %s: %s", uri, e.reason)
                failures.append((uri, e.reason))
                retryable = retryable or e.retryable
                continue
            self._first = index
            return self._client
        raise MetastoreUnreachable(failures, retryable)

    def _open(self, uri: str) -> ThriftHiveMetastore.Client:
        host, port = address(uri)
        try:
            sock = socket.create_connection((host, port), timeout=self.timeout_s)
        except socket.gaierror:
            raise _NotConnected("unknown host", retryable=False) from None
        except ConnectionRefusedError:
            raise _NotConnected(
                "connection refused (is `metastore serve` running there, and is the port right?)",
                retryable=True,
            ) from None
        except OSError as e:
            raise _NotConnected(_detail(e), retryable=True) from None
        try:
            transport = self._secured(sock, host, port)
        except BaseException:
            sock.close()
            raise
        client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(transport))
        if self.connection.kerberos is None:
            try:
                _set_ugi(client, host, port)
            except BaseException:
                transport.close()
                raise
        self._transport = transport
        return client

    def _secured(self, sock: socket.socket, host: str, port: int) -> TTransport.TTransportBase:
        """The transport over SOCK (to HOST:PORT) as the connection's security says."""
        if self._tls is not None:
            try:
                sock = self._tls.wrap_socket(sock, server_hostname=host)
            except ssl.SSLCertVerificationError as e:
                raise _NotConnected(
                    f"TLS: its certificate is not trusted ({e.verify_message}): check "
                    "--tls-ca (or hive.metastore.truststore.path)",
                    retryable=False,
                ) from None
            except (ssl.SSLError, OSError) as e:
                raise _NotConnected(
                    f"TLS: the handshake failed ({_detail(e)}): does the metastore serve TLS "
                    "there, and does it take this client's certificate?",
                    retryable=False,
                ) from None
        thrift_socket = TSocket.TSocket(host, port)
        thrift_socket.handle = sock
        kerberos = self.connection.kerberos
        if kerberos is None:
            if self.framed:
                return TTransport.TFramedTransport(thrift_socket)
            return TTransport.TBufferedTransport(thrift_socket)
        from metastore.job import sasl_client  # the gssapi package: only with Kerberos

        try:
            if self._credentials is None:
                self._credentials = sasl_client.credentials(kerberos)
            transport = sasl_client.SaslClientTransport(
                thrift_socket, kerberos.service_for(host), self._credentials, kerberos.qops
            )
            transport.open()
        except sasl_client.KerberosError as e:
            raise _NotConnected(f"Kerberos: {e}", retryable=False) from None
        except (TTransport.TTransportException, OSError) as e:
            raise _NotConnected(
                f"Kerberos: the negotiation broke off ({_detail(e)}): does the metastore take "
                "Kerberos there?",
                retryable=False,
            ) from None
        return transport

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        self._transport = self._client = None

    def __enter__(self) -> MetastoreClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tls_context(tls: Tls) -> ssl.SSLContext:
    """The client's TLS context: TLS 1.2 or newer, the server checked against the CA (or
    the system's) and its host name, with the client certificate when there is one."""
    try:
        context = ssl.create_default_context(cafile=tls.ca)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if tls.cert is not None:
            context.load_cert_chain(tls.cert, tls.key)
    except (ssl.SSLError, OSError) as e:
        which = "--tls-cert and --tls-key" if tls.cert else "--tls-ca"
        raise OptionsError(f"{which}: cannot load the certificate ({_detail(e)})") from None
    return context


def _set_ugi(client: ThriftHiveMetastore.Client, host: str, port: int) -> None:
    """Say who calls, as Hive's client does when SASL is off; the metastore's refusal is
    only logged (as Hive's). A connection that breaks on it is no metastore's (HOST:PORT)."""
    user = login_user()
    groups = local_groups(user)
    try:
        client.set_ugi(user, groups)
    except (TTransport.TTransportException, TProtocolException, OSError) as e:
        if isinstance(getattr(e, "inner", e), ssl.SSLError):  # TLS 1.3 refuses after the handshake
            raise _NotConnected(
                f"TLS: the metastore ended the connection ({_detail(e)}): does it require a "
                "client certificate (--tls-cert, --tls-key) of a CA it trusts?",
                retryable=False,
            ) from None
        raise _NotConnected(
            f"it does not answer as a Hive Metastore ({_detail(e)}); is {host}:{port} its "
            "Thrift port (9083 by default), and does it require Kerberos or TLS?",
            retryable=_transient(e),
        ) from None
    except TException as e:
        log.debug("set_ugi(%s) failed: %s", user, _detail(e))


def login_user() -> str:
    """The user a Hadoop client is: HADOOP_USER_NAME when set, else this process's user."""
    named = os.environ.get("HADOOP_USER_NAME", "").strip()
    if named:
        return named
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def local_groups(user: str) -> list[str]:
    """USER's groups on this host, primary first (as Hadoop's default group mapping); none
    for a user this host does not know."""
    try:
        primary = pwd.getpwnam(user).pw_gid
    except KeyError:
        return []
    names = []
    for gid in [primary, *os.getgrouplist(user, primary)]:
        try:
            name = grp.getgrgid(gid).gr_name
        except KeyError:
            name = str(gid)
        if name not in names:
            names.append(name)
    return names


def _refused(method: str, error: TException) -> MetastoreRefused:
    """The job's exception for a declared exception of the IDL (frozen, with a message)."""
    kind = type(error).__name__
    reason = getattr(error, "message", None)
    if isinstance(error, t.NoSuchObjectException):
        return NoSuchObject(method, kind, reason)
    return MetastoreRefused(method, kind, reason)


def _transient(error: BaseException) -> bool:
    """Whether ERROR may pass: a connection closed or cut (a server restarting, or at its
    limit of connections), not an answer in another protocol."""
    if isinstance(error, TTransport.TTransportException):
        inner = getattr(error, "inner", None)
        return error.type in (
            TTransport.TTransportException.END_OF_FILE,
            TTransport.TTransportException.TIMED_OUT,
        ) or isinstance(inner, OSError)
    return isinstance(error, OSError)


def _detail(error: BaseException) -> str:
    """ERROR in a few words: a socket's reason in lower case, else its first line."""
    inner = getattr(error, "inner", None)
    if isinstance(inner, BaseException):
        error = inner
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror.lower()
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
