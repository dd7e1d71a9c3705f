"""Calls that read column statistics: the single-object getters, the batch *_req reads
(one SQL query each) and get_aggr_stats_for."""

from __future__ import annotations

import logging
from collections import Counter
from operator import itemgetter
from typing import Any

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import aggregate, convert, names, stats_store, store
from metastore import models as m
from metastore.service.base import ServiceBase, call
from metastore.vocabulary import DEFAULT_ENGINE

log = logging.getLogger("metastore.service")


class StatisticsReads(ServiceBase):
    def _obj(self, row: Any) -> t.ColumnStatisticsObj:
        return convert.stats_obj(
            row,
            fetch_bitvector=self.settings.fetch_bitvector,
            fetch_histogram=self.settings.fetch_histogram,
        )

    def _one_column_stats(
        self,
        s: Session,
        level: m.StatsLevel,
        owner_id: int,
        sd_id: int | None,
        col_name: str | None,
        where: str,
    ) -> dict[str, Any]:
        if not col_name:
            raise t.InvalidInputException("no column name given")
        column = names.identifier(col_name)
        rows = stats_store.stats_rows(s, level, [owner_id], [column], DEFAULT_ENGINE)
        if rows:
            return rows[0]
        if column not in store.column_types(s, sd_id):
            raise t.InvalidObjectException(f"{where} has no column {column!r}")
        raise t.NoSuchObjectException(f"no statistics for column {column!r} of {where}")

    def _stats_struct(
        self, desc: t.ColumnStatisticsDesc, row: dict[str, Any]
    ) -> t.ColumnStatistics:
        desc.lastAnalyzed = row["LAST_ANALYZED"]
        return t.ColumnStatistics(
            statsDesc=desc, statsObj=[self._obj(convert.as_row(row))], engine=row["ENGINE"]
        )

    @call(write=False)
    def get_table_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, col_name: str
    ) -> t.ColumnStatistics:
        db, table = self._table(s, db_name, tbl_name)
        row = self._one_column_stats(
            s,
            m.TABLE_LEVEL,
            table.TBL_ID,
            table.SD_ID,
            col_name,
            f"table {db.NAME}.{table.TBL_NAME}",
        )
        desc = t.ColumnStatisticsDesc(
            isTblLevel=True, dbName=db.NAME, tableName=table.TBL_NAME, catName=db.CTLG_NAME
        )
        return self._stats_struct(desc, row)

    @call(write=False)
    def get_partition_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, part_name: str, col_name: str
    ) -> t.ColumnStatistics:
        db, table = self._table(s, db_name, tbl_name)
        partition = self._partition(s, table, part_name)
        row = self._one_column_stats(
            s,
            m.PARTITION_LEVEL,
            partition.PART_ID,
            partition.SD_ID,
            col_name,
            f"partition {partition.PART_NAME} of {db.NAME}.{table.TBL_NAME}",
        )
        desc = t.ColumnStatisticsDesc(
            isTblLevel=False,
            dbName=db.NAME,
            tableName=table.TBL_NAME,
            partName=partition.PART_NAME,
            catName=db.CTLG_NAME,
        )
        return self._stats_struct(desc, row)

    @staticmethod
    def _request_target(
        request: Any, with_parts: bool
    ) -> tuple[str, str, str, list[str], list[str], str]:
        """(catalog, db, table, columns, partition names, engine) of a stats read request."""
        if (
            request is None
            or not request.dbName
            or not request.tblName
            or request.colNames is None
            or (with_parts and request.partNames is None)
        ):
            needed = "dbName, tblName, colNames" + (" and partNames" if with_parts else "")
            raise t.MetaException(f"the request needs {needed}")
        catalog, db_name = names.split_catalog(request.dbName)
        if request.catName:
            catalog = names.identifier(request.catName)
        columns = sorted({names.identifier(c) for c in request.colNames if c})
        part_names: list[str] = []
        for name in request.partNames if with_parts else []:
            try:
                part_names.append(names.normalize_partition_name(name))
            except names.InvalidNameError:
                continue  # a name that cannot exist is simply absent from the answer
        return (
            catalog,
            names.identifier(db_name or ""),
            names.identifier(request.tblName),
            columns,
            sorted(set(part_names)),
            request.engine or DEFAULT_ENGINE,
        )

    @call(write=False, one_query=True)
    def get_table_statistics_req(
        self, s: Session, request: t.TableStatsRequest
    ) -> t.TableStatsResult:
        catalog, db, table, columns, _, engine = self._request_target(request, with_parts=False)
        rows = stats_store.table_stats_by_name(s, catalog, db, table, columns, engine)
        if not rows:
            self._table(s, db, table, catalog)  # NoSuchObject for an unknown table
        return t.TableStatsResult(tableStats=[self._obj(r) for r in rows])

    @call(write=False, one_query=True)
    def get_partitions_statistics_req(
        self, s: Session, request: t.PartitionsStatsRequest
    ) -> t.PartitionsStatsResult:
        catalog, db, table, columns, parts, engine = self._request_target(request, with_parts=True)
        rows = stats_store.partition_stats_by_name(s, catalog, db, table, parts, columns, engine)
        if not rows:
            self._table(s, db, table, catalog)
        result: dict[str, list[t.ColumnStatisticsObj]] = {}
        for row in rows:
            result.setdefault(row[0], []).append(self._obj(row[1:]))
        return t.PartitionsStatsResult(partStats=result)

    @call(write=False)
    def get_aggr_stats_for(self, s: Session, request: t.PartitionsStatsRequest) -> t.AggrStats:
        catalog, db, table, columns, parts, engine = self._request_target(request, with_parts=True)
        if not columns or not parts:
            return t.AggrStats(colStats=[], partsFound=0)
        rows = stats_store.partition_stats_by_name(
            s, catalog, db, table, parts, columns, engine, with_row_counts=True
        )
        if not rows:
            self._table(s, db, table, catalog)
            return t.AggrStats(colStats=[], partsFound=0)
        keys = list(rows[0]._fields)
        name_at = keys.index("COLUMN_NAME")
        by_column: dict[str, list[Any]] = {}
        for row in rows:
            by_column.setdefault(row[name_at], []).append(row)
        # One row per (partition, column): a partition with as many rows as there are
        # columns has statistics for all of them.
        found = sum(1 for n in Counter(map(itemgetter(0), rows)).values() if n == len(columns))
        objs = []
        for column, column_rows in by_column.items():
            fields = dict(zip(keys, zip(*column_rows, strict=True), strict=True))
            merged = self._aggregate_column(fields, len(parts), f"{db}.{table}.{column}")
            objs.append(self._obj(convert.as_row(merged)))
        return t.AggrStats(colStats=objs, partsFound=found)

    def _aggregate_column(
        self, fields: dict[str, tuple[Any, ...]], requested: int, what: str
    ) -> dict[str, Any]:
        """One column's statistics over many partitions, given field by field (see
        metastore.aggregate)."""
        kinds = fields["STATS_KIND"]
        if len(set(kinds)) > 1:
            analyzed = fields["LAST_ANALYZED"]
            newest_kind = kinds[max(range(len(kinds)), key=lambda i: analyzed[i] or 0)]
            keep = [i for i, kind in enumerate(kinds) if kind == newest_kind]
            log.warning(
                "%s: %d partitions hold statistics of another kind than %s; they are left out",
                what,
                len(kinds) - len(keep),
                newest_kind,
            )
            fields = {key: tuple(values[i] for i in keep) for key, values in fields.items()}
        row_counts = {text: _int_or_none(text) for text in set(fields["NUM_ROWS"])}
        counts = [row_counts[text] for text in fields["NUM_ROWS"]]
        merged = aggregate.merge_columns(
            fields, counts, what=what, merge_histograms=self.settings.fetch_histogram
        )
        aggregate.scale_sums(merged, requested, len(counts))
        return merged


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
