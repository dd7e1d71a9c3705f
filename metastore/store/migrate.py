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
from alembic.util import CommandError

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


class UnreachableRevision(Exception):
    """A target revision the shipped migrations do not have, or that lies the other way from
    the database's revision (an upgrade to an older one): what was typed must change."""


class RevisionFromNewerRelease(Exception):
    """The database is at a revision the shipped migrations do not have: a newer colstats
    migrated it."""


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at URL to REVISION; a Hive Metastore database must be adopted
    first (refuse_unadopted)."""
    refuse_unadopted(url)
    _migrate(url, revision, forward=True)


def downgrade(url: str, revision: str) -> None:
    _migrate(url, revision, forward=False)


def shipped_revisions() -> list[str]:
    """The revisions shipped in the package, oldest first."""
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def refuse_newer_release(url: str, current: str | None) -> None:
    """RevisionFromNewerRelease when CURRENT, the revision of the database at URL, is not one
    this package ships."""
    from metastore.store.transactions import safe_url

    shipped = shipped_revisions()
    if current is not None and current not in shipped:
        raise RevisionFromNewerRelease(
            f"{safe_url(url)} is at revision {current}, which this colstats does not have "
            f"(its newest is {shipped[-1]}): a newer colstats migrated it; run that one"
        )


def _migrate(url: str, revision: str, forward: bool) -> None:
    """Upgrade (FORWARD) or downgrade to REVISION. Alembic raises one CommandError for a
    database from a newer release and for a target it cannot reach, and upgrades "to" an older
    revision by doing nothing: each is told apart and said here."""
    shipped = shipped_revisions()
    current = current_revision(url)
    refuse_newer_release(url, current)
    if current is not None and revision in shipped:
        position, now = shipped.index(revision), shipped.index(current)
        if forward and position < now:
            raise UnreachableRevision(
                f"--revision {revision} is older than the database's revision {current}: "
                f"`metastore db downgrade --revision {revision}` goes back to it"
            )
        if not forward and position > now:
            raise UnreachableRevision(
                f"--revision {revision} is newer than the database's revision {current}: "
                f"`metastore db upgrade --revision {revision}` goes forward to it"
            )
    run = command.upgrade if forward else command.downgrade
    try:
        run(alembic_config(url), revision)
    except CommandError as e:
        # The database's revision is one shipped: the target is what could not be resolved.
        raise UnreachableRevision(
            f"--revision {revision}: {str(e).splitlines()[0].rstrip('.')}; give base, a "
            f"revision from {shipped[0]} to {shipped[-1]}, head, or -N / +N to move N "
            "revisions (`metastore db history`)"
        ) from None


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
