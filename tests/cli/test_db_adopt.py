"""`metastore db` on a database that a Hive Metastore made (HMS 2.3.10 on PostgreSQL, filled
through its own calls; tests/hms_postgres.py): what every command says of it before adoption,
and what it refuses."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from cli_runs import metastore

from metastore.cli import EXIT_FAILED, EXIT_OK

pytestmark = [pytest.mark.hms, pytest.mark.postgres]


def _tables(url: str) -> dict[str, list[str]]:
    """Every table of the database at URL with its columns."""
    engine = sa.create_engine(url)
    try:
        inspector = sa.inspect(engine)
        return {
            name: [c["name"] for c in inspector.get_columns(name)]
            for name in sorted(inspector.get_table_names())
        }
    finally:
        engine.dispose()


def test_a_hive_database_is_named_and_left_alone_before_adoption(hms_database: str) -> None:
    before = _tables(hms_database)
    done = metastore("db", "current", "--db", hms_database)
    assert done.returncode == EXIT_OK, done.stderr
    assert done.stdout.endswith(
        ": a Hive Metastore database (schema 2.3.0), not adopted; "
        "`metastore db adopt --db URL` adopts it\n"
    )
    advice = (
        "is a Hive Metastore database (schema 2.3.0), which colstats serves once adopted: back "
        "it up, then run `metastore db adopt --db URL` (`--dry-run` first shows what it adds)\n"
    )
    for command in (
        ["db", "upgrade"],
        ["db", "check"],
        ["serve", "--port", "0"],
        ["serve", "--port", "0", "--no-migrate"],
    ):
        done = metastore(*command, "--db", hms_database)
        assert done.returncode == EXIT_FAILED, (command, done.stderr)
        assert done.stderr.startswith(f"metastore {command[0]}")
        assert done.stderr.endswith(advice), done.stderr
        assert len(done.stderr.splitlines()) == 1
    assert _tables(hms_database) == before


def test_a_hive_schema_colstats_does_not_adopt_is_refused(hms_database: str) -> None:
    engine = sa.create_engine(hms_database)
    with engine.begin() as conn:
        conn.execute(sa.text("""UPDATE "VERSION" SET "SCHEMA_VERSION" = '1.2.0'"""))
    engine.dispose()
    done = metastore("db", "upgrade", "--db", hms_database)
    assert done.returncode == EXIT_FAILED
    assert done.stderr.endswith(
        "cannot be served: it holds a Hive Metastore schema of version 1.2.0; colstats adopts "
        "the schemas of Hive 2.3.x, 3.1.x and 4.x (bring it to one of them with Hive's "
        "schematool first)\n"
    ), done.stderr
