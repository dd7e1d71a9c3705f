"""Storage descriptors (SDS) and their parts: column lists, serdes and their parameters,
descriptor parameters, bucket and sort columns, skewed values. Every function runs inside
the caller's transaction."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import String, delete, func, insert, literal, select, update
from sqlalchemy.orm import Session

from metastore.store import models as m
from metastore.store.bulk import insert_all, insert_rows
from metastore.store.owned import delete_owned
from metastore.store.params import grouped_params

CDS, COLUMNS = m.ColumnDescriptor.__table__, m.Column.__table__
SERDES, SDS = m.SerDe.__table__, m.StorageDescriptor.__table__


class ColumnDef(NamedTuple):
    """A column of a column list (a row of COLUMNS_V2 but its CD_ID): plain values, since a
    call that adds thousands of partitions reads as many lists and, by far most often,
    keeps none of them (each equal to the table's, which is shared)."""

    COLUMN_NAME: str
    TYPE_NAME: str | None
    COMMENT: str | None
    INTEGER_IDX: int


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
    columns: list[ColumnDef]
    serde: m.SerDe | None
    serde_params: dict[str, str]
    sd_params: dict[str, str]
    bucket_cols: list[str]
    sort_cols: list[tuple[str, int]]
    skewed: Skewed = dataclasses.field(default_factory=lambda: Skewed([], [], []))


def _values(row: Any, table: Any, without: str | None = None) -> dict[str, Any]:
    """The values of a (transient) model instance, for a Core insert into TABLE, WITHOUT
    one column (the id the database gives)."""
    return {c.key: getattr(row, c.key) for c in table.columns if c.key != without}


def insert_storages(
    s: Session, storages: Sequence[Storage], reuse_cd_ids: Sequence[int | None] = ()
) -> list[int]:
    """Insert STORAGES and return their SD_IDs, in a fixed number of batched statements
    (plain Core inserts: no ORM work per row); their rows' ids are set.

    A column list equal to one of REUSE_CD_IDS's (the table's, a partition's former one) is
    shared instead of copied, as HMS does for partitions, so that a table with thousands of
    partitions keeps one copy.
    """
    shared = {
        tuple(column_signature(columns_of(s, cd_id))): cd_id
        for cd_id in reuse_cd_ids
        if cd_id is not None
    }
    new_columns: list[dict[str, Any]] = []
    for storage in storages:
        reused = shared.get(tuple(column_signature(storage.columns)))
        if reused is None:  # a new column list (rare: a table's own, or changed columns)
            reused = s.execute(insert(CDS).returning(CDS.c.CD_ID)).scalar_one()
            new_columns += [{"CD_ID": reused, **c._asdict()} for c in storage.columns]
        storage.sd.CD_ID = reused
    insert_all(s, COLUMNS, new_columns)
    with_serde = [st for st in storages if st.serde is not None]
    serde_ids = insert_rows(s, SERDES, [_values(st.serde, SERDES, "SERDE_ID") for st in with_serde])
    for storage, serde_id in zip(with_serde, serde_ids, strict=True):
        assert storage.serde is not None
        storage.serde.SERDE_ID = storage.sd.SERDE_ID = serde_id
    sd_ids = insert_rows(s, SDS, [_values(st.sd, SDS, "SD_ID") for st in storages])
    for storage, sd_id in zip(storages, sd_ids, strict=True):
        storage.sd.SD_ID = sd_id
    insert_all(
        s,
        m.SerDeParam.__table__,
        [
            {"SERDE_ID": st.sd.SERDE_ID, "PARAM_KEY": k, "PARAM_VALUE": v}
            for st in with_serde
            for k, v in st.serde_params.items()
        ],
    )
    insert_all(
        s,
        m.StorageDescriptorParam.__table__,
        [
            {"SD_ID": st.sd.SD_ID, "PARAM_KEY": k, "PARAM_VALUE": v}
            for st in storages
            for k, v in st.sd_params.items()
        ],
    )
    insert_all(
        s,
        m.BucketingColumn.__table__,
        [
            {"SD_ID": st.sd.SD_ID, "INTEGER_IDX": i, "BUCKET_COL_NAME": name}
            for st in storages
            for i, name in enumerate(st.bucket_cols)
        ],
    )
    insert_all(
        s,
        m.SortColumn.__table__,
        [
            {"SD_ID": st.sd.SD_ID, "INTEGER_IDX": i, "COLUMN_NAME": name, "ORDER": order}
            for st in storages
            for i, (name, order) in enumerate(st.sort_cols)
        ],
    )
    for storage in storages:
        _insert_skewed(s, storage.sd.SD_ID, storage.skewed)
    return sd_ids


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
    s.flush()  # the answer of the change reads them back with statements of its own


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


_SD_VALUES = tuple(c.key for c in SDS.columns if c.key not in ("SD_ID", "CD_ID", "SERDE_ID"))
_SERDE_VALUES = tuple(c.key for c in SERDES.columns if c.key != "SERDE_ID")


def _row_values(row: Any, keys: Sequence[str]) -> tuple[Any, ...] | None:
    return None if row is None else tuple(getattr(row, key) for key in keys)


def same_storage(stored: Storage, given: Storage) -> bool:
    """Whether GIVEN (a descriptor as rows to insert) holds exactly what STORED (as
    load_storages read it) holds, ids aside: the alter of a table or partition that gives its
    descriptor back unchanged (an Iceberg commit, statistics written as parameters) then
    keeps it instead of writing a copy and deleting it. Any difference, in a value or in an
    order, says no."""
    return (
        _row_values(stored.sd, _SD_VALUES) == _row_values(given.sd, _SD_VALUES)
        and _row_values(stored.serde, _SERDE_VALUES) == _row_values(given.serde, _SERDE_VALUES)
        and list(stored.columns) == list(given.columns)
        and stored.serde_params == given.serde_params
        and stored.sd_params == given.sd_params
        and stored.bucket_cols == given.bucket_cols
        and stored.sort_cols == given.sort_cols
        and stored.skewed == given.skewed
    )


def column_signature(columns: Sequence[ColumnDef]) -> list[tuple[str, str | None, str | None]]:
    ordered = sorted(columns, key=lambda c: c.INTEGER_IDX)
    return [(c.COLUMN_NAME, c.TYPE_NAME, c.COMMENT) for c in ordered]


def columns_of(s: Session, cd_id: int | None) -> list[ColumnDef]:
    if cd_id is None:
        return []
    fields = (COLUMNS.c[name] for name in ColumnDef._fields)
    query = select(*fields).where(COLUMNS.c.CD_ID == cd_id).order_by(COLUMNS.c.INTEGER_IDX)
    return [ColumnDef(*row) for row in s.execute(query)]


def storage_descriptor(s: Session, sd_id: int | None) -> m.StorageDescriptor | None:
    return s.get(m.StorageDescriptor, sd_id) if sd_id is not None else None


def location(s: Session, sd_id: int | None) -> str | None:
    """The LOCATION of storage descriptor SD_ID, as stored (flush changes first)."""
    if sd_id is None:
        return None
    query = select(m.StorageDescriptor.LOCATION).where(m.StorageDescriptor.SD_ID == sd_id)
    return s.scalar(query)


def set_location(s: Session, sd_id: int | None, new_location: str) -> None:
    s.execute(
        update(m.StorageDescriptor)
        .where(m.StorageDescriptor.SD_ID == sd_id)
        .values(LOCATION=new_location)
    )


def move_partition_locations(s: Session, tbl_id: int, old_prefix: str, new_prefix: str) -> None:
    """The locations of table TBL_ID's partitions that start with OLD_PREFIX start with
    NEW_PREFIX instead (a renamed managed table's folder moved)."""
    partition_sds = select(m.Partition.SD_ID).where(m.Partition.TBL_ID == tbl_id)
    location_ = m.StorageDescriptor.LOCATION
    s.execute(
        update(m.StorageDescriptor)
        .where(
            m.StorageDescriptor.SD_ID.in_(partition_sds),
            func.substr(location_, 1, len(old_prefix)) == old_prefix,
        )
        .values(
            LOCATION=literal(new_prefix, String()).concat(
                func.substr(location_, len(old_prefix) + 1)
            )
        )
    )


def partition_column_lists(s: Session, tbl_id: int) -> list[tuple[int, int, int | None]]:
    """(PART_ID, SD_ID, CD_ID) of every partition of table TBL_ID."""
    query = (
        select(m.Partition.PART_ID, m.StorageDescriptor.SD_ID, m.StorageDescriptor.CD_ID)
        .join(m.StorageDescriptor, m.StorageDescriptor.SD_ID == m.Partition.SD_ID)
        .where(m.Partition.TBL_ID == tbl_id)
    )
    return [(part_id, sd_id, cd_id) for part_id, sd_id, cd_id in s.execute(query)]


def set_column_list(s: Session, sd_ids: Sequence[int], cd_id: int | None) -> None:
    """Storage descriptors SD_IDS take column list CD_ID."""
    s.execute(
        update(m.StorageDescriptor).where(m.StorageDescriptor.SD_ID.in_(sd_ids)).values(CD_ID=cd_id)
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
    columns: dict[int, list[ColumnDef]] = {}
    for cd_id, *values in s.execute(
        select(COLUMNS.c.CD_ID, *(COLUMNS.c[name] for name in ColumnDef._fields))
        .where(COLUMNS.c.CD_ID.in_(cd_ids))
        .order_by(COLUMNS.c.INTEGER_IDX)
    ):
        columns.setdefault(cd_id, []).append(ColumnDef(*values))
    serde_ids = {sd.SERDE_ID for sd in sds.values() if sd.SERDE_ID is not None}
    serdes = {
        x.SERDE_ID: x for x in s.scalars(select(m.SerDe).where(m.SerDe.SERDE_ID.in_(serde_ids)))
    }
    serde_params = grouped_params(s, m.SerDeParam, serde_ids)
    sd_params = grouped_params(s, m.StorageDescriptorParam, ids)
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
    delete_owned(s, "SDS", "SD_ID", ids)
    s.execute(delete(m.StorageDescriptor).where(m.StorageDescriptor.SD_ID.in_(ids)))
    if string_lists:
        delete_owned(s, "SKEWED_STRING_LIST", "STRING_LIST_ID", string_lists)
        s.execute(
            delete(m.SkewedStringList).where(m.SkewedStringList.STRING_LIST_ID.in_(string_lists))
        )
    serde_ids = [serde for _, serde in rows if serde is not None]
    if serde_ids:
        delete_owned(s, "SERDES", "SERDE_ID", serde_ids)
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
        delete_owned(s, "CDS", "CD_ID", unused)
        s.execute(delete(m.ColumnDescriptor).where(m.ColumnDescriptor.CD_ID.in_(unused)))
