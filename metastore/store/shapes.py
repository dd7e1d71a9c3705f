"""Tables' shapes, read many at once: each table's columns, partition keys, storage (location,
input format, serde and its parameters) and the parameters that say how to read it, for the
Flight door's catalog and scans, in a fixed number of statements whatever the number of
tables. Views are left out (they have no files).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Select, or_, select
from sqlalchemy.orm import Session

from metastore import spark_properties
from metastore.columns import Column
from metastore.errors import NotFound
from metastore.iceberg import parameters as iceberg
from metastore.stats import accurate
from metastore.store import models as m

VIEWS = ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")
PARAMETERS = (
    "comment",
    spark_properties.PROVIDER,
    accurate.KEY,
    accurate.NUM_ROWS,
    "skip.header.line.count",
    iceberg.TABLE_TYPE,
    iceberg.METADATA_LOCATION,
    iceberg.STATISTICS_SNAPSHOT,
)
"""The table parameters read (and those of Spark's schema, which start with its key)."""


@dataclasses.dataclass(frozen=True)
class StoredShape:
    """A table as the metastore keeps it: its columns as its storage descriptor lists them
    (a Spark data source table's are in its parameters: metastore.files.layout)."""

    catalog: str
    db: str
    name: str
    tbl_id: int
    columns: tuple[Column, ...]
    keys: tuple[Column, ...]
    location: str | None
    input_format: str
    serde_lib: str
    serde_id: int | None
    parameters: Mapping[str, str]


def _tables_query(catalog: str, db: str | None, table: str | None) -> Select[Any]:
    t, d = m.Table.__table__.c, m.Database.__table__.c
    sd, serde = m.StorageDescriptor.__table__.c, m.SerDe.__table__.c
    query = (
        select(
            d.NAME,
            t.TBL_NAME,
            t.TBL_ID,
            sd.CD_ID,
            sd.LOCATION,
            sd.INPUT_FORMAT,
            sd.SERDE_ID,
            serde.SLIB,
        )
        .join_from(m.Table.__table__, m.Database.__table__, d.DB_ID == t.DB_ID)
        .outerjoin_from(m.Table.__table__, m.StorageDescriptor.__table__, sd.SD_ID == t.SD_ID)
        .outerjoin_from(
            m.StorageDescriptor.__table__, m.SerDe.__table__, serde.SERDE_ID == sd.SERDE_ID
        )
        .where(d.CTLG_NAME == catalog, or_(t.TBL_TYPE.is_(None), t.TBL_TYPE.not_in(VIEWS)))
        .order_by(d.NAME, t.TBL_NAME)
    )
    if db is not None:
        query = query.where(d.NAME == db)
    if table is not None:
        query = query.where(t.TBL_NAME == table)
    return query


def load_shapes(
    s: Session, catalog: str, db: str | None = None, table: str | None = None
) -> list[StoredShape]:
    """The tables of CATALOG (of database DB, the table TABLE, when given; names as stored),
    in four statements."""
    rows = s.execute(_tables_query(catalog, db, table)).all()
    if not rows:
        return []
    tbl_ids = [row.TBL_ID for row in rows]
    cd_ids = sorted({row.CD_ID for row in rows if row.CD_ID is not None})
    c, k, p = m.Column.__table__.c, m.PartitionKey.__table__.c, m.TableParam.__table__.c
    columns: dict[int, list[Column]] = {}
    for cd_id, name, hive_type, comment in s.execute(
        select(c.CD_ID, c.COLUMN_NAME, c.TYPE_NAME, c.COMMENT)
        .where(c.CD_ID.in_(cd_ids))
        .order_by(c.CD_ID, c.INTEGER_IDX)
    ):
        columns.setdefault(cd_id, []).append(Column(name, hive_type or "", comment))
    keys: dict[int, list[Column]] = {}
    for tbl_id, name, hive_type, comment in s.execute(
        select(k.TBL_ID, k.PKEY_NAME, k.PKEY_TYPE, k.PKEY_COMMENT)
        .where(k.TBL_ID.in_(tbl_ids))
        .order_by(k.TBL_ID, k.INTEGER_IDX)
    ):
        keys.setdefault(tbl_id, []).append(Column(name, hive_type, comment))
    params: dict[int, dict[str, str]] = {}
    for tbl_id, key, value in s.execute(
        select(p.TBL_ID, p.PARAM_KEY, p.PARAM_VALUE).where(
            p.TBL_ID.in_(tbl_ids),
            or_(p.PARAM_KEY.in_(PARAMETERS), p.PARAM_KEY.startswith(spark_properties.SCHEMA)),
        )
    ):
        params.setdefault(tbl_id, {})[key] = value or ""
    return [
        StoredShape(
            catalog=catalog,
            db=row.NAME,
            name=row.TBL_NAME,
            tbl_id=row.TBL_ID,
            columns=tuple(columns.get(row.CD_ID, [])),
            keys=tuple(keys.get(row.TBL_ID, [])),
            location=row.LOCATION,
            input_format=row.INPUT_FORMAT or "",
            serde_lib=row.SLIB or "",
            serde_id=row.SERDE_ID,
            parameters=params.get(row.TBL_ID, {}),
        )
        for row in rows
    ]


def database_names(s: Session, catalog: str) -> list[str]:
    """The databases of CATALOG, in name order; NotFound for a catalog without any (an
    unknown one), naming those there are."""
    found = list(
        s.scalars(
            select(m.Database.NAME).where(m.Database.CTLG_NAME == catalog).order_by(m.Database.NAME)
        )
    )
    if not found:
        known = sorted(set(s.scalars(select(m.Database.CTLG_NAME))))
        raise NotFound(
            f"catalog {catalog} does not exist; ATTACH one of: {', '.join(known) or 'none'}"
        )
    return found


def database_exists(s: Session, catalog: str, db: str) -> bool:
    found = s.scalar(
        select(m.Database.DB_ID).where(m.Database.CTLG_NAME == catalog, m.Database.NAME == db)
    )
    return found is not None


def serde_parameters(s: Session, serde_id: int | None) -> dict[str, str]:
    """The parameters of serde SERDE_ID (a Spark data source table's options among them)."""
    if serde_id is None:
        return {}
    p = m.SerDeParam.__table__.c
    rows = s.execute(select(p.PARAM_KEY, p.PARAM_VALUE).where(p.SERDE_ID == serde_id))
    return {key: value or "" for key, value in rows}


def partition_locations(s: Session, tbl_id: int) -> list[tuple[str, str | None]]:
    """(PART_NAME, location) of every partition of table TBL_ID, in name order."""
    p, sd = m.Partition.__table__.c, m.StorageDescriptor.__table__.c
    rows = s.execute(
        select(p.PART_NAME, sd.LOCATION)
        .select_from(m.Partition.__table__)
        .outerjoin(m.StorageDescriptor.__table__, sd.SD_ID == p.SD_ID)
        .where(p.TBL_ID == tbl_id)
        .order_by(p.PART_NAME)
    )
    return [(name, location) for name, location in rows]


def partition_states(s: Session, tbl_id: int) -> list[tuple[str, Mapping[str, str]]]:
    """(PART_NAME, parameters) of every partition of table TBL_ID, in name order, with only
    the parameters that say whether its statistics are current and its row count, in one
    statement."""
    p, pp = m.Partition.__table__.c, m.PartitionParam.__table__.c
    rows = s.execute(
        select(p.PART_NAME, pp.PARAM_KEY, pp.PARAM_VALUE)
        .select_from(m.Partition.__table__)
        .outerjoin(
            m.PartitionParam.__table__,
            (pp.PART_ID == p.PART_ID) & pp.PARAM_KEY.in_([accurate.KEY, accurate.NUM_ROWS]),
        )
        .where(p.TBL_ID == tbl_id)
    )
    params: dict[str, dict[str, str]] = {}
    for part_name, key, value in rows:
        found = params.setdefault(part_name, {})
        if key is not None:
            found[key] = value or ""
    return sorted(params.items())
