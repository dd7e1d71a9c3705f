"""Partitioned tables written straight into the HMS schema, for the partition filter tests:
many partitions in a few batched statements, without the Thrift layer."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from metastore.names import DEFAULT_PARTITION_VALUE, escape_path_name
from metastore.store import models as m
from metastore.store.partition_filter import parse_filter, text_in_byte_order
from metastore.store.partition_filter.queries import (
    count_partitions_by_filter,
    partitions_by_filter,
)

Keys = Sequence[tuple[str, str]]
Values = Sequence[str | None]


def partition_names(
    s: Session, selection: sa.Select[tuple[int]], limit: int | None = None
) -> list[str]:
    """The names of the partitions SELECTION (a query of PART_IDs) selects, in byte order as
    the server lists them, at most LIMIT (None or negative: all)."""
    name = m.Partition.__table__.c.PART_NAME
    ordered = selection.order_by(text_in_byte_order(name, s.get_bind().dialect.name))
    if limit is not None and limit >= 0:
        ordered = ordered.limit(limit)
    return list(s.scalars(ordered.with_only_columns(name)))


def partition_name(keys: Keys, values: Values) -> str:
    """'k1=v1/k2=v2' with Hive's escaping; a NULL value is the default partition."""
    return "/".join(
        f"{name}={escape_path_name(DEFAULT_PARTITION_VALUE if v is None else v)}"
        for (name, _), v in zip(keys, values, strict=True)
    )


def insert_database(conn: sa.Connection) -> int:
    db_id: int = conn.execute(
        sa.insert(m.Database.__table__)
        .values(NAME=f"filters_{uuid.uuid4().hex[:8]}", DB_LOCATION_URI="file:/w")
        .returning(m.Database.__table__.c.DB_ID)
    ).scalar_one()
    return db_id


def insert_table(conn: sa.Connection, db_id: int, keys: Keys, partitions: Sequence[Values]) -> int:
    """A table with partition KEYS ((name, Hive type) pairs) and one partition per value list
    (None is stored as a NULL PART_KEY_VAL, which reads as the default partition). Returns
    its TBL_ID."""
    tbl_id: int = conn.execute(
        sa.insert(m.Table.__table__)
        .values(
            DB_ID=db_id,
            TBL_NAME=f"t_{uuid.uuid4().hex[:8]}",
            CREATE_TIME=0,
            LAST_ACCESS_TIME=0,
            RETENTION=0,
        )
        .returning(m.Table.__table__.c.TBL_ID)
    ).scalar_one()
    conn.execute(
        sa.insert(m.PartitionKey.__table__),
        [
            {"TBL_ID": tbl_id, "PKEY_NAME": name, "PKEY_TYPE": hive_type, "INTEGER_IDX": i}
            for i, (name, hive_type) in enumerate(keys)
        ],
    )
    if not partitions:
        return tbl_id
    p = m.Partition.__table__
    ids = conn.execute(
        sa.insert(p).returning(p.c.PART_ID, sort_by_parameter_order=True),
        [
            {
                "TBL_ID": tbl_id,
                "PART_NAME": partition_name(keys, values),
                "CREATE_TIME": 0,
                "LAST_ACCESS_TIME": 0,
            }
            for values in partitions
        ],
    ).scalars()
    conn.execute(
        sa.insert(m.PartitionKeyValue.__table__),
        [
            {"PART_ID": part_id, "INTEGER_IDX": i, "PART_KEY_VAL": v}
            for part_id, values in zip(ids, partitions, strict=True)
            for i, v in enumerate(values)
        ],
    )
    return tbl_id


def selected(s: Session, tbl_id: int, keys: Keys, text: str, limit: int | None = None) -> list[str]:
    """The names of the partitions filter TEXT selects, in the order of the answer, after
    checking that the count agrees."""
    flt = parse_filter(text)
    names = partition_names(s, partitions_by_filter(s, tbl_id, keys, flt), limit)
    if limit is None or limit < 0:
        assert count_partitions_by_filter(s, tbl_id, keys, flt) == len(names)
    return names
