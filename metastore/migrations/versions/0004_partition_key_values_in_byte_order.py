"""an index of partition key values in byte order, on PostgreSQL

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24 02:45:00.000000

Partition filters compare string keys in byte order (COLLATE "C"); the index of 0003 is in
the database's collation, so PostgreSQL read every value of a key for a range or a `like`
prefix. SQLite's index of 0003 is in byte order already.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

INDEX = "PARTITION_KEY_VALS_BYTE_ORDER_IDX"


def upgrade() -> None:
    # Built CONCURRENTLY (outside a transaction): partitions can still be added while a
    # large metastore's index is built.
    if op.get_bind().dialect.name == "postgresql":
        with op.get_context().autocommit_block():
            op.create_index(
                INDEX,
                "PARTITION_KEY_VALS",
                ["INTEGER_IDX", sa.text('"PART_KEY_VAL" COLLATE "C"')],
                postgresql_concurrently=True,
                if_not_exists=True,
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        with op.get_context().autocommit_block():
            op.drop_index(
                INDEX,
                table_name="PARTITION_KEY_VALS",
                postgresql_concurrently=True,
                if_exists=True,
            )
