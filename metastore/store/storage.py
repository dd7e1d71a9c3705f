"""Storage descriptors (SDS) and their parts: column lists, serdes and their parameters,
descriptor parameters, bucket and sort columns, skewed values. Every function runs inside
the caller's transaction."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from metastore.store import models as m
from metastore.store.params import grouped_params, insert_params


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
