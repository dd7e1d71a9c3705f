"""Kerberos on the Thrift port: the server side of Thrift's SASL transport with the GSSAPI
mechanism (RFC 4752), which is what HMS runs with hive.metastore.sasl.enabled=true.

Wire format (libthrift's TSaslTransport, the same in Java and Python):

    negotiation frame:  status (u8), length (u32), payload
                        status START 1, OK 2, BAD 3, ERROR 4, COMPLETE 5
    data frame:         length (u32), payload (wrapped by GSSAPI unless the QOP is "auth")

The negotiation, as Hive 2.3's Java client and Python's TSaslClientTransport send it:

    C: START "GSSAPI"                     the mechanism only; the token comes next
    C: OK <AP-REQ>
    S: OK <AP-REP>                        both clients ask for mutual authentication
    C: OK <empty>
    S: OK wrap([layers u8, max buffer u24])          RFC 4752 3.1, integrity only
    C: OK or COMPLETE wrap([layer u8, max buffer u24, authzid])   Java: COMPLETE, Python: OK
    S: COMPLETE <empty>

`SaslServer` is that negotiation without I/O: the event loop cuts the frames (`SaslCodec`) and
a worker runs each GSSAPI step (which reads the keytab and writes the replay cache). Refusals
follow libthrift: BAD with a message for a failed GSSAPI step or an unknown mechanism, ERROR
for a framing violation, nothing when the peer itself reported failure (a Java client without
a ticket sends BAD "GSS initiate failed" as its first frame, never START).

Client quirks the server must accept: neither client splits what it sends to the maximum
buffer we advertise (a 300 KB request comes as one frame), so frames up to max_message_size
are read; we split our replies to the client's maximum, which both read back fine.
"""

from __future__ import annotations

import dataclasses
import socket
import struct

import gssapi
from gssapi.raw.misc import GSSError

from metastore.hms.wire import Limits, Message, Negotiation, ProtocolError, UnframedCodec

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
_STATUS_NAMES = {START: "START", OK: "OK", BAD: "BAD", ERROR: "ERROR", COMPLETE: "COMPLETE"}
_HEADER = struct.Struct(">BI")
_LENGTH = struct.Struct(">I")

# RFC 4752 security layers, by the SASL QOP names Java, pure-sasl and Hadoop use.
_LAYER_BITS = {"auth": 1, "auth-int": 2, "auth-conf": 4}
_HADOOP_NAMES = {"authentication": "auth", "integrity": "auth-int", "privacy": "auth-conf"}
_MECHANISM = b"GSSAPI"
_MAX_NEGOTIATION_FRAME = 1 << 20  # a ticket with a large PAC is tens of KB
_SERVER_MAX_BUFFER = 0xFFFFFF  # advertised; the largest 3 bytes can say


