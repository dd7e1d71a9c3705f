"""Server settings: defaults, overridden by a TOML file, then by environment, then by flags.

The file is the one named by --config or METASTORE_CONFIG, with keys at the top level:

    db = "postgresql+psycopg://metastore@db/metastore"
    host = "0.0.0.0"   # every interface; the default, 127.0.0.1, is this machine only
    port = 9083
    framed = false
    workers = 100
    db_pool_size = 20
    fetch_bitvector = false
    fetch_histogram = false
    migrate = true
    warehouse = "/data/warehouse"
    log_level = "INFO"
    # Connections and limits
    max_connections = 10000
    idle_timeout = 3600.0
    request_timeout = 60.0
    max_message_size = 104857600
    max_container_size = 1000000
    # Answers served from memory (bytes; 0 turns the cache off), metrics for Prometheus
    cache_size = 268435456
    metrics_port = 9090
    # HMS locks (Iceberg's Hive catalog): seconds without a heartbeat before a lock is gone
    lock_timeout = 300.0
    # Security: "plain" (default), "kerberos" or "tls", and the keys of that mode
    security = "kerberos"
    kerberos_keytab = "/etc/security/keytabs/hive.service.keytab"
    kerberos_principal = "hive/_HOST@EXAMPLE.COM"
    kerberos_qop = "auth-conf"
    tls_cert = "/etc/colstats/server.crt"
    tls_key = "/etc/colstats/server.key"
    tls_client_ca = "/etc/colstats/clients-ca.crt"   # optional: client certificates
    # Rights (user names, principals, @group, or "*"); see metastore.access.Policy
    writers = ["etl", "@analysts"]
    droppers = ["etl"]
    admins = ["hive"]
    group_mapping = "etl=etl;alice=analysts"
    audit_log = "/var/log/colstats/audit.log"
    # Arrow Flight for DuckDB's Airport extension (off unless a port is set)
    flight_port = 8815
    flight_token = "a long random secret"   # DuckDB sends it from an airport secret
    # Object storage the Flight door scans (s3://, s3a://): Hadoop's S3A keys, as in
    # core-site.xml; credentials not given here come from AWS_ACCESS_KEY_ID, ... or the AWS
    # SDK's chain (a profile, an instance or pod role)
    [s3a]
    "fs.s3a.endpoint" = "http://minio:9000"
    "fs.s3a.path.style.access" = true
    "fs.s3a.bucket.lake.endpoint.region" = "eu-west-1"

Each key has an environment variable METASTORE_<KEY in upper case>, e.g. METASTORE_DB. Lists
are comma-separated there (METASTORE_WRITERS="etl,@analysts") and on the command line, and so
are the s3a settings (METASTORE_S3A="fs.s3a.endpoint=http://minio:9000,fs.s3a.path.style.
access=true"). The s3a settings are never logged or shown: they may hold secrets.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from pathlib import Path
from typing import Any


class SettingsError(ValueError):
    """A settings file, variable or flag that cannot be used; the message names it."""


SECURITY_MODES = ("plain", "kerberos", "tls")


def default_data_dir() -> Path:
    """Where the embedded SQLite database lives: $METASTORE_HOME, else the XDG data dir."""
    home = os.environ.get("METASTORE_HOME")
    if home:
        return Path(home)
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "colstats"


@dataclasses.dataclass(frozen=True)
class Settings:
    db: str | None = None
    """SQLAlchemy URL; None means a SQLite file in the data directory."""
    host: str = "127.0.0.1"
    """Loopback unless told otherwise: without security, whoever reaches the port may drop
    anything, so listening on a network (0.0.0.0, or one address) is a choice made explicitly."""
    port: int = 9083
    framed: bool = False
    """Framed transport; HMS and its clients use the unframed (buffered) one."""
    workers: int = 100
    """Connections served at once; HMS clients keep their connection open between calls."""
    db_pool_size: int | None = None
    """Database connections kept open, as many again opened under load; unset: the smaller
    of workers and 20. With several servers on one PostgreSQL, servers x 2 x db_pool_size
    must stay under its max_connections."""
    fetch_bitvector: bool = False
    """Return bit vectors on reads, like HMS's metastore.stats.fetch.bitvector."""
    fetch_histogram: bool = False
    """Return KLL histograms on reads, like HMS's metastore.stats.fetch.kll."""
    migrate: bool = True
    """Bring the schema to the newest revision on start."""
    warehouse: str | None = None
    """The folder of databases created without a location (and of `default`), like HMS's
    metastore.warehouse.dir; None means a folder `warehouse` in the data directory."""
    log_level: str = "INFO"

    max_connections: int = 10_000
    """Open client connections at most; a connection beyond it is closed at once."""
    idle_timeout: float = 3600.0
    """Seconds a connection may wait between calls before it is closed; 0: never."""
    request_timeout: float = 60.0
    """Seconds to receive a whole request, to finish a TLS or Kerberos handshake, and to
    write a reply."""
    max_message_size: int = 100 * 1024 * 1024
    """Largest request in bytes (HMS's hive.metastore.server.max.message.size)."""
    max_container_size: int = 1_000_000
    """Most elements in one list, set or map of a request."""
    cache_size: int = 256 * 1024 * 1024
    """Bytes the cache of answers may hold (metastore.hms.cache); 0 turns it off."""
    lock_timeout: float = 300.0
    """Seconds after which an HMS lock not heartbeated is gone (HMS's hive.txn.timeout), by
    the database's clock: how long a client that died holding a lock blocks its table."""
    metrics_port: int | None = None
    """The port of the metrics in Prometheus's text format (metastore.hms.metrics); unset:
    none."""

    security: str = "plain"
    """plain, kerberos (SASL GSSAPI) or tls."""
    kerberos_keytab: str | None = None
    kerberos_principal: str | None = None
    """The service principal, e.g. hive/_HOST@EXAMPLE.COM (_HOST: this host's name); unset:
    any principal of the keytab."""
    kerberos_qop: str = "auth-conf"
    """QOPs offered: auth, auth-int, auth-conf (or Hadoop's names), comma-separated."""
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None
    """With tls: require client certificates signed by this CA; the subject's CN is the user."""

    writers: tuple[str, ...] | None = None
    droppers: tuple[str, ...] | None = None
    admins: tuple[str, ...] | None = None
    group_mapping: str = ""
    """Groups per user, Hadoop's static mapping format: "alice=etl,ops;bob=etl"."""
    audit_log: str | None = None
    """A file for the audit lines (logger metastore.audit); unset: the server's log."""

    flight_port: int | None = None
    """Also serve Arrow Flight for DuckDB's Airport extension on this port (None: off)."""
    flight_token: str | None = None
    """The bearer token every Flight call must carry (None: none; see metastore.flight)."""
    s3a: tuple[tuple[str, str], ...] = dataclasses.field(default=(), repr=False)
    """Hadoop's S3A settings (fs.s3a.* keys and their values) with which the Flight door
    opens tables on object storage (metastore.files.object_storage); not in the repr, since
    they may hold secrets."""

    @property
    def authentication(self) -> bool:
        """Whether the transport proves who the caller is (Kerberos, or TLS client certs)."""
        return self.security == "kerberos" or (self.security == "tls" and bool(self.tls_client_ca))

    def check(self) -> None:
        """Raise SettingsError for settings that cannot work together."""
        if self.security not in SECURITY_MODES:
            raise SettingsError(
                f"security must be one of {', '.join(SECURITY_MODES)}, not {self.security!r}"
            )
        if self.security == "kerberos" and not self.kerberos_keytab:
            raise SettingsError("security = kerberos needs kerberos_keytab")
        if self.security == "tls" and not (self.tls_cert and self.tls_key):
            raise SettingsError("security = tls needs tls_cert and tls_key")
        for key in ("max_connections", "max_message_size", "max_container_size"):
            if getattr(self, key) < 1:
                raise SettingsError(f"{key} must be at least 1")
        if self.db_pool_size is not None and self.db_pool_size < 1:
            raise SettingsError("db_pool_size must be at least 1")
        if self.cache_size < 0:
            raise SettingsError("cache_size must be 0 (no cache) or more bytes")
        if self.metrics_port is not None and not 0 <= self.metrics_port <= 65535:
            raise SettingsError(f"metrics_port must be a port number, not {self.metrics_port}")
        if self.flight_port is not None and not 0 <= self.flight_port <= 65535:
            raise SettingsError(f"flight_port must be a port number, not {self.flight_port}")
        if self.flight_port is not None and self.flight_port == self.port != 0:
            raise SettingsError("flight_port must differ from port (the Thrift port)")
        if self.lock_timeout <= 0:
            raise SettingsError("lock_timeout must be more than 0 seconds")
        if self.idle_timeout < 0 or self.request_timeout <= 0:
            raise SettingsError("idle_timeout must be 0 or more, request_timeout more than 0")
        from metastore.access import parse_group_mapping

        try:
            parse_group_mapping(self.group_mapping)
        except ValueError as e:
            raise SettingsError(f"group_mapping: {e}") from None

    def database_url(self, *, create: bool = True) -> str:
        """The database's URL; the embedded default's folder is made unless CREATE is false
        (for commands that only read)."""
        if self.db:
            return self.db
        data_dir = default_data_dir()
        if create:
            data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{data_dir / 'metastore.db'}"

    def warehouse_root(self) -> str:
        return self.warehouse or str(default_data_dir() / "warehouse")


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def _coerce(key: str, value: Any, source: str) -> Any:
    """VALUE of setting KEY in the field's type; text (from the environment) is parsed."""
    kind = str(_FIELDS[key].type)
    if kind.endswith(" | None"):
        if value is None:
            return None
        kind = kind.removesuffix(" | None")
    if kind == "bool":
        if isinstance(value, bool):
            return value
        lowered = str(value).strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{source}: {key} must be true or false, not {value!r}")
    if kind in ("int", "float"):
        number = int if kind == "int" else float
        noun = "an integer" if kind == "int" else "a number"
        if isinstance(value, bool) or (kind == "int" and isinstance(value, float)):
            raise SettingsError(f"{source}: {key} must be {noun}, not {value!r}")
        try:
            return number(value)
        except (TypeError, ValueError):
            raise SettingsError(f"{source}: {key} must be {noun}, not {value!r}") from None
    if kind.startswith("tuple[tuple[str, str]"):
        return _s3a_settings(value, source)
    if kind.startswith("tuple[str"):
        if isinstance(value, str):
            return tuple(item.strip() for item in value.split(",") if item.strip())
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise SettingsError(f"{source}: {key} must be a list of names, not {value!r}")
    if value is not None and not isinstance(value, str):
        raise SettingsError(f"{source}: {key} must be text, not {value!r}")
    return value


