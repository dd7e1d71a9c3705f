"""What a server last saw of tables, by their names as stored: for the writes made in one
statement that is a transaction of its own (metastore.stats.one_statement,
metastore.store.partition_add), which take what they need of their table from here and
check in that statement that the table still is so. Each server keeps its own."""

from __future__ import annotations

import threading
from typing import Generic, TypeVar

from metastore import names

T = TypeVar("T")

TableKey = tuple[str, str, str]
"""A table's catalog, database and name, as stored."""


def table_key(db_arg: str | None, table_name: str | None, catalog: str | None) -> TableKey | None:
    """The catalog, database and table named as for lookup.table (DB_ARG may name the
    catalog; CATALOG, when given, instead of its own), as stored; None when a name is
    missing."""
    cat, db_name = names.split_catalog(db_arg)
    if catalog:
        cat = names.identifier(catalog)
    if not db_name or not table_name:
        return None
    return cat, names.identifier(db_name), names.identifier(table_name)


class SeenTables(Generic[T]):
    """What was last seen of each table, by TableKey: at most LIMIT tables, forgotten all
    at once past it (a table seen again is looked up again, one statement)."""

    LIMIT = 10_000

    def __init__(self) -> None:
        self._seen: dict[TableKey, T] = {}
        self._lock = threading.Lock()

    def get(self, key: TableKey) -> T | None:
        return self._seen.get(key)

    def put(self, key: TableKey, seen: T) -> None:
        with self._lock:
            if len(self._seen) >= self.LIMIT:
                self._seen.clear()
            self._seen[key] = seen

    def forget(self, key: TableKey) -> None:
        with self._lock:
            self._seen.pop(key, None)
