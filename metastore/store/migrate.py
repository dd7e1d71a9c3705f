"""Schema migrations: the Alembic revisions shipped in the package (metastore/migrations),
run from the `metastore db` command and from `metastore serve` on start, and the comparison
of a database's schema with the models (`metastore db check`)."""

from __future__ import annotations

import sys
import warnings
from importlib import resources

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from metastore.store import hive_schema
from metastore.store.hive_schema import HiveDatabase


def alembic_config(url: str) -> Config:
    """An Alembic configuration that runs the migrations shipped inside the package."""
    config = Config(stdout=sys.stdout)  # the current stdout, not the one at import
    script_location = resources.files("metastore.migrations")
    config.set_main_option("script_location", str(script_location))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


class UnadoptedHiveDatabase(Exception):
    """A Hive Metastore database that colstats has not adopted: migrating it as an empty one
    would fail on its tables. The message says what to do."""


def refuse_unadopted(url: str) -> HiveDatabase | None:
    """The Hive Metastore database at URL, if it is one; UnadoptedHiveDatabase when colstats
    has not adopted it, hive_schema.NotAdoptable (with the URL) when it cannot."""
    from metastore.store.transactions import safe_url

    where = safe_url(url)
    try:
        found = hive_schema.inspect_url(url)
    except hive_schema.NotAdoptable as e:
        raise hive_schema.NotAdoptable(f"{where} cannot be served: {e}") from None
    if found is not None and not found.adopted:
        raise UnadoptedHiveDatabase(
            f"{where} is {found}, which colstats serves once adopted: back it up, then run "
            f"`metastore db adopt --db URL` (`--dry-run` first shows what it adds)"
        )
    return found


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at URL to REVISION; a Hive Metastore database must be adopted
    first (refuse_unadopted)."""
    refuse_unadopted(url)
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str) -> None:
    command.downgrade(alembic_config(url), revision)


def current_revision(url: str) -> str | None:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def schema_differences(url: str) -> list[str]:
    """How the schema of the database at URL differs in meaning from the models
    (metastore.store.schema_check); empty when it does not."""
    from metastore.store import schema_check

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn, warnings.catch_warnings():
            # An index on an expression (a collation) reflects without its column.
            warnings.filterwarnings("ignore", ".*expression-based index")
            return schema_check.differences(conn)
    finally:
        engine.dispose()


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
