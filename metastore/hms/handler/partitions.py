"""Calls that add partitions and read them: add (one, several, the request), append (by values
or name), get (by values, name, partial values, filter), list names.

A partial specification (the `_ps` calls, Spark's `PARTITION (ds='x')` of a two-key table)
lists values in key order; an empty value, or a missing one at the end, matches any value.
As in HMS, the folder of an added partition is created when missing.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import names as naming
from metastore import warehouse
from metastore.errors import NotFound
from metastore.hms.cache import AnswerCache
from metastore.hms.call import call
from metastore.hms.handler import fast_stats
from metastore.hms.handler.base import ServiceBase, properties
from metastore.hms.structs import now
from metastore.hms.structs import tables as table_structs
from metastore.store import lookup, partition_add, partition_rows, versions
from metastore.store import models as m
from metastore.store.bulk import insert_all, insert_rows
from metastore.store.driver import driver_rows
from metastore.store.partition_add import NewPartition
from metastore.store.partition_filter import Filter, PartitionFilterError, parse_filter
from metastore.store.partition_filter import queries as filter_queries
from metastore.store.partitions import (
    partition_ids,
    refresh_partition_statistics,
    statistics_check_spared,
    with_values,
)
from metastore.store.seen_tables import table_key
from metastore.store.storage import insert_storages
from metastore.store.transactions import on_commit

log = logging.getLogger(__name__)

Selected = tuple[
    m.Database | partition_rows.StoredDatabase,
    m.Table | partition_rows.StoredTable,
    partition_rows.Selection | None,
    int | None,
]
"""What a call that lists partitions lists: of a database and table, the partitions a
selection selects (None: none), at most a number of them (None or negative: all)."""


class _Added(NamedTuple):
    """The partitions an add wrote (their ids) and their table."""

    db: m.Database | partition_rows.StoredDatabase
    table: m.Table | partition_rows.StoredTable
    part_ids: list[int]
    rows: list[Any] | None
    """Their rows as partition_rows reads them, in name order, when the add returned them
    (metastore.store.partition_add)."""
    below: partition_rows.Below | None
    """The rows below them, as written, when the add returned their rows."""


def _refuse_existing(
    existing: set[str],
    if_not_exists: bool,
    db: m.Database | partition_rows.StoredDatabase,
    table: m.Table | partition_rows.StoredTable,
) -> None:
    """AlreadyExistsException for the first of EXISTING, unless IF_NOT_EXISTS skips them."""
    if existing and not if_not_exists:
        raise t.AlreadyExistsException(
            f"partition {sorted(existing)[0]} of {db.NAME}.{table.TBL_NAME} already exists"
        )


class PartitionCalls(ServiceBase):
    def _add_partitions(
        self,
        s: Session,
        parts: Sequence[t.Partition],
        if_not_exists: bool,
        db_arg: str | None = None,
        table_name: str | None = None,
        catalog: str | None = None,
        context: t.EnvironmentContext | None = None,
    ) -> _Added | None:
        """Add PARTS (all of one table); the partitions added (None when PARTS is empty),
        for `_as_stored` when the call answers with them. A partition whose folder exists
        already gets HMS's fast statistics (numFiles, totalSize; see handler.fast_stats)
        unless CONTEXT says not to.

        On PostgreSQL, an add that skips no partition and gives each its storage descriptor
        is first made alone, in one statement that is a transaction of its own, on the
        table as this server last added to it (metastore.store.partition_add); where that
        statement adds nothing (the table changed, or the partitions take the general
        path), the table is looked up and the add made in the call's transaction."""
        if not parts:
            return None
        first = parts[0]
        db_arg = db_arg or first.dbName
        table_name = table_name or first.tableName
        postgres = s.get_bind().dialect.name == "postgresql"
        key = table_key(db_arg, table_name, catalog or first.catName)
        alone = postgres and not if_not_exists and all(p.sd is not None for p in parts)
        if alone and key is not None and (seen := self.add_targets.get(key)) is not None:
            try:
                added = self._add_to(s, seen, parts, False, context, alone=True)
            except partition_add.TableChanged:
                self.add_targets.forget(key)
                added = None
            if added is not None:
                return added
        try:
            db, table, table_row, _, key_types = lookup.stored_table(
                s, db_arg, table_name, catalog or first.catName, with_keys=True
            )
        except NotFound as e:
            raise t.InvalidObjectException(e.message) from None
        keys = [name for name, _ in key_types or ()]
        target = partition_add.Target(db, table, table_row, keys)
        added = self._add_to(s, target, parts, if_not_exists, context, alone=False)
        # Kept only as read on the driver (the ORM's entities stay in their session), and
        # when the add was its one statement (one that takes the general path would not be).
        if (
            key is not None
            and added is not None
            and added.below is not None
            and isinstance(table, partition_rows.StoredTable)
        ):
            self.add_targets.put(key, target)
        return added

    def _add_to(
        self,
        s: Session,
        target: partition_add.Target,
        parts: Sequence[t.Partition],
        if_not_exists: bool,
        context: t.EnvironmentContext | None,
        *,
        alone: bool,
    ) -> _Added | None:
        """Add PARTS to the table of TARGET (see `_add_partitions`). ALONE, in a statement
        that is a transaction of its own, which checks that the table still is as TARGET
        says (partition_add.TableChanged when not): None when it added nothing because the
        partitions take the general path or do not fit TARGET's keys (the table's, looked
        up, say whether they fit); an existing partition is refused, as in the call's
        transaction. What follows its commit (the partitions' folders, the check of their
        statistics: `_after_alone`) cannot fail the call."""
        db, table, table_row, keys = target
        if not keys:
            raise t.InvalidObjectException(f"table {db.NAME}.{table.TBL_NAME} is not partitioned")
        base = table_row[partition_rows.LOCATION] if table_row is not None else None
        wanted: dict[str, tuple[t.Partition, list[str]]] = {}
        for part in parts:
            if (
                naming.identifier(part.dbName or db.NAME) != db.NAME
                or naming.identifier(part.tableName or table.TBL_NAME) != table.TBL_NAME
            ):
                raise t.MetaException(
                    f"partitions of {part.dbName}.{part.tableName} in a request for "
                    f"{db.NAME}.{table.TBL_NAME}"
                )
            values = list(part.values or [])
            if len(values) != len(keys) or any(v is None or v == "" for v in values):
                if alone:
                    return None
                raise t.InvalidObjectException(
                    f"partition values {values} do not match the keys ({', '.join(keys)}) of "
                    f"{db.NAME}.{table.TBL_NAME}: one non-empty value per key is needed"
                )
            part_name = naming.make_partition_name(keys, values)
            if part_name in wanted and not if_not_exists:
                raise t.AlreadyExistsException(f"partition {part_name} is given twice")
            wanted.setdefault(part_name, (part, values))
        # Which exist is asked first, but by the add itself on PostgreSQL when none may be
        # skipped (an add_partition is one statement there): the files of a partition that is
        # skipped are not counted.
        postgres = s.get_bind().dialect.name == "postgresql"
        existing = (
            set()
            if postgres and not if_not_exists
            else set(partition_ids(s, table.TBL_ID, list(wanted)))
        )
        _refuse_existing(existing, if_not_exists, db, table)
        # A partition without a descriptor gets a copy of the table's.
        copied = (
            self.answers.table(s, db, table).sd
            if any(p.sd is None for name, (p, _) in wanted.items() if name not in existing)
            else None
        )
        table_cd = table_row[partition_rows.CD_ID] if table_row is not None else None
        candidates = []
        for name, (part, values) in wanted.items():
            if name in existing:
                continue
            storage = table_structs.storage_rows(part.sd or copied)
            if part.sd is None or not part.sd.location:
                storage.sd.LOCATION = f"{base}/{name}" if base else None
            create_time = part.createTime or now()
            params = dict(part.parameters or {})
            params.setdefault("transient_lastDdlTime", str(create_time))
            location = storage.sd.LOCATION
            existed = (path := warehouse.local_path(location)) is not None and path.is_dir()
            fast_stats.on_create(params, location, not existed, properties(context))
            candidates.append(
                NewPartition(name, create_time, part.lastAccessTime or 0, values, params, storage)
            )
        added = (
            partition_add.add(
                self.tx.alone if alone else functools.partial(driver_rows, s),
                target,
                candidates,
                checked=alone,
                all_or_none=not if_not_exists,
            )
            if postgres
            else None
        )
        if alone and added is None:
            return None
        if added is not None:  # added since the check (ifNotExists), or not checked
            _refuse_existing(set(added.existing), if_not_exists, db, table)
            existing |= set(added.existing)
        elif postgres and not if_not_exists:  # the general path's, unchecked so far
            _refuse_existing(set(partition_ids(s, table.TBL_ID, list(wanted))), False, db, table)
        new = [p for p in candidates if p.name not in existing]
        if added is not None:
            if added.part_ids:
                versions.moved(s, table.TBL_ID)
            part_ids = added.part_ids
        else:
            part_ids = self._insert_partitions(s, table.TBL_ID, table_cd, new) if new else []
        folders = [p.storage.sd.LOCATION for p in new]
        if table.TBL_TYPE == table_structs.VIRTUAL_VIEW:
            folders = []
        if alone:
            self._after_alone(folders, part_ids)
        else:
            refresh_partition_statistics(s, part_ids)
            for folder in folders:
                on_commit(s, functools.partial(self.warehouse.make_folder, folder))
        return _Added(
            db,
            table,
            part_ids,
            added.rows if added is not None else None,
            added.below if added is not None else None,
        )

    def _after_alone(self, folders: Sequence[str | None], part_ids: list[int]) -> None:
        """After an add alone committed: make the partitions' FOLDERS, then check whether
        the partitions are due to be analyzed (refresh_partition_statistics) in a
        transaction of its own, opened only when the check is not spared. Their failures
        are logged, not raised: the add is made, and a call that failed (or was run again
        by Transactions.run) would say otherwise."""
        for folder in folders:
            try:
                self.warehouse.make_folder(folder)
            except Exception:
                log.exception("the folder %s of a partition added was not made", folder)
        if statistics_check_spared(self.tx.engine, part_ids):
            return
        try:
            self.tx.run(
                functools.partial(refresh_partition_statistics, added=part_ids),
                name="the check of the partitions' statistics",
                write=True,
            )
        except Exception:
            log.exception("the check of the partitions' statistics after an add failed")

    @staticmethod
    def _insert_partitions(
        s: Session, tbl_id: int, table_cd: int | None, new: Sequence[NewPartition]
    ) -> list[int]:
        """Insert the partitions NEW of table TBL_ID (its column list TABLE_CD), a few
        statements per table written (metastore.store.partition_add does it in one on
        PostgreSQL); their ids."""
        sd_ids = insert_storages(s, [p.storage for p in new], reuse_cd_ids=[table_cd])
        rows = [
            {
                "TBL_ID": tbl_id,
                "PART_NAME": p.name,
                "CREATE_TIME": p.create_time,
                "LAST_ACCESS_TIME": p.last_access_time,
                "SD_ID": sd_id,
            }
            for p, sd_id in zip(new, sd_ids, strict=True)
        ]
        part_ids = insert_rows(s, m.Partition.__table__, rows)
        key_values, params_rows = [], []
        for part_id, p in zip(part_ids, new, strict=True):
            key_values += [
                {"PART_ID": part_id, "INTEGER_IDX": i, "PART_KEY_VAL": v}
                for i, v in enumerate(p.values)
            ]
            params_rows += [
                {"PART_ID": part_id, "PARAM_KEY": k, "PARAM_VALUE": v} for k, v in p.params.items()
            ]
        insert_all(s, m.PartitionKeyValue.__table__, key_values)
        insert_all(s, m.PartitionParam.__table__, params_rows)
        return part_ids

    def _as_stored(self, s: Session, added: _Added | None) -> list[t.Partition]:
        """The partitions ADDED as stored, in name order (built from the rows the add
        returned, or read back): only for the calls that answer with them (the others would
        read and build a whole batch for nothing)."""
        if added is None:
            return []
        if added.rows is not None:
            return self.answers.partitions_of_rows(
                s, added.db, added.table, added.rows, added.below
            )
        return self.answers.partitions_by_ids(s, added.db, added.table, added.part_ids)

    @call(write=True)
    def add_partition(self, s: Session, new_part: t.Partition) -> t.Partition:
        if new_part is None:
            raise t.InvalidObjectException("no partition given")
        return self._as_stored(s, self._add_partitions(s, [new_part], if_not_exists=False))[0]

    @call(write=True)
    def add_partition_with_environment_context(
        self, s: Session, new_part: t.Partition, environment_context: t.EnvironmentContext | None
    ) -> t.Partition:
        if new_part is None:
            raise t.InvalidObjectException("no partition given")
        added = self._add_partitions(
            s, [new_part], if_not_exists=False, context=environment_context
        )
        return self._as_stored(s, added)[0]

    def _append(
        self, s: Session, db_name: str, tbl_name: str, values: list[str] | None
    ) -> t.Partition:
        """A new partition of VALUES with the table's storage (append_partition*)."""
        part = t.Partition(values=values, dbName=db_name, tableName=tbl_name, parameters={})
        return self._as_stored(s, self._add_partitions(s, [part], False, db_name, tbl_name))[0]

    def _values_of_name(self, s: Session, db_name: str, tbl_name: str, part_name: str) -> list[str]:
        try:
            _, table = lookup.table(s, db_name, tbl_name)
        except NotFound as e:
            raise t.InvalidObjectException(e.message) from None
        try:
            return naming.partition_values(part_name or "", lookup.partition_keys(s, table))
        except naming.InvalidNameError as e:
            raise t.InvalidObjectException(str(e)) from None

    @call(write=True)
    def append_partition(
        self, s: Session, db_name: str, tbl_name: str, part_vals: list[str] | None
    ) -> t.Partition:
        return self._append(s, db_name, tbl_name, part_vals)

    @call(write=True)
    def append_partition_with_environment_context(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str] | None,
        environment_context: t.EnvironmentContext | None,
    ) -> t.Partition:
        return self._append(s, db_name, tbl_name, part_vals)

    @call(write=True)
    def append_partition_by_name(
        self, s: Session, db_name: str, tbl_name: str, part_name: str
    ) -> t.Partition:
        values = self._values_of_name(s, db_name, tbl_name, part_name)
        return self._append(s, db_name, tbl_name, values)

    @call(write=True)
    def append_partition_by_name_with_environment_context(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_name: str,
        environment_context: t.EnvironmentContext | None,
    ) -> t.Partition:
        values = self._values_of_name(s, db_name, tbl_name, part_name)
        return self._append(s, db_name, tbl_name, values)

    @call(write=True)
    def add_partitions(self, s: Session, new_parts: list[t.Partition] | None) -> int:
        if new_parts is None:
            raise t.MetaException("no partition list given")
        tables = (
            {(p.dbName or "").lower() for p in new_parts},
            {(p.tableName or "").lower() for p in new_parts},
        )
        if len(tables[0]) > 1 or len(tables[1]) > 1:
            raise t.MetaException("add_partitions takes partitions of one table only")
        added = self._add_partitions(s, new_parts, if_not_exists=False)
        return len(added.part_ids) if added is not None else 0

    @call(write=True)
    def add_partitions_req(
        self, s: Session, request: t.AddPartitionsRequest
    ) -> t.AddPartitionsResult:
        if request is None or not request.dbName or not request.tblName or request.parts is None:
            raise t.InvalidObjectException("AddPartitionsRequest needs dbName, tblName and parts")
        added = self._add_partitions(
            s,
            request.parts,
            bool(request.ifNotExists),
            request.dbName,
            request.tblName,
            request.catName,
        )
        if request.needResult is False:  # HMS's default is True
            return t.AddPartitionsResult(partitions=None)
        return t.AddPartitionsResult(partitions=self._as_stored(s, added))

    @call(write=False)
    def get_partition(
        self, s: Session, db_name: str, tbl_name: str, part_vals: list[str]
    ) -> t.Partition:
        db, table, keys = self._table_with_keys(s, db_name, tbl_name)
        if len(part_vals or []) != len(keys) or not keys:
            raise NotFound(
                f"partition values {part_vals} do not match the keys of {db.NAME}.{tbl_name}"
            )
        name = naming.make_partition_name(keys, part_vals)
        return self.answers.partition(s, db, table, name, keys)

    @call(write=False)
    def get_partition_by_name(
        self, s: Session, db_name: str, tbl_name: str, part_name: str
    ) -> t.Partition:
        found = lookup.stored_table(s, db_name, tbl_name)
        return self.answers.partition(s, found.database, found.table, part_name)

    @call(write=False)
    def get_partitions(
        self, s: Session, db_name: str, tbl_name: str, max_parts: int
    ) -> list[t.Partition]:
        return self._listed(s, self._every(s, db_name, tbl_name, max_parts))

    @call(write=False)
    def get_partitions_by_names(
        self, s: Session, db_name: str, tbl_name: str, names: list[str] | None
    ) -> list[t.Partition]:
        return self._listed(s, self._by_names(s, db_name, tbl_name, names))

    # -- the partitions a call lists ------------------------------------------------------

    def _listed(self, s: Session, selected: Selected) -> list[t.Partition]:
        """The Partition structs of the partitions SELECTED."""
        db, table, selection, limit = selected
        if selection is None:
            return []
        return self.answers.partitions(s, db, table, selection, limit)

    def partitions_encoded(self, name: str, arguments: Any, cache: AnswerCache) -> bytes:
        """The answer of call NAME (of partition_pieces.CALLS) to ARGUMENTS (its argument
        struct), encoded (the result's list of Partition), from the encoded partitions
        CACHE keeps of partitions that did not change (metastore.hms.partition_pieces): the
        same operation as the call, with its errors."""

        def answer(s: Session) -> bytes:
            db, table, selection, limit = self._selected(s, name, arguments)
            return self.answers.partitions_encoded(s, db, table, selection, limit, cache)

        return self.operations.run(name, answer, write=False)

    def _selected(self, s: Session, name: str, a: Any) -> Selected:
        """The partitions call NAME lists for its arguments A."""
        if name == "get_partitions":
            return self._every(s, a.db_name, a.tbl_name, a.max_parts)
        if name == "get_partitions_by_names":
            return self._by_names(s, a.db_name, a.tbl_name, a.names)
        if name in ("get_partitions_ps", "get_partitions_ps_with_auth"):
            return self._by_partial(s, a.db_name, a.tbl_name, a.part_vals, a.max_parts)
        if name == "get_partitions_by_filter":
            return self._by_filter(s, a.db_name, a.tbl_name, a.filter, a.max_parts)
        raise ValueError(f"{name} does not list partitions")

    def _by_partial(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str] | None,
        max_parts: int,
    ) -> Selected:
        database, table, selection = self._by_partial_values(s, db_name, tbl_name, part_vals)
        return database, table, selection, max_parts

    @staticmethod
    def _every(s: Session, db_name: str, tbl_name: str, max_parts: int) -> Selected:
        found = lookup.stored_table(s, db_name, tbl_name)
        selection = partition_rows.of_table(found.table.TBL_ID)
        return found.database, found.table, selection, max_parts

    def _by_names(
        self, s: Session, db_name: str, tbl_name: str, names: list[str] | None
    ) -> Selected:
        db, table, keys = self._table_with_keys(s, db_name, tbl_name)
        stored = []
        for name in names or []:
            try:
                stored.append(lookup.partition_name(s, table, name, keys))
            except naming.InvalidNameError:
                continue  # HMS leaves out names it cannot find
        if not stored:
            return db, table, None, None
        return db, table, partition_rows.of_names(s, table.TBL_ID, stored), None

    @call(write=False)
    def get_partition_names(
        self, s: Session, db_name: str, tbl_name: str, max_parts: int
    ) -> list[str]:
        """One statement when the table has partitions, its lookup included (a planner
        lists them for every query)."""
        return self._names(s, db_name, tbl_name, [], max_parts)

    def _names(
        self, s: Session, db_name: str, tbl_name: str, values: list[str], max_parts: int
    ) -> list[str]:
        """The names of the partitions that VALUES (a partial specification, possibly empty)
        matches: one statement when it finds names, the table's lookup included. A name has
        a component per key, so the first one tells whether more values than keys were
        given; without names, the general path tells an unknown table or too many values
        from no partitions."""
        catalog, db = naming.split_catalog(db_name)
        found = (
            partition_rows.names_by_values(
                s, catalog, naming.identifier(db), naming.identifier(tbl_name), values, max_parts
            )
            if db and tbl_name
            else []
        )
        if not found or len(values) > found[0].count("/") + 1:
            # Raises for an unknown table or too many values; else there were no names.
            self._by_partial_values(s, db_name, tbl_name, values)
        return found

    # -- partial specifications -----------------------------------------------------------

    def _by_partial_values(
        self, s: Session, db_name: str, tbl_name: str, part_vals: list[str] | None
    ) -> tuple[
        m.Database | partition_rows.StoredDatabase,
        m.Table | partition_rows.StoredTable,
        partition_rows.Selection,
    ]:
        """The database, the table and the selection of its partitions that PART_VALS
        (a partial specification) matches."""
        database, table, keys = self._table_with_keys(s, db_name, tbl_name)
        values = list(part_vals or [])
        if len(values) > len(keys):
            raise t.MetaException(
                f"{len(values)} partition values given for the {len(keys)} partition keys "
                f"({', '.join(keys)}) of {database.NAME}.{table.TBL_NAME}"
            )
        selection = with_values(partition_rows.of_table(table.TBL_ID), values)
        return database, table, selection

    @call(write=False)
    def get_partitions_ps(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str] | None,
        max_parts: int,
    ) -> list[t.Partition]:
        return self._listed(s, self._by_partial(s, db_name, tbl_name, part_vals, max_parts))

    @call(write=False)
    def get_partitions_ps_with_auth(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str] | None,
        max_parts: int,
        user_name: str | None,
        group_names: list[str] | None,
    ) -> list[t.Partition]:
        return self._listed(s, self._by_partial(s, db_name, tbl_name, part_vals, max_parts))

    @call(write=False)
    def get_partition_names_ps(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str] | None,
        max_parts: int,
    ) -> list[str]:
        """One statement when it finds names (Trino lists a partition's names this way for
        every query)."""
        return self._names(s, db_name, tbl_name, list(part_vals or []), max_parts)

    @call(write=False)
    def get_partition_with_auth(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_vals: list[str] | None,
        user_name: str | None,
        group_names: list[str] | None,
    ) -> t.Partition:
        database, table, keys = self._table_with_keys(s, db_name, tbl_name)
        if not keys or len(part_vals or []) != len(keys):
            raise NotFound(
                f"partition values {part_vals} do not match the keys of "
                f"{database.NAME}.{table.TBL_NAME}"
            )
        assert part_vals is not None
        name = naming.make_partition_name(keys, part_vals)
        return self.answers.partition(s, database, table, name, keys)

    @staticmethod
    def _table_with_keys(
        s: Session, db_name: str, tbl_name: str
    ) -> tuple[
        m.Database | partition_rows.StoredDatabase, m.Table | partition_rows.StoredTable, list[str]
    ]:
        """The table (found with its partition keys in one statement, for the read calls)
        and the names of its keys."""
        found = lookup.stored_table(s, db_name, tbl_name, with_keys=True)
        assert found.keys is not None
        return found.database, found.table, [name for name, _ in found.keys]

    # -- filters --------------------------------------------------------------------------

    def _filtered(
        self, s: Session, db_name: str, tbl_name: str, filter_text: str | None
    ) -> tuple[
        m.Database | partition_rows.StoredDatabase,
        m.Table | partition_rows.StoredTable,
        list[tuple[str, str]],
        Filter,
    ]:
        """The table (found with its keys in one statement), its keys and the parsed
        FILTER_TEXT."""
        found = lookup.stored_table(s, db_name, tbl_name, with_keys=True)
        assert found.keys is not None
        try:
            return found.database, found.table, found.keys, parse_filter(filter_text or "")
        except PartitionFilterError as e:
            raise t.MetaException(str(e)) from None

    @call(write=False)
    def get_partitions_by_filter(
        self, s: Session, db_name: str, tbl_name: str, filter: str | None, max_parts: int
    ) -> list[t.Partition]:
        """The partitions FILTER selects (HMS's filter grammar, evaluated by the database;
        see metastore.store.partition_filter), in name order. A filter that does not parse is a
        MetaException starting "Error parsing partition filter", which Spark relies on."""
        return self._listed(s, self._by_filter(s, db_name, tbl_name, filter, max_parts))

    def _by_filter(
        self, s: Session, db_name: str, tbl_name: str, filter_text: str | None, max_parts: int
    ) -> Selected:
        database, table, keys, flt = self._filtered(s, db_name, tbl_name, filter_text)
        try:
            found = filter_queries.partitions_by_filter(s, table.TBL_ID, keys, flt)
        except PartitionFilterError as e:
            raise t.MetaException(str(e)) from None
        return database, table, found, max_parts

    @call(write=False)
    def get_num_partitions_by_filter(
        self, s: Session, db_name: str, tbl_name: str, filter: str | None
    ) -> int:
        _, table, keys, flt = self._filtered(s, db_name, tbl_name, filter)
        try:
            return filter_queries.count_partitions_by_filter(s, table.TBL_ID, keys, flt)
        except PartitionFilterError as e:
            raise t.MetaException(str(e)) from None
