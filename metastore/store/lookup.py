"""The objects a request names, found or NotFound: databases (with Hive 3+'s catalog prefix
`@cat#db`), tables, partitions by name.

Every message names the object in the words clients match ("... does not exist"). A lookup
in a changing transaction marks the table as changed (metastore.store.versions), so that a
change moves the version of every table it names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy.orm import Session

from metastore import names
from metastore.errors import NotFound
from metastore.store import databases, partition_rows, versions
from metastore.store import models as m
from metastore.store.partitions import find_partition
from metastore.store.tables import find_database_table, partition_key_types


def missing(what: str) -> NotFound:
    """NotFound for WHAT, in the words clients match ("does not exist")."""
    return NotFound(f"{what} does not exist")


def database(s: Session, db_arg: str | None, catalog: str | None = None) -> m.Database:
    """Database DB_ARG (which may carry a catalog prefix; CATALOG, when given, wins)."""
    cat, db_name = names.split_catalog(db_arg)
    if catalog:
        cat = names.identifier(catalog)
    if not db_name:
        raise NotFound("no database name given")
    db = databases.find_database(s, cat, names.identifier(db_name))
    if db is None:
        raise missing(f"database {cat}.{names.identifier(db_name)}")
    return db


def table(
    s: Session,
    db_arg: str | None,
    table_name: str | None,
    catalog: str | None = None,
    *,
    mark: bool = True,
) -> tuple[m.Database, m.Table]:
    """Table TABLE_NAME of database DB_ARG, with its database; in a change, MARKed as
    changed in any of its partitions (versions.touch; a caller that changes only some of its
    partitions, keeping their names, marks those instead: versions.touch_partitions)."""
    cat, db_name = names.split_catalog(db_arg)
    if catalog:
        cat = names.identifier(catalog)
    if db_name and table_name:
        # Most calls name a table that exists: one query finds it with its database.
        found = find_database_table(s, cat, names.identifier(db_name), names.identifier(table_name))
        if found is not None:
            if mark:
                versions.touch(s, found[1].TBL_ID)
            return found
    db = database(s, db_arg, catalog)
    if not table_name:
        raise NotFound("no table name given")
    raise missing(f"table {db.NAME}.{names.identifier(table_name)}")


class FoundTable(NamedTuple):
    """What `stored_table` found."""

    database: m.Database | partition_rows.StoredDatabase
    table: m.Table | partition_rows.StoredTable
    storage: Any | None
    """Its storage descriptor's row (shaped as a row of partition_rows); None without one."""
    stats: list[Sequence[Any]] | None
    """Its column statistics rows (partition_rows.TableRow.stats); None when not read."""
    keys: list[tuple[str, str]] | None
    """The (name, Hive type) of its partition keys, in order; None when not read."""


def stored_table(
    s: Session,
    db_arg: str | None,
    table_name: str | None,
    catalog: str | None = None,
    *,
    stats_engine: str | None = None,
    with_keys: bool = False,
) -> FoundTable:
    """Table TABLE_NAME of database DB_ARG (named as for `table`, whose errors a missing one
    gets) with its database, its storage descriptor's row (as partition_rows.table_row gives
    it) and, with a STATS_ENGINE, its column statistics of that engine, or WITH_KEYS its
    partition keys, in one statement on the driver: for the calls that need no ORM entity
    of the table, such as get_table, partition reads and adding partitions."""
    cat, db_name = names.split_catalog(db_arg)
    if catalog:
        cat = names.identifier(catalog)
    if db_name and table_name:
        found = partition_rows.table_row(
            s,
            cat,
            names.identifier(db_name),
            names.identifier(table_name),
            stats_engine=stats_engine,
            with_keys=with_keys,
        )
        if found is not None:
            versions.touch(s, found.table.TBL_ID)
            return FoundTable(*found)
    db, orm_table = table(s, db_arg, table_name, catalog)  # raises what is missing
    sd_id = orm_table.SD_ID
    storage = partition_rows.storage_rows(s, [sd_id]).get(sd_id) if sd_id else None
    keys = partition_key_types(s, orm_table.TBL_ID) if with_keys else None
    return FoundTable(db, orm_table, storage, None, keys)


def partition_keys(s: Session, table: m.Table | partition_rows.StoredTable) -> list[str]:
    return [name for name, _ in partition_key_types(s, table.TBL_ID)]


def partition_name(
    s: Session,
    table: m.Table | partition_rows.StoredTable,
    part_name: str,
    keys: list[str] | None = None,
) -> str:
    """PART_NAME as stored: parsed, checked against the table's KEYS (read when not given)
    and re-escaped. Raises names.InvalidNameError for a name that does not fit the keys."""
    if keys is None:
        keys = partition_keys(s, table)
    if not keys:
        raise NotFound(f"table {table.TBL_NAME} is not partitioned")
    return names.stored_partition_name(tuple(keys), part_name)


def existing_name(
    s: Session,
    table: m.Table | partition_rows.StoredTable,
    part_name: str | None,
    keys: list[str] | None = None,
) -> str:
    """The stored name of partition PART_NAME; NotFound when it is no partition name of
    TABLE."""
    if not part_name:
        raise NotFound("no partition name given")
    try:
        return partition_name(s, table, part_name, keys)
    except names.InvalidNameError as e:
        raise NotFound(str(e)) from None


def partition(s: Session, table: m.Table, part_name: str | None) -> m.Partition:
    """Partition PART_NAME of TABLE."""
    stored_name = existing_name(s, table, part_name)
    found = find_partition(s, table.TBL_ID, stored_name)
    if found is None:
        raise missing(f"partition {stored_name} of table {table.TBL_NAME}")
    return found
