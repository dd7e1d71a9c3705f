"""Adding partitions on PostgreSQL in one statement: their serdes, storage descriptors,
partitions, key values and parameters, and the version of their table, inserted by the
data-modifying common table expressions of one INSERT, instead of a statement per table
(metastore.store.storage.insert_storages and the handler's inserts: eleven, the version
bump among them).

The statement inserts nothing when the partitions' column list is not the table's (the
general path then makes one of their own) and skips the partitions that exist, which it
names (the caller raises AlreadyExistsException, or skips them for ifNotExists). It answers
the rows of the partitions added as metastore.store.partition_rows reads them, as stored.

The ids of the serdes and descriptors it inserts are matched to their partitions by order:
the rows are inserted in the order of the partitions, and the ids a sequence (or HMS's
SEQUENCE_TABLE, in an adopted database) gives in one statement grow in that order, as
SQLAlchemy's batched inserts with RETURNING assume too.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import TextClause, text
from sqlalchemy.orm import Session

from metastore.store import lists
from metastore.store.driver import driver_rows
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
existing AS (
  SELECT p."PART_NAME" FROM "PARTITIONS" p
  WHERE p."TBL_ID" = :tbl_id AND p."PART_NAME" = ANY({_param("name", "text")})
),
new AS (
  SELECT g.*, row_number() OVER (ORDER BY g.ord) AS n FROM given g
  WHERE (SELECT same FROM same_columns)
    AND g.name NOT IN (SELECT e."PART_NAME" FROM existing e)
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
  (SELECT count(*) FROM bump)
FROM (SELECT 1) one
LEFT JOIN (
  parts p JOIN sds d ON d."SD_ID" = p."SD_ID" JOIN serdes se ON se."SERDE_ID" = d."SERDE_ID"
) ON true
ORDER BY p."PART_NAME" COLLATE "C"
"""
    )


def add(
    s: Session, tbl_id: int, cd_id: int | None, partitions: Sequence[NewPartition]
) -> Added | None:
    """Add PARTITIONS to table TBL_ID (its column list CD_ID), those that do not exist, in
    one statement, and move the table's version (the caller's transaction need not); None,
    with nothing added, where the general path must add them: a partition without a serde
    or with skewed values, a column list that is not the table's."""
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
    params: dict[str, Any] = {"tbl_id": tbl_id, "cd_id": cd_id}
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
    for table, _, columns, _ in _BELOW:
        prefix = table.lower()
        rows = below[table]
        params[f"{prefix}_ord"] = lists.array_text(r[0] for r in rows)
        for i in range(len(columns)):
            params[f"{prefix}_{i}"] = lists.array_text(r[i + 1] for r in rows)
    result = driver_rows(s, _statement(), params)
    same, existing = result[0][ROW_FIELDS + 1], result[0][ROW_FIELDS + 2]
    if not same:
        return None
    rows = [row[:ROW_FIELDS] for row in result if row[0] is not None]
    return Added(sorted(existing), [row[0] for row in rows], rows)
