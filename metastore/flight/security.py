"""Security of the Flight port: TLS when the server has a certificate, and a bearer token.

* TLS: with `tls_cert` and `tls_key` set (the Thrift port's settings; whatever its mode),
  the Flight port speaks TLS only (`grpc+tls://`); DuckDB trusts the certificate's CA
  through gRPC's usual roots (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH) or `tls_root_certs`.
* Bearer token: with `flight_token` set, every call must carry `authorization: Bearer
  <token>` (DuckDB sends it from an `airport` secret whose SCOPE is the location, or
  ATTACH's auth_token), else FlightUnauthenticatedError. Tokens are compared in constant
  time. Without a token, anyone who reaches the port reads every table's metadata,
  statistics and data that this server's host can read: the server warns at start.

The middleware also records what DuckDB sends with every call (its user agent, catalog
header, client session) for the handlers: `Caller`.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow.flight as flight

MIDDLEWARE = "caller"

LEGACY_USER_AGENT = "airport/20240820"
"""The user agent of DuckDB 1.2's Airport, which reads the older msgpack statistics."""


class Caller(flight.ServerMiddleware):  # type: ignore[misc]
    """What a call's headers say of its caller."""

    def __init__(self, user_agent: str, catalog: str | None, session: str | None) -> None:
        super().__init__()
        self.user_agent = user_agent
        self.catalog = catalog
        self.session = session

    @property
    def legacy(self) -> bool:
        """Whether the caller is DuckDB 1.2's Airport (the msgpack statistics)."""
        return self.user_agent == LEGACY_USER_AGENT


def _first(headers: Mapping[str, Sequence[Any]], name: str) -> str | None:
    values = headers.get(name) or ()
    for value in values:
        return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
    return None


class CallerFactory(flight.ServerMiddlewareFactory):  # type: ignore[misc]
    """Checks the bearer token (when one is set) and records the caller of every call."""

    def __init__(self, token: str | None) -> None:
        super().__init__()
        self._expected = f"Bearer {token}".encode() if token else None

    def start_call(self, info: Any, headers: Mapping[str, Sequence[Any]]) -> Caller:
        if self._expected is not None:
            given = (_first(headers, "authorization") or "").encode()
            if not hmac.compare_digest(given, self._expected):
                raise flight.FlightUnauthenticatedError(
                    "this colstats Flight service needs a bearer token: in DuckDB, CREATE "
                    "SECRET (TYPE airport, auth_token '...', SCOPE 'grpc://host:port')"
                    if not given
                    else "the bearer token is not this colstats Flight service's"
                )
        return Caller(
            user_agent=_first(headers, "airport-user-agent") or "",
            catalog=_first(headers, "airport-catalog"),
            session=_first(headers, "airport-client-session-id"),
        )


def tls_certificates(cert: str | None, key: str | None) -> list[flight.CertKeyPair]:
    """The server's certificate and key for the Flight port (none without them); OSError
    when a file cannot be read."""
    if not (cert and key):
        return []
    with open(cert, "rb") as c, open(key, "rb") as k:
        return [flight.CertKeyPair(cert=c.read(), key=k.read())]
