"""`metastore serve`: the Thrift server over the configured database."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from metastore import config


def add_parser(commands: Any) -> None:
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
    serve.add_argument(
        "--warehouse",
        help="folder of `default` and of databases created without a location "
        "(default $METASTORE_HOME/warehouse)",
    )
    serve.add_argument("--log-level", help="DEBUG logs every call (default INFO)")
    serve.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from metastore import db
    from metastore.cli import EXIT_USAGE, configure_logging
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
        warehouse=args.warehouse,
        log_level=args.log_level,
    )
    configure_logging(settings.log_level)
    url = settings.database_url()
    if settings.migrate:
        db.upgrade(url)
    elif db.current_revision(url) != db.head_revision():
        print(
            f"the schema of {db.safe_url(url)} is not at the newest revision; run "
            f"`metastore db upgrade --db URL` or start without --no-migrate",
            file=sys.stderr,
        )
        return EXIT_USAGE
    engine = db.create_engine(url, pool_size=min(settings.workers, 20))
    handler = Handler(db.Transactions(engine), settings)
    handler.ensure_default_database()
    server = MetastoreServer(
        handler,
        settings.host,
        settings.port,
        framed=settings.framed,
        workers=settings.workers,
    )
    server.install_signal_handlers()
    logging.getLogger("metastore").info("database %s", db.safe_url(url))
    server.serve_forever()
    engine.dispose()
    return 0
