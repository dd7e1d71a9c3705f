"""The `metastore` command: `serve`, `analyze` and `db upgrade|downgrade|current|history`.

One module per command group builds its part of the parser and runs it. Only this module
turns errors into messages and exit codes:

* 0: done;
* 1: the command could not do its work (the one-line message says why);
* 2: bad arguments or settings (argparse's own code for usage errors).

Each group imports what it needs when it runs, so that `metastore serve` loads no Spark,
PyArrow or NumPy and `metastore analyze` loads no database layer.
"""

from __future__ import annotations

import argparse
import logging
import sys

from metastore.cli import analyze, db, serve
from metastore.config import SettingsError
from metastore.job.errors import JobError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metastore",
        description="A column-statistics metastore that speaks the Hive Metastore protocol.",
    )
    parser.add_argument("--config", help="TOML settings file (also METASTORE_CONFIG)")
    commands = parser.add_subparsers(dest="command", required=True)
    serve.add_parser(commands)
    analyze.add_parser(commands)
    db.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except SettingsError as e:
        _error(args, str(e))
        return EXIT_USAGE
    except JobError as e:
        _error(args, str(e))
        return EXIT_FAILED


def _error(args: argparse.Namespace, message: str) -> None:
    print(f"metastore {args.command}: error: {message}", file=sys.stderr)


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
