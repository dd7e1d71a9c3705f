"""statistics write function: a per-call write of statistics on PostgreSQL in one statement

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 10:00:00.000000

colstats_write_statistics(catalog, db, table, partition, rows) does on the server what
metastore.stats.writes does in five statements for one table or partition: it locks the
table's row, finds the partition, upserts the rows, marks their columns in
COLUMN_STATS_ACCURATE and moves the table's and the partition's versions
(metastore.store.versions); metastore.stats.one_statement calls it. Nothing on SQLite.

WRITE_FUNCTION is also what `metastore db adopt` creates (metastore.store.adopt).
"""

from __future__ import annotations

import textwrap

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

FUNCTION_NAME = "colstats_write_statistics"

# The statistics columns a write gives (metastore.stats.rows.STATS_COLUMNS) besides
# COLUMN_NAME, COLUMN_TYPE, ENGINE and STATS_KIND; those a row leaves unset keep the stored
# value when the kind of statistics is the same (metastore.stats.queries.upsert_stats).
_KEPT_WHEN_UNSET = (
    "LONG_LOW_VALUE",
    "LONG_HIGH_VALUE",
    "DOUBLE_LOW_VALUE",
    "DOUBLE_HIGH_VALUE",
    "BIG_DECIMAL_LOW_VALUE",
    "BIG_DECIMAL_HIGH_VALUE",
    "NUM_DISTINCTS",
    "BIT_VECTOR",
    "HISTOGRAM",
    "AVG_COL_LEN",
    "MAX_COL_LEN",
    "NUM_TRUES",
    "NUM_FALSES",
)
_SET = ("STATS_KIND", "NUM_NULLS", "LAST_ANALYZED")


def _upsert(table: str, owner: str, names: tuple[str, ...], values: str) -> str:
    """The upsert of the rows of p_rows into TABLE for the owner OWNER (its names NAMES,
    their values VALUES), in one order for every writer."""
    columns = [owner, *names, "COLUMN_NAME", "COLUMN_TYPE", "ENGINE", *_SET, *_KEPT_WHEN_UNSET]
    given = ", ".join(f'r."{c}"' for c in (*_SET, *_KEPT_WHEN_UNSET))
    updates = [f'"{c}" = excluded."{c}"' for c in (*names, *_SET)]
    updates += [
        f'"{c}" = coalesce(excluded."{c}", CASE WHEN s."STATS_KIND" = excluded."STATS_KIND" '
        f'THEN s."{c}" END)'
        for c in _KEPT_WHEN_UNSET
    ]
    return f"""INSERT INTO "{table}" AS s ({", ".join(f'"{c}"' for c in columns)})
      SELECT {values}, r."COLUMN_NAME", coalesce(r."COLUMN_TYPE", lower(c.type_name)),
        r."ENGINE", {given}
      FROM jsonb_populate_recordset(NULL::"{table}", p_rows) r
      JOIN unnest(v_names, v_types) AS c(column_name, type_name)
        ON c.column_name = r."COLUMN_NAME"
      ORDER BY r."COLUMN_NAME", r."ENGINE"
      ON CONFLICT ("{owner}", "COLUMN_NAME", "ENGINE") DO UPDATE SET
        {(", " + chr(10) + "        ").join(updates)};"""


_NAMES = ("CAT_NAME", "DB_NAME", "TABLE_NAME")
_TABLE_UPSERT = _upsert(
    "TAB_COL_STATS", "TBL_ID", _NAMES, "v_tbl_id, p_catalog, v_db_name, v_table_name"
)
_PARTITION_UPSERT = _upsert(
    "PART_COL_STATS",
    "PART_ID",
    (*_NAMES, "PARTITION_NAME"),
    "v_part_id, p_catalog, v_db_name, v_table_name, p_partition",
)

_ALONE_ARGUMENTS = """
  p_names text[], p_types text[],"""
_ALONE_CHECK = """-- P_NAMES and P_TYPES: the columns the caller checked P_ROWS against; nothing
  -- written (and the owner's columns answered) unless they are the owner's, or without rows.
  IF p_rows IS NULL OR v_names IS DISTINCT FROM p_names OR v_types IS DISTINCT FROM p_types
  THEN
    RETURN;
  END IF;"""
