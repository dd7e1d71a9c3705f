"""Partitions of a table selected by an HMS filter (get_partitions_by_filter and
get_num_partitions_by_filter), filtered by the database in one statement.

Apart from store.py to keep each module small. KEYS are the table's partition keys as
(name, Hive type) pairs in INTEGER_IDX order, as `store.partition_key_types` gives them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from metastore.store import models as m
from metastore.store.partition_filter import Filter, filter_sql
from metastore.store.partition_rows import of_table


def partitions_by_filter(
    s: Session, tbl_id: int, keys: Sequence[tuple[str, str]], flt: Filter
) -> Select[tuple[int]]:
    """The selection (partition_read.of_table, restricted) of the partitions of table
    TBL_ID that FLT selects, for partition_read to read.

    Raises PartitionFilterError when FLT does not fit the keys."""
    return filter_sql(flt, keys, s.get_bind().dialect.name).apply(of_table(tbl_id))


def count_partitions_by_filter(
    s: Session, tbl_id: int, keys: Sequence[tuple[str, str]], flt: Filter
) -> int:
    """How many partitions of table TBL_ID FLT selects."""
    query = filter_sql(flt, keys, s.get_bind().dialect.name).apply(
        select(func.count()).select_from(m.Partition).where(m.Partition.TBL_ID == tbl_id)
    )
    return s.scalar(query) or 0
