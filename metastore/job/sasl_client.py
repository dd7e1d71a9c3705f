"""Kerberos for the metastore client: the client side of Thrift's SASL transport with the
GSSAPI mechanism (RFC 4752), as Hive's client speaks it with
hive.metastore.sasl.enabled=true, on the gssapi package (metastore.hms.sasl is the server's
side, and describes the frames):

    C: START "GSSAPI"
    C: OK <AP-REQ>
    S: OK <AP-REP>                               mutual authentication
    C: OK <empty>
    S: OK wrap([layers u8, max buffer u24])      the protections the metastore offers
    C: OK wrap([layer u8, max buffer u24])       the first of the client's it offers
    S: COMPLETE

then each message in a data frame: length (u32) and payload, wrapped by GSSAPI (signed,
and with auth-conf encrypted) unless the protection is "auth".
"""

from __future__ import annotations

import struct
import uuid
from io import BytesIO

import gssapi
from gssapi.raw.misc import GSSError
from thrift.transport.TTransport import CReadableTransport, TTransportBase

from metastore.job.connection import Kerberos

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
_HEADER = struct.Struct(">BI")
_LENGTH = struct.Struct(">I")
_LAYER_BITS = {"auth": 1, "auth-int": 2, "auth-conf": 4}
_MAX_BUFFER = 0xFFFFFF
_MAX_NEGOTIATION_FRAME = 1 << 20
_FLAGS = (
    gssapi.RequirementFlag.mutual_authentication
    | gssapi.RequirementFlag.out_of_sequence_detection
    | gssapi.RequirementFlag.integrity
    | gssapi.RequirementFlag.confidentiality
)


class KerberosError(Exception):
    """Kerberos failed: no credentials, a ticket refused, no protection in common; the
    message says why in one line."""


def gss_message(error: GSSError) -> str:
    """The most specific words of a GSSAPI error: Kerberos's own (the minor status) when it
    says something, else GSSAPI's."""
    minor = error.get_all_statuses(error.min_code, False) if error.min_code else []
    words = [str(m) for m in minor if m] or [
        str(m) for m in error.get_all_statuses(error.maj_code, True)
    ]
    return "; ".join(words)


def credentials(kerberos: Kerberos) -> gssapi.Credentials:
    """The user's credentials: from the keytab as the principal (with a ticket cache of
    this process's memory, never the user's), else the principal's (or the default
    principal's) in the ticket cache ($KRB5CCNAME, as kinit left it)."""
    name = (
        gssapi.Name(kerberos.principal, gssapi.NameType.kerberos_principal)
        if kerberos.principal
        else None
    )
    try:
        if kerberos.keytab is not None:
            return gssapi.Credentials(
                name=name,
                usage="initiate",
                mechs=[gssapi.MechType.kerberos],
                store={
                    "client_keytab": kerberos.keytab,
                    "ccache": f"MEMORY:colstats-{uuid.uuid4().hex}",
                },
            )
        return gssapi.Credentials(name=name, usage="initiate", mechs=[gssapi.MechType.kerberos])
    except GSSError as e:
        hint = (
            f"check --keytab {kerberos.keytab} and --principal"
            if kerberos.keytab
            else "run kinit, or give --keytab and --principal"
        )
        raise KerberosError(f"{gss_message(e)} ({hint})") from None