S3A_PREFIX = "fs.s3a."


def _s3a_settings(value: Any, source: str) -> tuple[tuple[str, str], ...]:
    """The s3a setting: a TOML table (its dotted keys, quoted or nested, joined again) or
    the text KEY=VALUE,KEY=VALUE of the environment; each key an fs.s3a.* key."""
    if isinstance(value, str):
        pairs = []
        for item in (part.strip() for part in value.split(",")):
            if not item:
                continue
            key, sep, text = item.partition("=")
            if not sep:
                raise SettingsError(f"{source}: s3a takes KEY=VALUE items, not {item!r}")
            pairs.append((key.strip(), text.strip()))
    elif isinstance(value, dict):
        pairs = list(_flattened(value, ""))
    elif isinstance(value, tuple):
        pairs = list(value)
    else:
        raise SettingsError(f"{source}: s3a must be a table of fs.s3a.* keys, not {value!r}")
    wrong = [key for key, _ in pairs if not key.startswith(S3A_PREFIX) or key == S3A_PREFIX]
    if wrong:
        raise SettingsError(
            f"{source}: s3a takes Hadoop's S3A keys (fs.s3a.endpoint, fs.s3a.access.key, ...), "
            f"not {', '.join(wrong)}"
        )
    return tuple(sorted(pairs))


