"""statistics write alone: a per-call write of statistics in one round trip on PostgreSQL

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 10:00:00.000000

colstats_write_statistics_alone(catalog, db, table, partition, rows, names, types) writes as
colstats_write_statistics does, but only when the owner's columns are NAMES of TYPES, those
the caller checked ROWS against before the call (metastore.stats.one_statement); without
rows it answers the owner's columns and writes nothing. So the write needs no check after
it, nor a transaction around it: the statement commits itself, without the round trips of
BEGIN and COMMIT. colstats_write_statistics stays, for servers of 0009 running beside this
one. Nothing on SQLite.

WRITE_ALONE_FUNCTION is also what `metastore db adopt` creates (metastore.store.adopt).
"""

from __future__ import annotations

import importlib

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

FUNCTION_NAME = "colstats_write_statistics_alone"

WRITE_ALONE_FUNCTION: str = importlib.import_module(
    "metastore.migrations.versions.0009_statistics_write_function"
).function_sql(FUNCTION_NAME, alone=True)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.exec_driver_sql(WRITE_ALONE_FUNCTION)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.exec_driver_sql(f"DROP FUNCTION {FUNCTION_NAME}")