class SaslClientTransport(TTransportBase, CReadableTransport):  # type: ignore[misc]
    """Thrift's SASL transport with GSSAPI over SOCKET (connected), authenticating to the
    service principal SERVICE with CREDENTIALS and the first protection of QOPS the server
    offers. `open()` negotiates; KerberosError when that fails."""

    def __init__(
        self,
        socket: TTransportBase,
        service: str,
        credentials: gssapi.Credentials,
        qops: tuple[str, ...],
    ) -> None:
        self._socket = socket
        self._service = gssapi.Name(service, gssapi.NameType.kerberos_principal)
        self._credentials = credentials
        self._qops = qops
        self._context: gssapi.SecurityContext | None = None
        self.qop: str | None = None
        self._write_buffer = BytesIO()
        self._read_buffer = BytesIO()

    def isOpen(self) -> bool:
        return self.qop is not None and bool(self._socket.isOpen())

    def open(self) -> None:
        context = gssapi.SecurityContext(
            name=self._service,
            creds=self._credentials,
            usage="initiate",
            mech=gssapi.MechType.kerberos,
            flags=_FLAGS,
        )
        self._context = context
        try:
            self._send(START, b"GSSAPI")
            self._send(OK, context.step() or b"")
            while not context.complete:
                self._send(OK, context.step(self._receive(OK)) or b"")
            self._send(OK, self._choose_layer(context.unwrap(self._receive(OK)).message))
            self._receive(COMPLETE)
        except GSSError as e:
            message, service = gss_message(e), str(self._service)
            raise KerberosError(
                message if service in message else f"{message} (asking for {service})"
            ) from None

    def _choose_layer(self, offer: bytes) -> bytes:
        """The answer to the server's offer of protections: the first of the client's it
        offers, wrapped (integrity only, as RFC 4752 says)."""
        assert self._context is not None
        if len(offer) != 4:
            raise KerberosError("the metastore's offer of protections is malformed")
        (word,) = _LENGTH.unpack(offer)
        offered = [qop for qop, bit in _LAYER_BITS.items() if word >> 24 & bit]
        chosen = next((qop for qop in self._qops if qop in offered), None)
        if chosen is None:
            raise KerberosError(
                f"no protection in common: the metastore offers {', '.join(offered)}, this "
                f"client accepts {', '.join(self._qops)} (hadoop.rpc.protection, or "
                "--kerberos-qop)"
            )
        self.qop = chosen
        max_buffer = 0 if chosen == "auth" else _MAX_BUFFER
        answer = _LENGTH.pack(_LAYER_BITS[chosen] << 24 | max_buffer)
        return bytes(self._context.wrap(answer, False).message)

    def _send(self, status: int, payload: bytes) -> None:
        self._socket.write(_HEADER.pack(status, len(payload)) + payload)
        self._socket.flush()

    def _receive(self, expected: int) -> bytes:
        status, length = _HEADER.unpack(self._socket.readAll(_HEADER.size))
        if length > _MAX_NEGOTIATION_FRAME:
            raise KerberosError(f"a negotiation frame of {length} bytes: is this a metastore?")
        payload = bytes(self._socket.readAll(length)) if length else b""
        if status in (BAD, ERROR):
            text = payload.decode("utf-8", "replace")
            raise KerberosError(f"the metastore refused the authentication: {text}")
        if status != expected:
            raise KerberosError(f"the metastore negotiated out of order (status {status})")
        return payload

    def write(self, buf: bytes) -> None:
        self._write_buffer.write(buf)

    def flush(self) -> None:
        data = self._write_buffer.getvalue()
        self._write_buffer = BytesIO()
        if self.qop != "auth":
            assert self._context is not None
            data = self._context.wrap(data, self.qop == "auth-conf").message
        self._socket.write(_LENGTH.pack(len(data)) + data)
        self._socket.flush()

    def read(self, sz: int) -> bytes:
        got = self._read_buffer.read(sz)
        if got:
            return got
        self._read_frame()
        return self._read_buffer.read(sz)

    def _read_frame(self) -> None:
        (length,) = _LENGTH.unpack(self._socket.readAll(_LENGTH.size))
        data = bytes(self._socket.readAll(length))
        if self.qop != "auth":
            assert self._context is not None
            data = bytes(self._context.unwrap(data).message)
        self._read_buffer = BytesIO(data)

    def close(self) -> None:
        self._socket.close()

    # The accelerated binary protocol reads through these (as thrift's own SASL transport).
    @property
    def cstringio_buf(self) -> BytesIO:
        return self._read_buffer

    def cstringio_refill(self, partialread: bytes, reqlen: int) -> BytesIO:
        while len(partialread) < reqlen:
            self._read_frame()
            partialread += self._read_buffer.getvalue()
        self._read_buffer = BytesIO(partialread)
        return self._read_buffer
