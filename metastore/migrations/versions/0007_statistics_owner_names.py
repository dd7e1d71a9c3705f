"""statistics rows name their owner as HMS's do: CAT_NAME, DB_NAME, TABLE_NAME, PARTITION_NAME

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28 03:00:00.000000

HMS finds column statistics by these names, not by the owner's id alone; colstats sets them
on every write and moves them on renames, so that a database HMS shares reads the same rows.
Every existing row gets the names of its owner here.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def _names() -> list[sa.Column[str]]:
    """The columns added to both tables (first nullable: filled below)."""
    return [
        sa.Column("CAT_NAME", sa.String(256), server_default="hive", nullable=False),
        sa.Column("DB_NAME", sa.String(128), nullable=True),
        sa.Column("TABLE_NAME", sa.String(256), nullable=True),
    ]


def upgrade() -> None:
    with op.batch_alter_table("TAB_COL_STATS") as batch:
        for column in _names():
            batch.add_column(column)
    with op.batch_alter_table("PART_COL_STATS") as batch:
        for column in _names():
            batch.add_column(column)
        batch.add_column(sa.Column("PARTITION_NAME", sa.String(767), nullable=True))
    owner_table = (
        'SELECT d."CTLG_NAME", d."NAME", t."TBL_NAME" FROM "TBLS" t '
        'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE t."TBL_ID" = s."TBL_ID"'
    )
    owner_partition = (
        'SELECT d."CTLG_NAME", d."NAME", t."TBL_NAME", p."PART_NAME" FROM "PARTITIONS" p '
        'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
        'WHERE p."PART_ID" = s."PART_ID"'
    )
    op.execute(
        f'UPDATE "TAB_COL_STATS" AS s SET ("CAT_NAME", "DB_NAME", "TABLE_NAME") = ({owner_table})'
    )
    op.execute(
        f'UPDATE "PART_COL_STATS" AS s SET ("CAT_NAME", "DB_NAME", "TABLE_NAME", '
        f'"PARTITION_NAME") = ({owner_partition})'
    )
    widths = {"DB_NAME": 128, "TABLE_NAME": 256, "PARTITION_NAME": 767}
    for table, names in (
        ("TAB_COL_STATS", ("DB_NAME", "TABLE_NAME")),
        ("PART_COL_STATS", ("DB_NAME", "TABLE_NAME", "PARTITION_NAME")),
    ):
        with op.batch_alter_table(table) as batch:
            for name in names:
                batch.alter_column(name, existing_type=sa.String(widths[name]), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("PART_COL_STATS") as batch:
        for name in ("PARTITION_NAME", "TABLE_NAME", "DB_NAME", "CAT_NAME"):
            batch.drop_column(name)
    with op.batch_alter_table("TAB_COL_STATS") as batch:
        for name in ("TABLE_NAME", "DB_NAME", "CAT_NAME"):
            batch.drop_column(name)
