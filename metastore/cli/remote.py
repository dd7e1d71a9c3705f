"""Reaching a metastore from the command line: is something there, and does it speak HMS?

`check` makes one real call (`get_all_databases`) without retries, so that a wrong URI, a
host that does not answer, or a port where something else listens is reported at once and
in one line (before `analyze` starts Spark, for instance), instead of after retries and a
Python trace.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from dataclasses import dataclass

from thrift.protocol.TProtocol import TProtocolException
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from metastore.cli.errors import EXIT_USAGE, CliError
from metastore.job.client import MetastoreClient, parse_uri

DEFAULT_URI = "thrift://localhost:9083"


def default_uri() -> str:
    """$METASTORE_URI, else the local default port."""
    return os.environ.get("METASTORE_URI", DEFAULT_URI)


@dataclass(frozen=True)
class Answer:
    """What a metastore answered to the check: its databases, and how long the call took."""

    databases: list[str]
    seconds: float


def check(uri: str, *, timeout_s: float = 30.0) -> Answer:
    """Call get_all_databases on URI once; CliError with the reason when that fails."""
    client, answer = connect(uri, timeout_s=timeout_s)
    client.close()
    return answer


def connect(uri: str, *, timeout_s: float = 60.0) -> tuple[MetastoreClient, Answer]:
    """A client of URI that has made one call, and its answer; CliError when that failed.

    TIMEOUT_S bounds each call of the client (a busy metastore on a loaded machine may take
    seconds; `metastore ping` asks for less)."""
    try:
        client = MetastoreClient(uri, retries=0, timeout_s=timeout_s)
    except ValueError as e:
        raise CliError(str(e), EXIT_USAGE) from e
    # thrift's TSocket logs a failed connect with a trace before it raises; the raise is enough.
    sockets_log = logging.getLogger("thrift.transport.TSocket")
    level = sockets_log.level
    sockets_log.setLevel(logging.CRITICAL)
    started = time.monotonic()
    try:
        databases = client.call("get_all_databases")
    except TTransportException as e:
        client.close()
        raise _transport_error(uri, e) from e
    except (TProtocolException, TApplicationException, OSError) as e:
        client.close()
        raise _not_hms(uri, e) from e
    finally:
        sockets_log.setLevel(level)
    return client, Answer(list(databases), time.monotonic() - started)


def _transport_error(uri: str, e: TTransportException) -> CliError:
    """Nothing listening (or no such host) when the connection could not open; else the
    other side is no Thrift server: it closed, or said nothing in time."""
    inner = getattr(e, "inner", None)
    if isinstance(inner, socket.gaierror):
        return CliError(f"cannot reach the metastore at {uri}: unknown host")
    if e.type == TTransportException.NOT_OPEN:
        reason = (inner.strerror or str(inner)) if isinstance(inner, OSError) else str(e)
        return CliError(
            f"cannot reach the metastore at {uri}: {reason.lower()} (is `metastore serve` "
            "running there, and is the port right?)"
        )
    return _not_hms(uri, e)


def _not_hms(uri: str, e: Exception) -> CliError:
    detail = str(e).strip() or type(e).__name__
    host, port = parse_uri(uri)
    return CliError(
        f"{uri} does not answer as a Hive Metastore ({detail}); is {host}:{port} the "
        "metastore's Thrift port (9083 by default)?"
    )
