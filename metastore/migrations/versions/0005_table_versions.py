"""table versions, moved by every change to a table in the change's transaction

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24 21:30:00.000000

TBL_VERSIONS holds a version per table (metastore.store.versions). Versions are drawn from
the sequence TBL_VERSION_SEQ on PostgreSQL and from the one row of TBL_VERSION_COUNTER on
SQLite. Every existing table gets a version here.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    postgresql = op.get_bind().dialect.name == "postgresql"
    if postgresql:
        op.execute(sa.schema.CreateSequence(sa.Sequence("TBL_VERSION_SEQ")))
    op.create_table(
        "TBL_VERSIONS",
        sa.Column("TBL_ID", Id, nullable=False),
        sa.Column("VERSION", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["TBL_ID"], ["TBLS.TBL_ID"], name="TBL_VERSIONS_TBL_ID_FK", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("TBL_ID", name="TBL_VERSIONS_PK"),
    )
    op.create_table(
        "TBL_VERSION_COUNTER",
        sa.Column("ID", sa.Integer(), nullable=False),
        sa.Column("NEXT_VERSION", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("ID", name="TBL_VERSION_COUNTER_PK"),
    )
    first = "nextval('\"TBL_VERSION_SEQ\"')" if postgresql else "1"
    op.execute(
        f'INSERT INTO "TBL_VERSIONS" ("TBL_ID", "VERSION") SELECT "TBL_ID", {first} FROM "TBLS"'
    )
    op.execute('INSERT INTO "TBL_VERSION_COUNTER" ("ID", "NEXT_VERSION") VALUES (1, 2)')


def downgrade() -> None:
    op.drop_table("TBL_VERSION_COUNTER")
    op.drop_table("TBL_VERSIONS")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(sa.schema.DropSequence(sa.Sequence("TBL_VERSION_SEQ")))