_ROWS_CHECK = """IF EXISTS (
    SELECT 1 FROM jsonb_to_recordset(p_rows) AS r(
        "COLUMN_NAME" text, "COLUMN_TYPE" text,
        "BIG_DECIMAL_LOW_VALUE" text, "BIG_DECIMAL_HIGH_VALUE" text)
      LEFT JOIN unnest(v_names, v_types) AS c(column_name, type_name)
        ON c.column_name = r."COLUMN_NAME"
      WHERE c.column_name IS NULL
        OR length(coalesce(r."COLUMN_TYPE", lower(c.type_name))) > 128
        OR length(r."BIG_DECIMAL_LOW_VALUE") > 4000
        OR length(r."BIG_DECIMAL_HIGH_VALUE") > 4000
  ) THEN
    RETURN;
  END IF;"""


_REFUSALS = {
    False: """a row names a
-- column the owner lacks, or a text is longer than its column keeps: the caller's general
-- path then says why. COLUMN_NAMES and COLUMN_TYPES: the owner's columns, for the caller's
-- checks of the rows (an error it raises rolls the write back).""",
    True: """P_ROWS is NULL,
-- or the owner's columns are not P_NAMES of P_TYPES, those the caller checked the rows
-- against before the call (so that it needs no check after it, nor a transaction around
-- it). COLUMN_NAMES and COLUMN_TYPES: the owner's columns, for the caller to check its rows
-- against when they were not those.""",
}
"""How the comment of each function ends: what it refuses, and what it answers."""


_ACCURATE = """\
  -- COLUMN_STATS_ACCURATE with the rows' columns, as metastore.stats.accurate renders it:
  -- compact JSON, BASIC_STATS kept, the columns sorted by code point, every character
  -- outside printable ASCII escaped as Python's json.dumps escapes it.
  v_columns := ARRAY(SELECT r."COLUMN_NAME" FROM jsonb_to_recordset(p_rows)
                       AS r("COLUMN_NAME" text));
  IF v_stored IS NOT NULL AND v_stored <> '' THEN
    IF lower(btrim(v_stored, E' \\t\\n\\r\\f\\v')) = 'true' THEN
      v_basic := true;
    ELSE
      BEGIN
        v_json := v_stored::jsonb;
      EXCEPTION WHEN others THEN
        v_json := NULL;
      END;
      IF jsonb_typeof(v_json) = 'object' THEN
        v_basic := lower(coalesce(v_json ->> 'BASIC_STATS', '')) = 'true';
        IF jsonb_typeof(v_json -> 'COLUMN_STATS') = 'object' THEN
          v_columns := v_columns || ARRAY(
            SELECT e.key FROM jsonb_each_text(v_json -> 'COLUMN_STATS') e
            WHERE lower(e.value) = 'true');
        END IF;
      END IF;
    END IF;
  END IF;
  v_new := NULL;
  FOR v_key IN SELECT DISTINCT k COLLATE "C" FROM unnest(v_columns) k ORDER BY 1 LOOP
    v_escaped := to_json(v_key)::text;
    IF v_escaped ~ '[^\\x01-\\x7e]' THEN
      v_key := v_escaped;
      v_escaped := '';
      FOREACH v_char IN ARRAY regexp_split_to_array(v_key, '') LOOP
        v_code := ascii(v_char);
        IF v_code < 127 THEN
          v_escaped := v_escaped || v_char;
        ELSIF v_code < 65536 THEN
          v_escaped := v_escaped || '\\u' || lpad(to_hex(v_code), 4, '0');
        ELSE
          v_escaped := v_escaped || '\\u' || to_hex(55296 + ((v_code - 65536) >> 10))
            || '\\u' || to_hex(56320 + ((v_code - 65536) & 1023));
        END IF;
      END LOOP;
    END IF;
    v_new := coalesce(v_new || ',', '') || v_escaped || ':"true"';
  END LOOP;
  IF v_new IS NOT NULL THEN
    v_new := '"COLUMN_STATS":{' || v_new || '}';
  END IF;
  IF v_basic THEN
    v_new := '"BASIC_STATS":"true"' || coalesce(',' || v_new, '');
  END IF;
  v_new := '{' || v_new || '}';
  IF v_new IS DISTINCT FROM v_stored THEN
    IF p_partition IS NULL THEN
      IF v_new IS NULL THEN
        DELETE FROM "TABLE_PARAMS"
          WHERE "TBL_ID" = v_tbl_id AND "PARAM_KEY" = 'COLUMN_STATS_ACCURATE';
      ELSE
        INSERT INTO "TABLE_PARAMS" ("TBL_ID", "PARAM_KEY", "PARAM_VALUE")
          VALUES (v_tbl_id, 'COLUMN_STATS_ACCURATE', v_new)
          ON CONFLICT ("TBL_ID", "PARAM_KEY") DO UPDATE SET "PARAM_VALUE" = excluded."PARAM_VALUE";
      END IF;
    ELSIF v_new IS NULL THEN
      DELETE FROM "PARTITION_PARAMS"
        WHERE "PART_ID" = v_part_id AND "PARAM_KEY" = 'COLUMN_STATS_ACCURATE';
    ELSE
      INSERT INTO "PARTITION_PARAMS" ("PART_ID", "PARAM_KEY", "PARAM_VALUE")
        VALUES (v_part_id, 'COLUMN_STATS_ACCURATE', v_new)
        ON CONFLICT ("PART_ID", "PARAM_KEY") DO UPDATE SET "PARAM_VALUE" = excluded."PARAM_VALUE";
    END IF;
  END IF;"""
