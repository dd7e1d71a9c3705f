"""Statements run on the database driver, inside a transaction of metastore.store.transactions:
compiled once per dialect, and without SQLAlchemy's execution context and result objects,
which cost several times a small statement (measured on one storage descriptor by id: 31
against 4 µs on SQLite, 223 against 117 µs on PostgreSQL). For the statements on the path of
every call: the reads of tables and partitions, the statistics writes, the versions.

A statement run here must be built once (its compilation is kept by its identity) and have
no expanding parameters (a list is one parameter: metastore.store.lists). Errors are raised as
SQLAlchemy's, and a lost connection is invalidated, so that Transactions.run treats them as
any other."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
import sqlalchemy as sa
from sqlalchemy.engine import Dialect
from sqlalchemy.engine.default import DefaultDialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ClauseElement


def driver_rows(s: Session, statement: ClauseElement, params: Mapping[str, Any]) -> list[Any]:
    """The rows of STATEMENT with PARAMS, run in the transaction of S on its driver
    connection: the driver's tuples, without SQLAlchemy's type conversions (SQLite gives 0
    and 1 for booleans, psycopg2 memoryview for bytea)."""
    connection = s.connection()
    return on_driver(connection, *bound(statement, connection.dialect, params))


def driver_execute(
    s: Session, statement: ClauseElement, params: Mapping[str, Any] | Sequence[Mapping[str, Any]]
) -> None:
    """Run STATEMENT, which returns no rows, in the transaction of S on its driver
    connection. A sequence of PARAMS runs it once for each (the driver's executemany: for
    SQLite, where there is no round trip to save; on PostgreSQL a statement of arrays
    writes many rows in one round trip)."""
    connection = s.connection()
    if isinstance(params, Mapping):
        on_driver(connection, *bound(statement, connection.dialect, params), fetch=False)
        return
    if not params:
        return
    sql, first = bound(statement, connection.dialect, params[0])
    batch = [first, *(bound(statement, connection.dialect, p)[1] for p in params[1:])]
    on_driver(connection, sql, batch, fetch=False, many=True)


def bound(
    statement: ClauseElement, dialect: Dialect, params: Mapping[str, Any]
) -> tuple[str, Sequence[Any] | Mapping[str, Any]]:
    """The SQL of STATEMENT for DIALECT and PARAMS as its driver takes them (psycopg 3:
    through `cursor`'s RawCursor)."""
    sql, order, fixed = _compiled(statement, dialect)
    values = {**fixed, **params} if fixed else params
    return sql, values if order is None else [values[n] for n in order]


def cursor(driver_connection: Any, dialect: Dialect) -> Any:
    """A cursor of DRIVER_CONNECTION (of DIALECT) for the SQL of `bound`.

    psycopg 3's is a RawCursor, which sends the SQL as it is, with PostgreSQL's own
    numbered parameters ($1): its default cursor rewrites the SQL's named parameters at
    every run, from a cache that leaves out statements over 4,096 characters or 50
    parameters. The add of partitions (metastore.store.partition_add) is one of those: its
    rewrite took 0.23 ms at every add (p50, timed alone), its statement 1.2 ms."""
    if dialect.driver == "psycopg":
        return psycopg.RawCursor(driver_connection)
    return driver_connection.cursor()


@functools.cache
def _numbered(dialect_class: type[DefaultDialect]) -> DefaultDialect:
    """A dialect of DIALECT_CLASS that writes PostgreSQL's numbered parameters."""
    return dialect_class(paramstyle="numeric_dollar")


@functools.lru_cache(maxsize=256)
def _compiled(
    statement: ClauseElement, dialect: Dialect
) -> tuple[str, tuple[str, ...] | None, dict[str, Any]]:
    """The SQL of STATEMENT for DIALECT; the names of its parameters in their order for a
    positional paramstyle (None for a named one); the values of its literal parameters."""
    if dialect.driver == "psycopg":
        dialect = _numbered(type(dialect))  # type: ignore[arg-type]
    compiled = statement.compile(dialect=dialect)
    order = getattr(compiled, "positiontup", None)  # a SQLCompiler's, for positional styles
    fixed = {
        name: bind.value
        for bind, name in getattr(compiled, "bind_names", {}).items()
        if not bind.required
    }
    return (
        compiled.string,
        tuple(order) if dialect.positional and order is not None else None,
        fixed,
    )


def on_driver(
    connection: sa.Connection,
    sql: str,
    params: Sequence[Any] | Mapping[str, Any],
    *,
    fetch: bool = True,
    many: bool = False,
) -> list[Any]:
    """The rows of SQL with PARAMS (none unless FETCH), run on CONNECTION's driver
    connection (once for each item of PARAMS when MANY); errors raised as SQLAlchemy raises
    them (a connection found dead is invalidated)."""
    dbapi_connection = connection.connection.driver_connection
    assert dbapi_connection is not None
    dialect = connection.dialect
    driver_cursor = cursor(dbapi_connection, dialect)
    try:
        if many:
            driver_cursor.executemany(sql, params)
        else:
            driver_cursor.execute(sql, params)
        return driver_cursor.fetchall() if fetch else []
    except dialect.loaded_dbapi.Error as e:
        lost = dialect.is_disconnect(e, dbapi_connection, driver_cursor)
        if lost:
            connection.invalidate(e)
        raise DBAPIError.instance(
            sql, params, e, dialect.loaded_dbapi.Error, connection_invalidated=lost
        ) from e
    finally:
        driver_cursor.close()
