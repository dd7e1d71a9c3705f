"""Who is calling, and what they may change.

Identity. Each client connection has a `ConnectionContext` that the server makes current
(a contextvar) while a worker runs one of its calls, so the `call` decorator of the handler sees
who calls without the handler's methods taking an argument for it:

* Kerberos: the authenticated principal (alice@REALM) and its short name (`alice`; see
  metastore.hms.sasl.short_name);
* TLS with client certificates: the certificate's subject, and its common name as the user;
* no authentication: the user the client claims. HMS clients claim one with `set_ugi(user,
  groups)` when SASL is off. **Hook for set_ugi:** its handler calls
  `current_connection().claim(user, groups)`; the claim names the caller in the audit log and,
  only while authentication is off, for rights. With authentication on, a claim never grants
  anything. Without a claim, the user is "anonymous".

Rights. Every call needs one right: `read` (every connected caller has it), `write` (create,
alter, update statistics, add partitions), `drop` (drop_* and delete_*_statistics) or `admin`
(every right). `RIGHTS` maps each changing call to its right, in one table; a changing call
missing from it needs `admin`, the strictest, and a test fails until it is added. Who holds a
right is a setting (`writers`, `droppers`, `admins`: user names, full principals, `@group`,
or `*` for everyone); see `Policy`.
"""

from __future__ import annotations

import contextvars
import dataclasses
import enum
import grp
import os
import pwd
import threading
import time
from collections.abc import Iterable, Mapping


class Right(enum.Enum):
    READ = "read"
    WRITE = "write"
    DROP = "drop"
    ADMIN = "admin"


# The right each changing call of the IDL needs (the handler's `call(write=True)` methods).
# Calls that delegate to one of these (create_table, alter_table, drop_table, alter_partition)
# are checked as the call they delegate to.
RIGHTS: Mapping[str, Right] = {
    "create_database": Right.WRITE,
    "alter_database": Right.WRITE,
    "drop_database": Right.DROP,
    "create_table_with_environment_context": Right.WRITE,
    "alter_table_with_environment_context": Right.WRITE,
    "alter_table_req": Right.WRITE,
    "drop_table_with_environment_context": Right.DROP,
    "add_partition": Right.WRITE,
    "add_partition_with_environment_context": Right.WRITE,
    "add_partitions": Right.WRITE,
    "add_partitions_req": Right.WRITE,
    "append_partition": Right.WRITE,
    "append_partition_with_environment_context": Right.WRITE,
    "append_partition_by_name": Right.WRITE,
    "append_partition_by_name_with_environment_context": Right.WRITE,
    "alter_partitions": Right.WRITE,
    "alter_partition_with_environment_context": Right.WRITE,
    "alter_partitions_with_environment_context": Right.WRITE,
    "alter_partitions_req": Right.WRITE,
    "rename_partition": Right.WRITE,
    "drop_partition": Right.DROP,
    "drop_partition_by_name": Right.DROP,
    "drop_partition_with_environment_context": Right.DROP,
    "drop_partition_by_name_with_environment_context": Right.DROP,
    "drop_partitions_req": Right.DROP,
    "create_function": Right.WRITE,
    "alter_function": Right.WRITE,
    "drop_function": Right.DROP,
    "update_table_column_statistics": Right.WRITE,
    "update_partition_column_statistics": Right.WRITE,
    "update_table_column_statistics_req": Right.WRITE,
    "update_partition_column_statistics_req": Right.WRITE,
    "set_aggr_stats_for": Right.WRITE,
    "delete_table_column_statistics": Right.DROP,
    "delete_partition_column_statistics": Right.DROP,
    # HMS locks: taken around a write (Iceberg's commits).
    "lock": Right.WRITE,
    "check_lock": Right.WRITE,
    "unlock": Right.WRITE,
    "heartbeat": Right.WRITE,
}


def required_right(call: str, write: bool) -> Right:
    """The right CALL needs: READ for reads; for changes, the table's entry, else ADMIN."""
    if not write:
        return Right.READ
    return RIGHTS.get(call, Right.ADMIN)


ANONYMOUS = "anonymous"


@dataclasses.dataclass
class ConnectionContext:
    """One client connection as the handler sees it. The server sets PRINCIPAL and USER once
    the transport authenticated the peer; `claim` records what the client says it is."""

    peer: str
    """The client's address, "host:port"."""
    mechanism: str = "none"
    """How the peer was authenticated: "none", "kerberos" or "tls"."""
    principal: str | None = None
    """Kerberos principal or certificate subject; None when not authenticated."""
    user: str | None = None
    """The authenticated user name rights are checked for."""
    protection: str | None = None
    """Kerberos QOP or TLS version."""
    claimed_user: str | None = None
    claimed_groups: tuple[str, ...] = ()

    @property
    def authenticated(self) -> bool:
        return self.principal is not None

    def authenticate(self, mechanism: str, principal: str, user: str, protection: str) -> None:
        self.mechanism, self.principal, self.user, self.protection = (
            mechanism,
            principal,
            user,
            protection,
        )

    def claim(self, user: str, groups: Iterable[str] = ()) -> None:
        """What set_ugi says; used for rights only while authentication is off."""
        self.claimed_user = user
        self.claimed_groups = tuple(groups)

    def caller(self, authentication: bool) -> tuple[str, tuple[str, ...]]:
        """The user name and claimed groups rights are checked for."""
        if authentication:
            return self.user or ANONYMOUS, ()
        if self.claimed_user:
            return self.claimed_user, self.claimed_groups
        return self.user or ANONYMOUS, ()


