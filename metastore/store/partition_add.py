"""Adding partitions on PostgreSQL in one statement: their serdes, storage descriptors,
partitions, key values and parameters, and the version of their table, inserted by the
data-modifying common table expressions of one INSERT, instead of a statement per table
(metastore.store.storage.insert_storages and the handler's inserts: eleven, the version
bump among them).

The statement inserts nothing when the partitions' column list is not the table's (the
general path then makes one of their own) and skips the partitions that exist, which it
names (the caller raises AlreadyExistsException, or skips them for ifNotExists); when none
may be skipped, it adds none of them if one exists. It answers the rows of the partitions
added as metastore.store.partition_rows reads them, as stored; the rows below them (key
values, parameters, the column list they share with the table) are those it was given, so
the answer is built without reading them back.

An add alone: once a server has added to a table this way, it keeps what it found of the
table (its id, names, type, location, column list and keys: Target, in Targets), and its
next add that skips no partition runs the statement as a transaction of its own
(Transactions.alone): one round trip, no lookup of the table, no BEGIN, no COMMIT (now
and then the check of whether the partitions are due to be analyzed follows, in a
transaction of its own).
The statement then first checks that the table still is as kept; if another server, or
this one, changed it since (renamed, moved, given other columns or keys, dropped and made
again), it adds nothing and the caller looks the table up and adds in its transaction.
A change of the table that commits while the statement runs is one the statement did not
see, as a change committed right after a lookup in the call's transaction would be.

The ids of the serdes and descriptors it inserts are matched to their partitions by order:
the rows are inserted in the order of the partitions, and the ids a sequence (or HMS's
SEQUENCE_TABLE, in an adopted database) gives in one statement grow in that order, as
SQLAlchemy's batched inserts with RETURNING assume too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import TextClause, text

from metastore.store import lists
from metastore.store import models as m
from metastore.store.partition_rows import (
    CD_ID,
    LOCATION,
    PART_ID,
    SD_ID,
    SERDE_ID,
    Below,
    StoredDatabase,
    StoredTable,
)
from metastore.store.seen_tables import SeenTables
from metastore.store.storage import Storage, column_signature

ROW_FIELDS = 18
"""The fields of a row of metastore.store.partition_rows (PART_ID ... SERDE_TYPE)."""


class NewPartition(NamedTuple):
    """A partition to add, as the handler makes it."""

    name: str
    create_time: int
    last_access_time: int
    values: list[str]
    params: dict[str, str]
    storage: Storage


class Added(NamedTuple):
    existing: list[str]
    """The names of the partitions that exist already (not added)."""
    part_ids: list[int]
    rows: list[Any]
    """The rows of the partitions added, as metastore.store.partition_rows gives them, in
    name order."""
    below: Below
    """The rows below them, as written (Below.of_partitions would read the same)."""


# The columns of SERDES and SDS the statement writes, each with its array's type.
_SERDE_COLUMNS = (
    ("NAME", "text"),
    ("SLIB", "text"),
    ("DESCRIPTION", "text"),
    ("SERIALIZER_CLASS", "text"),
    ("DESERIALIZER_CLASS", "text"),
    ("SERDE_TYPE", "integer"),
)
_SD_COLUMNS = (
    ("INPUT_FORMAT", "text"),
    ("OUTPUT_FORMAT", "text"),
    ("LOCATION", "text"),
    ("IS_COMPRESSED", "boolean"),
    ("NUM_BUCKETS", "bigint"),
    ("IS_STOREDASSUBDIRECTORIES", "boolean"),
)
# The rows below each partition or its descriptor or serde: (table, owner id, columns, the
# types of the columns' arrays).
_BELOW = (
    ("PARTITION_KEY_VALS", "PART_ID", ("INTEGER_IDX", "PART_KEY_VAL"), ("integer", "text")),
    ("PARTITION_PARAMS", "PART_ID", ("PARAM_KEY", "PARAM_VALUE"), ("text", "text")),
    ("SERDE_PARAMS", "SERDE_ID", ("PARAM_KEY", "PARAM_VALUE"), ("text", "text")),
    ("SD_PARAMS", "SD_ID", ("PARAM_KEY", "PARAM_VALUE"), ("text", "text")),
    ("BUCKETING_COLS", "SD_ID", ("INTEGER_IDX", "BUCKET_COL_NAME"), ("integer", "text")),
    ("SORT_COLS", "SD_ID", ("INTEGER_IDX", "COLUMN_NAME", "ORDER"), ("integer", "text", "integer")),
)


def _param(name: str, type_: str) -> str:
    return f"CAST(:{name} AS {type_}[])"


@functools.cache
def _statement() -> TextClause:
    serde_names = [c for c, _ in _SERDE_COLUMNS]
    sd_names = [c for c, _ in _SD_COLUMNS]
    given = [("name", "text"), ("create_time", "bigint"), ("last_access_time", "bigint")]
    given += [(f"serde_{c.lower()}", ty) for c, ty in _SERDE_COLUMNS]
    given += [(f"sd_{c.lower()}", ty) for c, ty in _SD_COLUMNS]
    arrays = ", ".join(_param(name, ty) for name, ty in given)
    fields = ", ".join(name for name, _ in given)
    below = []
    for table, owner, columns, types in _BELOW:
        prefix = table.lower()
        unnested = ", ".join(
            [_param(f"{prefix}_ord", "bigint")]
            + [_param(f"{prefix}_{i}", ty) for i, ty in enumerate(types)]
        )
        columns_ = ", ".join(f"c{i}" for i in range(len(columns)))
        values = ", ".join(f"b.c{i}" for i in range(len(columns)))
        names = ", ".join(f'"{c}"' for c in (owner, *columns))
        below.append(
            f"""{prefix} AS (
  INSERT INTO "{table}" ({names})
  SELECT added."{owner}", {values}
  FROM unnest({unnested}) WITH ORDINALITY AS b(ord, {columns_}, i)
  JOIN new ON new.ord = b.ord JOIN added ON added.n = new.n ORDER BY b.i
)"""
        )
    return text(
        f"""WITH given AS (
  SELECT * FROM unnest({arrays}) WITH ORDINALITY AS g({fields}, ord)
),
table_columns AS (
  SELECT coalesce(array_agg(c."COLUMN_NAME"::text ORDER BY c."INTEGER_IDX"), '{{}}') AS names,
         coalesce(array_agg(c."TYPE_NAME"::text ORDER BY c."INTEGER_IDX"), '{{}}') AS types,
         coalesce(array_agg(c."COMMENT"::text ORDER BY c."INTEGER_IDX"), '{{}}') AS comments
  FROM "COLUMNS_V2" c WHERE c."CD_ID" = :cd_id
),
same_columns AS (
  SELECT names = {_param("column_names", "text")} AND types = {_param("column_types", "text")}
         AND comments = {_param("column_comments", "text")} AS same
  FROM table_columns
),
target AS (
  SELECT NOT CAST(:check AS boolean) OR EXISTS (
    SELECT 1 FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID"
    JOIN "SDS" s ON s."SD_ID" = t."SD_ID"
    WHERE t."TBL_ID" = :tbl_id AND t."TBL_NAME" = :tbl_name AND d."NAME" = :db_name
      AND d."CTLG_NAME" = :catalog AND s."CD_ID" = :cd_id
      AND t."TBL_TYPE" IS NOT DISTINCT FROM CAST(:tbl_type AS text)
      AND s."LOCATION" IS NOT DISTINCT FROM CAST(:location AS text)
      AND ARRAY(
        SELECT k."PKEY_NAME"::text FROM "PARTITION_KEYS" k
        WHERE k."TBL_ID" = t."TBL_ID" ORDER BY k."INTEGER_IDX"
      ) = {_param("keys", "text")}
  ) AS ok
),
existing AS (
  SELECT p."PART_NAME" FROM "PARTITIONS" p
  WHERE p."TBL_ID" = :tbl_id AND p."PART_NAME" = ANY({_param("name", "text")})
),
new AS (
  SELECT g.*, row_number() OVER (ORDER BY g.ord) AS n FROM given g
  WHERE (SELECT same FROM same_columns) AND (SELECT ok FROM target)
    AND g.name NOT IN (SELECT e."PART_NAME" FROM existing e)
    AND NOT (CAST(:all_or_none AS boolean) AND EXISTS (SELECT 1 FROM existing))
),
serdes AS (
  INSERT INTO "SERDES" ({", ".join(f'"{c}"' for c in serde_names)})
  SELECT {", ".join(f"serde_{c.lower()}" for c in serde_names)} FROM new ORDER BY n
  RETURNING *
),
serde_ids AS (SELECT s."SERDE_ID", row_number() OVER (ORDER BY s."SERDE_ID") AS n FROM serdes s),
sds AS (
  INSERT INTO "SDS" ("CD_ID", "SERDE_ID", {", ".join(f'"{c}"' for c in sd_names)})
  SELECT :cd_id, si."SERDE_ID", {", ".join(f"new.sd_{c.lower()}" for c in sd_names)}
  FROM new JOIN serde_ids si ON si.n = new.n ORDER BY new.n
  RETURNING *
),
sd_ids AS (SELECT d."SD_ID", row_number() OVER (ORDER BY d."SD_ID") AS n FROM sds d),
parts AS (
  INSERT INTO "PARTITIONS" ("TBL_ID", "PART_NAME", "CREATE_TIME", "LAST_ACCESS_TIME", "SD_ID")
  SELECT :tbl_id, new.name, new.create_time, new.last_access_time, d."SD_ID"
  FROM new JOIN sd_ids d ON d.n = new.n ORDER BY new.n
  RETURNING *
),
added AS (
  SELECT new.n, p."PART_ID", d."SD_ID", si."SERDE_ID"
  FROM new JOIN parts p ON p."PART_NAME" = new.name
  JOIN sd_ids d ON d.n = new.n JOIN serde_ids si ON si.n = new.n
),
{",".join(below)},
bump AS (
  INSERT INTO "TBL_VERSIONS" AS v ("TBL_ID", "VERSION", "PARTS_VERSION", "SEEN_VERSION")
  SELECT :tbl_id, drawn.n, drawn.n, drawn.n
  FROM (SELECT nextval('"TBL_VERSION_SEQ"') AS n) drawn WHERE EXISTS (SELECT 1 FROM new)
  ON CONFLICT ("TBL_ID") DO UPDATE SET
    "VERSION" = greatest(v."VERSION" + 1, excluded."VERSION"),
    "PARTS_VERSION" = greatest(v."VERSION" + 1, excluded."VERSION"),
    "SEEN_VERSION" = greatest(v."VERSION" + 1, excluded."VERSION")
  RETURNING 1
)
SELECT p."PART_ID", p."CREATE_TIME", p."LAST_ACCESS_TIME", d."SD_ID", d."LOCATION",
  d."INPUT_FORMAT", d."OUTPUT_FORMAT", d."IS_COMPRESSED", d."NUM_BUCKETS",
  d."IS_STOREDASSUBDIRECTORIES", d."CD_ID", d."SERDE_ID", se."NAME", se."SLIB",
  se."DESCRIPTION", se."SERIALIZER_CLASS", se."DESERIALIZER_CLASS", se."SERDE_TYPE",
  p."PART_NAME", (SELECT same FROM same_columns), ARRAY(SELECT "PART_NAME" FROM existing),
  (SELECT count(*) FROM bump), (SELECT ok FROM target)
