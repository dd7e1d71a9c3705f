"""an index on partition key values, for partial partition specifications

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 19:42:58.832427
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

INDEX = "PARTITION_KEY_VALS_INTEGER_IDX_PART_KEY_VAL_IDX"


def upgrade() -> None:
    op.create_index(INDEX, "PARTITION_KEY_VALS", ["INTEGER_IDX", "PART_KEY_VAL"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name="PARTITION_KEY_VALS")
