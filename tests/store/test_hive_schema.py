"""metastore.store.hive_schema on SQLite and PostgreSQL: a database is told to be a Hive
Metastore's by its VERSION row, of a family colstats adopts (2.3.x, 3.1.x, 4.x) or refused
with what was found (no row, several versions, another version), and adopted once its
Alembic revision is stamped."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from core_builders import raises, store_engine

from metastore.store import hive_schema
from metastore.store.hive_schema import HiveDatabase, NotAdoptable

ADOPTS = (
    "colstats adopts the schemas of Hive 2.3.x, 3.1.x and 4.x (bring it to one of them with "
    "Hive's schematool first)"
)


@pytest.mark.parametrize(
    ("version", "family"),
    [
        ("2.3.0", "2.3"),
        ("2.3.9", "2.3"),
        (" 2.3.0\n", "2.3"),
        ("3.1.0", "3.1"),
        ("3.1.3000.7.1.8.0-801", "3.1"),  # a vendor's build of 3.1
        ("4.0.0", "4"),
        ("4.0.0-alpha-2", "4"),
        ("4.1.0", "4"),
        ("4.2", "4"),
        ("2.1.0", None),
        ("2.2.0", None),
        ("3.0.0", None),
        ("1.2.0", None),
        ("5.0.0", None),
        ("23.0", None),
        ("2", None),
        ("", None),
        ("version 2.3.0", None),
        ("2.3a", None),
    ],
)
def test_the_family_of_a_version(version: str, family: str | None) -> None:
    assert hive_schema.family_of(version) == family


@pytest.fixture
def conn(migrated_url: str) -> Iterator[sa.Connection]:
    """A connection to colstats's own database, in a transaction rolled back at the end
    (both databases roll DDL back; SQLite's through the server's engine, which begins its
    transactions itself)."""
    engine = store_engine(migrated_url)
    try:
        with engine.connect() as connection:
            transaction = connection.begin()
            yield connection
            transaction.rollback()
    finally:
        engine.dispose()


def _version_table(conn: sa.Connection, *versions: str) -> None:
    conn.execute(
        sa.text(
            'CREATE TABLE "VERSION" ("VER_ID" BIGINT PRIMARY KEY, '
            '"SCHEMA_VERSION" VARCHAR(127) NOT NULL, "VERSION_COMMENT" VARCHAR(255))'
        )
    )
    for i, version in enumerate(versions, start=1):
        conn.execute(
            sa.text('INSERT INTO "VERSION" VALUES (:id, :version, :comment)'),
            {"id": i, "version": version, "comment": "Hive release version " + version},
        )


def test_colstats_own_database_is_no_hive_database(conn: sa.Connection) -> None:
    assert hive_schema.recognize(conn) is None


def test_a_hive_database_is_recognized_and_adopted_once_stamped(conn: sa.Connection) -> None:
    _version_table(conn, "3.1.0")
    found = hive_schema.recognize(conn)
    # colstats's database has its Alembic revision stamped: as if adopted.
    assert found == HiveDatabase(version="3.1.0", family="3.1", adopted=True)
    assert str(found) == "a Hive Metastore database (schema 3.1.0)"
    conn.execute(sa.text("DELETE FROM alembic_version"))
    assert hive_schema.recognize(conn) == HiveDatabase("3.1.0", "3.1", adopted=False)
    conn.execute(sa.text("DROP TABLE alembic_version"))
    assert hive_schema.recognize(conn) == HiveDatabase("3.1.0", "3.1", adopted=False)


def test_one_version_in_several_rows_is_that_version(conn: sa.Connection) -> None:
    _version_table(conn, "4.0.0", "4.0.0")
    found = hive_schema.recognize(conn)
    assert found is not None and (found.version, found.family) == ("4.0.0", "4")


@pytest.mark.parametrize(
    ("versions", "message"),
    [
        ((), "its VERSION table, which a Hive Metastore database has one row in, has no row"),
        (
            ("3.1.0", "2.3.0"),
            "its VERSION table, which a Hive Metastore database has one row in, has 2.3.0, 3.1.0",
        ),
        (("2.1.0",), f"it holds a Hive Metastore schema of version 2.1.0; {ADOPTS}"),
        (("3.0.0",), f"it holds a Hive Metastore schema of version 3.0.0; {ADOPTS}"),
    ],
)
def test_what_colstats_does_not_adopt_is_refused(
    conn: sa.Connection, versions: tuple[str, ...], message: str
) -> None:
    _version_table(conn, *versions)
    with raises(NotAdoptable, message):
        hive_schema.recognize(conn)


def test_a_database_by_url(database_url: str) -> None:
    assert hive_schema.inspect_url(database_url) is None  # empty
    engine = sa.create_engine(database_url)
    try:
        with engine.begin() as connection:
            _version_table(connection, "2.3.0")
    finally:
        engine.dispose()
    assert hive_schema.inspect_url(database_url) == HiveDatabase("2.3.0", "2.3", adopted=False)
