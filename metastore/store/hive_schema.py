"""Databases that a Hive Metastore made: what they are, told by their VERSION row.

A database made by Hive's schema scripts (schematool), or by HMS itself with DataNucleus's
auto-create, has a one-row VERSION table (VER_ID, SCHEMA_VERSION, VERSION_COMMENT) whose
SCHEMA_VERSION HMS checks at start. colstats serves such a database once it is adopted
(metastore.store.adopt: `metastore db adopt`), which adds what colstats needs and stamps the
Alembic revision; before that, migrating it as if it were empty would fail on its tables.

colstats adopts the schemas of Hive 2.3, 3.1 and 4.x (4.0 and later), the ones HMS clients
in service speak; older or in-between ones are refused, with what was found.
"""

from __future__ import annotations

import dataclasses
import re

import sqlalchemy as sa

ADOPTED_FAMILIES = ("2.3", "3.1", "4")
"""The Hive schemas colstats adopts: 2.3.x, 3.1.x, and 4.x (4.0 and every later 4)."""


class NotAdoptable(Exception):
    """A database that holds a Hive schema colstats does not adopt; the message says which."""


@dataclasses.dataclass(frozen=True)
class HiveDatabase:
    """A database that HMS made."""

    version: str
    """SCHEMA_VERSION as the VERSION row gives it, e.g. "2.3.0"."""
    family: str
    """One of ADOPTED_FAMILIES."""
    adopted: bool
    """Whether colstats has adopted it (its Alembic revision is stamped)."""

    def __str__(self) -> str:
        return f"a Hive Metastore database (schema {self.version})"


def family_of(version: str) -> str | None:
    """The family of ADOPTED_FAMILIES that schema VERSION belongs to, or None."""
    found = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)*(?:[-.].*)?", version.strip())
    if found is None:
        return None
    major, minor = int(found.group(1)), int(found.group(2))
    if (major, minor) in ((2, 3), (3, 1)):
        return f"{major}.{minor}"
    if major == 4:
        return "4"
    return None


def recognize(conn: sa.Connection) -> HiveDatabase | None:
    """The Hive Metastore database behind CONN, or None when it is none (no VERSION table).
    NotAdoptable for a VERSION table whose row is missing, doubled or of a schema colstats
    does not adopt."""
    tables = set(sa.inspect(conn).get_table_names())
    if "VERSION" not in tables:
        return None
    rows = conn.execute(sa.text('SELECT "SCHEMA_VERSION" FROM "VERSION"')).all()
    versions = sorted({str(row[0]) for row in rows})
    if len(versions) != 1:
        found = ", ".join(versions) if versions else "no row"
        raise NotAdoptable(
            f"its VERSION table, which a Hive Metastore database has one row in, has {found}"
        )
    version = versions[0]
    family = family_of(version)
    if family is None:
        raise NotAdoptable(
            f"it holds a Hive Metastore schema of version {version}; colstats adopts the "
            "schemas of Hive 2.3.x, 3.1.x and 4.x (bring it to one of them with Hive's "
            "schematool first)"
        )
    adopted = "alembic_version" in tables and bool(
        conn.execute(sa.text("SELECT count(*) FROM alembic_version")).scalar_one()
    )
    return HiveDatabase(version=version, family=family, adopted=adopted)


def inspect_url(url: str) -> HiveDatabase | None:
    """`recognize` for the database at URL."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return recognize(conn)
    finally:
        engine.dispose()
