"""partition versions, moved by a write of statistics to its partitions

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-29 10:00:00.000000

An answer over many partitions is rebuilt from the partitions that changed.

PART_VERSIONS holds a version per partition whose statistics colstats has written since;
TBL_VERSIONS gains PARTS_VERSION (the version of the table's last change that may have
changed any partition) and SEEN_VERSION (the version colstats last gave the table). Both are
NULL here: a table's pieces are used from its next change on (metastore.store.versions).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

Id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("TBL_VERSIONS") as batch:
        batch.add_column(sa.Column("PARTS_VERSION", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("SEEN_VERSION", sa.BigInteger(), nullable=True))
    op.create_table(
        "PART_VERSIONS",
        sa.Column("PART_ID", Id, nullable=False),
        sa.Column("VERSION", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["PART_ID"],
            ["PARTITIONS.PART_ID"],
            name="PART_VERSIONS_PART_ID_FK",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("PART_ID", name="PART_VERSIONS_PK"),
    )


def downgrade() -> None:
    op.drop_table("PART_VERSIONS")
    with op.batch_alter_table("TBL_VERSIONS") as batch:
        batch.drop_column("SEEN_VERSION")
        batch.drop_column("PARTS_VERSION")
