"""What an engine's connections send to the database, counted at the driver: the statements
SQLAlchemy runs and those run on the driver connection directly (the versions read, the
statements of metastore.store.driver)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from psycopg import pq

from metastore.store.driver import bound, on_driver


class DriverStatements:
    """Records the statements sent on ENGINE's connections while in use as a context
    manager: SQLite's trace callback, libpq's trace of PostgreSQL's protocol (psycopg 3),
    and psycopg2's cursors (which BEGIN and COMMIT do not go through). The pool's idle
    connections are closed on entry and on exit, so that every connection used meanwhile
    is a traced one."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._statements: list[str] = []
        self._traces: list[Path] = []

    def _trace(self, dbapi_connection: Any, _record: Any) -> None:
        if self.engine.dialect.name == "sqlite":
            dbapi_connection.set_trace_callback(self._statements.append)
            return
        if self.engine.dialect.driver == "psycopg2":
            dbapi_connection.cursor_factory = _recording_cursor(self._statements)
            return
        path = Path(tempfile.mkstemp(prefix="libpq-trace-")[1])
        self._traces.append(path)
        dbapi_connection.pgconn.trace(os.open(path, os.O_WRONLY | os.O_APPEND))
        dbapi_connection.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)

    def __enter__(self) -> DriverStatements:
        sa.event.listen(self.engine, "connect", self._trace)
        self.engine.pool.dispose()
        return self

    def __exit__(self, *exc: object) -> None:
        sa.event.remove(self.engine, "connect", self._trace)
        self.engine.pool.dispose()
        for path in self._traces:
            path.unlink()

    def sent(self) -> list[str]:
        """The statements sent so far: SQL text on SQLite and through psycopg2 (an
        executemany once); through psycopg 3 a line per simple query and per execution of
        the extended protocol (a prepared statement is parsed once and executed many
        times)."""
        if self.engine.dialect.name == "sqlite" or self.engine.dialect.driver == "psycopg2":
            return list(self._statements)
        return [
            line
            for path in self._traces
            for line in path.read_text().splitlines()
            if line.startswith("F") and ("\tQuery\t" in line or "\tExecute\t" in line)
        ]

    def selects(self) -> int:
        """The statements sent so far other than BEGIN, COMMIT and ROLLBACK."""
        control = ("BEGIN", "COMMIT", "ROLLBACK")
        if self.engine.dialect.name == "sqlite" or self.engine.dialect.driver == "psycopg2":
            return sum(1 for s in self._statements if not s.lstrip().upper().startswith(control))
        return sum(1 for line in self.sent() if not any(f'"{word}' in line for word in control))


def large_table_plan(engine: sa.Engine, statement: Any, params: dict[str, Any]) -> str:
    """The plan of STATEMENT (one of metastore.store.driver's) with PARAMS on ENGINE's
    database, one line per row of the EXPLAIN: SQLite's query plan, or PostgreSQL's planned
    as for large tables (sequential scans off)."""
    sql, values = bound(statement, engine.dialect, params)
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            on_driver(conn, "SET LOCAL enable_seqscan = off", (), fetch=False)
        explain = "EXPLAIN QUERY PLAN " if engine.dialect.name == "sqlite" else "EXPLAIN "
        rows = on_driver(conn, explain + sql, values)
    return "\n".join(" ".join(str(v) for v in row) for row in rows)


def _recording_cursor(statements: list[str]) -> Any:
    """A psycopg2 cursor class that appends the SQL of every execution to STATEMENTS."""
    import psycopg2.extensions

    class RecordingCursor(psycopg2.extensions.cursor):  # type: ignore[misc]
        def execute(self, query: Any, params: Any = None) -> Any:
            statements.append(query if isinstance(query, str) else query.decode())
            return super().execute(query, params)

        def executemany(self, query: Any, params_list: Any) -> Any:
            statements.append(query if isinstance(query, str) else query.decode())
            return super().executemany(query, params_list)

    return RecordingCursor
