"""Does a database's schema mean what the models mean? (`metastore db check`)

The comparison is of meaning, not of names: each table of the models is there with each of
its columns, of the same type family (and length, in colstats's own schema), the same
nullability, the same primary key, its unique keys and foreign keys as sets of columns
(whatever a constraint is called, and whether a unique key is a constraint or an index), its
foreign keys cascading, and an index for each of the models'; on PostgreSQL also the index of
key values in byte order (schema 0004) and the functions of per-call statistics writes (0009,
0010).

A database adopted from a Hive Metastore (metastore.store.adopt) keeps HMS's schema where
colstats does not need another: its narrower text columns, the NOT NULLs its rows lack
(a statistics row's STATS_KIND, set by a trigger), keys that do not cascade (colstats deletes
owned rows itself, metastore.store.owned), HMS's lock tables in lower case and HMS's own
tables beside colstats's. The comparison accepts those there, and only there.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from metastore.store import models as m

_FAMILIES = (
    ("integer", (sa.Integer, sa.BigInteger, sa.SmallInteger)),
    ("boolean", (sa.Boolean,)),
    ("float", (sa.Float, sa.Numeric)),
    ("binary", (sa.LargeBinary, sa.LargeBinary)),
    ("text", (sa.String, sa.Text)),
)


def _family(type_: Any) -> str:
    for name, classes in _FAMILIES:
        if isinstance(type_, classes):
            return name
    # Types a dialect reflects of its own (PostgreSQL's BYTEA, DOUBLE_PRECISION, ...).
    generic = type_.as_generic() if hasattr(type_, "as_generic") else type_
    for name, classes in _FAMILIES:
        if isinstance(generic, classes):
            return name
    return type(type_).__name__.lower()


def _length(type_: Any) -> int | None:
    """The length of a text type (None: unbounded)."""
    return getattr(type_, "length", None) if isinstance(type_, sa.String) else None


def differences(conn: sa.Connection) -> list[str]:
    """How the schema behind CONN differs in meaning from the models; empty when it does
    not."""
    inspector = sa.inspect(conn)
    present = set(inspector.get_table_names())
    adopted = "COLSTATS_ADOPTION" in present
    found: list[str] = []
    for table in m.Base.metadata.sorted_tables:
        name = table.name
        if name not in present and adopted and name.lower() in present:
            name = name.lower()  # HMS's lock tables, unquoted by Hive 2.3's and 3.1's scripts
        if name not in present:
            found.append(f"table {table.name} is missing")
            continue
        found += _table(inspector, table, name, adopted)
    if not adopted:
        extra = present - set(m.Base.metadata.tables) - {"alembic_version"}
        found += [f"table {name} is not colstats's" for name in sorted(extra)]
    if conn.dialect.name == "postgresql":
        found += _byte_order_index(conn)
        found += _write_function(conn)
    return found


def _table(inspector: sa.Inspector, table: sa.Table, name: str, adopted: bool) -> list[str]:
    found: list[str] = []
    where = table.name
    # The columns by the models' names (HMS's lower-case lock tables have lower-case ones).
    columns = {c["name"].upper(): c for c in inspector.get_columns(name)}
    for column in table.columns:
        had = columns.get(column.name)
        if had is None:
            found.append(f"column {where}.{column.name} is missing")
            continue
        family, model_family = _family(had["type"]), _family(column.type)
        if family != model_family:
            found.append(
                f"column {where}.{column.name} is {had['type']}, not {column.type} ({model_family})"
            )
        elif not adopted and _length(had["type"]) != _length(column.type):
            found.append(f"column {where}.{column.name} is {had['type']}, not {column.type}")
        if not adopted and had["nullable"] != column.nullable:
            state = "nullable" if had["nullable"] else "NOT NULL"
            found.append(f"column {where}.{column.name} is {state}")
    if not adopted:
        extra = sorted(set(columns) - {c.name for c in table.columns})
        found += [f"column {where}.{name_} is not colstats's" for name_ in extra]
    key = {c.upper() for c in inspector.get_pk_constraint(name)["constrained_columns"]}
    if key != {c.name for c in table.primary_key.columns}:
        found.append(f"the primary key of {where} is ({', '.join(sorted(key))})")
    uniques = {
        frozenset(c.upper() for c in u["column_names"])
        for u in inspector.get_unique_constraints(name)
    }
    indexes = inspector.get_indexes(name)
    uniques |= {
        frozenset(c.upper() for c in i["column_names"] if c) for i in indexes if i.get("unique")
    }
    for constraint in table.constraints:
        if isinstance(constraint, sa.UniqueConstraint):
            wanted = frozenset(c.name for c in constraint.columns)
            if not any(u <= wanted for u in uniques):  # a narrower key is stricter still
                found.append(f"no unique key of {where} on ({', '.join(sorted(wanted))})")
    keys = inspector.get_foreign_keys(name)
    for constraint in table.foreign_key_constraints:
        columns_ = [c.name for c in constraint.columns]
        referred = constraint.referred_table.name
        matching = [
            k
            for k in keys
            if [c.upper() for c in k["constrained_columns"]] == columns_
            and k["referred_table"] == referred
        ]
        cascades = any((k.get("options") or {}).get("ondelete") == "CASCADE" for k in matching)
        if not matching:
            found.append(f"no foreign key of {where} ({', '.join(columns_)}) to {referred}")
        elif constraint.ondelete == "CASCADE" and not adopted and not cascades:
            found.append(
                f"the foreign key of {where} ({', '.join(columns_)}) to {referred} does not cascade"
            )
    leading = [tuple(c.upper() for c in i["column_names"] if c) for i in indexes]
    leading += [tuple(sorted(u)) for u in uniques]
    for index in table.indexes:
        if index.name == m.BYTE_ORDER_INDEX:
            continue
        wanted_columns = tuple(c.name for c in index.columns)
        if not any(have[: len(wanted_columns)] == wanted_columns for have in leading):
            found.append(f"no index of {where} on ({', '.join(wanted_columns)})")
    return found


def _byte_order_index(conn: sa.Connection) -> list[str]:
    """What is wrong with PostgreSQL's index of key values in byte order (schema 0004):
    missing, another definition, or left invalid by a concurrent build that failed."""
    name = m.BYTE_ORDER_INDEX
    row = conn.execute(
        sa.text(
            "SELECT pg_get_indexdef(i.indexrelid), i.indisvalid FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = :name"
        ),
        {"name": name},
    ).first()
    if row is None:
        return [f"index {name} is missing"]
    definition, valid = row
    if not definition.endswith('("INTEGER_IDX", "PART_KEY_VAL" COLLATE "C")'):
        return [f"index {name} is not on key values in byte order: {definition}"]
    if not valid:
        return [f"index {name} is invalid (a concurrent build failed): drop it and upgrade"]
    return []


def _write_function(conn: sa.Connection) -> list[str]:
    """PostgreSQL's functions of per-call statistics writes (schemas 0009 and 0010), those
    missing."""
    found = {
        name
        for (name,) in conn.execute(
            sa.text(
                "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = current_schema() AND p.proname IN (:write, :alone)"
            ),
            {"write": m.WRITE_FUNCTION, "alone": m.WRITE_ALONE_FUNCTION},
        )
    }
    return [
        f"function {name} is missing"
        for name in (m.WRITE_FUNCTION, m.WRITE_ALONE_FUNCTION)
        if name not in found
    ]
