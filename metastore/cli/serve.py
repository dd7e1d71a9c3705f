"""`metastore serve`: the Thrift server over the configured database, and Arrow Flight for
DuckDB on --flight-port."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import logging
import socket
from typing import Any

from metastore import config
from metastore.cli.errors import EXIT_USAGE, CliError

BACKENDS = {"sqlite": ("pysqlite",), "postgresql": ("psycopg", "psycopg2")}
"""The databases colstats runs on, and their drivers."""


def add_parser(commands: Any) -> None:
    serve = commands.add_parser(
        "serve",
        help="run the Thrift server",
        description="Run the Thrift server. Without --db, a SQLite file in $METASTORE_HOME "
        "(default ~/.local/share/colstats) is created and migrated.",
    )
    serve.add_argument("--db", help="SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db")
    serve.add_argument(
        "--host",
        help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every "
        "interface)",
    )
    serve.add_argument("--port", type=int, help="port to listen on (default 9083)")
    serve.add_argument(
        "--framed",
        action="store_true",
        default=None,
        help="framed transport (HMS clients use unframed, the default)",
    )
    serve.add_argument("--workers", type=int, help="calls run at once (default 100)")
    serve.add_argument(
        "--db-pool-size",
        type=int,
        help="database connections kept open (default: workers, at most 20)",
    )
    serve.add_argument(
        "--fetch-bitvector",
        action="store_true",
        default=None,
        help="return bit vectors on reads (off by default, like HMS)",
    )
    serve.add_argument(
        "--fetch-histogram",
        action="store_true",
        default=None,
        help="return KLL histograms on reads (off by default, like HMS)",
    )
    serve.add_argument(
        "--no-migrate",
        dest="migrate",
        action="store_false",
        default=None,
        help="do not migrate the schema on start; refuse to start if it is old",
    )
    serve.add_argument(
        "--warehouse",
        help="folder of `default` and of databases created without a location "
        "(default $METASTORE_HOME/warehouse)",
    )
    serve.add_argument("--log-level", help="DEBUG logs every call (default INFO)")
    limits = serve.add_argument_group("connections and limits")
    limits.add_argument(
        "--max-connections", type=int, help="open connections at most (default 10000)"
    )
    limits.add_argument(
        "--idle-timeout", type=float, help="close connections idle this long, s (default 3600)"
    )
    limits.add_argument(
        "--request-timeout",
        type=float,
        help="time to receive a request, finish a handshake or send a reply, s (default 60)",
    )
    limits.add_argument("--max-message-size", type=int, help="largest request, bytes (100 MiB)")
    limits.add_argument(
        "--max-container-size", type=int, help="most elements of a list or map (1000000)"
    )
    served = serve.add_argument_group("answers from memory, metrics")
    served.add_argument(
        "--cache-size",
        type=int,
        help="bytes the cache of answers may hold (default 268435456, 256 MiB; 0: no cache)",
    )
    served.add_argument(
        "--metrics-port", type=int, help="serve metrics for Prometheus on this port (default: none)"
    )
    locks = serve.add_argument_group("HMS locks (Iceberg's Hive catalog)")
    locks.add_argument(
        "--lock-timeout",
        type=float,
        help="a lock not heartbeated this long is gone, s (default 300, as hive.txn.timeout)",
    )
    security = serve.add_argument_group("security")
    security.add_argument("--security", help="plain (default), kerberos or tls")
    security.add_argument("--kerberos-keytab", help="the service's keytab")
    security.add_argument(
        "--kerberos-principal", help="e.g. hive/_HOST@EXAMPLE.COM (default: any in the keytab)"
    )
    security.add_argument("--kerberos-qop", help="auth, auth-int, auth-conf (default auth-conf)")
    security.add_argument("--tls-cert", help="the server's certificate chain (PEM)")
    security.add_argument("--tls-key", help="its private key (PEM)")
    security.add_argument("--tls-client-ca", help="require client certificates from this CA")
    security.add_argument("--writers", help="who may create and change: alice,@etl,* ")
    security.add_argument("--droppers", help="who may drop and delete statistics")
    security.add_argument("--admins", help="who holds every right")
    security.add_argument("--group-mapping", help='groups per user: "alice=etl,ops;bob=etl"')
    security.add_argument("--audit-log", help="a file for the audit lines")
    flight = serve.add_argument_group("Arrow Flight (DuckDB's Airport extension)")
    flight.add_argument(
        "--flight-port", type=int, help="also serve Arrow Flight on this port (default: off)"
    )
    flight.add_argument(
        "--flight-token", help="the bearer token every Flight call must carry (default: none)"
    )
    serve.set_defaults(run=run)


_SECURITY_AND_LIMITS = (
    "db_pool_size",
    "cache_size",
    "lock_timeout",
    "metrics_port",
    "max_connections",
    "idle_timeout",
    "request_timeout",
    "max_message_size",
    "max_container_size",
    "security",
    "kerberos_keytab",
    "kerberos_principal",
    "kerberos_qop",
    "tls_cert",
    "tls_key",
    "tls_client_ca",
    "writers",
    "droppers",
    "admins",
    "group_mapping",
    "audit_log",
    "flight_port",
    "flight_token",
)


def configure_audit_log(path: str) -> None:
    """Audit lines to PATH only, one per line with a time stamp."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    audit = logging.getLogger("metastore.audit")
    audit.addHandler(handler)
    audit.setLevel(logging.INFO)
    audit.propagate = False