def _flattened(table: dict[str, Any], prefix: str) -> Any:
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flattened(value, name + ".")
        elif isinstance(value, bool):
            yield name, "true" if value else "false"
        else:
            yield name, str(value)


def load(config_file: str | None = None, **flags: Any) -> Settings:
    """Settings from the file, the environment and FLAGS (None flags are ignored).

    Raises SettingsError for an unreadable file, an unknown key and a value of the wrong type.
    """
    values: dict[str, Any] = {}
    path = config_file or os.environ.get("METASTORE_CONFIG")
    if path:
        try:
            with open(path, "rb") as f:
                from_file = tomllib.load(f)
        except OSError as e:
            raise SettingsError(f"cannot read the settings file {path}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise SettingsError(f"{path} is not valid TOML: {e}") from None
        unknown = sorted(set(from_file) - set(_FIELDS))
        if unknown:
            raise SettingsError(
                f"{path}: unknown setting(s) {', '.join(unknown)}; "
                f"the settings are {', '.join(_FIELDS)}"
            )
        values.update({k: _coerce(k, v, path) for k, v in from_file.items()})
    for key in _FIELDS:
        variable = f"METASTORE_{key.upper()}"
        env = os.environ.get(variable)
        if env is not None:
            values[key] = _coerce(key, env, variable)
    for key, value in flags.items():
        if key not in _FIELDS:
            raise TypeError(f"unknown setting {key!r}")
        if value is not None:
            values[key] = _coerce(key, value, f"--{key.replace('_', '-')}")
    settings = Settings(**values)
    settings.check()
    return settings
