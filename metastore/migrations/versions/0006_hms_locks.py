"""HMS locks: HIVE_LOCKS and NEXT_LOCK_ID, as HMS keeps them

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28 02:00:00.000000

The locks that Iceberg's Hive catalog takes around a commit (metastore.store.locks), in the
tables and columns of HMS's own schema. NEXT_LOCK_ID starts with one row: the first lock
id is 1.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "HIVE_LOCKS",
        sa.Column("HL_LOCK_EXT_ID", sa.BigInteger(), nullable=False),
        sa.Column("HL_LOCK_INT_ID", sa.BigInteger(), nullable=False),
        sa.Column("HL_TXNID", sa.BigInteger(), nullable=False),
        sa.Column("HL_DB", sa.String(128), nullable=False),
        sa.Column("HL_TABLE", sa.String(256), nullable=True),
        sa.Column("HL_PARTITION", sa.String(767), nullable=True),
        sa.Column("HL_LOCK_STATE", sa.String(1), nullable=False),
        sa.Column("HL_LOCK_TYPE", sa.String(1), nullable=False),
        sa.Column("HL_LAST_HEARTBEAT", sa.BigInteger(), nullable=False),
        sa.Column("HL_ACQUIRED_AT", sa.BigInteger(), nullable=True),
        sa.Column("HL_USER", sa.String(128), nullable=False),
        sa.Column("HL_HOST", sa.String(128), nullable=False),
        sa.Column("HL_HEARTBEAT_COUNT", sa.Integer(), nullable=True),
        sa.Column("HL_AGENT_INFO", sa.String(128), nullable=True),
        sa.Column("HL_BLOCKEDBY_EXT_ID", sa.BigInteger(), nullable=True),
        sa.Column("HL_BLOCKEDBY_INT_ID", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("HL_LOCK_EXT_ID", "HL_LOCK_INT_ID", name="HIVE_LOCKS_PK"),
    )
    op.create_table("NEXT_LOCK_ID", sa.Column("NL_NEXT", sa.BigInteger(), nullable=False))
    op.execute('INSERT INTO "NEXT_LOCK_ID" ("NL_NEXT") VALUES (1)')


def downgrade() -> None:
    op.drop_table("NEXT_LOCK_ID")
    op.drop_table("HIVE_LOCKS")