def run(args: argparse.Namespace) -> int:
    from metastore.access import Right
    from metastore.cli import configure_logging
    from metastore.hms.handler import Handler
    from metastore.hms.security import build as build_security
    from metastore.hms.server import MetastoreServer
    from metastore.store import migrate, transactions

    settings = config.load(
        args.config,
        db=args.db,
        host=args.host,
        port=args.port,
        framed=args.framed,
        workers=args.workers,
        fetch_bitvector=args.fetch_bitvector,
        fetch_histogram=args.fetch_histogram,
        migrate=args.migrate,
        warehouse=args.warehouse,
        log_level=args.log_level,
        **{key: getattr(args, key) for key in _SECURITY_AND_LIMITS},
    )
    configure_logging(settings.log_level)
    logging.getLogger("metastore.audit").setLevel(logging.INFO)  # whatever the log level
    if settings.audit_log:
        configure_audit_log(settings.audit_log)
    security = build_security(settings)  # an unusable keytab or certificate: before anything
    check_database(settings.database_url(create=False))
    listener = listen(settings.host, settings.port)  # before the database is touched
    if settings.flight_port is not None:  # in plain words too, before the database
        listen(settings.host, settings.flight_port, option="--flight-port").close()
    try:
        url = settings.database_url()
        if settings.migrate:
            migrate.upgrade(url)  # refuses a Hive Metastore database not adopted
        else:
            migrate.refuse_unadopted(url)
            current = migrate.current_revision(url)
            migrate.refuse_newer_release(url, current)
            if current != migrate.head_revision():
                raise CliError(
                    f"the schema of {transactions.safe_url(url)} is not at the newest revision; "
                    "run `metastore db upgrade --db URL` or start without --no-migrate",
                    EXIT_USAGE,
                )
        pool_size = settings.db_pool_size or min(settings.workers, 20)
        engine = transactions.create_engine(url, pool_size=pool_size)
        handler = Handler(transactions.Transactions(engine), settings)
        handler.ensure_default_database()
        server = MetastoreServer.from_settings(
            handler, settings, security=security, listener=listener
        )
    except BaseException:
        listener.close()
        raise
    flight = None
    if settings.flight_port is not None:
        # Imported only here: a server without a Flight port loads no PyArrow.
        from metastore.flight.server import FlightService

        try:
            flight = FlightService(handler.tx, settings, settings.host, settings.flight_port)
        except Exception as e:  # the port taken, a certificate that does not load, ...
            where = f"{settings.host}:{settings.flight_port}"
            raise CliError(
                f"cannot serve Arrow Flight on {where} (is the port taken, are tls_cert and "
                f"tls_key readable?): {e}",
                EXIT_USAGE,
            ) from None
    server.install_signal_handlers()
    log = logging.getLogger("metastore")
    if settings.metrics_port is not None:
        # Over TLS when the server has a certificate.
        try:
            port = server.metrics.serve(
                settings.host, settings.metrics_port, settings.tls_cert, settings.tls_key
            )
        except OSError as e:
            raise CliError(
                f"cannot serve metrics on {settings.host}:{settings.metrics_port}: "
                f"{(e.strerror or str(e)).lower()}; choose another --metrics-port",
                EXIT_USAGE,
            ) from None
        scheme = "https" if settings.tls_cert else "http"
        log.info("metrics on %s://%s:%d/metrics", scheme, settings.host, port)
    log.info("database %s", transactions.safe_url(url))
    log.info("%s", handler.policy.describe())
    if not settings.authentication and "*" in handler.policy.holders[Right.WRITE]:
        log.warning(
            "authentication is off: %s may create, change and drop anything (set security = "
            "kerberos, or tls with tls_client_ca)",
            who_reaches(listener),
        )
    elif settings.authentication and handler.policy.read_only:
        log.warning(
            "no writers, droppers or admins are configured: every call that changes "
            "something will be refused"
        )
    if flight is not None:
        flight.start()
    try:
        server.serve_forever()
    finally:
        if flight is not None:
            flight.stop()
    engine.dispose()
    return 0


