"""The audit log: one line per changing call, to the logger `metastore.audit`, like HMS's
HiveMetaStore.audit lines:

    ugi=alice principal=alice@EXAMPLE.COM ip=10.0.0.7 cmd=drop_table_with_environment_context
    db=sales tbl=orders outcome=ok

(one line). `ugi` is the user rights were checked for; with authentication off it is the user
the client claims (set_ugi), marked `claimed=true`. `outcome` is `ok`, `refused` (no right),
`failed:<exception>` or `unknown:MetaException` (the commit's outcome is unknown). The door
names the objects (the Thrift door from the call's arguments, metastore.hms.audit_target; a
key's value runs to the next space); values with spaces, quotes,
backslashes or control characters are written as JSON strings, so a crafted name cannot
forge a line or a field.
"""

from __future__ import annotations

import json
import logging
import re

from metastore.access import ANONYMOUS, ConnectionContext

log = logging.getLogger("metastore.audit")

_PLAIN = re.compile(r"[^\s\"\\]{1,200}")
_MAX_VALUE = 200


def quote(value: object) -> str:
    text = str(value)
    if _PLAIN.fullmatch(text):
        return text
    if len(text) > _MAX_VALUE:
        text = text[:_MAX_VALUE] + "..."
    return json.dumps(text)


def record(
    connection: ConnectionContext | None, authentication: bool, call: str, what: str, outcome: str
) -> None:
    """Log the audit line of CALL on WHAT (from `target`) by CONNECTION's caller."""
    if connection is None:
        who = "ugi=(in-process) ip=-"
    else:
        user, _ = connection.caller(authentication)
        claimed = " claimed=true" if not connection.authenticated and user != ANONYMOUS else ""
        principal = f" principal={quote(connection.principal)}" if connection.principal else ""
        host = connection.peer.rsplit(":", 1)[0]
        who = f"ugi={quote(user)}{claimed}{principal} ip={quote(host)}"
    line = f"{who} cmd={call}"
    if what:
        line += f" {what}"
    log.info("%s outcome=%s", line, outcome)
