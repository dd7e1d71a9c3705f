"""Two servers side by side, one on SQLite and one on PostgreSQL, each on a new database
without the cache of answers: for the tests that compare PostgreSQL's single statements with
SQLite's general path."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from conftest import RunningServer, connect, empty_database
from metadata_builders import Client
from thrift.Thrift import TException

from metastore.config import Settings
from metastore.store import migrate

Servers = dict[str, tuple[RunningServer, Client]]


def two_servers(folder: Callable[[str], Path]) -> Iterator[Servers]:
    """The servers by backend ("sqlite", "postgresql"); FOLDER gives a new folder by name."""
    out: Servers = {}
    closers: list[Callable[[], object]] = []
    databases = [empty_database(backend, folder(backend)) for backend in ("sqlite", "postgresql")]
    try:
        for backend, database in zip(("sqlite", "postgresql"), databases, strict=True):
            url = next(database)
            migrate.upgrade(url)
            running = RunningServer(url, Settings(cache_size=0))
            client, transport = connect(running.port)
            closers += [transport.close, running.stop]
            out[backend] = (running, client)
        yield out
    finally:
        for close in reversed(closers):
            close()
        for database in databases:
            next(database, None)


def on_both(servers: Servers, call: Callable[[Client], Any]) -> dict[str, Any]:
    """What CALL answers (or raises: its type and message) on each server."""
    out: dict[str, Any] = {}
    for backend, (_, client) in servers.items():
        try:
            out[backend] = ("answer", call(client))
        except TException as e:
            out[backend] = (type(e).__name__, getattr(e, "message", str(e)))
    return out
