"""Queries on partitions (PARTITIONS, PARTITION_KEY_VALS). Every function runs inside the
caller's transaction."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy import Engine, Pool, Select, bindparam, delete, func, select, text
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from metastore.store import models as m
from metastore.store.owned import delete_owned
from metastore.store.partition_filter import text_in_byte_order
from metastore.store.storage import delete_storages

_Row = TypeVar("_Row", bound=tuple[Any, ...])


def find_partition(s: Session, tbl_id: int, part_name: str) -> m.Partition | None:
    return s.scalar(
        select(m.Partition).where(m.Partition.TBL_ID == tbl_id, m.Partition.PART_NAME == part_name)
    )


def replace_key_values(s: Session, part_id: int, values: Sequence[str]) -> None:
    """Partition PART_ID's key values become VALUES (a rename)."""
    s.execute(delete(m.PartitionKeyValue).where(m.PartitionKeyValue.PART_ID == part_id))
    s.add_all(
        m.PartitionKeyValue(PART_ID=part_id, INTEGER_IDX=i, PART_KEY_VAL=value)
        for i, value in enumerate(values)
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


_PARTITION_IDS = select(
    m.Partition.__table__.c.PART_NAME,
    m.Partition.__table__.c.PART_ID,
    m.Partition.__table__.c.SD_ID,
).where(
    m.Partition.__table__.c.TBL_ID == bindparam("tbl_id"),
    m.Partition.__table__.c.PART_NAME.in_(bindparam("names", expanding=True)),
)


def partition_ids(
    s: Session, tbl_id: int, part_names: Sequence[str]
) -> dict[str, tuple[int, int | None]]:
    """PART_NAME -> (PART_ID, SD_ID) of the partitions of table TBL_ID named PART_NAMES that
    exist, in one statement built once (for the calls that need no more of them)."""
    if not part_names:
        return {}
    rows = s.connection().execute(_PARTITION_IDS, {"tbl_id": tbl_id, "names": list(part_names)})
    return {name: (part_id, sd_id) for name, part_id, sd_id in rows}


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


# What refresh_partition_statistics analyzes: the tables a filter starts from, on both
# databases; on PostgreSQL also the other tables that grow with partitions, and once the
# tables a partition read joins to find its table by name.
_FILTERED = ("PARTITIONS", "PARTITION_KEY_VALS")
_ALSO_GROWING = ("PARTITION_PARAMS", "SDS", "SERDES", "SD_PARAMS", "SERDE_PARAMS")
_LOOKED_UP = ("TBLS", "DBS")


# Per database (its engine's pool): the PART_ID below which the last check found no ANALYZE
# due, and how many more adds may rely on it before the next check.
_NOT_DUE: weakref.WeakKeyDictionary[Pool, tuple[int, int]] = weakref.WeakKeyDictionary()
RECHECK_AFTER = 64
"""Adds of partitions that skip the check of refresh_partition_statistics after one that
found nothing due, at most."""


def refresh_partition_statistics(s: Session, added: Sequence[int]) -> None:
    """ANALYZE the partition tables when they have no statistics or have doubled since their
    last ones, in the transaction that added partitions (the ids ADDED).

    Without statistics both databases plan a filter on a key's value badly. SQLite keeps none
    by itself and starts a partial specification or a filter from every partition of the
    table instead of the key value index of schema 0003: 4-5 ms instead of under 0.1 ms for
    a day of a table of 10,000 partitions. PostgreSQL's autovacuum first analyzes a new table
    up to a minute later (its naptime); until then it joins each partition to every key
    value of the key's position: the statement of a day's get_partitions_by_filter of a
    table of 200 partitions took 3.9 ms instead of 0.36 ms, the call 7.0 ms instead of 3.5.

    Doubling keeps the count of ANALYZEs to the logarithm of the number of partitions, and
    each is bounded (SQLite's analysis_limit, metastore.store.transactions; PostgreSQL
    samples at most 30,000 rows). The highest PART_ID stands in for the number of rows
    (deleted partitions only make it refresh sooner); the rows counted when last analyzed
    are sqlite_stat1's, or PostgreSQL's reltuples (-1 before the first ANALYZE).

    On PostgreSQL the other tables that grow with partitions (their parameters, storage
    descriptors and serdes) are analyzed with them: until autovacuum analyzes them (never,
    where it is off), the read of a week's 7 partitions scanned all 10,000 partitions'
    parameters instead of finding theirs by index.

    PostgreSQL's TBLS and DBS are analyzed too when they never were: autovacuum analyzes a
    table after 50 changed rows, which a metastore of a few tables and databases may never
    reach, and without their statistics PostgreSQL takes a table's lookup, joined to its
    partitions, for several tables' worth of rows. Trino's listing of an hour's partitions
    across 400 days (get_partition_names_ps of 400 of 10,000 partitions) then probed every
    partition's key values: 12.4 ms instead of 2.0.

    The check costs a statement (three on SQLite) on the path of every add: when it finds
    nothing due, the next RECHECK_AFTER adds whose ids stay below the doubling it waits for
    are spared it. An add whose ids reach the doubling checks, whichever server makes it.
    Statistics only grow staler meanwhile if another process analyzed the tables after
    partitions were dropped (which lowers the doubling), and then for RECHECK_AFTER adds at
    most."""
    engine = s.get_bind().engine
    if statistics_check_spared(engine, added):
        return
    dialect = engine.dialect.name
    if dialect == "postgresql":
        found = s.execute(
            text(
                'SELECT (SELECT max("PART_ID") FROM "PARTITIONS"), '
                + ", ".join(
                    f"(SELECT reltuples FROM pg_class WHERE oid = to_regclass('\"{table}\"'))"
                    for table in ("PARTITIONS", *_LOOKED_UP)
                )
            )
        ).one()
        rows, counted = found[0] or 0, int(found[1] or 0)
        for table, analyzed in zip(_LOOKED_UP, found[2:], strict=True):
            if analyzed is not None and analyzed < 0:
                s.execute(text(f'ANALYZE "{table}"'))
    elif dialect == "sqlite":
        rows = s.scalar(select(func.max(m.Partition.PART_ID))) or 0
        counted = _sqlite_analyzed_rows(s)
    else:
        return
    if rows and (counted <= 0 or rows >= 2 * counted):
        growing = (*_FILTERED, *_ALSO_GROWING) if dialect == "postgresql" else _FILTERED
        for table in growing:
            s.execute(text(f'ANALYZE "{table}"'))
        _NOT_DUE.pop(engine.pool, None)  # the next add reads what this one counted
    elif counted > 0:
        _NOT_DUE[engine.pool] = (2 * counted, RECHECK_AFTER)


def statistics_check_spared(engine: Engine, added: Sequence[int]) -> bool:
    """Whether refresh_partition_statistics is spared its check after an add of the ids
    ADDED on ENGINE's database (and then counted as spared): so that an add made in a
    transaction of its own opens none for a check it would skip."""
    not_due = _NOT_DUE.get(engine.pool)
    if not_due is not None and max(added, default=0) < not_due[0] and not_due[1] > 0:
        _NOT_DUE[engine.pool] = (not_due[0], not_due[1] - 1)
        return True
    return False


def _sqlite_analyzed_rows(s: Session) -> int:
    """The rows of PARTITIONS when SQLite last analyzed it (0: never)."""
    if not s.scalar(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")):
        return 0
    # Each index's row starts with the number of rows of the table when analyzed.
    stat = s.scalar(
        text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'PARTITIONS' AND idx IS NOT NULL")
    )
    return int(stat.split()[0]) if stat else 0


def delete_partition(s: Session, partition: m.Partition) -> None:
    delete_owned(s, "PARTITIONS", "PART_ID", [partition.PART_ID])
    s.execute(delete(m.Partition).where(m.Partition.PART_ID == partition.PART_ID))
    delete_storages(s, [partition.SD_ID])
