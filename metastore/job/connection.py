"""How the job and the CLI reach a metastore: its URIs and the order they are tried in, and
whether through Kerberos or TLS.

`connection()` takes the command's options and, for what they leave unset, Hive's settings
as Hive's client reads them (metastore.job.settings: `core-site.xml`, `hive-site.xml`,
Spark's `spark.hadoop.*`), under their Hive 2/3 and Hive 4 names:

| setting | what it gives |
|---|---|
| `hive.metastore.uris`, `metastore.thrift.uris` | the URIs, comma-separated |
| `hive.metastore.uri.selection`, `metastore.thrift.uri.selection` | SEQUENTIAL or RANDOM |
| `hive.metastore.sasl.enabled`, `metastore.sasl.enabled` | Kerberos (SASL GSSAPI) |
| `hive.metastore.kerberos.principal`, `metastore.kerberos.principal` | the metastore's principal |
| `hadoop.rpc.protection` | the protections the client accepts, by preference |
| `hive.metastore.use.SSL`, `metastore.use.SSL` | TLS (ignored with SASL on, as Hive does) |
| `hive.metastore.truststore.path`, `metastore.truststore.path` | the CA, when a PEM file |

and Spark's `spark.kerberos.principal` and `spark.kerberos.keytab` (spark-submit's
`--principal` and `--keytab`) for the user's own credentials.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from urllib.parse import urlparse

from metastore.job.errors import OptionsError

DEFAULT_PORT = 9083
DEFAULT_URI = f"thrift://localhost:{DEFAULT_PORT}"
SELECTIONS = ("sequential", "random")

# Hive 4 reads each setting under its metastore.* name first, then its hive.* one.
URIS = ("metastore.thrift.uris", "hive.metastore.uris")
SELECTION = ("metastore.thrift.uri.selection", "hive.metastore.uri.selection")
SASL = ("metastore.sasl.enabled", "hive.metastore.sasl.enabled")
SERVICE_PRINCIPAL = ("metastore.kerberos.principal", "hive.metastore.kerberos.principal")
USE_SSL = ("metastore.use.SSL", "hive.metastore.use.SSL")
TRUSTSTORE = ("metastore.truststore.path", "hive.metastore.truststore.path")
PROTECTION = ("hadoop.rpc.protection",)

# SASL's names of the protections, and Hadoop's (hadoop.rpc.protection).
QOPS = ("auth", "auth-int", "auth-conf")
_HADOOP_QOPS = {"authentication": "auth", "integrity": "auth-int", "privacy": "auth-conf"}


def parse_uris(text: str) -> tuple[str, ...]:
    """The URIs of 'thrift://a:9083,thrift://b:9083' (a port of 9083 when absent); an
    OptionsError names one that is not of the form thrift://HOST:PORT."""
    uris = tuple(part.strip() for part in text.split(",") if part.strip())
    if not uris:
        raise OptionsError(f"metastore URI {text!r} is not of the form thrift://HOST:PORT")
    for uri in uris:
        address(uri)
    return uris


def address(uri: str) -> tuple[str, int]:
    """(host, port) of thrift://HOST:PORT (port 9083 when absent); an OptionsError when URI
    is not of that form."""
    parsed = urlparse(uri)
    try:
        port = parsed.port
    except ValueError:
        port = -1
    if parsed.scheme != "thrift" or not parsed.hostname or port == -1:
        raise OptionsError(f"metastore URI {uri!r} is not of the form thrift://HOST:PORT")
    return parsed.hostname, port or DEFAULT_PORT


def parse_qops(text: str, where: str) -> tuple[str, ...]:
    """The protections of "auth-conf,auth" or Hadoop's "privacy,authentication", in order;
    an OptionsError (naming WHERE the text came from) for an unknown one."""
    qops: list[str] = []
    for item in text.replace(" ", "").lower().split(","):
        qop = _HADOOP_QOPS.get(item, item)
        if qop not in QOPS:
            raise OptionsError(
                f"{where}: unknown protection {item!r}; use authentication, integrity or "
                "privacy (or auth, auth-int, auth-conf), comma-separated"
            )
        if qop not in qops:
            qops.append(qop)
    return tuple(qops)


@dataclasses.dataclass(frozen=True)
class Kerberos:
    """SASL GSSAPI with the metastore's SERVICE_PRINCIPAL; the user's credentials from
    KEYTAB as PRINCIPAL, else PRINCIPAL's (or the default one's) in the ticket cache."""

    service_principal: str
    """As hive.metastore.kerberos.principal: hive/_HOST@REALM, _HOST the URI's host."""
    qops: tuple[str, ...] = ("auth",)
    """The protections accepted, by preference (hadoop.rpc.protection: authentication)."""
    principal: str | None = None
    keytab: str | None = None

    def service_for(self, host: str) -> str:
        """The metastore's principal at HOST: `_HOST` replaced with HOST in lower case, as
        Hive's client replaces it (with the host of the URI, an IP address included)."""
        return self.service_principal.replace("_HOST", host.lower())


@dataclasses.dataclass(frozen=True)
class Tls:
    """TLS, the server's certificate checked against CA (None: the system's CAs); with
    CERT (and KEY, unless CERT holds it), a client certificate."""

    ca: str | None = None
    cert: str | None = None
    key: str | None = None


