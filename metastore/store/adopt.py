"""Adopting a Hive Metastore's PostgreSQL database in place (`metastore db adopt`), and
giving it back (`--undo`).

Adoption adds what colstats needs and changes nothing HMS uses, so that HMS can keep serving
the database beside colstats, or alone again:

1. the tables colstats keeps that HMS has not: table versions, HMS's lock tables when the
   database has none, and any table of HMS's that its DataNucleus has not made yet;
2. the columns colstats reads that the schema lacks (2.3's DBS.CTLG_NAME, the statistics'
   ENGINE and BIT_VECTOR, ...), each with the default that HMS's inserts, which do not name
   them, leave in it;
3. ids for colstats's inserts taken from SEQUENCE_TABLE as DataNucleus takes them: each id
   column's default moves the class's NEXT_VAL on (`colstats_next_id`), and HMS's next block
   starts after it;
4. a unique key on each statistics table's (owner, column, engine), which HMS's schema lacks
   and real databases break (HIVE-28578): duplicates are reported, and merged (the newest
   kept) only when asked;
5. the indexes colstats's reads use;
6. triggers that move a table's version when HMS (not colstats) changes the table, its
   partitions, parameters, storage or statistics, so that colstats's cache of answers stays
   exact beside HMS;
   and the functions that write a per-call write of statistics in one statement (schemas
   0009 and 0010, their bodies as of 0012, metastore.stats.one_statement);
7. the Alembic revision, and COLSTATS_ADOPTION: the schema as it was (its tables, columns,
   defaults, indexes and constraints), from which `--undo` removes everything added.

All of it runs in one transaction (PostgreSQL's DDL is transactional): an adoption that
fails leaves the database as it was.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import time
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.schema import CreateIndex, CreateTable

from metastore import vocabulary
from metastore.store import hive_schema, migrate
from metastore.store import models as m

ADOPTION_TABLE = "COLSTATS_ADOPTION"
NEXT_ID_FUNCTION = "colstats_next_id"
TOUCH_FUNCTION = "colstats_touch"
KIND_FUNCTION = "colstats_stats_kind"
TRIGGER_PREFIX = "colstats_"
WRITER_SETTING = "colstats.writer"
"""A setting colstats's connections set (metastore.store.transactions), so that the version
triggers leave colstats's own changes alone: colstats moves the versions of what it changes
itself."""

_MODEL = "org.apache.hadoop.hive.metastore.model."
# The id columns of HMS's tables and the DataNucleus class whose SEQUENCE_TABLE row gives them.
ID_SEQUENCES = {
    ("DBS", "DB_ID"): _MODEL + "MDatabase",
    ("TBLS", "TBL_ID"): _MODEL + "MTable",
    ("SDS", "SD_ID"): _MODEL + "MStorageDescriptor",
    ("SERDES", "SERDE_ID"): _MODEL + "MSerDeInfo",
    ("CDS", "CD_ID"): _MODEL + "MColumnDescriptor",
    ("PARTITIONS", "PART_ID"): _MODEL + "MPartition",
    ("TAB_COL_STATS", "CS_ID"): _MODEL + "MTableColumnStatistics",
    ("PART_COL_STATS", "CS_ID"): _MODEL + "MPartitionColumnStatistics",
    ("FUNCS", "FUNC_ID"): _MODEL + "MFunction",
    ("SKEWED_STRING_LIST", "STRING_LIST_ID"): _MODEL + "MStringList",
}

# The tables only colstats keeps: dropped by --undo whatever they hold.
COLSTATS_TABLES = (
    "TBL_VERSIONS",
    "PART_VERSIONS",
    "TBL_VERSION_COUNTER",
    "HIVE_LOCKS",
    "NEXT_LOCK_ID",
)

# The statistics tables and their owner column.
STATS_OWNERS = {"TAB_COL_STATS": "TBL_ID", "PART_COL_STATS": "PART_ID"}

# Where each table a version trigger watches finds the TBL_IDs of the tables a changed row
# belongs to (REF is the changed row: NEW, or OLD for a delete).
_TOUCHED = {
    "TBLS": 'SELECT REF."TBL_ID"',
    "TABLE_PARAMS": 'SELECT REF."TBL_ID"',
    "PARTITION_KEYS": 'SELECT REF."TBL_ID"',
    "TAB_COL_STATS": 'SELECT REF."TBL_ID"',
    "PARTITIONS": 'SELECT REF."TBL_ID"',
    "PARTITION_PARAMS": 'SELECT "TBL_ID" FROM "PARTITIONS" WHERE "PART_ID" = REF."PART_ID"',
    "PARTITION_KEY_VALS": 'SELECT "TBL_ID" FROM "PARTITIONS" WHERE "PART_ID" = REF."PART_ID"',
    "PART_COL_STATS": 'SELECT "TBL_ID" FROM "PARTITIONS" WHERE "PART_ID" = REF."PART_ID"',
    "SDS": (
        'SELECT "TBL_ID" FROM "TBLS" WHERE "SD_ID" = REF."SD_ID" '
        'UNION SELECT "TBL_ID" FROM "PARTITIONS" WHERE "SD_ID" = REF."SD_ID"'
    ),
    "SD_PARAMS": (
        'SELECT "TBL_ID" FROM "TBLS" WHERE "SD_ID" = REF."SD_ID" '
        'UNION SELECT "TBL_ID" FROM "PARTITIONS" WHERE "SD_ID" = REF."SD_ID"'
    ),
    "BUCKETING_COLS": (
        'SELECT "TBL_ID" FROM "TBLS" WHERE "SD_ID" = REF."SD_ID" '
        'UNION SELECT "TBL_ID" FROM "PARTITIONS" WHERE "SD_ID" = REF."SD_ID"'
    ),
    "SORT_COLS": (
        'SELECT "TBL_ID" FROM "TBLS" WHERE "SD_ID" = REF."SD_ID" '
        'UNION SELECT "TBL_ID" FROM "PARTITIONS" WHERE "SD_ID" = REF."SD_ID"'
    ),
    "SERDE_PARAMS": (
        'SELECT t."TBL_ID" FROM "SDS" s JOIN "TBLS" t ON t."SD_ID" = s."SD_ID" '
        'WHERE s."SERDE_ID" = REF."SERDE_ID" UNION SELECT p."TBL_ID" FROM "SDS" s '
        'JOIN "PARTITIONS" p ON p."SD_ID" = s."SD_ID" WHERE s."SERDE_ID" = REF."SERDE_ID"'
    ),
    "COLUMNS_V2": (
        'SELECT t."TBL_ID" FROM "SDS" s JOIN "TBLS" t ON t."SD_ID" = s."SD_ID" '
        'WHERE s."CD_ID" = REF."CD_ID" UNION SELECT p."TBL_ID" FROM "SDS" s '
        'JOIN "PARTITIONS" p ON p."SD_ID" = s."SD_ID" WHERE s."CD_ID" = REF."CD_ID"'
    ),
}


class AdoptionError(Exception):
    """A database that cannot be adopted (or given back) as it is; the message says why and
    what to do."""


@dataclasses.dataclass
class Plan:
    """What adopting one database does: a line per change for people, its statements."""

    found: hive_schema.HiveDatabase
    changes: list[str] = dataclasses.field(default_factory=list)
    statements: list[str] = dataclasses.field(default_factory=list)
    duplicates: list[str] = dataclasses.field(default_factory=list)
    """The statistics rows that share an owner, column and engine (HIVE-28578), described."""

    def add(self, change: str, *statements: str) -> None:
        self.changes.append(change)
        self.statements.extend(statements)


def plan(conn: sa.Connection, *, merge_duplicates: bool) -> Plan:
    """What adopting the database behind CONN would do (nothing is changed)."""
    if conn.dialect.name != "postgresql":
        raise AdoptionError(
            "colstats adopts PostgreSQL databases of Hive Metastores; copy another one with "
            "`metastore db import --from thrift://HOST:9083`"
        )
    found = hive_schema.recognize(conn)
    if found is None:
        raise AdoptionError(
            "it is not a Hive Metastore database (it has no VERSION table); "
            "`metastore db upgrade` makes colstats's schema in an empty one"
        )
    if found.adopted:
        raise AdoptionError(f"it is {found}, adopted already; `metastore db upgrade` migrates it")
    inspector = sa.inspect(conn)
    existing = set(inspector.get_table_names())
    result = Plan(found)
    _tables(result, conn, existing)
    for name in sorted(existing & set(m.Base.metadata.tables)):
        _columns(result, conn, inspector, m.Base.metadata.tables[name])
    _ids(result, existing)
    _unique_statistics(result, conn, existing, merge_duplicates)
    _indexes(result, conn, inspector, existing)
    _kinds(result, found.family, existing)
    _versions(result, existing)
    _write_function(result)
    return result


def _quoted(conn: sa.Connection, name: str) -> str:
    return str(conn.dialect.identifier_preparer.quote(name))


def _tables(result: Plan, conn: sa.Connection, existing: set[str]) -> None:
    """The tables of the models the database lacks (HMS's lock tables count as present in
    the lower case of Hive 2.3 and 3.1's scripts)."""
    lower = {name.lower() for name in existing if name.islower()}
    for table in m.Base.metadata.sorted_tables:
        if table.name in existing:
            continue
        if table.name in ("HIVE_LOCKS", "NEXT_LOCK_ID") and table.name.lower() in lower:
            continue  # HMS's own, which colstats shares (metastore.store.locks)
        statements = [str(CreateTable(table).compile(dialect=conn.dialect))]
        statements += [
            str(CreateIndex(index).compile(dialect=conn.dialect))
            for index in table.indexes
            if index.name != m.BYTE_ORDER_INDEX
        ]
        if table.name == "NEXT_LOCK_ID":
            statements.append('INSERT INTO "NEXT_LOCK_ID" ("NL_NEXT") VALUES (1)')
        if table.name == "TBL_VERSION_COUNTER":
            statements.append(
                'INSERT INTO "TBL_VERSION_COUNTER" ("ID", "NEXT_VERSION") VALUES (1, 2)'
            )
        what = "colstats's" if table.name in COLSTATS_TABLES else "HMS's, not made yet"
        result.add(f"create table {table.name} ({what})", *statements)
    if "TBL_VERSIONS" not in existing:
        result.add(
            "create sequence TBL_VERSION_SEQ, and a version for every table",
            'CREATE SEQUENCE IF NOT EXISTS "TBL_VERSION_SEQ"',
            'INSERT INTO "TBL_VERSIONS" ("TBL_ID", "VERSION") '
            'SELECT "TBL_ID", nextval(\'"TBL_VERSION_SEQ"\') FROM "TBLS"',
        )


def _columns(result: Plan, conn: sa.Connection, inspector: sa.Inspector, table: sa.Table) -> None:
    """The columns of TABLE's model that the database's table lacks. A column NOT NULL in
    the model without a default is added nullable (STATS_KIND: HMS's rows have none, and
    reads tell the kind from COLUMN_TYPE)."""
    present = {c["name"] for c in inspector.get_columns(table.name)}
    for column in table.columns:
        if column.name in present:
            continue
        type_ = column.type.compile(dialect=conn.dialect)
        clause = (
            f"ALTER TABLE {_quoted(conn, table.name)} "
            f"ADD COLUMN {_quoted(conn, column.name)} {type_}"
        )
        default = column.server_default
        if isinstance(default, sa.DefaultClause):
            arg = default.arg
            text = arg.text if isinstance(arg, sa.TextClause) else f"'{arg}'"
            clause += f" DEFAULT {text}"
            if not column.nullable:
                clause += " NOT NULL"
        result.add(f"add column {table.name}.{column.name} {type_}", clause)


def _ids(result: Plan, existing: set[str]) -> None:
    """Id columns whose default takes the next value of HMS's SEQUENCE_TABLE."""
    result.add(
        f"create function {NEXT_ID_FUNCTION}(class): the next id of a DataNucleus class",
        f"""CREATE FUNCTION {NEXT_ID_FUNCTION}(class_name text) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
  INSERT INTO "SEQUENCE_TABLE" ("SEQUENCE_NAME", "NEXT_VAL") VALUES (class_name, 2)
  ON CONFLICT ("SEQUENCE_NAME")
  DO UPDATE SET "NEXT_VAL" = "SEQUENCE_TABLE"."NEXT_VAL" + 1
  RETURNING "NEXT_VAL" - 1
$$""",
    )
    for (table, column), sequence in ID_SEQUENCES.items():
        if table not in existing:
            continue  # made above from the model: its ids come from its own sequence
        result.add(
            f"ids of {table}.{column} from SEQUENCE_TABLE ({sequence.rsplit('.', 1)[-1]})",
            f'ALTER TABLE "{table}" ALTER COLUMN "{column}" '
            f"SET DEFAULT {NEXT_ID_FUNCTION}('{sequence}')",
        )


def _unique_statistics(
    result: Plan, conn: sa.Connection, existing: set[str], merge_duplicates: bool
) -> None:
    """A unique key on (owner, COLUMN_NAME, ENGINE) of each statistics table, after merging
    duplicates (newest LAST_ANALYZED, then highest CS_ID, kept) when asked; refused with the
    duplicates otherwise."""
    for table, owner in STATS_OWNERS.items():
        if table not in existing:
            continue
        columns = {c["name"] for c in sa.inspect(conn).get_columns(table)}
        engine = '"ENGINE"' if "ENGINE" in columns else "'hive'"
        groups = conn.execute(
            sa.text(
                f'SELECT "{owner}", "COLUMN_NAME", {engine}, count(*) FROM "{table}" '
                f"GROUP BY 1, 2, 3 HAVING count(*) > 1 ORDER BY 1, 2, 3"
            )
        ).all()
        for owner_id, column, engine_name, count in groups:
            result.duplicates.append(
                f"{table}: {count} rows for {owner} {owner_id}, column {column}, "
                f"engine {engine_name}"
            )
        if groups and merge_duplicates:
            result.add(
                f"merge {len(groups)} groups of duplicate rows of {table} (the newest kept)",
                f'DELETE FROM "{table}" s USING "{table}" n WHERE n."{owner}" = s."{owner}" '
                f'AND n."COLUMN_NAME" = s."COLUMN_NAME" AND n."ENGINE" = s."ENGINE" '
                f'AND (n."LAST_ANALYZED", n."CS_ID") > (s."LAST_ANALYZED", s."CS_ID")',
            )
        result.add(
            f"unique key of {table} on ({owner}, COLUMN_NAME, ENGINE)",
            f'CREATE UNIQUE INDEX "{table}_{owner}_COLUMN_NAME_ENGINE_UQ" '
            f'ON "{table}" ("{owner}", "COLUMN_NAME", "ENGINE")',
        )


def _indexes(
    result: Plan, conn: sa.Connection, inspector: sa.Inspector, existing: set[str]
) -> None:
    """The indexes of the models on columns no index of the database's starts with."""
    for name in sorted(existing & set(m.Base.metadata.tables)):
        table = m.Base.metadata.tables[name]
        have = {tuple(i["column_names"]) for i in inspector.get_indexes(name)}
        have |= {tuple(u["column_names"]) for u in inspector.get_unique_constraints(name)}
        have.add(tuple(inspector.get_pk_constraint(name)["constrained_columns"]))
        for index in table.indexes:
            columns = tuple(c.name for c in index.columns)
            if index.name == m.BYTE_ORDER_INDEX:
                if not _has_index(conn, m.BYTE_ORDER_INDEX):
                    result.add(
                        f"index {m.BYTE_ORDER_INDEX} (key values in byte order)",
                        str(CreateIndex(index).compile(dialect=conn.dialect)),
                    )
                continue
            if any(h[: len(columns)] == columns for h in have):
                continue
            result.add(
                f"index of {name} on ({', '.join(columns)})",
                str(CreateIndex(index).compile(dialect=conn.dialect)),
            )


def _has_index(conn: sa.Connection, name: str) -> bool:
    return bool(
        conn.execute(sa.text("SELECT 1 FROM pg_class WHERE relname = :n"), {"n": name}).first()
    )


def _kinds(result: Plan, family: str, existing: set[str]) -> None:
    """STATS_KIND of the statistics rows HMS wrote and writes, from their COLUMN_TYPE as HMS
    reads them: a function of the type (vocabulary's table; HMS 2.3 and 3.1, which have no
    timestampStats, kept a timestamp's statistics as longStats), the rows there are, and a
    trigger for the rows to come."""
    cases = []
    for name, found in vocabulary.PRIMITIVES.items():
        if not found.kinds:
            continue
        kind = found.kinds[0]
        if family in ("2.3", "3.1") and kind is vocabulary.Kind.TIMESTAMP:
            kind = vocabulary.Kind.LONG
        aliases = [alias for alias, target in vocabulary.ALIASES.items() if target == name]
        listed = ", ".join(f"'{n}'" for n in (name, *aliases))
        cases.append(f"WHEN base IN ({listed}) THEN '{kind.value}'")
    result.add(
        f"create function {KIND_FUNCTION}: the kind of statistics of a column type",
        rf"""CREATE FUNCTION {KIND_FUNCTION}(column_type text) RETURNS varchar
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE {" ".join(cases)} END FROM (SELECT regexp_replace(regexp_replace(
    lower(btrim(column_type)), '\s*[(<].*$', ''), '\s+', ' ', 'g') AS base) b
$$""",
        f"""CREATE FUNCTION {TRIGGER_PREFIX}kind() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."STATS_KIND" IS NULL THEN
    NEW."STATS_KIND" := {KIND_FUNCTION}(NEW."COLUMN_TYPE");
  END IF;
  RETURN NEW;
END
$$""",
    )
    for table in STATS_OWNERS:
        if table not in existing:
            continue
        result.add(
            f"STATS_KIND of {table}'s rows, and a trigger that sets it in HMS's rows to come",
            f'UPDATE "{table}" SET "STATS_KIND" = {KIND_FUNCTION}("COLUMN_TYPE") '
            'WHERE "STATS_KIND" IS NULL',
            f"CREATE TRIGGER {TRIGGER_PREFIX}kind_{table.lower()} BEFORE INSERT OR UPDATE "
            f'ON "{table}" FOR EACH ROW EXECUTE FUNCTION {TRIGGER_PREFIX}kind()',
        )


def _versions(result: Plan, existing: set[str]) -> None:
    """A trigger function that gives a new version to the tables a changed row belongs to,
    and a trigger on each table HMS writes that a cached answer reads."""
    result.add(
        f"create function {TOUCH_FUNCTION}: new versions for tables HMS changes",
        f"""CREATE FUNCTION {TOUCH_FUNCTION}(tbl_ids bigint[]) RETURNS void
LANGUAGE sql VOLATILE AS $$
  INSERT INTO "TBL_VERSIONS" ("TBL_ID", "VERSION")
  SELECT t."TBL_ID", nextval('"TBL_VERSION_SEQ"') FROM "TBLS" t
  WHERE t."TBL_ID" = ANY(tbl_ids)
  ON CONFLICT ("TBL_ID") DO UPDATE SET "VERSION" = GREATEST(
    "TBL_VERSIONS"."VERSION" + 1, excluded."VERSION")
$$""",
    )
    for table, owners in _TOUCHED.items():
        if table not in existing:
            continue
        function = f"{TRIGGER_PREFIX}touch_{table.lower()}"
        new, old = owners.replace("REF.", "NEW."), owners.replace("REF.", "OLD.")
        result.add(
            f"trigger on {table}: HMS's changes move the versions of their tables",
            f"""CREATE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('{WRITER_SETTING}', true) IS DISTINCT FROM 'on' THEN
    IF TG_OP <> 'DELETE' THEN
      PERFORM {TOUCH_FUNCTION}(ARRAY({new}));
    END IF;
    IF TG_OP <> 'INSERT' THEN
      PERFORM {TOUCH_FUNCTION}(ARRAY({old}));
    END IF;
  END IF;
  RETURN NULL;
END
$$""",
            f'CREATE TRIGGER {function} AFTER INSERT OR UPDATE OR DELETE ON "{table}" '
            f"FOR EACH ROW EXECUTE FUNCTION {function}()",
        )


def _write_function(result: Plan) -> None:
    """The functions of schemas 0009 and 0010, with the bodies schema 0012 gave them."""
    versions = "metastore.migrations.versions"
    latest = importlib.import_module(f"{versions}.0012_statistics_write_fewer_statements")
    result.add(
        f"create function {m.WRITE_FUNCTION}: a per-call statistics write in one statement",
        latest.WRITE_FUNCTION,
    )
    result.add(
        f"create function {m.WRITE_ALONE_FUNCTION}: the same write outside a transaction",
        latest.WRITE_ALONE_FUNCTION,
    )


def snapshot(conn: sa.Connection) -> dict[str, Any]:
    """The schema of the database behind CONN as --undo compares with it: each table's
    columns (type, nullability, default), indexes, unique and foreign keys; the functions."""
    inspector = sa.inspect(conn)
    tables: dict[str, Any] = {}
    for name in inspector.get_table_names():
        tables[name] = {
            "columns": {
                c["name"]: {
                    "type": str(c["type"]),
                    "nullable": c["nullable"],
                    "default": c.get("default"),
                }
                for c in inspector.get_columns(name)
            },
            "indexes": sorted(i["name"] for i in inspector.get_indexes(name)),
            "uniques": sorted(str(u["name"]) for u in inspector.get_unique_constraints(name)),
            "foreign_keys": sorted(str(f["name"]) for f in inspector.get_foreign_keys(name)),
        }
    functions = [
        row[0]
        for row in conn.execute(
            sa.text(
                "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = current_schema()"
            )
        )
    ]
    return {"tables": tables, "functions": sorted(functions)}


def adopt(url: str, *, merge_duplicates: bool = False, dry_run: bool = False) -> Plan:
    """Adopt the database at URL (see the module docstring), in one transaction; the plan
    carried out (with DRY_RUN, only made: nothing is changed). AdoptionError, and nothing
    changed, when it cannot be adopted (duplicates of statistics without MERGE_DUPLICATES
    among the reasons)."""
    engine = sa.create_engine(url)
    if dry_run:
        try:
            with engine.connect() as conn:
                return plan(conn, merge_duplicates=merge_duplicates)
        finally:
            engine.dispose()
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("SET LOCAL lock_timeout = '60s'")
            result = plan(conn, merge_duplicates=merge_duplicates)
            if result.duplicates and not merge_duplicates:
                raise AdoptionError(
                    f"{len(result.duplicates)} group(s) of duplicate statistics rows "
                    f"(HIVE-28578; the first: {result.duplicates[0]}) stand in the way of "
                    "the unique key colstats needs; run again with --merge-duplicates to "
                    "keep the newest row of each"
                )
            before = snapshot(conn)
            for statement in result.statements:
                conn.exec_driver_sql(statement)
            conn.execute(
                sa.text(
                    f'CREATE TABLE "{ADOPTION_TABLE}" ("HIVE_VERSION" varchar(127) NOT NULL, '
                    '"ADOPTED_AT" bigint NOT NULL, "SCHEMA_BEFORE" text NOT NULL)'
                )
            )
            conn.execute(
                sa.text(f'INSERT INTO "{ADOPTION_TABLE}" VALUES (:version, :at, :schema)'),
                {
                    "version": result.found.version,
                    "at": int(time.time()),
                    "schema": json.dumps(before, default=str),
                },
            )
            conn.execute(
                sa.text(
                    "CREATE TABLE alembic_version (version_num varchar(32) NOT NULL, "
                    "CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num))"
                )
            )
            conn.execute(
                sa.text("INSERT INTO alembic_version VALUES (:head)"),
                {"head": migrate.head_revision()},
            )
        return result
    finally:
        engine.dispose()


def undo(url: str) -> list[str]:
    """Give the database at URL back as it was before adoption (COLSTATS_ADOPTION): every
    trigger, function, index, default, column and table adoption added is removed, in one
    transaction; the rows both servers wrote in the tables and columns HMS has stay. Lines
    that say what was removed."""
    engine = sa.create_engine(url)
    done: list[str] = []
    try:
        with engine.begin() as conn:
            inspector = sa.inspect(conn)
            if ADOPTION_TABLE not in inspector.get_table_names():
                raise AdoptionError(
                    "it was not adopted by `metastore db adopt` (it has no "
                    f"{ADOPTION_TABLE} table): there is nothing to undo"
                )
            before = json.loads(
                conn.execute(
                    sa.text(f'SELECT "SCHEMA_BEFORE" FROM "{ADOPTION_TABLE}"')
                ).scalar_one()
            )
            _undo(conn, inspector, before, done)
        return done
    finally:
        engine.dispose()


def _undo(
    conn: sa.Connection, inspector: sa.Inspector, before: dict[str, Any], done: list[str]
) -> None:
    tables_before: dict[str, Any] = before["tables"]
    for row in conn.execute(
        sa.text(
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal AND t.tgname LIKE :prefix"
        ),
        {"prefix": f"{TRIGGER_PREFIX}%"},
    ):
        conn.exec_driver_sql(f'DROP TRIGGER "{row[0]}" ON "{row[1]}"')
        done.append(f"dropped trigger {row[0]} on {row[1]}")
    current = set(inspector.get_table_names())
    for name in sorted(current & set(tables_before)):
        was = tables_before[name]
        columns = {c["name"]: c for c in inspector.get_columns(name)}
        for column, described in was["columns"].items():
            if column in columns and columns[column].get("default") != described["default"]:
                if described["default"] is None:
                    conn.exec_driver_sql(
                        f'ALTER TABLE "{name}" ALTER COLUMN "{column}" DROP DEFAULT'
                    )
                else:
                    conn.exec_driver_sql(
                        f'ALTER TABLE "{name}" ALTER COLUMN "{column}" '
                        f"SET DEFAULT {described['default']}"
                    )
                done.append(f"restored the default of {name}.{column}")
        for index in inspector.get_indexes(name):
            if index["name"] not in was["indexes"]:
                conn.exec_driver_sql(f'DROP INDEX "{index["name"]}"')
                done.append(f"dropped index {index['name']}")
        for unique in inspector.get_unique_constraints(name):
            if str(unique["name"]) not in was["uniques"]:
                conn.exec_driver_sql(f'ALTER TABLE "{name}" DROP CONSTRAINT "{unique["name"]}"')
                done.append(f"dropped unique key {unique['name']}")
        for column in columns:
            if column not in was["columns"]:
                conn.exec_driver_sql(f'ALTER TABLE "{name}" DROP COLUMN "{column}"')
                done.append(f"dropped column {name}.{column}")
    added = sorted(current - set(tables_before))
    for name in _drop_order(conn, added):
        held = conn.execute(sa.text(f'SELECT count(*) FROM "{name}"')).scalar_one()
        if name in (*COLSTATS_TABLES, ADOPTION_TABLE, "alembic_version") or not held:
            conn.exec_driver_sql(f'DROP TABLE "{name}"')
            done.append(f"dropped table {name}")
        else:
            done.append(f"kept table {name}: HMS's, made at adoption, it holds {held} rows")
    conn.exec_driver_sql('DROP SEQUENCE IF EXISTS "TBL_VERSION_SEQ"')
    for function in conn.execute(
        sa.text(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = current_schema() AND p.proname LIKE :prefix"
        ),
        {"prefix": f"{TRIGGER_PREFIX}%"},
    ).scalars():
        if function not in before["functions"]:
            conn.exec_driver_sql(f"DROP FUNCTION {function}")
            done.append(f"dropped function {function}")


def _drop_order(conn: sa.Connection, names: Iterable[str]) -> list[str]:
    """NAMES with the tables that refer to others first."""
    metadata = sa.MetaData()
    chosen = list(names)
    metadata.reflect(conn, only=chosen)  # with the tables they refer to: not dropped
    return [t.name for t in reversed(metadata.sorted_tables) if t.name in chosen]
