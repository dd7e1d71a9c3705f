"""metastore.store.schema_check, called directly on SQLite and PostgreSQL: each way a schema
can differ in meaning from the models is named (a table or column missing or not
colstats's, a column of another type family, length or nullability, a missing index, a
foreign key that does not cascade, PostgreSQL's index of key values in byte order missing or
changed), and in a database adopted from HMS what HMS's schema keeps is accepted."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from metastore.store import schema_check
from metastore.store.models import BYTE_ORDER_INDEX


@pytest.fixture
def conn(store: sa.Engine) -> Iterator[sa.Connection]:
    """A connection in a transaction rolled back at the end: the changes to the schema here
    are undone (both databases roll DDL back)."""
    with store.connect() as connection:
        transaction = connection.begin()
        yield connection
        transaction.rollback()


def differences(conn: sa.Connection, *statements: str) -> list[str]:
    """The differences after STATEMENTS (as migrate.schema_differences reads them)."""
    for statement in statements:
        conn.execute(sa.text(statement))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*expression-based index")
        return schema_check.differences(conn)


def postgres_only(conn: sa.Connection) -> None:
    if conn.dialect.name != "postgresql":
        pytest.skip("SQLite's ALTER TABLE cannot make this change")


def test_the_models_own_schema_has_none(conn: sa.Connection) -> None:
    assert differences(conn) == []


def test_tables_missing_or_not_colstats(conn: sa.Connection) -> None:
    assert differences(
        conn, 'DROP TABLE "FUNC_RU"', 'CREATE TABLE "MY_NOTES" ("ID" INTEGER PRIMARY KEY)'
    ) == ["table FUNC_RU is missing", "table MY_NOTES is not colstats's"]


def test_columns_missing_or_not_colstats(conn: sa.Connection) -> None:
    assert differences(
        conn,
        'ALTER TABLE "DBS" DROP COLUMN "DESC"',
        'ALTER TABLE "DBS" ADD COLUMN "EXTRA" INTEGER',
    ) == ["column DBS.DESC is missing", "column DBS.EXTRA is not colstats's"]


def test_a_missing_index(conn: sa.Connection) -> None:
    assert differences(conn, 'DROP INDEX "SDS_SERDE_ID_IDX"') == ["no index of SDS on (SERDE_ID)"]


def test_columns_of_another_type_length_or_nullability(conn: sa.Connection) -> None:
    postgres_only(conn)
    assert differences(
        conn,
        'ALTER TABLE "DBS" ALTER COLUMN "CREATE_TIME" TYPE TEXT',
        'ALTER TABLE "DBS" ALTER COLUMN "DESC" TYPE VARCHAR(100)',
        'ALTER TABLE "DBS" ALTER COLUMN "OWNER_NAME" SET NOT NULL',
        'ALTER TABLE "FUNC_RU" ALTER COLUMN "RESOURCE_TYPE" DROP NOT NULL',
    ) == [
        "column DBS.DESC is VARCHAR(100), not VARCHAR(4000)",
        "column DBS.OWNER_NAME is NOT NULL",
        "column DBS.CREATE_TIME is TEXT, not BIGINT (integer)",
        "column FUNC_RU.RESOURCE_TYPE is nullable",
    ]


def test_a_foreign_key_that_does_not_cascade(conn: sa.Connection) -> None:
    postgres_only(conn)
    assert differences(
        conn,
        'ALTER TABLE "TABLE_PARAMS" DROP CONSTRAINT "TABLE_PARAMS_TBL_ID_FK"',
        'ALTER TABLE "TABLE_PARAMS" ADD FOREIGN KEY ("TBL_ID") REFERENCES "TBLS" ("TBL_ID")',
    ) == ["the foreign key of TABLE_PARAMS (TBL_ID) to TBLS does not cascade"]
    assert differences(
        conn, 'ALTER TABLE "TABLE_PARAMS" DROP CONSTRAINT "TABLE_PARAMS_TBL_ID_fkey"'
    ) == ["no foreign key of TABLE_PARAMS (TBL_ID) to TBLS"]


def test_the_index_of_key_values_in_byte_order(conn: sa.Connection) -> None:
    postgres_only(conn)
    index = f'"{BYTE_ORDER_INDEX}"'
    assert differences(
        conn,
        f"DROP INDEX {index}",
        f'CREATE INDEX {index} ON "PARTITION_KEY_VALS" ("INTEGER_IDX", "PART_KEY_VAL")',
    ) == [
        f"index {BYTE_ORDER_INDEX} is not on key values in byte order: CREATE INDEX "
        f'"{BYTE_ORDER_INDEX}" ON public."PARTITION_KEY_VALS" USING btree ("INTEGER_IDX", '
        '"PART_KEY_VAL")'
    ]
    assert differences(conn, f"DROP INDEX {index}") == [f"index {BYTE_ORDER_INDEX} is missing"]


def test_what_an_adopted_databases_hms_schema_keeps_is_accepted(conn: sa.Connection) -> None:
    """HMS's own tables and columns, narrower text, keys that do not cascade are accepted
    where COLSTATS_ADOPTION says the database was adopted; what colstats needs is not."""
    statements = [
        'CREATE TABLE "COLSTATS_ADOPTION" ("KEY" VARCHAR(64) PRIMARY KEY)',
        'CREATE TABLE "TBL_PRIVS" ("TBL_GRANT_ID" INTEGER PRIMARY KEY)',
        'ALTER TABLE "DBS" ADD COLUMN "HMS_ONLY" INTEGER',
    ]
    if conn.dialect.name == "postgresql":
        statements += [
            'ALTER TABLE "DBS" ALTER COLUMN "DESC" TYPE VARCHAR(100)',
            'ALTER TABLE "TABLE_PARAMS" DROP CONSTRAINT "TABLE_PARAMS_TBL_ID_FK"',
            'ALTER TABLE "TABLE_PARAMS" ADD FOREIGN KEY ("TBL_ID") REFERENCES "TBLS" ("TBL_ID")',
            'ALTER TABLE "HIVE_LOCKS" RENAME TO hive_locks',  # HMS 2.3's and 3.1's, unquoted
        ]
    assert differences(conn, *statements) == []
    assert differences(
        conn, 'DROP TABLE "TBL_VERSIONS"', 'ALTER TABLE "DBS" DROP COLUMN "DESC"'
    ) == [
        "column DBS.DESC is missing",
        "table TBL_VERSIONS is missing",
    ]