@dataclasses.dataclass(frozen=True)
class Connection:
    """A metastore's URIs, tried in order (RANDOM_ORDER: shuffled once per client), and the
    security of its port: Kerberos, TLS or neither (never both, as in Hive's clients)."""

    uris: tuple[str, ...]
    random_order: bool = False
    kerberos: Kerberos | None = None
    tls: Tls | None = None

    def __post_init__(self) -> None:
        if not self.uris:
            raise OptionsError("no metastore URI given")
        if self.kerberos is not None and self.tls is not None:
            raise OptionsError(_BOTH)

    @classmethod
    def of(cls, uri: str) -> Connection:
        """The plain connection to the URIs of URI (comma-separated), in order."""
        return cls(parse_uris(uri))

    @property
    def uri(self) -> str:
        return ",".join(self.uris)


_BOTH = (
    "give Kerberos or TLS, not both: a metastore port serves one of them, and Hive's clients "
    "never combine them"
)


@dataclasses.dataclass(frozen=True)
class Given:
    """What the command's options say of the connection; None where they say nothing."""

    uri: str | None = None
    uri_selection: str | None = None
    kerberos_principal: str | None = None
    kerberos_qop: str | None = None
    principal: str | None = None
    keytab: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None


def connection(
    given: Given, hadoop: Mapping[str, str], spark: Mapping[str, str] | None = None
) -> Connection:
    """The connection GIVEN describes, completed from HADOOP (Hive's and Hadoop's settings)
    and SPARK (Spark's, for the user's Kerberos credentials) as the module says. The
    options choose the security when they name one (--kerberos-principal: Kerberos; a
    --tls-* option: TLS), the settings otherwise (SASL wins over TLS, as in Hive's client).
    OptionsError for options and settings that do not fit together or name missing files."""
    spark = spark or {}
    uris = parse_uris(given.uri or _setting(hadoop, URIS) or DEFAULT_URI)
    selection = (given.uri_selection or _setting(hadoop, SELECTION) or "sequential").lower()
    if selection not in SELECTIONS:
        raise OptionsError(f"unknown URI selection {selection!r}; use sequential or random")
    wants_kerberos = given.kerberos_principal is not None
    wants_tls = any(v is not None for v in (given.tls_ca, given.tls_cert, given.tls_key))
    if wants_kerberos and wants_tls:
        raise OptionsError(_BOTH)
    kerberos = tls = None
    if wants_kerberos or (not wants_tls and _flag(hadoop, SASL)):
        kerberos = _kerberos(given, hadoop, spark)
    else:
        for name, value in (
            ("--principal", given.principal),
            ("--keytab", given.keytab),
            ("--kerberos-qop", given.kerberos_qop),
        ):
            if value is not None:
                raise OptionsError(
                    f"{name} applies to Kerberos: give the metastore's principal too, with "
                    "--kerberos-principal (or hive.metastore.sasl.enabled and "
                    "hive.metastore.kerberos.principal in hive-site.xml)"
                )
        if wants_tls or _flag(hadoop, USE_SSL):
            tls = _tls(given, hadoop)
    return Connection(uris, selection == "random", kerberos, tls)


def _kerberos(given: Given, hadoop: Mapping[str, str], spark: Mapping[str, str]) -> Kerberos:
    service = given.kerberos_principal or _setting(hadoop, SERVICE_PRINCIPAL)
    if not service:
        raise OptionsError(
            "hive.metastore.sasl.enabled is true but no metastore principal is set: give "
            "--kerberos-principal (e.g. hive/_HOST@EXAMPLE.COM) or "
            "hive.metastore.kerberos.principal"
        )
    if given.kerberos_qop is not None:
        qops = parse_qops(given.kerberos_qop, "--kerberos-qop")
    else:
        qops = parse_qops(_setting(hadoop, PROTECTION) or "authentication", PROTECTION[0])
    principal = given.principal or spark.get("spark.kerberos.principal") or None
    keytab = given.keytab or spark.get("spark.kerberos.keytab") or None
    if keytab is not None:
        if principal is None:
            raise OptionsError(f"--keytab {keytab}: give the principal of its key, --principal")
        _readable(keytab, "--keytab")
    return Kerberos(service, qops, principal, keytab)


def _tls(given: Given, hadoop: Mapping[str, str]) -> Tls:
    if given.tls_key is not None and given.tls_cert is None:
        raise OptionsError("--tls-key is the key of a client certificate: give --tls-cert too")
    ca = given.tls_ca
    if ca is None:
        truststore = _setting(hadoop, TRUSTSTORE)
        if truststore:
            ca = _pem_truststore(truststore)
    for name, path in (
        ("--tls-ca", ca),
        ("--tls-cert", given.tls_cert),
        ("--tls-key", given.tls_key),
    ):
        if path is not None:
            _readable(path, name)
    return Tls(ca, given.tls_cert, given.tls_key)


def _pem_truststore(path: str) -> str:
    """PATH when it holds PEM certificates; an OptionsError for a Java keystore (JKS or
    PKCS12), which this client cannot read."""
    _readable(path, "hive.metastore.truststore.path")
    with open(path, "rb") as f:
        head = f.read(65536)
    if b"-----BEGIN CERTIFICATE-----" in head:
        return path
    raise OptionsError(
        f"hive.metastore.truststore.path {path} is a Java keystore, which this client cannot "
        "read: give the CA's certificate as PEM with --tls-ca (keytool -exportcert -rfc "
        f"-keystore {path} -alias ALIAS prints it)"
    )


def _readable(path: str, name: str) -> None:
    if not os.path.isfile(path):
        raise OptionsError(f"{name} {path}: no such file")
    if not os.access(path, os.R_OK):
        raise OptionsError(f"{name} {path}: this user may not read it")


def _setting(settings: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = settings.get(name, "").strip()
        if value:
            return value
    return None


def _flag(settings: Mapping[str, str], names: tuple[str, ...]) -> bool:
    """A boolean setting as Hadoop reads it: true in any case, anything else false."""
    return (_setting(settings, names) or "").lower() == "true"