_current: contextvars.ContextVar[ConnectionContext | None] = contextvars.ContextVar(
    "metastore_connection", default=None
)


def current_connection() -> ConnectionContext | None:
    """The connection whose call runs in this thread; None outside the server (a handler used
    in process)."""
    return _current.get()


def use_connection(
    connection: ConnectionContext | None,
) -> contextvars.Token[ConnectionContext | None]:
    return _current.set(connection)


def release_connection(token: contextvars.Token[ConnectionContext | None]) -> None:
    _current.reset(token)


def parse_group_mapping(text: str) -> dict[str, tuple[str, ...]]:
    """Groups per user in Hadoop's static-mapping format: "alice=etl,ops;bob=etl;carol=".
    ValueError for an entry without "="."""
    mapping: dict[str, tuple[str, ...]] = {}
    for entry in text.split(";"):
        entry = entry.strip()
        if not entry:
            continue
        user, sep, groups = entry.partition("=")
        if not sep or not user.strip():
            raise ValueError(f"group mapping entry {entry!r} is not user=group,group")
        mapping[user.strip()] = tuple(g.strip() for g in groups.split(",") if g.strip())
    return mapping


_GROUPS_CACHE_SECONDS = 300.0  # like Hadoop's hadoop.security.groups.cache.secs
_groups_cache: dict[str, tuple[float, tuple[str, ...]]] = {}
_groups_lock = threading.Lock()


def unix_groups(user: str) -> tuple[str, ...]:
    """USER's groups on this host (Hadoop's default mapping), cached for 5 minutes (a lookup
    may go to LDAP through NSS); none for an unknown user."""
    now = time.monotonic()
    with _groups_lock:
        cached = _groups_cache.get(user)
    if cached is not None and now - cached[0] < _GROUPS_CACHE_SECONDS:
        return cached[1]
    groups = _lookup_groups(user)
    with _groups_lock:
        if len(_groups_cache) > 10_000:
            _groups_cache.clear()
        _groups_cache[user] = (now, groups)
    return groups


def _lookup_groups(user: str) -> tuple[str, ...]:
    try:
        gid = pwd.getpwnam(user).pw_gid
        ids = os.getgrouplist(user, gid)
    except (KeyError, OSError):
        return ()
    names = []
    for group_id in ids:
        try:
            names.append(grp.getgrgid(group_id).gr_name)
        except KeyError:
            continue
    return tuple(names)


class Policy:
    """Who holds which right.

    WRITERS, DROPPERS, ADMINS list user names, full principals, `@group` and `*`; None means
    "not configured". When none of the three is configured, the default depends on
    AUTHENTICATION: off, everyone may do everything (as HMS without authorization; the
    caller is only what it claims); on, everyone may read and nobody may change anything (a
    server that cannot tell who may write refuses writes rather than guess). Once one is
    configured, the others that are not mean nobody (admins still hold every right).

    A user's groups are GROUP_MAPPING's entry for it when there is one, else its groups on
    this host, plus, when authentication is off, the groups the client claims.
    """

    def __init__(
        self,
        *,
        authentication: bool,
        writers: Iterable[str] | None = None,
        droppers: Iterable[str] | None = None,
        admins: Iterable[str] | None = None,
        group_mapping: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.authentication = authentication
        configured = any(x is not None for x in (writers, droppers, admins))
        default: tuple[str, ...] = () if configured or authentication else ("*",)
        self.holders: dict[Right, tuple[str, ...]] = {
            Right.WRITE: tuple(writers) if writers is not None else default,
            Right.DROP: tuple(droppers) if droppers is not None else default,
            Right.ADMIN: tuple(admins) if admins is not None else default,
        }
        self._group_mapping = dict(group_mapping or {})

    @property
    def read_only(self) -> bool:
        return not any(self.holders.values())

    def describe(self) -> str:
        """One line for the start-up log."""
        parts = [
            f"{right.value}: {', '.join(who) if who else 'nobody'}"
            for right, who in self.holders.items()
        ]
        mode = "authenticated callers" if self.authentication else "claimed identities"
        return f"rights ({mode}): read: everyone; " + "; ".join(parts)

    def groups(self, user: str, claimed: tuple[str, ...]) -> tuple[str, ...]:
        mapped = self._group_mapping.get(user)
        found = mapped if mapped is not None else unix_groups(user)
        return (*found, *claimed) if not self.authentication else found

    def allows(self, connection: ConnectionContext, right: Right) -> bool:
        if right is Right.READ:
            return True
        user, claimed = connection.caller(self.authentication)
        if self.authentication and not connection.authenticated:
            return False
        holders = self.holders[right] + (
            self.holders[Right.ADMIN] if right is not Right.ADMIN else ()
        )
        if "*" in holders:
            return True
        names = {user}
        if connection.principal:
            names.add(connection.principal)
        if names & set(holders):
            return True
        wanted = {entry[1:] for entry in holders if entry.startswith("@")}
        return bool(wanted) and bool(wanted & set(self.groups(user, claimed)))

    def refusal(self, connection: ConnectionContext, right: Right, call: str) -> str:
        """The message of the MetaException for a refused call."""
        user, _ = connection.caller(self.authentication)
        setting = {Right.WRITE: "writers", Right.DROP: "droppers", Right.ADMIN: "admins"}[right]
        granted = f"the {setting} or admins setting" if right is not Right.ADMIN else "admins"
        return (
            f"{user} lacks the {right.value} right that {call} needs "
            f"(granted by {granted} of the metastore)"
        )
