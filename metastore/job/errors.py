"""The errors the statistics job and its metastore client raise for anything a user can act
on. Each message is one line that says what went wrong and, where it helps, what to change;
metastore.cli.errors gives each kind its exit code."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from metastore.files.errors import FilesError, InvalidLocation, UnknownFileSystem


class JobError(Exception):
    """The job cannot go on: data it cannot read, a metastore that cannot serve it. The
    message is one line that says what to change; the CLI prints it and exits 1, a program
    calling the job catches it."""


class OptionsError(JobError):
    """What the user gave does not fit: a malformed or contradictory option or setting, or
    one that names something the metastore or the data does not have (the CLI exits 2)."""


class MetastoreError(JobError):
    """A metastore could not serve a call of the client (metastore.job.client)."""


class MetastoreRefused(MetastoreError):
    """The metastore answered CALL with one of the exceptions its IDL declares (KIND:
    MetaException, NoSuchObjectException, ...), whose message is REASON.

    The client raises this instead of the generated exception: those are frozen, and a
    context manager made with contextlib that re-raises one (it sets the exception's
    __traceback__) would replace it with a TypeError."""

    def __init__(self, call: str, kind: str, reason: str | None) -> None:
        self.call = call
        self.kind = kind
        self.reason = reason or kind
        super().__init__(f"the metastore refused: {self.reason}")


class NoSuchObject(MetastoreRefused):
    """NoSuchObjectException: the database, table, partition or statistics the call names
    do not exist."""


class MetastoreUnreachable(MetastoreError):
    """No URI of the metastore could be connected to (FAILURES: each URI tried, and why);
    RETRYABLE when some failed in a way that may pass (the network, not the security)."""

    def __init__(self, failures: list[tuple[str, str]], retryable: bool) -> None:
        self.failures = failures
        self.retryable = retryable
        if len(failures) == 1:
            (uri, reason), *_ = failures
            message = f"cannot reach the metastore at {uri}: {reason}"
        else:
            tried = "; ".join(f"{uri}: {reason}" for uri, reason in failures)
            message = f"cannot reach the metastore at any of its URIs: {tried}"
        super().__init__(message)


class MetastoreCallFailed(MetastoreError):
    """A call got no answer in the Thrift protocol of a metastore from URI: the connection
    was lost (after the retries), or the other side answered something else (DETAIL)."""

    def __init__(self, uri: str, call: str, detail: str) -> None:
        self.uri = uri
        self.call = call
        self.detail = detail
        super().__init__(f"{call} to the metastore at {uri} failed: {detail}")


class Interrupted(KeyboardInterrupt):
    """The run was stopped by a signal (Ctrl-C, SIGTERM); the message says what was written
    before it stopped (the CLI exits 130)."""


@contextlib.contextmanager
def files_errors() -> Iterator[None]:
    """The errors of the table's files (metastore.files) raised again as the job's own,
    with the same message: a location written wrong is an OptionsError, the others (files
    not there, not readable, of a format the job does not read) a JobError."""
    try:
        yield
    except InvalidLocation as e:
        raise OptionsError(str(e)) from e
    except UnknownFileSystem as e:  # Spark may read what PyArrow does not
        raise JobError(
            f"the job cannot read {e.location} itself ({e.detail}); give --spark-table "
            "DB.TABLE so that Spark reads the files and the job computes the statistics"
        ) from e
    except FilesError as e:
        raise JobError(str(e)) from e