FROM (SELECT 1) one
LEFT JOIN (
  parts p JOIN sds d ON d."SD_ID" = p."SD_ID" JOIN serdes se ON se."SERDE_ID" = d."SERDE_ID"
) ON true
ORDER BY p."PART_NAME" COLLATE "C"
"""
    )


class Target(NamedTuple):
    """The table partitions are added to, as lookup.stored_table found it on PostgreSQL."""

    database: m.Database | StoredDatabase
    table: m.Table | StoredTable
    storage: Any | None
    """Its storage descriptor's row (shaped as a row of partition_rows); None without one."""
    keys: list[str]
    """The names of its partition keys, in order."""


Targets = SeenTables[Target]
"""The tables this server last added partitions to in one statement: what an add alone
takes its table from (see the module docstring)."""


class TableChanged(Exception):
    """The table of an add alone is no longer as its Target says: nothing was added."""


Run = Callable[[TextClause, dict[str, Any]], list[Any]]
"""Runs a statement with its parameters and gives its rows: in the caller's transaction
(metastore.store.driver.driver_rows), or as one of its own (Transactions.alone)."""


def add(
    run: Run,
    target: Target,
    partitions: Sequence[NewPartition],
    *,
    checked: bool,
    all_or_none: bool,
) -> Added | None:
    """Add PARTITIONS to the table of TARGET, those that do not exist (none of them, with
    ALL_OR_NONE, when some exist), in one statement run by RUN that moves the table's
    version too (the caller's transaction need not); None, with nothing added, where the
    general path must add them: a partition without a serde or with skewed values, a column
    list that is not the table's. CHECKED, raises TableChanged, with nothing added, when the
    table no longer is as TARGET says."""
    cd_id = target.storage[CD_ID] if target.storage is not None else None
    if cd_id is None or not partitions:
        return None
    first = partitions[0].storage.columns
    signature = column_signature(first)
    for partition in partitions:
        storage = partition.storage
        if (
            storage.serde is None
            or storage.skewed.names
            or storage.skewed.values
            or storage.skewed.locations
            or column_signature(storage.columns) != signature
        ):
            return None
    table = target.table
    params: dict[str, Any] = {
        "tbl_id": table.TBL_ID,
        "cd_id": cd_id,
        "check": checked,
        "all_or_none": all_or_none,
        "tbl_name": table.TBL_NAME,
        "tbl_type": table.TBL_TYPE,
        "db_name": target.database.NAME,
        "catalog": target.database.CTLG_NAME,
        "location": target.storage[LOCATION] if target.storage is not None else None,
        "keys": lists.array_text(target.keys),
    }
    params["column_names"] = lists.array_text(c for c, _, _ in signature)
    params["column_types"] = lists.array_text(ty for _, ty, _ in signature)
    params["column_comments"] = lists.array_text(comment for _, _, comment in signature)
    params["name"] = lists.array_text(p.name for p in partitions)
    params["create_time"] = lists.array_text(p.create_time for p in partitions)
    params["last_access_time"] = lists.array_text(p.last_access_time for p in partitions)
    for column, _ in _SERDE_COLUMNS:
        params[f"serde_{column.lower()}"] = lists.array_text(
            getattr(p.storage.serde, column) for p in partitions
        )
    for column, _ in _SD_COLUMNS:
        params[f"sd_{column.lower()}"] = lists.array_text(
            getattr(p.storage.sd, column) for p in partitions
        )
    below: dict[str, list[tuple[Any, ...]]] = {table: [] for table, *_ in _BELOW}
    for ord_, p in enumerate(partitions, start=1):
        st = p.storage
        below["PARTITION_KEY_VALS"] += [(ord_, i, v) for i, v in enumerate(p.values)]
        below["PARTITION_PARAMS"] += [(ord_, k, v) for k, v in p.params.items()]
        below["SERDE_PARAMS"] += [(ord_, k, v) for k, v in st.serde_params.items()]
        below["SD_PARAMS"] += [(ord_, k, v) for k, v in st.sd_params.items()]
        below["BUCKETING_COLS"] += [(ord_, i, c) for i, c in enumerate(st.bucket_cols)]
        below["SORT_COLS"] += [(ord_, i, c, o) for i, (c, o) in enumerate(st.sort_cols)]
    for name, _, columns, _ in _BELOW:
        prefix = name.lower()
        rows = below[name]
        params[f"{prefix}_ord"] = lists.array_text(r[0] for r in rows)
        for i in range(len(columns)):
            params[f"{prefix}_{i}"] = lists.array_text(r[i + 1] for r in rows)
    result = run(_statement(), params)
    same, existing, target_ok = (result[0][ROW_FIELDS + i] for i in (1, 2, 4))
    if not target_ok:
        raise TableChanged(f"{target.database.NAME}.{table.TBL_NAME} changed since it was kept")
    if not same:
        return None
    by_name = {p.name: p for p in partitions}
    added = [row for row in result if row[0] is not None]
    rows = [row[:ROW_FIELDS] for row in added]
    written = _written(rows, [by_name[row[ROW_FIELDS]] for row in added], cd_id, signature)
    return Added(sorted(existing), [row[0] for row in rows], rows, written)


def _written(
    rows: Sequence[Any],
    partitions: Sequence[NewPartition],
    cd_id: int,
    columns: list[tuple[str, str | None, str | None]],
) -> Below:
    """The rows below the partitions of ROWS (their rows as added) as PARTITIONS gave them
    and the statement wrote them, with COLUMNS, the column list CD_ID they share: what a
    read of them (Below.of_partitions) would find, without the statement."""
    below = Below()
    if columns:
        below.columns[cd_id] = list(columns)
    for row, p in zip(rows, partitions, strict=True):
        part_id, sd_id, serde_id = row[PART_ID], row[SD_ID], row[SERDE_ID]
        below.values[part_id] = list(p.values)
        storage = p.storage
        for owner, found, given in (
            (part_id, below.part_params, p.params),
            (sd_id, below.sd_params, storage.sd_params),
            (serde_id, below.serde_params, storage.serde_params),
        ):
            if given:
                found[owner] = {k: v if v is not None else "" for k, v in given.items()}
        if storage.bucket_cols:
            below.buckets[sd_id] = [c or "" for c in storage.bucket_cols]
        if storage.sort_cols:
            below.sorts[sd_id] = [(c or "", o) for c, o in storage.sort_cols]
    return below
