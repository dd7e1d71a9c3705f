"""TLS on the Thrift port, as Hive 2.3's client speaks it with hive.metastore.use.SSL=true:
TLS 1.2 or newer around the usual unframed binary protocol.

Hive's client cannot present a certificate, so TLS alone encrypts without telling who calls
(the caller is then whatever it claims, as with plain text). With a client CA configured,
the server requires a certificate signed by it (mutual TLS, for Python and other clients
that can present one), and the certificate's subject authenticates the caller.
"""

from __future__ import annotations

import ssl
from typing import Any


def server_context(cert: str, key: str, client_ca: str | None) -> ssl.SSLContext:
    """The server's TLS context; ssl.SSLError or OSError for an unusable file."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    if client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cafile=client_ca)
    return context


def subject_of(certificate: dict[str, Any]) -> tuple[str, str | None]:
    """The subject of a peer certificate (as getpeercert() gives it) as "CN=alice,O=Example"
    and its common name."""
    parts = []
    common_name = None
    for rdn in certificate.get("subject", ()):
        for key, value in rdn:
            short = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU"}
            parts.append(f"{short.get(key, key)}={value}")
            if key == "commonName" and common_name is None:
                common_name = value
    return ",".join(parts), common_name
