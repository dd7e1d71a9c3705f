"""The `metastore` command: `serve`, `ping`, `ls`, `describe`, `analyze`, `demo` and
`db upgrade|downgrade|current|history|check`.

One module per command group builds its part of the parser and runs it. Only this module
turns errors into messages and exit codes (see metastore.cli.errors: 0 done, 1 failed,
2 usage, 130 interrupted; `serve` stops with 0 on a signal); `--traceback` shows the full
trace instead. A reader that closes the output early (`metastore ls | head`) ends the
command quietly.

Each group imports what it needs when it runs, so that `metastore serve` loads no Spark,
PyArrow or NumPy and `metastore analyze` loads no database layer.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import os
import sys

from metastore.cli import analyze, db, demo, describe, listing, ping, serve
from metastore.cli.errors import EXIT_FAILED as EXIT_FAILED
from metastore.cli.errors import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from metastore.cli.errors import EXIT_OK as EXIT_OK
from metastore.cli.errors import EXIT_USAGE as EXIT_USAGE
from metastore.cli.errors import CliError as CliError
from metastore.cli.errors import explain


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="metastore",
        description="A column-statistics metastore that speaks the Hive Metastore protocol.",
        epilog="Exit codes: 0 done, 1 failed (one line on stderr says why), 2 what was typed "
        "does not fit (arguments, settings, or names the metastore or the data does not have), "
        "130 interrupted (serve, once serving, stops cleanly on Ctrl-C or SIGTERM, with 0).",
    )
    parser.add_argument("--config", help="TOML settings file (also METASTORE_CONFIG)")
    parser.add_argument(
        "--traceback", action="store_true", help="on an error, show the full Python trace"
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {importlib.metadata.version('colstats')}"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    serve.add_parser(commands)
    ping.add_parser(commands)
    listing.add_parser(commands)
    describe.add_parser(commands)
    analyze.add_parser(commands)
    demo.add_parser(commands)
    db.add_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.run(args))
        sys.stdout.flush()  # here, not at exit: a closed pipe is an error to catch
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except (Exception, KeyboardInterrupt) as e:
        if args.traceback:
            raise
        code, message = explain(e)
        command = " ".join(filter(None, (args.command, getattr(args, "db_command", None))))
        print(f"metastore {command}: error: {message}", file=sys.stderr)
        return code


def _quiet_stdout() -> None:
    """The reader of stdout is gone (`| head`): what is left to print goes nowhere, so that
    Python's flush at exit does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
