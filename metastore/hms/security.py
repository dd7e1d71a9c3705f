"""The security mode of the Thrift port, built from the settings: what each new connection
needs before its first call, and how its caller is identified.

* plain: nothing; the caller is whatever it claims (no authentication, no encryption).
* kerberos: SASL GSSAPI (metastore.hms.sasl); the caller is the ticket's principal.
* tls: a TLS handshake (metastore.hms.tls); the caller is the client certificate's subject when
  client certificates are required, else whatever it claims.

Hive's clients never combine SASL and TLS (with hive.metastore.sasl.enabled the client ignores
hive.metastore.use.SSL), so one listener serves one mode; a second mode is a second
`metastore serve` on another port over the same database.
"""

from __future__ import annotations

import dataclasses
import ssl
from typing import TYPE_CHECKING

from metastore.access import ConnectionContext
from metastore.config import Settings, SettingsError
from metastore.hms.tls import server_context, subject_of
from metastore.hms.wire import Codec, FramedCodec, Limits, UnframedCodec

if TYPE_CHECKING:
    import gssapi

    from metastore.hms.sasl import SaslServer


@dataclasses.dataclass(frozen=True)
class Security:
    mode: str = "plain"
    authentication: bool = False
    tls: ssl.SSLContext | None = None
    kerberos: gssapi.Credentials | None = None
    qops: tuple[str, ...] = ()
    realm: str = ""
    framed: bool = False

    def codec(self, limits: Limits) -> Codec:
        """The codec of a new connection."""
        if self.kerberos is not None:
            from metastore.hms.sasl import SaslCodec, SaslServer

            return SaslCodec(SaslServer(self.kerberos, self.qops), limits)
        return FramedCodec(limits) if self.framed else UnframedCodec(limits)

    def tls_established(self, context: ConnectionContext, sock: ssl.SSLSocket) -> None:
        """Record the client certificate's subject once the handshake is done."""
        certificate = sock.getpeercert() if self.authentication else None
        if certificate:
            subject, common_name = subject_of(certificate)
            context.authenticate("tls", subject, common_name or subject, sock.version() or "")

    def kerberos_established(self, context: ConnectionContext, server: SaslServer) -> None:
        from metastore.hms.sasl import short_name

        assert server.principal is not None
        user = short_name(server.principal, self.realm)
        context.authenticate("kerberos", server.principal, user, server.qop or "")


def build(settings: Settings) -> Security:
    """The Security of SETTINGS; SettingsError when its files cannot be used."""
    settings.check()
    if settings.security == "tls":
        assert settings.tls_cert and settings.tls_key
        try:
            context = server_context(settings.tls_cert, settings.tls_key, settings.tls_client_ca)
        except (OSError, ssl.SSLError) as e:
            raise SettingsError(f"cannot use the TLS certificate, key or client CA: {e}") from None
        return Security("tls", settings.authentication, tls=context, framed=settings.framed)
    if settings.security == "kerberos":
        if settings.framed:
            raise SettingsError("security = kerberos has its own frames; turn framed off")
        return _kerberos(settings)
    return Security(framed=settings.framed)


def _kerberos(settings: Settings) -> Security:
    try:
        from gssapi.raw.misc import GSSError

        from metastore.hms import sasl
    except ImportError as e:
        raise SettingsError(
            f"security = kerberos needs the gssapi package (pip install 'colstats[kerberos]'): {e}"
        ) from None
    assert settings.kerberos_keytab
    try:
        qops = sasl.parse_qop(settings.kerberos_qop)
    except ValueError as e:
        raise SettingsError(f"kerberos_qop: {e}") from None
    principal = sasl.service_principal(settings.kerberos_principal)
    try:
        with open(settings.kerberos_keytab, "rb"):
            pass
        credentials = sasl.acceptor_credentials(settings.kerberos_keytab, principal)
        realm = sasl.local_realm(principal)
    except OSError as e:
        raise SettingsError(f"cannot read the keytab {settings.kerberos_keytab}: {e}") from None
    except GSSError as e:
        raise SettingsError(
            f"no Kerberos key for {principal or 'any principal'} in "
            f"{settings.kerberos_keytab}: {e.gen_message()}"
        ) from None
    return Security("kerberos", True, kerberos=credentials, qops=qops, realm=realm)
