"""functions (FUNCS, FUNC_RU) and skewed values (SKEWED_*)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23 14:44:28.866687
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "SKEWED_STRING_LIST",
        sa.Column(
            "STRING_LIST_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.PrimaryKeyConstraint("STRING_LIST_ID", name=op.f("SKEWED_STRING_LIST_PK")),
    )
    op.create_table(
        "FUNCS",
        sa.Column("FUNC_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("DB_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("FUNC_NAME", sa.String(length=128), nullable=False),
        sa.Column("CLASS_NAME", sa.String(length=4000), nullable=True),
        sa.Column("OWNER_NAME", sa.String(length=128), nullable=True),
        sa.Column("OWNER_TYPE", sa.String(length=10), nullable=True),
        sa.Column("CREATE_TIME", sa.BigInteger(), nullable=False),
        sa.Column("FUNC_TYPE", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["DB_ID"], ["DBS.DB_ID"], name=op.f("FUNCS_DB_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("FUNC_ID", name=op.f("FUNCS_PK")),
        sa.UniqueConstraint("FUNC_NAME", "DB_ID", name=op.f("FUNCS_FUNC_NAME_DB_ID_UQ")),
    )
    op.create_table(
        "SKEWED_STRING_LIST_VALUES",
        sa.Column(
            "STRING_LIST_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.Column("STRING_LIST_VALUE", sa.String(length=256), nullable=True),
        sa.ForeignKeyConstraint(
            ["STRING_LIST_ID"],
            ["SKEWED_STRING_LIST.STRING_LIST_ID"],
            name=op.f("SKEWED_STRING_LIST_VALUES_STRING_LIST_ID_FK"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "STRING_LIST_ID", "INTEGER_IDX", name=op.f("SKEWED_STRING_LIST_VALUES_PK")
        ),
    )
    op.create_table(
        "FUNC_RU",
        sa.Column("FUNC_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.Column("RESOURCE_TYPE", sa.Integer(), nullable=False),
        sa.Column("RESOURCE_URI", sa.String(length=4000), nullable=True),
        sa.ForeignKeyConstraint(
            ["FUNC_ID"], ["FUNCS.FUNC_ID"], name=op.f("FUNC_RU_FUNC_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("FUNC_ID", "INTEGER_IDX", name=op.f("FUNC_RU_PK")),
    )
    op.create_table(
        "SKEWED_COL_NAMES",
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.Column("SKEWED_COL_NAME", sa.String(length=256), nullable=True),
        sa.ForeignKeyConstraint(
            ["SD_ID"], ["SDS.SD_ID"], name=op.f("SKEWED_COL_NAMES_SD_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("SD_ID", "INTEGER_IDX", name=op.f("SKEWED_COL_NAMES_PK")),
    )
    op.create_table(
        "SKEWED_COL_VALUE_LOC_MAP",
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "STRING_LIST_ID_KID",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
        ),
        sa.Column("LOCATION", sa.String(length=4000), nullable=True),
        sa.ForeignKeyConstraint(
            ["SD_ID"],
            ["SDS.SD_ID"],
            name=op.f("SKEWED_COL_VALUE_LOC_MAP_SD_ID_FK"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["STRING_LIST_ID_KID"],
            ["SKEWED_STRING_LIST.STRING_LIST_ID"],
            name=op.f("SKEWED_COL_VALUE_LOC_MAP_STRING_LIST_ID_KID_FK"),
        ),
        sa.PrimaryKeyConstraint(
            "SD_ID", "STRING_LIST_ID_KID", name=op.f("SKEWED_COL_VALUE_LOC_MAP_PK")
        ),
    )
    op.create_table(
        "SKEWED_VALUES",
        sa.Column(
            "SD_ID_OID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.Column(
            "STRING_LIST_ID_EID",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(
            ["SD_ID_OID"],
            ["SDS.SD_ID"],
            name=op.f("SKEWED_VALUES_SD_ID_OID_FK"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["STRING_LIST_ID_EID"],
            ["SKEWED_STRING_LIST.STRING_LIST_ID"],
            name=op.f("SKEWED_VALUES_STRING_LIST_ID_EID_FK"),
        ),
        sa.PrimaryKeyConstraint("SD_ID_OID", "INTEGER_IDX", name=op.f("SKEWED_VALUES_PK")),
    )
    with op.batch_alter_table("SKEWED_VALUES", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("SKEWED_VALUES_STRING_LIST_ID_EID_IDX"), ["STRING_LIST_ID_EID"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("SKEWED_VALUES", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("SKEWED_VALUES_STRING_LIST_ID_EID_IDX"))

    op.drop_table("SKEWED_VALUES")
    op.drop_table("SKEWED_COL_VALUE_LOC_MAP")
    op.drop_table("SKEWED_COL_NAMES")
    op.drop_table("FUNC_RU")
    op.drop_table("SKEWED_STRING_LIST_VALUES")
    op.drop_table("FUNCS")
    op.drop_table("SKEWED_STRING_LIST")
