"""`metastore db upgrade|downgrade|current|history|check`: the database schema."""

from __future__ import annotations

import argparse
from typing import Any

from metastore import config
from metastore.cli.errors import EXIT_FAILED, EXIT_OK


def add_parser(commands: Any) -> None:
    database = commands.add_parser("db", help="manage the database schema")
    db_commands = database.add_subparsers(dest="db_command", required=True)
    upgrade = db_commands.add_parser("upgrade", help="migrate the schema to the newest revision")
    upgrade.add_argument("--revision", default="head", help="target revision (default head)")
    upgrade.set_defaults(run=_upgrade)
    downgrade = db_commands.add_parser(
        "downgrade", help="migrate the schema back to an older revision"
    )
    downgrade.add_argument(
        "--revision",
        required=True,
        help="target revision: an id, -1 for the previous one, base for an empty database",
    )
    downgrade.set_defaults(run=_downgrade)
    current = db_commands.add_parser("current", help="show the schema revision")
    current.set_defaults(run=_current)
    history = db_commands.add_parser("history", help="list the schema revisions")
    history.set_defaults(run=_history)
    check = db_commands.add_parser(
        "check", help="compare the database's schema with the models (exit 1 if they differ)"
    )
    check.set_defaults(run=_check)
    for sub in (upgrade, downgrade, current, history, check):
        sub.add_argument("--db", help="SQLAlchemy URL (default: the embedded SQLite file)")


def _url(args: argparse.Namespace) -> str:
    return config.load(args.config, db=args.db).database_url()


def _upgrade(args: argparse.Namespace) -> int:
    from metastore.cli import configure_logging
    from metastore.store import migrate, transactions

    configure_logging("INFO")  # Alembic logs a line per revision it runs
    url = _url(args)
    migrate.upgrade(url, args.revision)
    print(f"{transactions.safe_url(url)} is at revision {migrate.current_revision(url)}")
    return EXIT_OK


def _downgrade(args: argparse.Namespace) -> int:
    from metastore.cli import configure_logging
    from metastore.store import migrate, transactions

    configure_logging("INFO")
    url = _url(args)
    migrate.downgrade(url, args.revision)
    print(
        f"{transactions.safe_url(url)} is at revision {migrate.current_revision(url) or '(empty)'}"
    )
    return EXIT_OK


def _current(args: argparse.Namespace) -> int:
    from metastore.store import migrate, transactions

    url = _url(args)
    current, head = migrate.current_revision(url), migrate.head_revision()
    state = "up to date" if current == head else f"behind the newest revision {head}"
    print(f"{transactions.safe_url(url)}: revision {current or '(empty)'}, {state}")
    return EXIT_OK


def _history(args: argparse.Namespace) -> int:
    from alembic import command

    from metastore.store import migrate

    command.history(migrate.alembic_config(_url(args)))
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from metastore.store import migrate, transactions

    url = _url(args)
    differences = migrate.schema_differences(url)
    current, head = migrate.current_revision(url), migrate.head_revision()
    if not differences and current == head:
        print(f"{transactions.safe_url(url)}: the schema matches the models")
        return EXIT_OK
    if differences:
        print(
            f"{transactions.safe_url(url)}: the schema differs from the models in "
            f"{len(differences)} place(s) (revision {current or '(empty)'}; the newest is {head}):"
        )
        for difference in differences:
            print(f"  {difference}")
    else:
        # A revision may change nothing on one backend (0004 on SQLite), not on the others.
        print(
            f"{transactions.safe_url(url)}: the schema matches the models, but its revision is "
            f"{current or '(empty)'}, not the newest ({head})"
        )
    if current != head:
        print("run `metastore db upgrade` to migrate it")
    return EXIT_FAILED
