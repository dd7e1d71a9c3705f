"""The `metastore` command's errors: what a person reads when a command cannot do its work.

Every failure becomes one line that says what went wrong and, where it helps, what to do,
with an exit code. One rule for every command, by what would have to change for the same
command to succeed:

* 0 (EXIT_OK): done.
* 2 (EXIT_USAGE): what was typed: an argument, option or setting that is malformed or
  contradictory (argparse's usage errors, a URI that is not thrift://HOST:PORT, Kerberos
  and TLS together, a keytab or certificate file that is not there), or that names
  something the metastore or the data does not have: a database, table, column, partition
  or partition key, a --path, a --format the files are not in, a table partitioned
  otherwise than the data. The command fails the same way until it is changed.
* 1 (EXIT_FAILED): the command, as typed, could not do its work: the metastore could not be
  reached (no answer, Kerberos or TLS refused), refused a call (rights) or failed one; the
  data could not be read (a damaged file, a value that does not parse with --strict,
  storage the job does not read); Spark or the database failed; `db check` found the schema
  differs. The same command may succeed once that is mended.
* 130 (EXIT_INTERRUPTED): interrupted with Ctrl-C (128 + SIGINT, as shells report it), or
  `analyze` with SIGTERM; `serve`, once serving, stops cleanly with 0.

The job's errors carry their kind (metastore.job.errors: OptionsError is 2, any other
JobError 1), as do those of a table's files (metastore.files.errors: a location written
wrong is 2, files not there or not readable 1); `metastore --traceback ...` shows the full
trace instead.
"""

from __future__ import annotations

import re
import sys

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A command cannot go on; the message is the one line shown, EXIT the exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


_EXTRAS = {
    "psycopg2": "pip install 'colstats[psycopg2]' (or -e '.[psycopg2]' in a checkout)",
    "pyspark": "pip install 'colstats[spark]' (or -e '.[spark]' in a checkout); it needs Java 17",
    "gssapi": "pip install 'colstats[kerberos]' (or -e '.[kerberos]' in a checkout)",
}


def explain(exc: BaseException) -> tuple[int, str]:
    """(exit code, one-line message) for an exception a command raised."""
    from metastore.config import SettingsError
    from metastore.files.errors import FilesError, InvalidLocation
    from metastore.job.errors import JobError, OptionsError

    if isinstance(exc, KeyboardInterrupt):
        detail = str(exc)
        return EXIT_INTERRUPTED, f"interrupted; {detail}" if detail else "interrupted"
    if isinstance(exc, CliError):
        return exc.exit_code, str(exc)
    if isinstance(exc, SettingsError | OptionsError | InvalidLocation):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, JobError | FilesError):
        return EXIT_FAILED, str(exc)
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        top = exc.name.split(".")[0]
        hint = _EXTRAS.get(top)
        if hint:
            return EXIT_FAILED, f"the {top} package is not installed: {hint}"
    explained = _database(exc) or _spark(exc)
    if explained:
        return explained
    return EXIT_FAILED, (
        f"unexpected {type(exc).__name__}: {_first_line(exc)} (run `metastore --traceback ...` "
        "for the full trace)"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


def _database(exc: BaseException) -> tuple[int, str] | None:
    """SQLAlchemy's and Alembic's errors: a URL, a driver, a database that cannot be used.

    Only when the command loaded them: `analyze` must not load the database layer for this.
    """
    if "sqlalchemy" not in sys.modules:
        return None
    import sqlalchemy.exc as sa_exc

    if isinstance(exc, sa_exc.NoSuchModuleError):
        return EXIT_USAGE, (
            f"unknown database in the URL ({_first_line(exc)}); use sqlite:///PATH, "
            "postgresql+psycopg://USER@HOST/DB or postgresql+psycopg2://USER@HOST/DB"
        )
    if isinstance(exc, sa_exc.ArgumentError):
        return EXIT_USAGE, (
            f"{_first_line(exc)}: the database URL (--db or METASTORE_DB) must look like "
            "sqlite:///PATH or postgresql+psycopg://USER@HOST/DB"
        )
    if isinstance(exc, sa_exc.DBAPIError):
        detail = _first_line(exc.orig) if exc.orig is not None else _first_line(exc)
        hint = ""
        if "unable to open database file" in detail:
            hint = " (does its folder exist, and may this user write there?)"
        elif "connection" in detail.lower() or "could not translate host" in detail:
            hint = " (is the server running, and are the host, port, user and password right?)"
        return EXIT_FAILED, f"the database cannot be used: {detail}{hint}"
    migrate = sys.modules.get("metastore.store.migrate")
    if migrate is not None:
        if isinstance(exc, migrate.UnadoptedHiveDatabase | migrate.RevisionFromNewerRelease):
            return EXIT_FAILED, str(exc)
        if isinstance(exc, migrate.UnreachableRevision):
            return EXIT_USAGE, str(exc)
    hive_schema = sys.modules.get("metastore.store.hive_schema")
    if hive_schema is not None and isinstance(exc, hive_schema.NotAdoptable):
        return EXIT_FAILED, str(exc)
    alembic_util = sys.modules.get("alembic.util")
    if alembic_util is not None and isinstance(exc, alembic_util.CommandError):
        return EXIT_FAILED, f"migration: {_first_line(exc)}"
    return None


# Spark's words for files it cannot read in the format it was told.
_UNREADABLE = ("CANNOT_READ_FILE_FOOTER", "UNABLE_TO_INFER_SCHEMA", "not a Parquet", "FAILED_READ")
# Spark's words for a name its catalog does not have (the table of --spark-table).
_UNKNOWN_NAME = ("[TABLE_OR_VIEW_NOT_FOUND]", "[SCHEMA_NOT_FOUND]")
# Spark's messages start with their error class: "[PATH_NOT_FOUND] Path does not exist: ...".
_SPARK_ERROR = re.compile(r"\[[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*\][^\n]*")


def _spark(exc: BaseException) -> tuple[int, str] | None:
    """Spark's errors (pyspark is never imported here: the command may not have loaded it).

    A failure inside the JVM reaches Python as a Py4JJavaError whose first line names only
    the Java call; the first message with an error class says what went wrong."""
    if not type(exc).__module__.startswith(("pyspark", "py4j")):
        return None
    found = _SPARK_ERROR.search(str(exc))
    line = found.group(0).strip() if found else _first_line(exc)
    hint = ""
    if any(k in line for k in _UNREADABLE):
        hint = " (do the files match --format?)"
    elif "JAVA_GATEWAY_EXITED" in line:
        hint = " (Spark needs Java 17: is it installed, and is JAVA_HOME unset or right?)"
    code = EXIT_USAGE if line.startswith(_UNKNOWN_NAME) else EXIT_FAILED
    return code, f"Spark failed: {line}{hint}"