def who_reaches(listener: socket.socket) -> str:
    """Who can call the server listening on LISTENER, by the address it is bound to."""
    host, port = listener.getsockname()[:2]
    address = ipaddress.ip_address(host)
    where = f"[{host}]:{port}" if address.version == 6 else f"{host}:{port}"
    if address.is_loopback:
        return f"any program on this machine (it listens on {where}, loopback only)"
    if address.is_unspecified:
        return f"any client that reaches this machine (it listens on {where}, every interface)"
    return f"any client that reaches {where}"


def check_database(url: str) -> None:
    """A CliError (exit 2) for a URL of a database or driver colstats does not run on."""
    from metastore.store.transactions import parse_url

    parsed = parse_url(url)  # a URL that does not parse: ArgumentError, exit 2
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if driver not in BACKENDS.get(backend, ()):
        raise CliError(
            f"unsupported database {parsed.drivername}: colstats runs on sqlite:///PATH, "
            "postgresql+psycopg://USER@HOST/DB or postgresql+psycopg2://USER@HOST/DB",
            EXIT_USAGE,
        )
    if backend == "sqlite" and parsed.database in (None, "", ":memory:"):
        raise CliError(
            f"{url} is a database in memory, which the server's connections would not share "
            "and which is lost when it stops: give a file, sqlite:///PATH",
            EXIT_USAGE,
        )


def listen(host: str, port: int, option: str = "--port") -> socket.socket:
    """The server's listening socket on HOST:PORT; a CliError (exit 2) in plain words when
    it cannot be had, naming the OPTION that chose the port."""
    where = f"{host}:{port}"
    if not 0 <= port <= 65535:
        raise CliError(f"cannot listen on {where}: a port is a number from 0 to 65535", EXIT_USAGE)
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise CliError(
            f"cannot listen on {where}: {host} is not a known host name or address (--host)",
            EXIT_USAGE,
        ) from None
    try:
        return socket.create_server((host, port), backlog=4096)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            why = f"the port is in use (another metastore serve?); choose another with {option}"
        elif e.errno == errno.EADDRNOTAVAIL:
            why = f"{host} is not an address of this machine (--host)"
        elif e.errno == errno.EACCES:
            why = f"ports below 1024 need privileges; choose another with {option}"
        else:
            why = (e.strerror or str(e)).lower()
        raise CliError(f"cannot listen on {where}: {why}", EXIT_USAGE) from None
