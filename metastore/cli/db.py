"""`metastore db upgrade|downgrade|current|history`: the database schema."""

from __future__ import annotations

import argparse
from typing import Any

from metastore import config


def add_parser(commands: Any) -> None:
    database = commands.add_parser("db", help="manage the database schema")
    db_commands = database.add_subparsers(dest="db_command", required=True)
    upgrade = db_commands.add_parser("upgrade", help="migrate the schema to the newest revision")
    upgrade.add_argument("--revision", default="head", help="target revision (default head)")
    upgrade.set_defaults(run=_upgrade)
    current = db_commands.add_parser("current", help="show the schema revision")
    current.set_defaults(run=_current)
    history = db_commands.add_parser("history", help="list the schema revisions")
    history.set_defaults(run=_history)
    for sub in (upgrade, current, history):
        sub.add_argument("--db", help="SQLAlchemy URL (default: the embedded SQLite file)")


def _url(args: argparse.Namespace) -> str:
    return config.load(args.config, db=args.db).database_url()


def _upgrade(args: argparse.Namespace) -> int:
    from metastore import db
    from metastore.cli import configure_logging

    configure_logging("INFO")
    url = _url(args)
    db.upgrade(url, args.revision)
    print(f"{db.safe_url(url)} is at revision {db.current_revision(url)}")
    return 0


def _current(args: argparse.Namespace) -> int:
    from metastore import db

    url = _url(args)
    current, head = db.current_revision(url), db.head_revision()
    state = "up to date" if current == head else f"behind the newest revision {head}"
    print(f"{db.safe_url(url)}: revision {current or '(empty)'}, {state}")
    return 0


def _history(args: argparse.Namespace) -> int:
    from alembic import command

    from metastore import db

    command.history(db.alembic_config(_url(args)))
    return 0
