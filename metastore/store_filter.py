"""Partitions of a table selected by an HMS filter (get_partitions_by_filter and
get_num_partitions_by_filter), filtered by the database in one statement.

Apart from store.py to keep each module small. KEYS are the table's partition keys as
(name, Hive type) pairs in INTEGER_IDX order, as `store.partition_keys` gives them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from metastore import models as m
from metastore.partition_filter import Filter, filter_sql, text_in_byte_order


def partitions_by_filter(
    s: Session,
    tbl_id: int,
    keys: Sequence[tuple[str, str]],
    flt: Filter,
    limit: int | None = None,
) -> list[m.Partition]:
    """The partitions of table TBL_ID that FLT selects, ordered by PART_NAME (byte order, as
    HMS), at most LIMIT of them (None or a negative LIMIT: all, as HMS's max_parts -1).

    Raises PartitionFilterError when FLT does not fit the keys."""
    dialect = s.get_bind().dialect.name
    query = filter_sql(flt, keys, dialect).apply(
        select(m.Partition).where(m.Partition.TBL_ID == tbl_id)
    )
    query = query.order_by(text_in_byte_order(m.Partition.__table__.c.PART_NAME, dialect))
    if limit is not None and limit >= 0:
        query = query.limit(limit)
    return list(s.scalars(query))


def count_partitions_by_filter(
    s: Session, tbl_id: int, keys: Sequence[tuple[str, str]], flt: Filter
) -> int:
    """How many partitions of table TBL_ID FLT selects."""
    query = filter_sql(flt, keys, s.get_bind().dialect.name).apply(
        select(func.count()).select_from(m.Partition).where(m.Partition.TBL_ID == tbl_id)
    )
    return s.scalar(query) or 0