"""COLUMN_STATS_ACCURATE of the table or partition written, with the rows' columns."""

_UNCHANGED_FIRST = """\
  -- The stored value stays as it is when it already is the rendering of exactly the rows'
  -- columns (BASIC_STATS true or absent): the common case, a column's statistics written
  -- again, told without parsing it. Names outside printable ASCII take the way below.
  SELECT '{"COLUMN_STATS":{' || string_agg(to_json(k)::text || ':"true"', ',' ORDER BY k)
           || '}}'
    INTO v_new
    FROM (SELECT DISTINCT r."COLUMN_NAME" COLLATE "C" AS k
          FROM jsonb_to_recordset(p_rows) AS r("COLUMN_NAME" text)) c;
  IF v_stored IS NULL OR v_new IS NULL OR v_new ~ '[^\\x01-\\x7e]'
     OR (v_stored <> v_new AND v_stored <> '{"BASIC_STATS":"true",' || substr(v_new, 2)) THEN
"""


def _accurate(unchanged_first: bool) -> str:
    """_ACCURATE; with UNCHANGED_FIRST (schema 0011), after a check that spares it when the
    stored value stays as it is."""
    if not unchanged_first:
        return _ACCURATE
    return _UNCHANGED_FIRST + textwrap.indent(_ACCURATE, "  ") + "\n  END IF;"


TABLE_VERSION_UPSERT = """\
  INSERT INTO "TBL_VERSIONS" AS v ("TBL_ID", "VERSION", "PARTS_VERSION", "SEEN_VERSION")
    SELECT v_tbl_id, n, n, n FROM (SELECT nextval('"TBL_VERSION_SEQ"') AS n) drawn
    ON CONFLICT ("TBL_ID") DO UPDATE SET
      "VERSION" = greatest(v."VERSION" + 1, excluded."VERSION"),
      "PARTS_VERSION" = CASE
        WHEN v."SEEN_VERSION" IS NOT NULL AND v."SEEN_VERSION" = v."VERSION"
        THEN v."PARTS_VERSION"
        ELSE greatest(v."VERSION" + 1, excluded."VERSION") END,
      "SEEN_VERSION" = greatest(v."VERSION" + 1, excluded."VERSION")
    RETURNING v."VERSION\""""
"""The move of table v_tbl_id's version by a write of statistics (as
metastore.store.versions.bump moves it), answering the new VERSION."""


VARIABLES = """\
  v_tbl_id bigint;
  v_db_name text;
  v_table_name text;
  v_cd_id bigint;
  v_part_id bigint;
  v_names text[];
  v_types text[];
  v_stored text;
  v_new text;
  v_json jsonb;
  v_basic boolean := false;
  v_columns text[];
  v_key text;
  v_char text;
  v_code integer;
  v_escaped text;
"""
"""The variables of a write function's body, as _ACCURATE uses them."""


