"""Schema migrations: the Alembic revisions shipped in the package (metastore/migrations),
run from the `metastore db` command and from `metastore serve` on start, and the comparison
of a database's schema with the models (`metastore db check`)."""

from __future__ import annotations

import logging
import re
import sys
import warnings
from collections.abc import Callable
from importlib import resources

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError

from metastore.store import hive_schema
from metastore.store.hive_schema import HiveDatabase

_OPENING_LINES = ("Context impl %s.", "Will assume %s DDL.")
"""What Alembic logs each time it opens a database (its backend's name, transactional DDL),
which tells a user nothing: `db upgrade` printed both three times, and before a failure's one
line. Its line for each revision it runs ("Running upgrade 0011 -> 0012, ...") stays."""


def _not_opening(record: logging.LogRecord) -> bool:
    return record.msg not in _OPENING_LINES


logging.getLogger("alembic.runtime.migration").addFilter(_not_opening)


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
    """The database is at a revision the shipped migrations do not have: most likely a newer
    colstats migrated it."""


def upgrade(url: str, revision: str = "head") -> None:
    """Migrate the database at URL to REVISION; a Hive Metastore database must be adopted
    first (refuse_unadopted)."""
    refuse_unadopted(url)
    check_target(url, revision, forward=True)
    _run(command.upgrade, url, revision)


def downgrade(url: str, revision: str) -> None:
    check_target(url, revision, forward=False)
    _run(command.downgrade, url, revision)


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
            f"(its newest is {shipped[-1]}): most likely a newer colstats migrated it; run "
            f"that one, or its `metastore db downgrade --revision {shipped[-1]} --db URL` first"
        )


_RELATIVE = re.compile(r"(.*?)([+-])(\d+)")
"""A revision given relative to another (`head-1`, `0005+2`) or to the database's (`-1`)."""


def check_target(url: str, revision: str, *, forward: bool) -> None:
    """Refuse, before anything changes, an upgrade (FORWARD) or downgrade of the database at
    URL to REVISION that Alembic would refuse in its own words (a revision it does not know,
    one further than there are) or, for an upgrade to an older revision, do as nothing:
    UnreachableRevision, saying what to give instead; RevisionFromNewerRelease for a database
    of a newer release. REVISION as Alembic takes it: an id or its unique prefix, base, head,
    any of those followed by +N or -N, or +N / -N from the database's revision."""
    current = current_revision(url)
    refuse_newer_release(url, current)
    shipped = shipped_revisions()
    now = 0 if current is None else shipped.index(current) + 1  # base is 0
    target = _position(revision, shipped, now)
    if target is None or not 0 <= target <= len(shipped):
        if not forward and now == 0:
            raise UnreachableRevision(
                f"--revision {revision}: the database is empty, there is nothing to downgrade"
            )
        given = "a revision of this colstats" if target is None else "within its revisions"
        raise UnreachableRevision(
            f"--revision {revision} is not {given}: {_options(shipped, now, forward)}"
        )
    if forward and target < now:
        raise UnreachableRevision(
            f"--revision {revision} is older than the database's revision {current}: "
            f"`metastore db downgrade --revision {revision} --db URL` goes back to it"
        )
    if not forward and target > now:
        raise UnreachableRevision(
            f"--revision {revision} is newer than the database's revision {current or 'base'}: "
            f"`metastore db upgrade --revision {revision} --db URL` goes forward to it"
        )


def _position(revision: str, shipped: list[str], now: int) -> int | None:
    """Where REVISION lies among SHIPPED (0: base, then 1 for the first revision), NOW being
    the database's; None for a name that is not one of them."""
    relative = _RELATIVE.fullmatch(revision)
    if relative is not None:
        anchor, sign, steps = relative.groups()
        start = now if anchor == "" else _position(anchor, shipped, now)
        if start is None:
            return None
        return start + int(steps) if sign == "+" else start - int(steps)
    if revision == "base":
        return 0
    if revision in ("head", "heads"):
        return len(shipped)
    matches = [i for i, r in enumerate(shipped) if r.startswith(revision)] if revision else []
    return matches[0] + 1 if len(matches) == 1 else None


def _options(shipped: list[str], now: int, forward: bool) -> str:
    """What an upgrade (FORWARD) or a downgrade from position NOW may be given."""
    if forward:
        if now == len(shipped):
            return f"the database is at the newest revision ({shipped[-1]}) already"
        later = _revisions(shipped[now], shipped[-1])
        return f"give head, +N to move N revisions, or {later} (`metastore db history`)"
    earlier = f", or {_revisions(shipped[0], shipped[now - 2])}" if now > 1 else ""
    return f"give base, -N to move N revisions back{earlier} (`metastore db history`)"


def _revisions(first: str, last: str) -> str:
    return f"revision {first}" if first == last else f"a revision from {first} to {last}"


def _run(run: Callable[[Config, str], None], url: str, revision: str) -> None:
    """RUN (Alembic's upgrade or downgrade) to REVISION, checked by check_target: a
    CommandError left (one it does not foresee) still names what was typed."""
    try:
        run(alembic_config(url), revision)
    except CommandError as e:
        raise UnreachableRevision(
            f"--revision {revision}: {str(e).splitlines()[0].rstrip('.')} (`metastore db "
            "history` lists the revisions)"
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


def head_revision() -> str:
    return shipped_revisions()[-1]
