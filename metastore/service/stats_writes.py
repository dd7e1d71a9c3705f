"""Calls that write or delete column statistics: the single-object updates and deletes,
the 4.x *_req updates and set_aggr_stats_for (with and without needMerge)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import accurate as accurate_
from metastore import aggregate, convert, names, stats_store, store
from metastore import models as m
from metastore.service.base import ServiceBase, call, missing
from metastore.vocabulary import DEFAULT_ENGINE


class StatisticsWrites(ServiceBase):
    def _write_statistics(
        self,
        s: Session,
        entries: Sequence[t.ColumnStatistics],
        engine: str | None,
        merge: bool = False,
    ) -> None:
        """Validate ENTRIES and write them: all of them, or nothing (the caller's transaction
        is rolled back by any exception).

        Entries are grouped by table; each group costs a fixed number of statements,
        whatever the number of partitions and columns. With MERGE, a column whose stored
        statistics are marked accurate in COLUMN_STATS_ACCURATE is merged with them
        (aggregate.merge_rows); the others are written as given, like HMS.
        """
        engine = engine or DEFAULT_ENGINE
        if len(engine) > convert.MAX_ENGINE_LENGTH:
            raise t.InvalidInputException(
                f"engine is {len(engine)} characters long; at most "
                f"{convert.MAX_ENGINE_LENGTH} are kept"
            )
        groups: dict[tuple[str | None, str, str], list[t.ColumnStatistics]] = {}
        for entry in entries:
            desc = self._desc(entry)
            if entry.statsObj is None:
                raise t.InvalidInputException("ColumnStatistics.statsObj is required")
            if not desc.isTblLevel and not desc.partName:
                raise t.InvalidInputException(
                    "ColumnStatisticsDesc.partName is required for partition statistics"
                )
            key = (desc.catName, names.identifier(desc.dbName), names.identifier(desc.tableName))
            groups.setdefault(key, []).append(entry)
        for (catalog, db_name, table_name), group in groups.items():
            db, table = self._table(s, db_name, table_name, catalog)
            where = f"{db.NAME}.{table.TBL_NAME}"
            table_level = [e for e in group if e.statsDesc.isTblLevel]
            part_level = [e for e in group if not e.statsDesc.isTblLevel]
            if table_level:
                types = store.column_types(s, table.SD_ID)
                rows = [self._owner_rows(e, types, f"table {where}", engine) for e in table_level]
                self._store_rows(s, m.TABLE_LEVEL, {table.TBL_ID: rows}, engine, merge)
            if part_level:
                self._write_partition_statistics(s, db, table, part_level, engine, merge)

    def _write_partition_statistics(
        self,
        s: Session,
        db: m.Database,
        table: m.Table,
        entries: Sequence[t.ColumnStatistics],
        engine: str,
        merge: bool,
    ) -> None:
        keys = self._partition_keys(s, table)
        if not keys:
            raise t.InvalidObjectException(f"table {db.NAME}.{table.TBL_NAME} is not partitioned")
        stored_names = []
        for entry in entries:
            try:
                values = names.partition_values(entry.statsDesc.partName, keys)
            except names.InvalidNameError as e:
                raise t.InvalidObjectException(str(e)) from None
            stored_names.append(names.make_partition_name(keys, values))
        partitions = {
            p.PART_NAME: p
            for p in store.find_partitions(s, table.TBL_ID, sorted(set(stored_names)))
        }
        types = store.column_types_by_storage(s, (p.SD_ID for p in partitions.values()))
        by_owner: dict[int, list[list[dict[str, Any]]]] = {}
        for entry, name in zip(entries, stored_names, strict=True):
            partition = partitions.get(name)
            if partition is None:
                raise missing(f"partition {name} of table {db.NAME}.{table.TBL_NAME}")
            where = f"partition {name} of {db.NAME}.{table.TBL_NAME}"
            rows = self._owner_rows(entry, types.get(partition.SD_ID or -1, {}), where, engine)
            by_owner.setdefault(partition.PART_ID, []).append(rows)
        self._store_rows(s, m.PARTITION_LEVEL, by_owner, engine, merge)

    def _owner_rows(
        self, entry: t.ColumnStatistics, column_types: dict[str, str], where: str, engine: str
    ) -> list[dict[str, Any]]:
        """Validated rows for every ColumnStatisticsObj of one ColumnStatistics."""
        analyzed = entry.statsDesc.lastAnalyzed or convert.now()
        rows = []
        seen: set[str] = set()
        for obj in entry.statsObj:
            if obj is None or not obj.colName:
                raise t.InvalidInputException("a ColumnStatisticsObj has no colName")
            column = names.identifier(obj.colName)
            if column in seen:
                raise t.InvalidInputException(f"column {column!r} appears twice in one request")
            seen.add(column)
            if column not in column_types:
                raise t.InvalidObjectException(f"{where} has no column {column!r}")
            row = convert.stats_row(obj, column_types[column])
            row.update(ENGINE=engine, LAST_ANALYZED=analyzed)
            rows.append(row)
        return rows

    def _store_rows(
        self,
        s: Session,
        level: m.StatsLevel,
        by_owner: dict[int, list[list[dict[str, Any]]]],
        engine: str,
        merge: bool,
    ) -> None:
        """Upsert the rows of each owner (several entries for one owner are merged or, without
        MERGE, the later wins) and mark their columns in COLUMN_STATS_ACCURATE."""
        owners = list(by_owner)
        accurate = store.param_values(s, level.params, owners, accurate_.KEY)
        stored: dict[tuple[int, str], dict[str, Any]] = {}
        if merge:
            columns = sorted(
                {r["COLUMN_NAME"] for lists in by_owner.values() for rows in lists for r in rows}
            )
            for row in stats_store.stats_rows(s, level, owners, columns, engine):
                owner = row.pop(level.owner)
                if row["COLUMN_NAME"] in accurate_.accurate_columns(accurate.get(owner)):
                    stored[(owner, row["COLUMN_NAME"])] = row
        final: dict[tuple[int, str], dict[str, Any]] = {}
        for owner, lists in by_owner.items():
            for rows in lists:
                for row in rows:
                    key = (owner, row["COLUMN_NAME"])
                    previous = final.get(key) or stored.get(key)
                    if (
                        merge
                        and previous is not None
                        and previous["STATS_KIND"] == row["STATS_KIND"]
                    ):
                        row = aggregate.merge_rows([previous, row], what=f"{row['COLUMN_NAME']}")
                        row["COLUMN_TYPE"] = previous["COLUMN_TYPE"]
                    final[key] = {**row, level.owner: owner}
        stats_store.upsert_stats(s, level, list(final.values()), keep_unset=not merge)
        written: dict[int, set[str]] = {owner: set() for owner in owners}
        for owner, column in final:
            written[owner].add(column)
        store.set_param_values(
            s,
            level.params,
            {
                owner: accurate_.with_columns(accurate.get(owner), columns)
                for owner, columns in written.items()
            },
            accurate_.KEY,
            stored=accurate,
        )

    @staticmethod
    def _desc(stats: t.ColumnStatistics | None) -> t.ColumnStatisticsDesc:
        if stats is None or stats.statsDesc is None:
            raise t.InvalidInputException("ColumnStatistics.statsDesc is required")
        desc: t.ColumnStatisticsDesc = stats.statsDesc
        if not desc.dbName or not desc.tableName:
            raise t.InvalidInputException("ColumnStatisticsDesc needs dbName and tableName")
        return desc

    def _update(self, s: Session, stats: t.ColumnStatistics, table_level: bool) -> bool:
        desc = self._desc(stats)
        if not table_level and not desc.partName:
            raise t.InvalidInputException(
                "ColumnStatisticsDesc.partName is required for partition statistics"
            )
        # The call, not the flag, decides the level (the Hive 2.3 client leaves it unset).
        desc.isTblLevel = table_level
        self._write_statistics(s, [stats], stats.engine)
        return True

    @call(write=True)
    def update_table_column_statistics(self, s: Session, stats_obj: t.ColumnStatistics) -> bool:
        return self._update(s, stats_obj, table_level=True)

    @call(write=True)
    def update_partition_column_statistics(self, s: Session, stats_obj: t.ColumnStatistics) -> bool:
        return self._update(s, stats_obj, table_level=False)

    def _update_req(
        self, s: Session, req: t.SetPartitionsStatsRequest, table_level: bool
    ) -> t.SetPartitionsStatsResponse:
        if req is None or req.colStats is None or len(req.colStats) != 1:
            raise t.InvalidInputException("the request needs exactly one ColumnStatistics")
        if req.needMerge:
            raise t.InvalidInputException("needMerge is not supported here; use set_aggr_stats_for")
        stats = req.colStats[0]
        self._desc(stats).isTblLevel = table_level
        if not table_level and not stats.statsDesc.partName:
            raise t.InvalidInputException(
                "ColumnStatisticsDesc.partName is required for partition statistics"
            )
        self._write_statistics(s, [stats], req.engine or stats.engine)
        return t.SetPartitionsStatsResponse(result=True)

    @call(write=True)
    def update_table_column_statistics_req(
        self, s: Session, req: t.SetPartitionsStatsRequest
    ) -> t.SetPartitionsStatsResponse:
        return self._update_req(s, req, table_level=True)

    @call(write=True)
    def update_partition_column_statistics_req(
        self, s: Session, req: t.SetPartitionsStatsRequest
    ) -> t.SetPartitionsStatsResponse:
        return self._update_req(s, req, table_level=False)

    @call(write=True)
    def set_aggr_stats_for(self, s: Session, request: t.SetPartitionsStatsRequest) -> bool:
        if request is None or request.colStats is None:
            raise t.InvalidInputException("SetPartitionsStatsRequest.colStats is required")
        self._write_statistics(s, request.colStats, request.engine, merge=bool(request.needMerge))
        return True

    def _delete_stats(
        self,
        s: Session,
        level: m.StatsLevel,
        owner_id: int,
        sd_id: int | None,
        col_name: str | None,
        engine: str | None,
        where: str,
    ) -> bool:
        column = names.identifier(col_name) if col_name else None
        deleted = stats_store.delete_stats(s, level, owner_id, column, engine)
        if column is not None and deleted == 0:
            if column not in store.column_types(s, sd_id):
                raise t.InvalidObjectException(f"{where} has no column {column!r}")
            raise t.NoSuchObjectException(f"no statistics for column {column!r} of {where}")
        accurate = store.param_values(s, level.params, [owner_id], accurate_.KEY)
        if owner_id in accurate:
            store.set_param_values(
                s,
                level.params,
                {
                    owner_id: (
                        accurate_.without_columns(
                            accurate[owner_id], None if column is None else [column]
                        )
                    )
                },
                accurate_.KEY,
            )
        return True

    @call(write=True)
    def delete_table_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, col_name: str | None, engine: str | None
    ) -> bool:
        db, table = self._table(s, db_name, tbl_name)
        return self._delete_stats(
            s,
            m.TABLE_LEVEL,
            table.TBL_ID,
            table.SD_ID,
            col_name,
            engine,
            f"table {db.NAME}.{table.TBL_NAME}",
        )

    @call(write=True)
    def delete_partition_column_statistics(
        self,
        s: Session,
        db_name: str,
        tbl_name: str,
        part_name: str,
        col_name: str | None,
        engine: str | None,
    ) -> bool:
        db, table = self._table(s, db_name, tbl_name)
        partition = self._partition(s, table, part_name)
        return self._delete_stats(
            s,
            m.PARTITION_LEVEL,
            partition.PART_ID,
            partition.SD_ID,
            col_name,
            engine,
            f"partition {partition.PART_NAME} of {db.NAME}.{table.TBL_NAME}",
        )
