"""The `metastore` command: `serve`, and `db upgrade|current|history`."""

from __future__ import annotations

import argparse
import logging
import sys

from metastore import analyze as analyze_job
from metastore import config, db


def _serve(args: argparse.Namespace) -> int:
    from metastore.server import MetastoreServer
    from metastore.service import Handler

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
        log_level=args.log_level,
    )
    _configure_logging(settings.log_level)
    url = settings.database_url()
    if settings.migrate:
        db.upgrade(url)
    elif db.current_revision(url) != db.head_revision():
        print(
            f"the schema of {_safe(url)} is not at the newest revision; run "
            f"`metastore db upgrade --db URL` or start without --no-migrate",
            file=sys.stderr,
        )
        return 2
    engine = db.create_engine(url, pool_size=min(settings.workers, 20))
    server = MetastoreServer(
        Handler(db.Transactions(engine), settings),
        settings.host,
        settings.port,
        framed=settings.framed,
        workers=settings.workers,
    )
    server.install_signal_handlers()
    logging.getLogger("metastore").info("database %s", _safe(url))
    server.serve_forever()
    engine.dispose()
    return 0


def _safe(url: str) -> str:
    """URL without its password, for logs and messages."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _db_url(args: argparse.Namespace) -> str:
    return config.load(args.config, db=args.db).database_url()


def _db_upgrade(args: argparse.Namespace) -> int:
    _configure_logging("INFO")
    url = _db_url(args)
    db.upgrade(url, args.revision)
    print(f"{_safe(url)} is at revision {db.current_revision(url)}")
    return 0


def _db_current(args: argparse.Namespace) -> int:
    url = _db_url(args)
    current, head = db.current_revision(url), db.head_revision()
    state = "up to date" if current == head else f"behind the newest revision {head}"
    print(f"{_safe(url)}: revision {current or '(empty)'}, {state}")
    return 0


def _db_history(args: argparse.Namespace) -> int:
    from alembic import command

    command.history(db.alembic_config(_db_url(args)))
    return 0


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metastore",
        description="A column-statistics metastore that speaks the Hive Metastore protocol.",
    )
    parser.add_argument("--config", help="TOML settings file (also METASTORE_CONFIG)")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve",
        help="run the Thrift server",
        description="Run the Thrift server. Without --db, a SQLite file in $METASTORE_HOME "
        "(default ~/.local/share/colstats) is created and migrated.",
    )
    serve.add_argument("--db", help="SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db")
    serve.add_argument("--host", help="address to listen on (default 0.0.0.0)")
    serve.add_argument("--port", type=int, help="port to listen on (default 9083)")
    serve.add_argument(
        "--framed",
        action="store_true",
        default=None,
        help="framed transport (HMS clients use unframed, the default)",
    )
    serve.add_argument("--workers", type=int, help="connections served at once (default 100)")
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
    serve.add_argument("--log-level", help="DEBUG logs every call (default INFO)")
    serve.set_defaults(run=_serve)

    analyze = commands.add_parser(
        "analyze",
        help="compute statistics with Spark and write them to a metastore",
        description="Compute HMS column statistics for a table and every partition in one "
        "Spark scan and write them to a metastore (needs the 'spark' extra).",
    )
    analyze_job.add_arguments(analyze)
    analyze.set_defaults(run=analyze_job.run_command)

    database = commands.add_parser("db", help="manage the database schema")
    db_commands = database.add_subparsers(dest="db_command", required=True)
    upgrade = db_commands.add_parser("upgrade", help="migrate the schema to the newest revision")
    upgrade.add_argument("--revision", default="head", help="target revision (default head)")
    upgrade.set_defaults(run=_db_upgrade)
    current = db_commands.add_parser("current", help="show the schema revision")
    current.set_defaults(run=_db_current)
    history = db_commands.add_parser("history", help="list the schema revisions")
    history.set_defaults(run=_db_history)
    for sub in (upgrade, current, history):
        sub.add_argument("--db", help="SQLAlchemy URL (default: the embedded SQLite file)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
