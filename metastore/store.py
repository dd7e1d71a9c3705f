"""Queries over the HMS schema. Every function runs inside the caller's transaction."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import Select, bindparam, delete, func, select, text
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter, ColumnElement, KeyedColumnElement

from metastore import models as m
from metastore import name_patterns
from metastore.partition_filter import text_in_byte_order

_Row = TypeVar("_Row", bound=tuple[Any, ...])

# ------------------------------------------------------------------------------------------
# Databases


def find_database(s: Session, catalog: str, name: str) -> m.Database | None:
    return s.scalar(
        select(m.Database).where(m.Database.CTLG_NAME == catalog, m.Database.NAME == name)
    )


def database_names(s: Session, catalog: str, pattern: str | None = None) -> list[str]:
    names = s.scalars(
        select(m.Database.NAME).where(m.Database.CTLG_NAME == catalog).order_by(m.Database.NAME)
    ).all()
    return name_patterns.filter_names(names, pattern)


# The tables of (owner id, PARAM_KEY, PARAM_VALUE) rows.
ParamModel = (
    type[m.DatabaseParam]
    | type[m.TableParam]
    | type[m.PartitionParam]
    | type[m.SerDeParam]
    | type[m.StorageDescriptorParam]
)


def param_owner(model: ParamModel) -> KeyedColumnElement[int]:
    """The owner id column of a *_PARAMS table: its key column other than PARAM_KEY."""
    (owner,) = (c for c in model.__table__.primary_key if c.name != "PARAM_KEY")
    return owner


def params(s: Session, model: ParamModel, owner_id: int) -> dict[str, str]:
    """The PARAM_KEY -> PARAM_VALUE map of one owner in a *_PARAMS table."""
    rows = s.execute(
        select(model.PARAM_KEY, model.PARAM_VALUE).where(param_owner(model) == owner_id)
    )
    return {k: v if v is not None else "" for k, v in rows}


def insert_params(
    s: Session, model: ParamModel, owner_id: int, values: Mapping[str, str] | None
) -> None:
    if values:
        s.execute(
            model.__table__.insert(),
            [
                {param_owner(model).name: owner_id, "PARAM_KEY": k, "PARAM_VALUE": v}
                for k, v in values.items()
            ],
        )


def replace_params(s: Session, model: ParamModel, owner_id: int, values: Mapping[str, str]) -> None:
    """Make VALUES the whole parameter map of one owner."""
    s.execute(delete(model).where(param_owner(model) == owner_id))
    insert_params(s, model, owner_id, values)


def delete_database(s: Session, db: m.Database) -> None:
    for table in s.scalars(select(m.Table).where(m.Table.DB_ID == db.DB_ID)):
        delete_table(s, table)
    s.delete(db)


# ------------------------------------------------------------------------------------------
# Storage descriptors


@dataclasses.dataclass
class Skewed:
    """The skewed columns of a storage descriptor, their skewed values (one value per column
    each) and the folders of the values stored apart (list bucketing)."""

    names: list[str]
    values: list[list[str]]
    locations: list[tuple[list[str], str]]


@dataclasses.dataclass
class Storage:
    """A storage descriptor and its parts, as rows."""

    sd: m.StorageDescriptor
    columns: list[m.Column]
    serde: m.SerDe | None
    serde_params: dict[str, str]
    sd_params: dict[str, str]
    bucket_cols: list[str]
    sort_cols: list[tuple[str, int]]
    skewed: Skewed = dataclasses.field(default_factory=lambda: Skewed([], [], []))


def insert_storages(
    s: Session, storages: Sequence[Storage], reuse_cd_ids: Sequence[int | None] = ()
) -> list[int]:
    """Insert STORAGES and return their SD_IDs, in a fixed number of batched statements.

    A column list equal to one of REUSE_CD_IDS's (the table's, a partition's former one) is
    shared instead of copied, as HMS does for partitions, so that a table with thousands of
    partitions keeps one copy.
    """
    shared = {
        tuple(column_signature(columns_of(s, cd_id))): cd_id
        for cd_id in reuse_cd_ids
        if cd_id is not None
    }
    new_cds: list[tuple[Storage, m.ColumnDescriptor]] = []
    for storage in storages:
        reused = shared.get(tuple(column_signature(storage.columns)))
        if reused is not None:
            storage.sd.CD_ID = reused
        else:
            new_cds.append((storage, m.ColumnDescriptor()))
    s.add_all(cd for _, cd in new_cds)
    serdes = [st.serde for st in storages if st.serde is not None]
    s.add_all(serdes)
    s.flush()
    for storage, cd in new_cds:
        storage.sd.CD_ID = cd.CD_ID
        for col in storage.columns:
            col.CD_ID = cd.CD_ID
        s.add_all(storage.columns)
    for storage in storages:
        if storage.serde is not None:
            storage.sd.SERDE_ID = storage.serde.SERDE_ID
            insert_params(s, m.SerDeParam, storage.serde.SERDE_ID, storage.serde_params)
    s.add_all(st.sd for st in storages)
    s.flush()
    for storage in storages:
        sd_id = storage.sd.SD_ID
        insert_params(s, m.StorageDescriptorParam, sd_id, storage.sd_params)
        s.add_all(
            m.BucketingColumn(SD_ID=sd_id, INTEGER_IDX=i, BUCKET_COL_NAME=name)
            for i, name in enumerate(storage.bucket_cols)
        )
        s.add_all(
            m.SortColumn(SD_ID=sd_id, INTEGER_IDX=i, COLUMN_NAME=name, ORDER=order)
            for i, (name, order) in enumerate(storage.sort_cols)
        )
        _insert_skewed(s, sd_id, storage.skewed)
    return [st.sd.SD_ID for st in storages]


def _insert_skewed(s: Session, sd_id: int, skewed: Skewed) -> None:
    s.add_all(
        m.SkewedColumnName(SD_ID=sd_id, INTEGER_IDX=i, SKEWED_COL_NAME=name)
        for i, name in enumerate(skewed.names)
    )
    for i, value in enumerate(skewed.values):
        s.add(
            m.SkewedValue(SD_ID_OID=sd_id, INTEGER_IDX=i, STRING_LIST_ID_EID=_string_list(s, value))
        )
    for value, location in skewed.locations:
        s.add(
            m.SkewedValueLocation(
                SD_ID=sd_id, STRING_LIST_ID_KID=_string_list(s, value), LOCATION=location
            )
        )


def _string_list(s: Session, values: Sequence[str]) -> int:
    string_list = m.SkewedStringList()
    s.add(string_list)
    s.flush()
    s.add_all(
        m.SkewedStringListValue(
            STRING_LIST_ID=string_list.STRING_LIST_ID, INTEGER_IDX=i, STRING_LIST_VALUE=v
        )
        for i, v in enumerate(values)
    )
    return string_list.STRING_LIST_ID


def load_skewed(s: Session, sd_ids: Sequence[int]) -> dict[int, Skewed]:
    """The skewed information of storage descriptors, in a fixed number of queries."""
    out: dict[int, Skewed] = {}
    for c in s.scalars(
        select(m.SkewedColumnName)
        .where(m.SkewedColumnName.SD_ID.in_(sd_ids))
        .order_by(m.SkewedColumnName.INTEGER_IDX)
    ):
        out.setdefault(c.SD_ID, Skewed([], [], [])).names.append(c.SKEWED_COL_NAME or "")
    if not out:
        return out
    values = s.execute(
        select(m.SkewedValue.SD_ID_OID, m.SkewedValue.STRING_LIST_ID_EID)
        .where(m.SkewedValue.SD_ID_OID.in_(out))
        .order_by(m.SkewedValue.SD_ID_OID, m.SkewedValue.INTEGER_IDX)
    ).all()
    locations = s.execute(
        select(
            m.SkewedValueLocation.SD_ID,
            m.SkewedValueLocation.STRING_LIST_ID_KID,
            m.SkewedValueLocation.LOCATION,
        ).where(m.SkewedValueLocation.SD_ID.in_(out))
    ).all()
    list_ids = {row[1] for row in values} | {row[1] for row in locations}
    lists: dict[int, list[str]] = {i: [] for i in list_ids}
    for v in s.scalars(
        select(m.SkewedStringListValue)
        .where(m.SkewedStringListValue.STRING_LIST_ID.in_(list_ids))
        .order_by(m.SkewedStringListValue.STRING_LIST_ID, m.SkewedStringListValue.INTEGER_IDX)
    ):
        lists[v.STRING_LIST_ID].append(v.STRING_LIST_VALUE or "")
    for sd_id, list_id in values:
        out[sd_id].values.append(lists[list_id])
    for sd_id, list_id, location in locations:
        out[sd_id].locations.append((lists[list_id], location or ""))
    return out


def column_signature(columns: Sequence[m.Column]) -> list[tuple[str, str | None, str | None]]:
    ordered = sorted(columns, key=lambda c: c.INTEGER_IDX)
    return [(c.COLUMN_NAME, c.TYPE_NAME, c.COMMENT) for c in ordered]


def columns_of(s: Session, cd_id: int | None) -> list[m.Column]:
    if cd_id is None:
        return []
    return list(
        s.scalars(select(m.Column).where(m.Column.CD_ID == cd_id).order_by(m.Column.INTEGER_IDX))
    )


def column_types(s: Session, sd_id: int | None) -> dict[str, str]:
    """Column name -> Hive type text of the columns of storage descriptor SD_ID."""
    if sd_id is None:
        return {}
    rows = s.execute(
        select(m.Column.COLUMN_NAME, m.Column.TYPE_NAME)
        .join(m.StorageDescriptor, m.StorageDescriptor.CD_ID == m.Column.CD_ID)
        .where(m.StorageDescriptor.SD_ID == sd_id)
    )
    return {name: (type_name or "") for name, type_name in rows}


def load_storages(s: Session, sd_ids: Iterable[int | None]) -> dict[int, Storage]:
    """The storage descriptors SD_IDS with all their parts, in a fixed number of queries."""
    ids = sorted({i for i in sd_ids if i is not None})
    if not ids:
        return {}
    sds = {
        sd.SD_ID: sd
        for sd in s.scalars(select(m.StorageDescriptor).where(m.StorageDescriptor.SD_ID.in_(ids)))
    }
    cd_ids = {sd.CD_ID for sd in sds.values() if sd.CD_ID is not None}
    columns: dict[int, list[m.Column]] = {}
    for col in s.scalars(
        select(m.Column).where(m.Column.CD_ID.in_(cd_ids)).order_by(m.Column.INTEGER_IDX)
    ):
        columns.setdefault(col.CD_ID, []).append(col)
    serde_ids = {sd.SERDE_ID for sd in sds.values() if sd.SERDE_ID is not None}
    serdes = {
        x.SERDE_ID: x for x in s.scalars(select(m.SerDe).where(m.SerDe.SERDE_ID.in_(serde_ids)))
    }
    serde_params = _grouped_params(s, m.SerDeParam, serde_ids)
    sd_params = _grouped_params(s, m.StorageDescriptorParam, ids)
    buckets: dict[int, list[str]] = {}
    for b in s.scalars(
        select(m.BucketingColumn)
        .where(m.BucketingColumn.SD_ID.in_(ids))
        .order_by(m.BucketingColumn.INTEGER_IDX)
    ):
        buckets.setdefault(b.SD_ID, []).append(b.BUCKET_COL_NAME or "")
    sorts: dict[int, list[tuple[str, int]]] = {}
    for c in s.scalars(
        select(m.SortColumn).where(m.SortColumn.SD_ID.in_(ids)).order_by(m.SortColumn.INTEGER_IDX)
    ):
        sorts.setdefault(c.SD_ID, []).append((c.COLUMN_NAME or "", c.ORDER))
    skewed = load_skewed(s, ids)
    return {
        sd_id: Storage(
            sd=sd,
            columns=columns.get(sd.CD_ID, []) if sd.CD_ID is not None else [],
            serde=serdes.get(sd.SERDE_ID) if sd.SERDE_ID is not None else None,
            serde_params=serde_params.get(sd.SERDE_ID, {}) if sd.SERDE_ID is not None else {},
            sd_params=sd_params.get(sd_id, {}),
            bucket_cols=buckets.get(sd_id, []),
            sort_cols=sorts.get(sd_id, []),
            skewed=skewed.get(sd_id, Skewed([], [], [])),
        )
        for sd_id, sd in sds.items()
    }


def _grouped_params(
    s: Session, model: ParamModel, owner_ids: Iterable[int]
) -> dict[int, dict[str, str]]:
    owner = param_owner(model)
    out: dict[int, dict[str, str]] = {}
    ids = list(owner_ids)
    if not ids:
        return out
    for owner_id, key, value in s.execute(
        select(owner, model.PARAM_KEY, model.PARAM_VALUE).where(owner.in_(ids))
    ):
        out.setdefault(owner_id, {})[key] = value if value is not None else ""
    return out


def delete_storages(s: Session, sd_ids: Iterable[int | None]) -> None:
    """Delete storage descriptors, their serdes, and column lists nobody uses any more."""
    ids = [i for i in sd_ids if i is not None]
    if not ids:
        return
    rows = s.execute(
        select(m.StorageDescriptor.CD_ID, m.StorageDescriptor.SERDE_ID).where(
            m.StorageDescriptor.SD_ID.in_(ids)
        )
    ).all()
    # Skewed values' string lists belong to the descriptor but hang below its rows.
    string_lists = set(
        s.scalars(select(m.SkewedValue.STRING_LIST_ID_EID).where(m.SkewedValue.SD_ID_OID.in_(ids)))
    ) | set(
        s.scalars(
            select(m.SkewedValueLocation.STRING_LIST_ID_KID).where(
                m.SkewedValueLocation.SD_ID.in_(ids)
            )
        )
    )
    s.execute(delete(m.StorageDescriptor).where(m.StorageDescriptor.SD_ID.in_(ids)))
    if string_lists:
        s.execute(
            delete(m.SkewedStringList).where(m.SkewedStringList.STRING_LIST_ID.in_(string_lists))
        )
    serde_ids = [serde for _, serde in rows if serde is not None]
    if serde_ids:
        s.execute(delete(m.SerDe).where(m.SerDe.SERDE_ID.in_(serde_ids)))
    delete_unused_column_lists(s, {cd for cd, _ in rows if cd is not None})


def delete_unused_column_lists(s: Session, cd_ids: set[int | None]) -> None:
    """Delete the column lists of CD_IDS that no storage descriptor uses any more."""
    ids = {cd for cd in cd_ids if cd is not None}
    if not ids:
        return
    used = set(
        s.scalars(select(m.StorageDescriptor.CD_ID).where(m.StorageDescriptor.CD_ID.in_(ids)))
    )
    unused = ids - used
    if unused:
        s.execute(delete(m.ColumnDescriptor).where(m.ColumnDescriptor.CD_ID.in_(unused)))


# ------------------------------------------------------------------------------------------
# Tables


def find_table(s: Session, db_id: int, name: str) -> m.Table | None:
    return s.scalar(select(m.Table).where(m.Table.DB_ID == db_id, m.Table.TBL_NAME == name))


# Nearly every call looks its table up: the statement is built once (and its cache key
# computed once), which halves the lookup's Python work.
_DATABASE_TABLE = (
    select(m.Database, m.Table)
    .join(m.Table, m.Table.DB_ID == m.Database.DB_ID)
    .where(
        m.Database.CTLG_NAME == bindparam("catalog"),
        m.Database.NAME == bindparam("db_name"),
        m.Table.TBL_NAME == bindparam("table_name"),
    )
)


def find_database_table(
    s: Session, catalog: str, db_name: str, table_name: str
) -> tuple[m.Database, m.Table] | None:
    """Database DB_NAME of CATALOG and its table TABLE_NAME, in one query."""
    names = {"catalog": catalog, "db_name": db_name, "table_name": table_name}
    row = s.execute(_DATABASE_TABLE, names).first()
    return None if row is None else (row[0], row[1])


def table_names(
    s: Session, db_id: int, pattern: str | None = None, *, table_type: str | None = None
) -> list[str]:
    query = select(m.Table.TBL_NAME).where(m.Table.DB_ID == db_id).order_by(m.Table.TBL_NAME)
    if table_type is not None:
        query = query.where(m.Table.TBL_TYPE == table_type)
    return name_patterns.filter_names(s.scalars(query).all(), pattern)


def locations(s: Session, table: m.Table) -> list[str | None]:
    """The locations of TABLE and of its partitions (the folders a drop with data removes)."""
    partition_sds = select(m.Partition.SD_ID).where(m.Partition.TBL_ID == table.TBL_ID)
    rows = s.scalars(
        select(m.StorageDescriptor.LOCATION).where(
            (m.StorageDescriptor.SD_ID == table.SD_ID)
            | m.StorageDescriptor.SD_ID.in_(partition_sds)
        )
    )
    return list(rows)


def partition_keys_of(s: Session, tbl_ids: Sequence[int]) -> dict[int, list[m.PartitionKey]]:
    out: dict[int, list[m.PartitionKey]] = {}
    if tbl_ids:
        for key in s.scalars(
            select(m.PartitionKey)
            .where(m.PartitionKey.TBL_ID.in_(tbl_ids))
            .order_by(m.PartitionKey.TBL_ID, m.PartitionKey.INTEGER_IDX)
        ):
            out.setdefault(key.TBL_ID, []).append(key)
    return out


def table_params(s: Session, tbl_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    return _grouped_params(s, m.TableParam, tbl_ids)


_KEY_TYPES = (
    select(m.PartitionKey.__table__.c.PKEY_NAME, m.PartitionKey.__table__.c.PKEY_TYPE)
    .where(m.PartitionKey.__table__.c.TBL_ID == bindparam("tbl_id"))
    .order_by(m.PartitionKey.__table__.c.INTEGER_IDX)
)


def partition_key_types(s: Session, tbl_id: int) -> list[tuple[str, str]]:
    """The (name, Hive type) of the partition keys of table TBL_ID, in INTEGER_IDX order
    (a statement built once, as _DATABASE_TABLE: most partition calls read the keys)."""
    rows = s.execute(_KEY_TYPES, {"tbl_id": tbl_id})
    return [(name, key_type) for name, key_type in rows]


def partition_keys(s: Session, tbl_id: int) -> list[m.PartitionKey]:
    return list(
        s.scalars(
            select(m.PartitionKey)
            .where(m.PartitionKey.TBL_ID == tbl_id)
            .order_by(m.PartitionKey.INTEGER_IDX)
        )
    )


def delete_table(s: Session, table: m.Table) -> None:
    """Delete TABLE; its partitions, parameters and statistics go by cascade."""
    part_sd_ids = list(
        s.scalars(select(m.Partition.SD_ID).where(m.Partition.TBL_ID == table.TBL_ID))
    )
    s.execute(delete(m.Table).where(m.Table.TBL_ID == table.TBL_ID))
    delete_storages(s, [*part_sd_ids, table.SD_ID])


# ------------------------------------------------------------------------------------------
# Partitions


def find_partition(s: Session, tbl_id: int, part_name: str) -> m.Partition | None:
    return s.scalar(
        select(m.Partition).where(m.Partition.TBL_ID == tbl_id, m.Partition.PART_NAME == part_name)
    )


def find_partitions(s: Session, tbl_id: int, part_names: Sequence[str]) -> list[m.Partition]:
    if not part_names:
        return []
    return list(
        s.scalars(
            select(m.Partition)
            .where(m.Partition.TBL_ID == tbl_id, m.Partition.PART_NAME.in_(part_names))
            .order_by(_by_name(s))
        )
    )


def with_values(
    selection: Select[_Row], values: Sequence[str | BindParameter[str] | None]
) -> Select[_Row]:
    """SELECTION (a query over PARTITIONS) restricted to the partitions whose key i has
    VALUES[i], for every non-empty VALUES[i] (a partial specification: an empty value or a
    missing one at the end matches any). A value may be a bound parameter, for a statement
    built once."""
    partitions = m.Partition.__table__.c
    for index, value in enumerate(values):
        if isinstance(value, BindParameter) or value:  # a clause has no truth value
            key_value = m.PartitionKeyValue.__table__.alias(f"ps{index}")
            selection = selection.join_from(
                m.Partition.__table__,
                key_value,
                (key_value.c.PART_ID == partitions.PART_ID)
                & (key_value.c.INTEGER_IDX == index)
                & (key_value.c.PART_KEY_VAL == value),
            )
    return selection


def _by_name(s: Session) -> ColumnElement[str]:
    """PART_NAME in byte order, as HMS orders partition names, whatever the collation."""
    return text_in_byte_order(m.Partition.__table__.c.PART_NAME, s.get_bind().dialect.name)


def refresh_partition_statistics(s: Session) -> None:
    """On SQLite, ANALYZE the partition tables when they have no statistics or have doubled
    since their last ones.

    SQLite keeps no statistics by itself (PostgreSQL's autovacuum does) and, without them,
    starts a partial specification or a filter on a key's value from every partition of
    the table instead of the key value index of schema 0003: 4-5 ms instead of under 0.1 ms
    for a day of a table of 10,000 partitions. The connection's analysis_limit (metastore.db)
    bounds the work to a few ms whatever the size; doubling keeps the count of ANALYZEs
    to the logarithm of the number of partitions. The highest PART_ID stands in for the
    number of rows (deleted partitions only make it refresh sooner)."""
    if s.get_bind().dialect.name != "sqlite":
        return
    rows = s.scalar(select(func.max(m.Partition.PART_ID))) or 0
    stat = None
    if s.scalar(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")):
        # Each index's row starts with the number of rows of the table when analyzed.
        stat = s.scalar(
            text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'PARTITIONS' AND idx IS NOT NULL")
        )
    counted = int(stat.split()[0]) if stat else 0
    if rows and (not counted or rows >= 2 * counted):
        s.execute(text('ANALYZE "PARTITIONS"'))
        s.execute(text('ANALYZE "PARTITION_KEY_VALS"'))


def delete_partition(s: Session, partition: m.Partition) -> None:
    s.execute(delete(m.Partition).where(m.Partition.PART_ID == partition.PART_ID))
    delete_storages(s, [partition.SD_ID])


def column_types_by_storage(s: Session, sd_ids: Iterable[int | None]) -> dict[int, dict[str, str]]:
    """SD_ID -> (column name -> Hive type) for many storage descriptors in one query."""
    ids = sorted({i for i in sd_ids if i is not None})
    out: dict[int, dict[str, str]] = {i: {} for i in ids}
    if not ids:
        return out
    rows = s.connection().execute(
        select(m.StorageDescriptor.SD_ID, m.Column.COLUMN_NAME, m.Column.TYPE_NAME)
        .join(m.Column, m.Column.CD_ID == m.StorageDescriptor.CD_ID)
        .where(m.StorageDescriptor.SD_ID.in_(ids))
    )
    for sd_id, name, type_name in rows:
        out[sd_id][name] = type_name or ""
    return out


def param_values(
    s: Session, model: ParamModel, owner_ids: Sequence[int], key: str
) -> dict[int, str | None]:
    """Owner id -> value of one parameter KEY (missing owners are absent)."""
    if not owner_ids:
        return {}
    owner = param_owner(model)
    rows = s.connection().execute(
        select(owner, model.PARAM_VALUE).where(owner.in_(owner_ids), model.PARAM_KEY == key)
    )
    return {owner_id: value for owner_id, value in rows}


def set_param_values(
    s: Session,
    model: ParamModel,
    values: Mapping[int, str | None],
    key: str,
    stored: Mapping[int, str | None] | None = None,
) -> None:
    """Set parameter KEY of many owners at once; None removes it.

    STORED, when given, is what param_values returned for these owners: owners whose value
    does not change are not written.
    """
    if stored is not None:
        values = {i: v for i, v in values.items() if stored.get(i) != v}
    if not values:
        return
    owner = param_owner(model)
    ids = sorted(values)  # one lock order for every writer
    for start in range(0, len(ids), 5000):
        s.execute(delete(model).where(owner.in_(ids[start : start + 5000]), model.PARAM_KEY == key))
    new = [
        {owner.name: i, "PARAM_KEY": key, "PARAM_VALUE": v}
        for i, v in sorted(values.items())
        if v is not None
    ]
    if new:
        s.execute(model.__table__.insert(), new)
