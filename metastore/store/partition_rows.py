"""The rows of the partitions (and tables) a read call answers with, in two statements
whatever their number.

A read call (get_partitions_by_filter, get_partitions_ps, get_partitions, ...) may answer
with thousands of partitions. Loading them as ORM entities (storage.Storage, which the write
paths change) costs more than the rows themselves, so this read-only path works on plain
rows of SQLAlchemy Core queries:

1. the selected partitions joined with their storage descriptor and serde, in name order
   (`partition_rows`; a row's fields are named by the constants below);
2. everything below them, in one UNION ALL of (kind, owner, index, text, text, text, int)
   rows, by the ids the first statement returned (one bound parameter per kind of id,
   so the selection, a filter say, runs once): key values, partition, descriptor and
   serde parameters, bucket and sort columns, skewed column names, and the columns of the
   distinct column lists (partitions of a table share the table's column list, by CD_ID).
   `Below` holds them by owner id.

A table's answer is read the same way: its descriptor and serde (`storage_rows`, shaped as a
partition's row; `table_row` reads a table by name with its database and descriptor, and
for get_table its column statistics, in one statement), then the same UNION ALL, which also
holds the tables' parameters and partition keys.

The statements that do not depend on the call's selection are built once and run on the
driver (metastore.store.driver): their ids are one parameter each
(metastore.store.lists). A descriptor with skewed columns costs a few statements more
(storage.load_skewed). The answers are built from these rows by the door
(metastore.hms.answers).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import (
    CompoundSelect,
    Integer,
    Select,
    Text,
    and_,
    bindparam,
    cast,
    literal_column,
    null,
    select,
    union_all,
)
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter

from metastore.stats.rows import STATS_COLUMNS
from metastore.store import lists
from metastore.store import models as m
from metastore.store.driver import driver_rows
from metastore.store.partition_filter import text_in_byte_order
from metastore.store.partitions import with_values
from metastore.store.storage import Skewed, load_skewed

PARTITIONS = m.Partition.__table__
_SDS = m.StorageDescriptor.__table__
_SERDES = m.SerDe.__table__
_TBLS = m.Table.__table__
_DBS = m.Database.__table__
_TAB_COL_STATS = m.TableColumnStats.__table__
_PARTITION_KEYS = m.PartitionKey.__table__
_PART_VERSIONS = m.PartitionVersion.__table__
_TBL_VERSIONS = m.TableVersion.__table__

# The kinds of rows of the second statement.
_VALUE, _PART_PARAM, _SD_PARAM, _SERDE_PARAM, _BUCKET, _SORT, _SKEWED, _COLUMN = range(8)
_TABLE_PARAM, _KEY, _VERSIONS = 8, 9, 10


Selection = Select[tuple[int]]
"""Which partitions: a query of their PART_IDs, made by `of_table` and narrowed by the store's
functions (partitions.with_values, the partition filters), for the doors to pass back."""


def of_table(tbl_id: int) -> Selection:
    """All partitions of table TBL_ID: the selection that callers restrict (with `where`,
    or joins on PARTITIONS) before passing it to `partition_structs`."""
    return select(PARTITIONS.c.PART_ID).where(PARTITIONS.c.TBL_ID == tbl_id)


def of_names(s: Session, tbl_id: int, part_names: Sequence[str]) -> Selection:
    """The partitions of table TBL_ID named PART_NAMES (as stored): their names one bound
    parameter whatever their number (metastore.store.lists), so that the statement, of one
    shape, is compiled once and short enough for the driver to keep (an expanding IN of 200
    names cost more to render and send than the read itself)."""
    dialect = s.get_bind().dialect.name
    among = lists.any_of(dialect, "part_names", text=True)
    return (
        of_table(tbl_id)
        .where(among(PARTITIONS.c.PART_NAME))
        .params(part_names=lists.values(dialect, part_names))
    )


def names_by_values(
    s: Session,
    catalog: str,
    db_name: str,
    table_name: str,
    values: Sequence[str | None],
    limit: int | None = None,
) -> list[str]:
    """The names of the partitions of table DB_NAME.TABLE_NAME (of CATALOG) whose key i has
    VALUES[i] for every non-empty VALUES[i] (a partial specification), ordered by PART_NAME
    in byte order (as HMS), at most LIMIT of them (None or negative: all): one statement on
    the driver, the table's lookup included, built once per pattern of empty and non-empty
    values. An unknown table gives no names, as a table without such partitions does; more
    values than keys are not checked."""
    filled = tuple(index for index, value in enumerate(values) if value)
    limited = limit is not None and limit >= 0
    params: dict[str, Any] = {"catalog": catalog, "db_name": db_name, "table_name": table_name}
    params.update({f"value{index}": values[index] for index in filled})
    if limited:
        params["limit"] = limit
    statement = _names_by_values(s.get_bind().dialect.name, filled, limited)
    return [name for (name,) in driver_rows(s, statement, params)]


@functools.lru_cache(maxsize=64)
def _names_by_values(dialect: str, filled: tuple[int, ...], limited: bool) -> Select[tuple[str]]:
    """The statement of `names_by_values` for the keys FILLED (indexes of non-empty values)."""
    p, tables, dbs = PARTITIONS.c, _TBLS.c, _DBS.c
    query = (
        select(p.PART_NAME)
        .join_from(PARTITIONS, _TBLS, tables.TBL_ID == p.TBL_ID)
        .join_from(_TBLS, _DBS, dbs.DB_ID == tables.DB_ID)
        .where(
            dbs.CTLG_NAME == bindparam("catalog"),
            dbs.NAME == bindparam("db_name"),
            tables.TBL_NAME == bindparam("table_name"),
        )
    )
    values: list[BindParameter[str] | None] = [
        bindparam(f"value{index}") if index in filled else None
        for index in range(max(filled, default=-1) + 1)
    ]
    query = with_values(query, values).order_by(text_in_byte_order(p.PART_NAME, dialect))
    return query.limit(bindparam("limit", type_=Integer)) if limited else query


def _ordered(s: Session, selection: Select[tuple[int]], limit: int | None) -> Select[tuple[int]]:
    """SELECTION by PART_NAME in byte order (as HMS), at most LIMIT (None or negative: all)."""
    dialect = s.get_bind().dialect.name
    ordered = selection.order_by(text_in_byte_order(PARTITIONS.c.PART_NAME, dialect))
    if limit is not None and limit >= 0:
        ordered = ordered.limit(limit)
    return ordered


# Positions of the fields in a row of `partition_rows` (read by position: this runs for every
# partition, and index access on result rows is cheaper than access by name).
PART_ID, CREATE_TIME, LAST_ACCESS_TIME, SD_ID, LOCATION, INPUT_FORMAT, OUTPUT_FORMAT = range(7)
IS_COMPRESSED, NUM_BUCKETS, IS_STOREDASSUBDIRECTORIES, CD_ID, SERDE_ID = range(7, 12)
SERDE_NAME, SLIB, SERDE_DESCRIPTION, SERIALIZER_CLASS, DESERIALIZER_CLASS, SERDE_TYPE = range(
    12, 18
)


def _storage_columns() -> list[Any]:
    sd, serde = _SDS.c, _SERDES.c
    return [
        sd.SD_ID,
        sd.LOCATION,
        sd.INPUT_FORMAT,
        sd.OUTPUT_FORMAT,
        sd.IS_COMPRESSED,
        sd.NUM_BUCKETS,
        sd.IS_STOREDASSUBDIRECTORIES,
        sd.CD_ID,
        sd.SERDE_ID,
        serde.NAME,
        serde.SLIB,
        serde.DESCRIPTION,
        serde.SERIALIZER_CLASS,
        serde.DESERIALIZER_CLASS,
        serde.SERDE_TYPE,
    ]


# With `with_versions`, after those: the partition's version (PART_VERSIONS), its table's
# VERSION, PARTS_VERSION and SEEN_VERSION (TBL_VERSIONS; metastore.store.versions).
PART_VERSION, TABLE_VERSION, PARTS_VERSION, SEEN_VERSION = range(18, 22)


def partition_rows(
    s: Session,
    selection: Select[tuple[int]],
    limit: int | None = None,
    *,
    with_versions: bool = False,
) -> Sequence[Any]:
    """The partitions SELECTION (from `of_table`) selects, with their storage descriptor and
    serde, ordered by PART_NAME in byte order (as HMS), at most LIMIT of them (None or
    negative: all), and WITH_VERSIONS the versions read in the same statement. The fields
    of a row are at the positions named above."""
    ordered = _ordered(s, selection, limit)
    p, sd, serde = PARTITIONS.c, _SDS.c, _SERDES.c
    query = (
        ordered.outerjoin_from(PARTITIONS, _SDS, sd.SD_ID == p.SD_ID)
        .outerjoin_from(_SDS, _SERDES, serde.SERDE_ID == sd.SERDE_ID)
        .with_only_columns(p.PART_ID, p.CREATE_TIME, p.LAST_ACCESS_TIME, *_storage_columns())
    )
    if with_versions:
        pv, tv = _PART_VERSIONS.c, _TBL_VERSIONS.c
        query = (
            query.outerjoin_from(PARTITIONS, _PART_VERSIONS, pv.PART_ID == p.PART_ID)
            .outerjoin_from(PARTITIONS, _TBL_VERSIONS, tv.TBL_ID == p.TBL_ID)
            .add_columns(pv.VERSION, tv.VERSION, tv.PARTS_VERSION, tv.SEEN_VERSION)
        )
    return s.execute(query).all()


@functools.cache
def _storage_query(dialect: str) -> Select[Any]:
    no_int = cast(null(), Integer)
    sd, serde = _SDS.c, _SERDES.c
    return (
        select(no_int, no_int, no_int, *_storage_columns())
        .select_from(_SDS)
        .outerjoin(_SERDES, serde.SERDE_ID == sd.SERDE_ID)
        .where(lists.among(dialect, "sds")(sd.SD_ID))
    )


def storage_rows(s: Session, sd_ids: Sequence[int]) -> dict[int, Any]:
    """SD_ID -> the row of a storage descriptor and its serde, shaped as a row of
    `partition_rows` (its partition's fields None), for the descriptors SD_IDS. Run on the
    driver (metastore.store.driver): IS_COMPRESSED and IS_STOREDASSUBDIRECTORIES may be
    0 and 1."""
    if not sd_ids:
        return {}
    dialect = s.get_bind().dialect.name
    rows = driver_rows(s, _storage_query(dialect), {"sds": lists.values(dialect, sd_ids)})
    return {row[SD_ID]: row for row in rows}


class StoredTable(NamedTuple):
    """The fields of a table (TBLS) its answer needs, as `m.Table` names them."""

    TBL_ID: int
    SD_ID: int | None
    TBL_NAME: str
    OWNER: str | None
    OWNER_TYPE: str | None
    CREATE_TIME: int
    LAST_ACCESS_TIME: int
    RETENTION: int
    VIEW_ORIGINAL_TEXT: str | None
    VIEW_EXPANDED_TEXT: str | None
    TBL_TYPE: str | None
    IS_REWRITE_ENABLED: bool


class StoredDatabase(NamedTuple):
    """The fields of a database (DBS) a table's answer needs, as `m.Database` names them."""

    NAME: str
    CTLG_NAME: str


_TABLE_FIELDS = len(StoredTable._fields)
_DATABASE_FIELDS = len(StoredDatabase._fields)
_STATS_COLUMN_NAME = STATS_COLUMNS.index("COLUMN_NAME")


class TableRow(NamedTuple):
    """What `table_row` reads of one table."""

    database: StoredDatabase
    table: StoredTable
    storage: Any | None
    """Its storage descriptor's row, shaped as a row of `partition_rows`; None without one."""
    stats: list[Sequence[Any]] | None
    """Its rows of TAB_COL_STATS of the engine asked for (STATS_COLUMNS in that order, as
    the driver gives them); None when not asked."""
    keys: list[tuple[str, str]] | None
    """The (name, Hive type) of its partition keys, in order; None when not asked."""


# What `table_row` reads with a table: nothing more, its statistics, or its partition keys.
_ALONE, _WITH_STATS, _WITH_KEYS = "alone", "stats", "keys"


@functools.cache
def _table_query(joined: str) -> Select[Any]:
    no_int = cast(null(), Integer)
    sd, serde, tbl, db = _SDS.c, _SERDES.c, _TBLS.c, _DBS.c
    stats, keys = _TAB_COL_STATS.c, _PARTITION_KEYS.c
    extra: list[Any] = []
    if joined == _WITH_STATS:
        extra = [stats[name] for name in STATS_COLUMNS]
    elif joined == _WITH_KEYS:
        extra = [keys.PKEY_NAME, keys.PKEY_TYPE]
    query = (
        select(
            *(no_int, no_int, no_int, *_storage_columns()),
            *(tbl[name] for name in StoredTable._fields),
            *(db[name] for name in StoredDatabase._fields),
            *extra,
        )
        .select_from(_TBLS)
        .join(_DBS, db.DB_ID == tbl.DB_ID)
        .outerjoin(_SDS, sd.SD_ID == tbl.SD_ID)
        .outerjoin(_SERDES, serde.SERDE_ID == sd.SERDE_ID)
        .where(
            db.CTLG_NAME == bindparam("catalog"),
            db.NAME == bindparam("db_name"),
            tbl.TBL_NAME == bindparam("table_name"),
        )
    )
    if joined == _WITH_STATS:
        query = query.outerjoin(
            _TAB_COL_STATS,
            and_(stats.TBL_ID == tbl.TBL_ID, stats.ENGINE == bindparam("engine")),
        )
    elif joined == _WITH_KEYS:
        query = query.outerjoin(_PARTITION_KEYS, keys.TBL_ID == tbl.TBL_ID).order_by(
            keys.INTEGER_IDX
        )
    return query


def table_row(
    s: Session,
    catalog: str,
    db_name: str,
    table_name: str,
    *,
    stats_engine: str | None = None,
    with_keys: bool = False,
) -> TableRow | None:
    """Table TABLE_NAME of database DB_NAME (of CATALOG), names as stored, in one statement
    on the driver: its database, its fields and its storage descriptor's row, and with a
    STATS_ENGINE its column statistics of that engine, or WITH_KEYS its partition keys (a
    row per column or key, the table's fields repeated on each: a round trip fewer than
    reading them apart). None when there is no such table. For the read calls of one
    table, which need no ORM entity."""
    if stats_engine is not None and with_keys:
        raise ValueError("table_row reads a table's statistics or its keys, not both")
    params = {"catalog": catalog, "db_name": db_name, "table_name": table_name}
    joined = _ALONE
    if stats_engine is not None:
        params["engine"], joined = stats_engine, _WITH_STATS
    elif with_keys:
        joined = _WITH_KEYS
    rows = driver_rows(s, _table_query(joined), params)
    if not rows:
        return None
    row = rows[0]
    start = SERDE_TYPE + 1
    fields = list(row[start : start + _TABLE_FIELDS])
    fields[-1] = bool(fields[-1])  # IS_REWRITE_ENABLED: SQLite's 0 or 1
    table = StoredTable(*fields)
    after = start + _TABLE_FIELDS
    database = StoredDatabase(*row[after : after + _DATABASE_FIELDS])
    after += _DATABASE_FIELDS
    stats = keys = None
    # A table without statistics (keys) has one row, whose joined columns are all NULL.
    if joined == _WITH_STATS:
        stats = [r[after:] for r in rows if r[after + _STATS_COLUMN_NAME] is not None]
    elif joined == _WITH_KEYS:
        keys = [(r[after], r[after + 1]) for r in rows if r[after] is not None]
    return TableRow(database, table, row if row[SD_ID] is not None else None, stats, keys)


class Below:
    """The rows below partitions or tables and their storage descriptors, by owner id: read
    in one statement (`read`, `of_partitions`), or as an add wrote them
    (metastore.store.partition_add)."""

    def __init__(self) -> None:
        """None yet."""
        self.values: dict[int, list[str]] = {}
        """PART_ID -> key values, in key order."""
        self.part_params: dict[int, dict[str, str]] = {}
        self.table_params: dict[int, dict[str, str]] = {}
        self.keys: dict[int, list[tuple[str, str | None, str | None]]] = {}
        """TBL_ID -> (name, type, comment) of the partition keys, in order."""
        self.sd_params: dict[int, dict[str, str]] = {}
        self.serde_params: dict[int, dict[str, str]] = {}
        self.buckets: dict[int, list[str]] = {}
        self.sorts: dict[int, list[tuple[str, int]]] = {}
        """SD_ID -> (column, order) of the sort columns."""
        self.columns: dict[int, list[tuple[str, str | None, str | None]]] = {}
        """CD_ID -> (name, type, comment) of the columns, in order."""
        self.version: int | None = None
        """The VERSION of the table `read` was asked for (its VERSION_OF; see
        metastore.store.versions), when it has one."""
        self.skewed: dict[int, Skewed] = {}
        """SD_ID -> skewed information, for the descriptors that have some."""

    @classmethod
    def read(
        cls,
        s: Session,
        *,
        parts: Iterable[int] = (),
        tables: Iterable[int] = (),
        storage: Iterable[Any] = (),
        version_of: int | None = None,
    ) -> Below:
        """The rows below the partitions PARTS, the tables TABLES and the storage
        descriptors of STORAGE (rows of `partition_rows` or `storage_rows`), and the VERSION
        of table VERSION_OF as this statement reads it."""
        found = cls()
        skewed_sds: set[int] = set()
        sequences: dict[int, Any] = {
            _VALUE: found.values,
            _BUCKET: found.buckets,
        }
        maps = {
            _PART_PARAM: found.part_params,
            _TABLE_PARAM: found.table_params,
            _SD_PARAM: found.sd_params,
            _SERDE_PARAM: found.serde_params,
        }
        triples = {_COLUMN: found.columns, _KEY: found.keys}
        dialect = s.get_bind().dialect.name
        rows = list(storage)
        owners = {
            "parts": sorted(set(parts)),
            "tbls": sorted(set(tables)),
            "sds": sorted({row[SD_ID] for row in rows if row[SD_ID] is not None}),
            "serdes": sorted({row[SERDE_ID] for row in rows if row[SERDE_ID] is not None}),
            "cds": sorted({row[CD_ID] for row in rows if row[CD_ID] is not None}),
            "versions": [version_of] if version_of is not None else [],
        }
        shape = tuple(min(len(owners[name]), 2) for name in _OWNERS)
        params = {name: lists.few_values(dialect, ids) for name, ids in owners.items() if ids}
        below = driver_rows(s, _below(dialect, shape), params) if any(shape) else []
        for kind, owner, _, a, b, c, n in below:
            if kind == _VERSIONS:
                found.version = n
            elif kind in maps:
                maps[kind].setdefault(owner, {})[a] = b if b is not None else ""
            elif kind in sequences:
                sequences[kind].setdefault(owner, []).append(a or "")
            elif kind in triples:
                triples[kind].setdefault(owner, []).append((a, b, c))
            elif kind == _SORT:
                found.sorts.setdefault(owner, []).append((a or "", n))
            else:
                skewed_sds.add(owner)
        if skewed_sds:
            found.skewed = load_skewed(s, sorted(skewed_sds))
        return found

    @classmethod
    def of_partitions(
        cls, s: Session, rows: Sequence[Any], *, version_of: int | None = None
    ) -> Below:
        """The rows below the partitions of ROWS (rows of `partition_rows`), and the VERSION
        of table VERSION_OF."""
        return cls.read(
            s, parts=[row[PART_ID] for row in rows], storage=rows, version_of=version_of
        )


# The owners of the rows of `_below`, in the order of its shapes.
_OWNERS = ("parts", "tbls", "sds", "serdes", "cds", "versions")


@functools.lru_cache(maxsize=64)
def _below(dialect: str, shape: tuple[int, ...]) -> CompoundSelect[Any]:
    """The UNION ALL of the rows below partitions, for DIALECT: (kind, owner id, index,
    text, text, text, number), ordered by kind, owner and index. Its parameters are the ids
    of the owners of _OWNERS: the partitions (parts), the tables (tbls), their storage
    descriptors (sds), the serdes and column lists of these (serdes, cds), and the table
    whose VERSION is read (versions: one, its VERSION as the number). SHAPE says,
    for each in that order, whether there are none (0: the rows of that owner are left
    out), one or more (1 or 2: the parameter is as `lists.few_values` gives it; one is a
    plain parameter, see `lists.among_few`). Built once per shape: building a statement this
    size costs more than running it for a few partitions."""

    def among(name: str) -> Callable[[Any], Any]:
        return lists.among_few(dialect, name, shape[_OWNERS.index(name)])

    no_int = cast(null(), Integer)
    no_text = cast(null(), Text)

    def kind(k: int) -> Any:
        return literal_column(str(k), Integer).label("kind")

    kv = m.PartitionKeyValue.__table__.c
    pp = m.PartitionParam.__table__.c
    sp = m.StorageDescriptorParam.__table__.c
    xp = m.SerDeParam.__table__.c
    bc = m.BucketingColumn.__table__.c
    sc = m.SortColumn.__table__.c
    sk = m.SkewedColumnName.__table__.c
    co = m.Column.__table__.c
    tp = m.TableParam.__table__.c
    pk = m.PartitionKey.__table__.c
    tv = _TBL_VERSIONS.c
    # (the owner, its rows, its id column) of each kind of row
    branches: list[tuple[str, Select[Any], Any]] = [
        (
            "parts",
            select(
                kind(_VALUE), kv.PART_ID, kv.INTEGER_IDX, kv.PART_KEY_VAL, no_text, no_text, no_int
            ),
            kv.PART_ID,
        ),
        (
            "parts",
            select(
                kind(_PART_PARAM), pp.PART_ID, no_int, pp.PARAM_KEY, pp.PARAM_VALUE, no_text, no_int
            ),
            pp.PART_ID,
        ),
        (
            "sds",
            select(
                kind(_SD_PARAM), sp.SD_ID, no_int, sp.PARAM_KEY, sp.PARAM_VALUE, no_text, no_int
            ),
            sp.SD_ID,
        ),
        (
            "serdes",
            select(
                kind(_SERDE_PARAM),
                xp.SERDE_ID,
                no_int,
                xp.PARAM_KEY,
                xp.PARAM_VALUE,
                no_text,
                no_int,
            ),
            xp.SERDE_ID,
        ),
        (
            "sds",
            select(
                kind(_BUCKET),
                bc.SD_ID,
                bc.INTEGER_IDX,
                bc.BUCKET_COL_NAME,
                no_text,
                no_text,
                no_int,
            ),
            bc.SD_ID,
        ),
        (
            "sds",
            select(
                kind(_SORT), sc.SD_ID, sc.INTEGER_IDX, sc.COLUMN_NAME, no_text, no_text, sc.ORDER
            ),
            sc.SD_ID,
        ),
        (
            "sds",
            select(
                kind(_SKEWED),
                sk.SD_ID,
                sk.INTEGER_IDX,
                sk.SKEWED_COL_NAME,
                no_text,
                no_text,
                no_int,
            ),
            sk.SD_ID,
        ),
        (
            "cds",
            select(
                kind(_COLUMN),
                co.CD_ID,
                co.INTEGER_IDX,
                co.COLUMN_NAME,
                co.TYPE_NAME,
                co.COMMENT,
                no_int,
            ),
            co.CD_ID,
        ),
        (
            "tbls",
            select(
                kind(_TABLE_PARAM), tp.TBL_ID, no_int, tp.PARAM_KEY, tp.PARAM_VALUE, no_text, no_int
            ),
            tp.TBL_ID,
        ),
        (
            "versions",
            select(kind(_VERSIONS), tv.TBL_ID, no_int, no_text, no_text, no_text, tv.VERSION),
            tv.TBL_ID,
        ),
        (
            "tbls",
            select(
                kind(_KEY),
                pk.TBL_ID,
                pk.INTEGER_IDX,
                pk.PKEY_NAME,
                pk.PKEY_TYPE,
                pk.PKEY_COMMENT,
                no_int,
            ),
            pk.TBL_ID,
        ),
    ]
    ordered = union_all(
        *(
            rows.where(among(owner)(column))
            for owner, rows, column in branches
            if shape[_OWNERS.index(owner)]
        )
    )
    return ordered.order_by(literal_column("1"), literal_column("2"), literal_column("3"))