class SaslRefused(Exception):
    """The negotiation failed. REPLY_STATUS (BAD or ERROR) and the message go to the peer,
    unless REPLY_STATUS is None: the peer reported the failure itself."""

    def __init__(self, reason: str, reply_status: int | None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.reply_status = reply_status

    def reply(self) -> bytes:
        if self.reply_status is None:
            return b""
        return negotiation_frame(self.reply_status, self.reason.encode("utf-8"))


def negotiation_frame(status: int, payload: bytes) -> bytes:
    return _HEADER.pack(status, len(payload)) + payload


def parse_qop(text: str) -> tuple[str, ...]:
    """The QOPs to offer from "auth-conf", "auth,auth-conf" or Hadoop's names
    ("privacy", "authentication,privacy"); ValueError names an unknown one."""
    qops = []
    for item in text.replace(" ", "").lower().split(","):
        qop = _HADOOP_NAMES.get(item, item)
        if qop not in _LAYER_BITS:
            raise ValueError(
                f"unknown QOP {item!r}: use auth, auth-int, auth-conf (or Hadoop's "
                f"authentication, integrity, privacy), comma-separated"
            )
        if qop not in qops:
            qops.append(qop)
    return tuple(qops)


def service_principal(configured: str | None) -> str | None:
    """The principal to accept tickets for: _HOST is replaced with this host's name, lower
    case, as Hive does. None or "" accepts a ticket for any principal of the keytab."""
    if not configured:
        return None
    if "_HOST" in configured:
        return configured.replace("_HOST", socket.getfqdn().lower())
    return configured


def acceptor_credentials(keytab: str, principal: str | None) -> gssapi.Credentials:
    """Credentials of the service from KEYTAB, for the Kerberos mechanism only (SASL GSSAPI is
    raw krb5, never SPNEGO)."""
    name = gssapi.Name(principal, gssapi.NameType.kerberos_principal) if principal else None
    return gssapi.Credentials(
        name=name, usage="accept", mechs=[gssapi.MechType.kerberos], store={"keytab": keytab}
    )


def local_realm(principal: str | None) -> str:
    """The realm whose users get short names: the service principal's, else krb5.conf's
    default realm."""
    if principal and "@" in principal:
        return principal.rsplit("@", 1)[1]
    probe = gssapi.Name("probe", gssapi.NameType.kerberos_principal)
    canonical = str(probe.canonicalize(gssapi.MechType.kerberos))
    return canonical.rsplit("@", 1)[1] if "@" in canonical else ""


def short_name(principal: str, realm: str) -> str:
    """The user name of PRINCIPAL, like Hadoop's DEFAULT auth_to_local rule: in the local
    REALM, its first component (alice@R -> alice, hive/host@R -> hive); from another realm,
    the whole principal, so that a trusted realm's alice is not the local alice."""
    name, _, principal_realm = principal.rpartition("@")
    if not name:
        return principal
    if principal_realm != realm:
        return principal
    return name.split("/", 1)[0]


@dataclasses.dataclass
class _Layer:
    qop: str
    client_max_buffer: int
    send_limit: int | None = None


class SaslServer:
    """One connection's SASL GSSAPI negotiation, then its data wrapping; no I/O.

    `receive(status, payload)` takes each negotiation frame and returns the bytes to send back;
    it raises SaslRefused. Once `complete`, `principal` and `qop` say who the peer is and how
    the data is protected, and `wrap` / `unwrap` serve the data frames.
    """

    def __init__(self, credentials: gssapi.Credentials, qops: tuple[str, ...]) -> None:
        self._credentials = credentials
        self._offered = 0
        for qop in qops:
            self._offered |= _LAYER_BITS[qop]
        # RFC 4752: when only "no security layer" is offered, the maximum buffer must be 0.
        self._max_buffer = 0 if self._offered == _LAYER_BITS["auth"] else _SERVER_MAX_BUFFER
        self._context: gssapi.SecurityContext | None = None
        self._stage = "start"  # start -> token -> layer -> done
        self._layer: _Layer | None = None
        self.principal: str | None = None

    @property
    def complete(self) -> bool:
        return self._layer is not None

    @property
    def qop(self) -> str | None:
        return self._layer.qop if self._layer else None

    def receive(self, status: int, payload: bytes) -> bytes:
        if status in (BAD, ERROR):
            raise SaslRefused(
                f"the client reported a failure: {payload.decode('utf-8', 'replace')}", None
            )
        if self._stage == "start":
            if status != START:
                raise SaslRefused(f"expected START, received {_STATUS_NAMES[status]}", ERROR)
            if payload != _MECHANISM:
                mechanism = payload.decode("utf-8", "replace")
                raise SaslRefused(f"Unsupported mechanism type {mechanism}", BAD)
            self._context = gssapi.SecurityContext(creds=self._credentials, usage="accept")
            self._stage = "token"
            return b""
        if status not in (OK, COMPLETE):
            raise SaslRefused(f"expected OK or COMPLETE, received {_STATUS_NAMES[status]}", ERROR)
        if self._stage == "token":
            return self._accept(payload)
        if self._stage == "layer":
            return self._choose_layer(payload)
        raise SaslRefused("the negotiation is already complete", ERROR)

    def _accept(self, token: bytes) -> bytes:
        context = self._context
        assert context is not None
        if context.complete:
            # The client's answer to our AP-REP: an empty token.
            if token:
                raise SaslRefused("unexpected GSSAPI token after the context was established", BAD)
            return negotiation_frame(OK, self._offer())
        if not token:
            raise SaslRefused("empty GSSAPI token", BAD)
        try:
            out = context.step(token)
            # When accepting fails with an error token for the peer (krb5 makes one),
            # python-gssapi's step() returns the token and raises on the next checked
            # attribute instead: both stay inside this try.
            done = context.complete
        except GSSError as e:
            raise SaslRefused(f"GSS accept failed: {e.gen_message()}", BAD) from None
        if not done:
            return negotiation_frame(OK, out or b"")
        self.principal = str(context.initiator_name)
        if out:
            return negotiation_frame(OK, out)  # mutual authentication: the AP-REP first
        return negotiation_frame(OK, self._offer())

    def _offer(self) -> bytes:
        assert self._context is not None
        self._stage = "layer"
        offer = _LENGTH.pack((self._offered << 24) | self._max_buffer)
        return bytes(self._context.wrap(offer, False).message)

    def _choose_layer(self, wrapped: bytes) -> bytes:
        assert self._context is not None
        try:
            reply = self._context.unwrap(wrapped).message
        except GSSError as e:
            raise SaslRefused(f"GSS unwrap failed: {e.gen_message()}", BAD) from None
        if len(reply) < 4:
            raise SaslRefused("short security-layer answer", BAD)
        (word,) = _LENGTH.unpack_from(reply, 0)
        chosen, client_max = word >> 24, word & 0xFFFFFF
        qop = {bit: name for name, bit in _LAYER_BITS.items()}.get(chosen)
        if qop is None or not chosen & self._offered:
            offered = [name for name, bit in _LAYER_BITS.items() if bit & self._offered]
            raise SaslRefused(
                f"the client chose protection {chosen}; this server offers {', '.join(offered)}",
                BAD,
            )
        # Like Hadoop's SaslGssCallbackHandler: no proxying at the SASL layer. Java sends no
        # authorization id, pure-sasl sends the principal itself.
        authzid = bytes(reply[4:]).decode("utf-8", "replace")
        if authzid and authzid != self.principal:
            raise SaslRefused(f"{self.principal} may not connect as {authzid}", BAD)
        self._layer = _Layer(qop, client_max)
        self._stage = "done"
        return negotiation_frame(COMPLETE, b"")

    def wrap(self, data: bytes) -> bytes:
        """DATA as data frames, each within the client's maximum buffer."""
        layer, context = self._layer, self._context
        assert layer is not None and context is not None
        if layer.qop == "auth":
            return _LENGTH.pack(len(data)) + data
        encrypt = layer.qop == "auth-conf"
        if layer.send_limit is None and layer.client_max_buffer:
            layer.send_limit = context.get_wrap_size_limit(layer.client_max_buffer, encrypt)
        step = layer.send_limit or len(data) or 1
        frames = []
        for start in range(0, max(len(data), 1), step):
            token = context.wrap(data[start : start + step], encrypt).message
            frames.append(_LENGTH.pack(len(token)) + token)
        return b"".join(frames)

    def unwrap(self, token: bytes) -> bytes:
        layer, context = self._layer, self._context
        assert layer is not None and context is not None
        if layer.qop == "auth":
            return token
        try:
            result = context.unwrap(token)
        except GSSError as e:
            raise ProtocolError(f"a SASL data frame failed its check: {e.gen_message()}") from None
        if layer.qop == "auth-conf" and not result.encrypted:
            raise ProtocolError("a SASL data frame was not encrypted under auth-conf")
        return bytes(result.message)


class SaslCodec:
    """Cuts a Kerberos connection's bytes into negotiation frames, then (once the SaslServer
    is complete) into requests, unwrapped from the data frames."""

    def __init__(self, server: SaslServer, limits: Limits) -> None:
        self.server = server
        self._buffer = bytearray()
        self._limits = limits
        self._calls = UnframedCodec(limits)
        # Wrapping adds a few dozen bytes to a frame of the largest message allowed.
        self._max_frame = limits.max_message_size + 4096

    @property
    def pending(self) -> int:
        return len(self._buffer) + self._calls.pending

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next_message(self) -> Message | Negotiation | None:
        if not self.server.complete:
            return self._negotiation()
        while True:
            message = self._calls.next_message()
            if message is not None or len(self._buffer) < 4:
                return message
            (length,) = _LENGTH.unpack_from(self._buffer, 0)
            if length > self._max_frame:
                raise ProtocolError(
                    f"SASL frame of {length} bytes exceeds max_message_size "
                    f"({self._limits.max_message_size})"
                )
            if len(self._buffer) < 4 + length:
                return None
            token = bytes(self._buffer[4 : 4 + length])
            del self._buffer[: 4 + length]
            self._calls.feed(self.server.unwrap(token))

    def _negotiation(self) -> Negotiation | None:
        if len(self._buffer) < 5:
            return None
        status, length = _HEADER.unpack_from(self._buffer, 0)
        if status not in _STATUS_NAMES:
            reason = f"Invalid status {status}"
            hint = " (a client without SASL on the Kerberos port?)" if status == 0x80 else ""
            raise ProtocolError(
                f"not a SASL negotiation frame: {reason}{hint}",
                reply=negotiation_frame(ERROR, reason.encode()),
            )
        if length > _MAX_NEGOTIATION_FRAME:
            reason = f"SASL negotiation frame of {length} bytes is too large"
            raise ProtocolError(reason, reply=negotiation_frame(ERROR, reason.encode()))
        if len(self._buffer) < 5 + length:
            return None
        payload = bytes(self._buffer[5 : 5 + length])
        del self._buffer[: 5 + length]
        return Negotiation(status, payload)

    def encode(self, reply: bytes) -> bytes:
        return self.server.wrap(reply)
