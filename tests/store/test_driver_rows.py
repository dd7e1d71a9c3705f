"""driver.driver_rows: statements built once, run on the transaction's driver
connection, answer as SQLAlchemy does and fail as SQLAlchemy fails (so that Transactions.run
runs a call again after a lost connection or a deadlock), on SQLite and PostgreSQL through
both of its drivers."""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import PG_ADMIN_URL, _postgres_or_skip, empty_database
from sqlalchemy.orm import Session

from metastore.store import lists, migrate, transactions
from metastore.store import models as m
from metastore.store.driver import driver_rows

DRIVERS = [
    "sqlite",
    pytest.param("psycopg", marks=pytest.mark.postgres),
    pytest.param("psycopg2", marks=pytest.mark.postgres),
]


def _migrated(driver: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    backend = "sqlite" if driver == "sqlite" else "postgresql"
    for found in empty_database(backend, tmp_path_factory.mktemp("db")):
        migrate.upgrade(found)
        if backend == "postgresql":
            with_driver = sa.make_url(found).set(drivername=f"postgresql+{driver}")
            found = with_driver.render_as_string(hide_password=False)
        yield found


@pytest.fixture(scope="module", params=DRIVERS)
def url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A migrated database of each backend, reached through each driver."""
    yield from _migrated(request.param, tmp_path_factory)


@pytest.fixture(scope="module", params=DRIVERS[1:])
def postgres_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A migrated PostgreSQL database, reached through each of its drivers."""
    yield from _migrated(request.param, tmp_path_factory)


SDS = m.StorageDescriptor.__table__


def _descriptor(sd_id: int, location: str, *, compressed: bool = False) -> dict[str, Any]:
    """A row of SDS with what it must have."""
    return {
        "SD_ID": sd_id,
        "LOCATION": location,
        "IS_COMPRESSED": compressed,
        "NUM_BUCKETS": -1,
        "IS_STOREDASSUBDIRECTORIES": False,
    }


@functools.cache
def _by_ids(dialect: str) -> sa.Select[tuple[int, str, bool]]:
    c = SDS.c
    return (
        sa.select(c.SD_ID, c.LOCATION, c.IS_COMPRESSED)
        .where(lists.among(dialect, "ids")(c.SD_ID))
        .order_by(c.SD_ID)
    )


@contextlib.contextmanager
def _descriptors(url: str, rows: list[dict[str, Any]]) -> Iterator[tuple[Session, str]]:
    """A session of a transaction in which ROWS of SDS are stored (rolled back at the end),
    with its dialect's name."""
    engine = transactions.create_engine(url, pool_size=1)
    try:
        with Session(engine) as s, s.begin():
            if rows:
                s.execute(SDS.insert(), rows)
            yield s, engine.dialect.name
            s.rollback()
    finally:
        engine.dispose()


def test_the_rows_are_sqlalchemys(url: str) -> None:
    rows = [_descriptor(i, f"file:/l{i}", compressed=i % 2 == 0) for i in (7, 8, 9)]
    with _descriptors(url, rows) as (s, dialect):
        params = {"ids": lists.values(dialect, [8, 7, 99])}
        expected: list[tuple[Any, ...]] = [
            tuple(row) for row in s.execute(_by_ids(dialect), params)
        ]
        assert expected == [(7, "file:/l7", False), (8, "file:/l8", True)]
        found = driver_rows(s, _by_ids(dialect), params)
        assert [(i, loc, bool(flag)) for i, loc, flag in found] == expected


def test_an_error_is_sqlalchemys_and_the_transaction_goes_on_after_rollback(url: str) -> None:
    engine = transactions.create_engine(url, pool_size=1)
    broken: sa.Select[tuple[object]] = sa.select(sa.column("x")).select_from(
        sa.table("NO_SUCH_TABLE")
    )
    try:
        with Session(engine) as s:
            s.begin()
            with pytest.raises(sa.exc.DBAPIError) as raised:
                driver_rows(s, broken, {})
            assert "NO_SUCH_TABLE" in str(raised.value)
            assert not raised.value.connection_invalidated
            s.rollback()
            s.begin()
            assert (
                driver_rows(
                    s, _by_ids(engine.dialect.name), {"ids": lists.values(engine.dialect.name, [1])}
                )
                == []
            )
            s.rollback()
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.parametrize("driver", ["psycopg", "psycopg2"])
def test_a_connection_lost_under_a_driver_statement_is_replaced_and_the_call_run_again(
    driver: str,
) -> None:
    admin = _postgres_or_skip()
    url = sa.make_url(PG_ADMIN_URL).set(drivername=f"postgresql+{driver}")
    engine = transactions.create_engine(url.render_as_string(hide_password=False), pool_size=1)
    attempts: list[int] = []

    def work(s: Session) -> list[tuple[object, ...]]:
        attempts.append(1)
        if len(attempts) == 1:  # the server ends this connection's backend under it
            pid = s.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
            with admin.connect() as conn:
                conn.exec_driver_sql(f"SELECT pg_terminate_backend({pid})")
        return [tuple(row) for row in driver_rows(s, sa.select(sa.literal(42, sa.Integer)), {})]

    try:
        rows = transactions.Transactions(engine).run(work, name="work", write=False)
    finally:
        engine.dispose()
        admin.dispose()
    assert rows == [(42,)]
    assert len(attempts) == 2


@functools.cache
def _by_locations(dialect: str) -> tuple[sa.Select[tuple[str]], sa.Select[tuple[str]]]:
    """The descriptors whose LOCATION is among parameter `names`: as a semi-join and as
    `= ANY(...)`."""
    c = SDS.c
    among = sa.select(c.LOCATION).where(lists.among(dialect, "names", text=True)(c.LOCATION))
    any_of = sa.select(c.LOCATION).where(lists.any_of(dialect, "names", text=True)(c.LOCATION))
    return among.order_by(c.LOCATION), any_of.order_by(c.LOCATION)


AWKWARD = ['a"b', "back\\slash", "{x,y}", "NULL", " spaced ", "ü/ds=2024", "", "it's", '\\"']


def test_lists_of_text_find_values_with_quotes_backslashes_and_braces(url: str) -> None:
    """A list is one parameter (on PostgreSQL, the text of an array): every value comes back
    as it was stored, whatever characters it holds, and a list of none finds nothing."""
    rows = [_descriptor(i, name) for i, name in enumerate([*AWKWARD, "other"], start=1)]
    with _descriptors(url, rows) as (s, dialect):
        for statement in _by_locations(dialect):
            found = driver_rows(s, statement, {"names": lists.values(dialect, AWKWARD)})
            # Compared in Python's order: the database's collation may order them otherwise.
            assert sorted(row[0] for row in found) == sorted(AWKWARD)
            assert driver_rows(s, statement, {"names": lists.values(dialect, [])}) == []


NAN = float("nan")
# (the array's item type, the values sent, the values read back) on PostgreSQL.
ARRAYS: dict[str, tuple[Any, list[Any], list[Any]]] = {
    "bigint": (
        sa.BigInteger(),
        [0, -1, 2**63 - 1, -(2**63), None, True],
        [0, -1, 2**63 - 1, -(2**63), None, 1],
    ),
    "double": (
        sa.Double(),
        [0.1 + 0.2, 5e-324, 1.7976931348623157e308, -2.5, float("inf"), float("-inf"), None],
        [0.1 + 0.2, 5e-324, 1.7976931348623157e308, -2.5, float("inf"), float("-inf"), None],
    ),
    "text": (sa.Text(), [*AWKWARD, "é€😀", None], [*AWKWARD, "é€😀", None]),
    "bytea": (
        sa.LargeBinary(),
        [b"", bytes(range(256)), b"\\x00", bytearray(b"{,}"), None],
        [b"", bytes(range(256)), b"\\x00", b"{,}", None],
    ),
}


@functools.cache
def _unnest(item_type: str) -> sa.Select[Any]:
    array = sa.cast(sa.bindparam("items"), sa.ARRAY(ARRAYS[item_type][0]))
    return sa.select(sa.func.unnest(array))


@pytest.mark.parametrize("item_type", list(ARRAYS))
def test_an_array_text_reads_back_every_value_of_its_type(
    postgres_url: str, item_type: str
) -> None:
    """lists.array_text, the form of the statistics upsert's arrays on PostgreSQL: every
    value comes back in its order, NULL as None, whatever the driver."""
    _, sent, expected = ARRAYS[item_type]
    with _descriptors(postgres_url, []) as (s, _dialect):
        found = driver_rows(s, _unnest(item_type), {"items": lists.array_text(sent)})
        nan = driver_rows(s, _unnest("double"), {"items": lists.array_text([NAN])})
    got = [bytes(row[0]) if isinstance(row[0], memoryview) else row[0] for row in found]
    assert got == expected
    assert math.isnan(nan[0][0])
