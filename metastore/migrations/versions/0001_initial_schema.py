"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 04:38:39.252469
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "CDS",
        sa.Column("CD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.PrimaryKeyConstraint("CD_ID", name=op.f("CDS_PK")),
    )
    op.create_table(
        "DBS",
        sa.Column("DB_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("NAME", sa.String(length=128), nullable=False),
        sa.Column("CTLG_NAME", sa.String(length=256), server_default="hive", nullable=False),
        sa.Column("DESC", sa.String(length=4000), nullable=True),
        sa.Column("DB_LOCATION_URI", sa.String(length=4000), nullable=False),
        sa.Column("OWNER_NAME", sa.String(length=128), nullable=True),
        sa.Column("OWNER_TYPE", sa.String(length=10), nullable=True),
        sa.Column("CREATE_TIME", sa.BigInteger(), nullable=True),
        sa.Column("DB_MANAGED_LOCATION_URI", sa.String(length=4000), nullable=True),
        sa.Column("TYPE", sa.String(length=32), server_default="NATIVE", nullable=False),
        sa.Column("DATACONNECTOR_NAME", sa.String(length=128), nullable=True),
        sa.Column("REMOTE_DBNAME", sa.String(length=128), nullable=True),
        sa.PrimaryKeyConstraint("DB_ID", name=op.f("DBS_PK")),
        sa.UniqueConstraint("NAME", "CTLG_NAME", name=op.f("DBS_NAME_CTLG_NAME_UQ")),
    )
    op.create_table(
        "SERDES",
        sa.Column("SERDE_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("NAME", sa.String(length=128), nullable=True),
        sa.Column("SLIB", sa.String(length=4000), nullable=True),
        sa.Column("DESCRIPTION", sa.String(length=4000), nullable=True),
        sa.Column("SERIALIZER_CLASS", sa.String(length=4000), nullable=True),
        sa.Column("DESERIALIZER_CLASS", sa.String(length=4000), nullable=True),
        sa.Column("SERDE_TYPE", sa.Integer(), nullable=True),
        sa.PrimaryKeyConstraint("SERDE_ID", name=op.f("SERDES_PK")),
    )
    op.create_table(
        "COLUMNS_V2",
        sa.Column("CD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("COLUMN_NAME", sa.String(length=767), nullable=False),
        sa.Column("TYPE_NAME", sa.Text(), nullable=True),
        sa.Column("COMMENT", sa.String(length=4000), nullable=True),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["CD_ID"], ["CDS.CD_ID"], name=op.f("COLUMNS_V2_CD_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("CD_ID", "COLUMN_NAME", name=op.f("COLUMNS_V2_PK")),
    )
    op.create_table(
        "DATABASE_PARAMS",
        sa.Column("DB_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("PARAM_KEY", sa.String(length=180), nullable=False),
        sa.Column("PARAM_VALUE", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["DB_ID"], ["DBS.DB_ID"], name=op.f("DATABASE_PARAMS_DB_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("DB_ID", "PARAM_KEY", name=op.f("DATABASE_PARAMS_PK")),
    )
    op.create_table(
        "SDS",
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("CD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("SERDE_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("INPUT_FORMAT", sa.String(length=4000), nullable=True),
        sa.Column("OUTPUT_FORMAT", sa.String(length=4000), nullable=True),
        sa.Column("LOCATION", sa.String(length=4000), nullable=True),
        sa.Column("IS_COMPRESSED", sa.Boolean(), nullable=False),
        sa.Column("NUM_BUCKETS", sa.BigInteger(), nullable=False),
        sa.Column("IS_STOREDASSUBDIRECTORIES", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["CD_ID"], ["CDS.CD_ID"], name=op.f("SDS_CD_ID_FK")),
        sa.ForeignKeyConstraint(["SERDE_ID"], ["SERDES.SERDE_ID"], name=op.f("SDS_SERDE_ID_FK")),
        sa.PrimaryKeyConstraint("SD_ID", name=op.f("SDS_PK")),
    )
    with op.batch_alter_table("SDS", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("SDS_CD_ID_IDX"), ["CD_ID"], unique=False)
        batch_op.create_index(batch_op.f("SDS_SERDE_ID_IDX"), ["SERDE_ID"], unique=False)

    op.create_table(
        "SERDE_PARAMS",
        sa.Column("SERDE_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("PARAM_KEY", sa.String(length=256), nullable=False),
        sa.Column("PARAM_VALUE", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["SERDE_ID"],
            ["SERDES.SERDE_ID"],
            name=op.f("SERDE_PARAMS_SERDE_ID_FK"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("SERDE_ID", "PARAM_KEY", name=op.f("SERDE_PARAMS_PK")),
    )
    op.create_table(
        "BUCKETING_COLS",
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.Column("BUCKET_COL_NAME", sa.String(length=256), nullable=True),
        sa.ForeignKeyConstraint(
            ["SD_ID"], ["SDS.SD_ID"], name=op.f("BUCKETING_COLS_SD_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("SD_ID", "INTEGER_IDX", name=op.f("BUCKETING_COLS_PK")),
    )
    op.create_table(
        "SD_PARAMS",
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("PARAM_KEY", sa.String(length=256), nullable=False),
        sa.Column("PARAM_VALUE", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["SD_ID"], ["SDS.SD_ID"], name=op.f("SD_PARAMS_SD_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("SD_ID", "PARAM_KEY", name=op.f("SD_PARAMS_PK")),
    )
    op.create_table(
        "SORT_COLS",
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.Column("COLUMN_NAME", sa.String(length=767), nullable=True),
        sa.Column("ORDER", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["SD_ID"], ["SDS.SD_ID"], name=op.f("SORT_COLS_SD_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("SD_ID", "INTEGER_IDX", name=op.f("SORT_COLS_PK")),
    )
    op.create_table(
        "TBLS",
        sa.Column("TBL_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("DB_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("TBL_NAME", sa.String(length=256), nullable=False),
        sa.Column("TBL_TYPE", sa.String(length=128), nullable=True),
        sa.Column("OWNER", sa.String(length=767), nullable=True),
        sa.Column("OWNER_TYPE", sa.String(length=10), nullable=True),
        sa.Column("CREATE_TIME", sa.BigInteger(), nullable=False),
        sa.Column("LAST_ACCESS_TIME", sa.BigInteger(), nullable=False),
        sa.Column("RETENTION", sa.BigInteger(), nullable=False),
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("VIEW_ORIGINAL_TEXT", sa.Text(), nullable=True),
        sa.Column("VIEW_EXPANDED_TEXT", sa.Text(), nullable=True),
        sa.Column("IS_REWRITE_ENABLED", sa.Boolean(), server_default=sa.false(), nullable=False),
        sa.Column("WRITE_ID", sa.BigInteger(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["DB_ID"], ["DBS.DB_ID"], name=op.f("TBLS_DB_ID_FK"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["SD_ID"], ["SDS.SD_ID"], name=op.f("TBLS_SD_ID_FK")),
        sa.PrimaryKeyConstraint("TBL_ID", name=op.f("TBLS_PK")),
        sa.UniqueConstraint("DB_ID", "TBL_NAME", name=op.f("TBLS_DB_ID_TBL_NAME_UQ")),
    )
    with op.batch_alter_table("TBLS", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("TBLS_SD_ID_IDX"), ["SD_ID"], unique=False)

    op.create_table(
        "PARTITIONS",
        sa.Column("PART_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("TBL_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("PART_NAME", sa.String(length=767), nullable=False),
        sa.Column("CREATE_TIME", sa.BigInteger(), nullable=False),
        sa.Column("LAST_ACCESS_TIME", sa.BigInteger(), nullable=False),
        sa.Column("SD_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("WRITE_ID", sa.BigInteger(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(["SD_ID"], ["SDS.SD_ID"], name=op.f("PARTITIONS_SD_ID_FK")),
        sa.ForeignKeyConstraint(
            ["TBL_ID"], ["TBLS.TBL_ID"], name=op.f("PARTITIONS_TBL_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("PART_ID", name=op.f("PARTITIONS_PK")),
        sa.UniqueConstraint("TBL_ID", "PART_NAME", name=op.f("PARTITIONS_TBL_ID_PART_NAME_UQ")),
    )
    with op.batch_alter_table("PARTITIONS", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("PARTITIONS_SD_ID_IDX"), ["SD_ID"], unique=False)

    op.create_table(
        "PARTITION_KEYS",
        sa.Column("TBL_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("PKEY_NAME", sa.String(length=128), nullable=False),
        sa.Column("PKEY_TYPE", sa.String(length=767), nullable=False),
        sa.Column("PKEY_COMMENT", sa.String(length=4000), nullable=True),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["TBL_ID"], ["TBLS.TBL_ID"], name=op.f("PARTITION_KEYS_TBL_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("TBL_ID", "PKEY_NAME", name=op.f("PARTITION_KEYS_PK")),
    )
    op.create_table(
        "TABLE_PARAMS",
        sa.Column("TBL_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("PARAM_KEY", sa.String(length=256), nullable=False),
        sa.Column("PARAM_VALUE", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["TBL_ID"], ["TBLS.TBL_ID"], name=op.f("TABLE_PARAMS_TBL_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("TBL_ID", "PARAM_KEY", name=op.f("TABLE_PARAMS_PK")),
    )
    op.create_table(
        "TAB_COL_STATS",
        sa.Column("TBL_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("CS_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("COLUMN_NAME", sa.String(length=767), nullable=False),
        sa.Column("COLUMN_TYPE", sa.String(length=128), nullable=False),
        sa.Column("STATS_KIND", sa.String(length=16), nullable=False),
        sa.Column("ENGINE", sa.String(length=128), server_default="hive", nullable=False),
        sa.Column("LONG_LOW_VALUE", sa.BigInteger(), nullable=True),
        sa.Column("LONG_HIGH_VALUE", sa.BigInteger(), nullable=True),
        sa.Column("DOUBLE_LOW_VALUE", sa.Float(precision=53), nullable=True),
        sa.Column("DOUBLE_HIGH_VALUE", sa.Float(precision=53), nullable=True),
        sa.Column("BIG_DECIMAL_LOW_VALUE", sa.String(length=4000), nullable=True),
        sa.Column("BIG_DECIMAL_HIGH_VALUE", sa.String(length=4000), nullable=True),
        sa.Column("NUM_NULLS", sa.BigInteger(), nullable=False),
        sa.Column("NUM_DISTINCTS", sa.BigInteger(), nullable=True),
        sa.Column("BIT_VECTOR", sa.LargeBinary(), nullable=True),
        sa.Column("HISTOGRAM", sa.LargeBinary(), nullable=True),
        sa.Column("AVG_COL_LEN", sa.Float(precision=53), nullable=True),
        sa.Column("MAX_COL_LEN", sa.BigInteger(), nullable=True),
        sa.Column("NUM_TRUES", sa.BigInteger(), nullable=True),
        sa.Column("NUM_FALSES", sa.BigInteger(), nullable=True),
        sa.Column("LAST_ANALYZED", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["TBL_ID"], ["TBLS.TBL_ID"], name=op.f("TAB_COL_STATS_TBL_ID_FK"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("CS_ID", name=op.f("TAB_COL_STATS_PK")),
        sa.UniqueConstraint(
            "TBL_ID",
            "COLUMN_NAME",
            "ENGINE",
            name=op.f("TAB_COL_STATS_TBL_ID_COLUMN_NAME_ENGINE_UQ"),
        ),
    )
    op.create_table(
        "PARTITION_KEY_VALS",
        sa.Column("PART_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("INTEGER_IDX", sa.Integer(), nullable=False),
        sa.Column("PART_KEY_VAL", sa.String(length=256), nullable=True),
        sa.ForeignKeyConstraint(
            ["PART_ID"],
            ["PARTITIONS.PART_ID"],
            name=op.f("PARTITION_KEY_VALS_PART_ID_FK"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("PART_ID", "INTEGER_IDX", name=op.f("PARTITION_KEY_VALS_PK")),
    )
    op.create_table(
        "PARTITION_PARAMS",
        sa.Column("PART_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("PARAM_KEY", sa.String(length=256), nullable=False),
        sa.Column("PARAM_VALUE", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["PART_ID"],
            ["PARTITIONS.PART_ID"],
            name=op.f("PARTITION_PARAMS_PART_ID_FK"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("PART_ID", "PARAM_KEY", name=op.f("PARTITION_PARAMS_PK")),
    )
    op.create_table(
        "PART_COL_STATS",
        sa.Column("PART_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("CS_ID", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("COLUMN_NAME", sa.String(length=767), nullable=False),
        sa.Column("COLUMN_TYPE", sa.String(length=128), nullable=False),
        sa.Column("STATS_KIND", sa.String(length=16), nullable=False),
        sa.Column("ENGINE", sa.String(length=128), server_default="hive", nullable=False),
        sa.Column("LONG_LOW_VALUE", sa.BigInteger(), nullable=True),
        sa.Column("LONG_HIGH_VALUE", sa.BigInteger(), nullable=True),
        sa.Column("DOUBLE_LOW_VALUE", sa.Float(precision=53), nullable=True),
        sa.Column("DOUBLE_HIGH_VALUE", sa.Float(precision=53), nullable=True),
        sa.Column("BIG_DECIMAL_LOW_VALUE", sa.String(length=4000), nullable=True),
        sa.Column("BIG_DECIMAL_HIGH_VALUE", sa.String(length=4000), nullable=True),
        sa.Column("NUM_NULLS", sa.BigInteger(), nullable=False),
        sa.Column("NUM_DISTINCTS", sa.BigInteger(), nullable=True),
        sa.Column("BIT_VECTOR", sa.LargeBinary(), nullable=True),
        sa.Column("HISTOGRAM", sa.LargeBinary(), nullable=True),
        sa.Column("AVG_COL_LEN", sa.Float(precision=53), nullable=True),
        sa.Column("MAX_COL_LEN", sa.BigInteger(), nullable=True),
        sa.Column("NUM_TRUES", sa.BigInteger(), nullable=True),
        sa.Column("NUM_FALSES", sa.BigInteger(), nullable=True),
        sa.Column("LAST_ANALYZED", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["PART_ID"],
            ["PARTITIONS.PART_ID"],
            name=op.f("PART_COL_STATS_PART_ID_FK"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("CS_ID", name=op.f("PART_COL_STATS_PK")),
        sa.UniqueConstraint(
            "PART_ID",
            "COLUMN_NAME",
            "ENGINE",
            name=op.f("PART_COL_STATS_PART_ID_COLUMN_NAME_ENGINE_UQ"),
        ),
    )


def downgrade() -> None:
    op.drop_table("PART_COL_STATS")
    op.drop_table("PARTITION_PARAMS")
    op.drop_table("PARTITION_KEY_VALS")
    op.drop_table("TAB_COL_STATS")
    op.drop_table("TABLE_PARAMS")
    op.drop_table("PARTITION_KEYS")
    with op.batch_alter_table("PARTITIONS", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("PARTITIONS_SD_ID_IDX"))

    op.drop_table("PARTITIONS")
    with op.batch_alter_table("TBLS", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("TBLS_SD_ID_IDX"))

    op.drop_table("TBLS")
    op.drop_table("SORT_COLS")
    op.drop_table("SD_PARAMS")
    op.drop_table("BUCKETING_COLS")
    op.drop_table("SERDE_PARAMS")
    with op.batch_alter_table("SDS", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("SDS_SERDE_ID_IDX"))
        batch_op.drop_index(batch_op.f("SDS_CD_ID_IDX"))

    op.drop_table("SDS")
    op.drop_table("DATABASE_PARAMS")
    op.drop_table("COLUMNS_V2")
    op.drop_table("SERDES")
    op.drop_table("DBS")
    op.drop_table("CDS")
