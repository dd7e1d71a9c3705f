"""`metastore db upgrade|downgrade|current|history|check`: the database schema.

`current`, `history` and `check` only read: on a SQLite file that does not exist they say so
and create nothing. `downgrade --revision base` drops every table, so it asks first (or
takes --yes); without a terminal to ask on, it refuses.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from metastore import config
from metastore.cli import hms_import
from metastore.cli.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, CliError


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
    downgrade.add_argument(
        "--yes", action="store_true", help="with --revision base: drop everything without asking"
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
    adopt = db_commands.add_parser(
        "adopt",
        help="serve a Hive Metastore's PostgreSQL database in place (or give it back)",
        description="Adopt the PostgreSQL database of a Hive Metastore (schema 2.3, 3.1 or "
        "4.x): add what colstats needs, in one transaction, changing nothing HMS uses, so "
        "that colstats serves it, beside HMS or instead of it. Back the database up first.",
    )
    adopt.add_argument(
        "--dry-run", action="store_true", help="say what adoption would add; change nothing"
    )
    adopt.add_argument(
        "--merge-duplicates",
        action="store_true",
        help="keep the newest of statistics rows that share a column (HIVE-28578)",
    )
    adopt.add_argument("--undo", action="store_true", help="remove everything adoption added")
    adopt.set_defaults(run=_adopt)
    copy = hms_import.add_parser(db_commands)
    for sub in (upgrade, downgrade, current, history, check, adopt, copy):
        sub.add_argument("--db", help="SQLAlchemy URL (default: the embedded SQLite file)")


def _url(args: argparse.Namespace, *, create: bool = True) -> str:
    return config.load(args.config, db=args.db).database_url(create=create)


def _missing_file(url: str) -> Path | None:
    """The SQLite file of URL when it does not exist (reading would create it)."""
    from metastore.store.transactions import parse_url

    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    path = Path(parsed.database)
    return None if path.exists() else path


def _upgrade(args: argparse.Namespace) -> int:
    from metastore.cli import configure_logging
    from metastore.store import migrate, transactions

    configure_logging("INFO")  # Alembic logs a line per revision it runs
    url = _url(args)
    where = transactions.safe_url(url)
    migrate.upgrade(url, args.revision)
    print(f"{where} is at revision {migrate.current_revision(url)}")
    return EXIT_OK


def _downgrade(args: argparse.Namespace) -> int:
    from metastore.cli import configure_logging
    from metastore.store import migrate, transactions

    url = _url(args, create=False)
    where = transactions.safe_url(url)
    missing = _missing_file(url)
    if missing is not None:
        raise CliError(f"no database at {missing}: there is nothing to downgrade", EXIT_USAGE)
    migrate.check_target(url, args.revision, forward=False)  # before asking
    if args.revision == "base" and not args.yes:
        _confirm_dropping_everything(transactions.safe_url(url))
    configure_logging("INFO")
    migrate.downgrade(url, args.revision)
    print(f"{where} is at revision {migrate.current_revision(url) or '(empty)'}")
    return EXIT_OK


def _confirm_dropping_everything(where: str) -> None:
    """Ask on the terminal before a downgrade to base; without one, refuse (exit 2)."""
    if not sys.stdin.isatty():
        raise CliError(
            f"--revision base drops every table of {where} with all its data; add --yes to do "
            "it without a terminal to confirm on",
            EXIT_USAGE,
        )
    answer = input(f"--revision base drops every table of {where} with all its data. Go on? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise CliError("nothing was changed", EXIT_FAILED)


def _current(args: argparse.Namespace) -> int:
    from metastore.store import hive_schema, migrate, transactions

    url = _url(args, create=False)
    where = transactions.safe_url(url)
    missing = _missing_file(url)
    if missing is not None:
        print(f"{where}: no database file yet (`metastore db upgrade` creates it)")
        return EXIT_OK
    hive = hive_schema.inspect_url(url)  # NotAdoptable: said in one line
    if hive is not None and not hive.adopted:
        print(f"{where}: {hive}, not adopted; `metastore db adopt --db URL` adopts it")
        return EXIT_OK
    current, shipped = migrate.current_revision(url), migrate.shipped_revisions()
    head = shipped[-1]
    if current is not None and current not in shipped:
        state = f"from a newer colstats (this one's newest is {head})"
    else:
        state = "up to date" if current == head else f"behind the newest revision {head}"
    adopted = f"{hive}, adopted: " if hive is not None else ""
    print(f"{where}: {adopted}revision {current or '(empty)'}, {state}")
    return EXIT_OK


def _history(args: argparse.Namespace) -> int:
    from alembic import command

    from metastore.store import migrate

    command.history(migrate.alembic_config(_url(args, create=False)))  # reads the revisions only
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from metastore.store import migrate, transactions

    url = _url(args, create=False)
    where = transactions.safe_url(url)
    missing = _missing_file(url)
    if missing is not None:
        print(f"{where}: no database file; run `metastore db upgrade` to create it")
        return EXIT_FAILED
    migrate.refuse_unadopted(url)
    current, head = migrate.current_revision(url), migrate.head_revision()
    migrate.refuse_newer_release(url, current)
    differences = migrate.schema_differences(url)
    if not differences and current == head:
        print(f"{where}: the schema matches the models")
        return EXIT_OK
    if differences:
        print(
            f"{where}: the schema differs from the models in {len(differences)} "
            f"place(s) (revision {current or '(empty)'}; the newest is {head}):"
        )
        for difference in differences:
            print(f"  {difference}")
    else:
        # A revision may change nothing on one backend (0004 on SQLite), not on the others.
        print(
            f"{where}: the schema matches the models, but its revision is "
            f"{current or '(empty)'}, not the newest ({head})"
        )
    if current != head:
        print("run `metastore db upgrade` to migrate it")
    return EXIT_FAILED


def _adopt(args: argparse.Namespace) -> int:
    from metastore.store import adopt, transactions

    url = _url(args, create=False)
    where = transactions.safe_url(url)
    if transactions.parse_url(url).get_backend_name() != "postgresql":
        raise CliError(
            f"{where} is not a PostgreSQL database: colstats adopts the PostgreSQL databases of "
            "Hive Metastores; copy any other one with `metastore db import --from "
            "thrift://HOST:9083`",
            EXIT_USAGE,
        )
    if args.undo:
        if args.dry_run or args.merge_duplicates:
            raise CliError("--undo takes neither --dry-run nor --merge-duplicates", EXIT_USAGE)
        try:
            removed = adopt.undo(url)
        except adopt.AdoptionError as e:
            raise CliError(f"{where} cannot be given back: {e}") from None
        for line in removed:
            print(f"  {line}")
        print(f"{where} is as it was before adoption, with what was written since")
        return EXIT_OK
    try:
        plan = adopt.adopt(url, merge_duplicates=args.merge_duplicates, dry_run=args.dry_run)
    except adopt.AdoptionError as e:
        raise CliError(f"{where} cannot be adopted: {e}") from None
    verb = "would add" if args.dry_run else "added"
    print(f"{where} is {plan.found}; adoption {verb}:")
    for change in plan.changes:
        print(f"  {change}")
    for duplicate in plan.duplicates:
        print(f"  duplicate statistics: {duplicate}")
    if args.dry_run:
        if plan.duplicates and not args.merge_duplicates:
            print(
                f"{len(plan.duplicates)} group(s) of duplicate statistics rows: adopt with "
                "--merge-duplicates to keep the newest of each"
            )
        print("nothing was changed (--dry-run)")
    else:
        print(f"{where} is adopted: `metastore serve --db URL` serves it")
    return EXIT_OK