def opening(verb: str, name: str, *, alone: bool, variables: str) -> str:
    """A write function's text up to its table found and locked: VERB (CREATE, or CREATE OR
    REPLACE) FUNCTION NAME with the arguments and comment of 0009's function or, ALONE,
    0010's, and VARIABLES declared."""
    arguments = _ALONE_ARGUMENTS if alone else ""
    return f"""{verb} FUNCTION {name}(
  p_catalog text, p_db text, p_table text, p_partition text, p_rows jsonb,{arguments}
  OUT written boolean, OUT column_names text[], OUT column_types text[])
LANGUAGE plpgsql VOLATILE AS $$
-- Statistics rows P_ROWS (a JSON array of objects named by the statistics columns, ENGINE
-- set, COLUMN_TYPE lower case or absent: the column's type then) of table
-- P_CATALOG.P_DB.P_TABLE (names as stored), or of its partition named P_PARTITION (as
-- stored; NULL: the table's own), written as metastore.stats.writes writes them. WRITTEN is
-- false, with nothing written, when the table or partition is not found, {_REFUSALS[alone]}
DECLARE
{variables}BEGIN
  written := false;
  -- The table, locked against other statistics writes until the commit (as
  -- metastore.stats.owners locks it: adding partitions goes on).
  SELECT d."NAME", t."TBL_ID", t."TBL_NAME", sd."CD_ID"
    INTO v_db_name, v_tbl_id, v_table_name, v_cd_id
    FROM "TBLS" t
    JOIN "DBS" d ON d."DB_ID" = t."DB_ID"
    LEFT JOIN "SDS" sd ON sd."SD_ID" = t."SD_ID"
    WHERE d."CTLG_NAME" = p_catalog AND d."NAME" = p_db AND t."TBL_NAME" = p_table
    FOR NO KEY UPDATE OF t;
  IF v_tbl_id IS NULL THEN
    RETURN;
  END IF;
"""


def function_sql(name: str, *, alone: bool, unchanged_first: bool = False) -> str:
    """The CREATE FUNCTION of the write function NAME: this schema's (not ALONE), or schema
    0010's colstats_write_statistics_alone (ALONE), which writes only when the owner's
    columns are those the caller checked its rows against, and without rows answers the
    owner's columns (metastore.stats.one_statement). UNCHANGED_FIRST: schema 0011's body,
    which tells a COLUMN_STATS_ACCURATE the write leaves as it is without parsing it, as
    CREATE OR REPLACE (the arguments and the answer stay)."""
    verb = "CREATE OR REPLACE" if unchanged_first else "CREATE"
    head = opening(verb, name, alone=alone, variables=VARIABLES + "  v_version bigint;\n")
    return f"""{head}\
  IF p_partition IS NOT NULL THEN
    SELECT p."PART_ID", sd."CD_ID" INTO v_part_id, v_cd_id
      FROM "PARTITIONS" p LEFT JOIN "SDS" sd ON sd."SD_ID" = p."SD_ID"
      WHERE p."TBL_ID" = v_tbl_id AND p."PART_NAME" = p_partition;
    IF v_part_id IS NULL THEN
      RETURN;
    END IF;
  END IF;
  SELECT coalesce(array_agg(c."COLUMN_NAME" ORDER BY c."INTEGER_IDX"), '{{}}'),
         coalesce(array_agg(c."TYPE_NAME" ORDER BY c."INTEGER_IDX"), '{{}}')
    INTO v_names, v_types
    FROM "COLUMNS_V2" c WHERE c."CD_ID" = v_cd_id;
  column_names := v_names;
  column_types := v_types;
  {_ALONE_CHECK if alone else _ROWS_CHECK}
  IF p_partition IS NULL THEN
    {_TABLE_UPSERT}
    SELECT "PARAM_VALUE" INTO v_stored FROM "TABLE_PARAMS"
      WHERE "TBL_ID" = v_tbl_id AND "PARAM_KEY" = 'COLUMN_STATS_ACCURATE';
  ELSE
    {_PARTITION_UPSERT}
    SELECT "PARAM_VALUE" INTO v_stored FROM "PARTITION_PARAMS"
      WHERE "PART_ID" = v_part_id AND "PARAM_KEY" = 'COLUMN_STATS_ACCURATE';
  END IF;
{_accurate(unchanged_first)}
  -- The versions, as metastore.store.versions.bump moves them for a write of statistics:
  -- the table's (its PARTS_VERSION kept while colstats gave it its version), then the
  -- partition's.
{TABLE_VERSION_UPSERT} INTO v_version;
  IF v_part_id IS NOT NULL THEN
    INSERT INTO "PART_VERSIONS" ("PART_ID", "VERSION") VALUES (v_part_id, v_version)
      ON CONFLICT ("PART_ID") DO UPDATE SET "VERSION" = excluded."VERSION";
  END IF;
  written := true;
END
$$"""


WRITE_FUNCTION = function_sql(FUNCTION_NAME, alone=False)


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.exec_driver_sql(WRITE_FUNCTION)


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.exec_driver_sql(f"DROP FUNCTION {FUNCTION_NAME}")
