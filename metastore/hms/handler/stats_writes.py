"""Calls that write or delete column statistics: the single-object updates and deletes,
the 4.x *_req updates and set_aggr_stats_for (with and without needMerge). The writes are
the core's (metastore.stats.writes); the requests are decoded by
metastore.hms.structs.statistics."""

from __future__ import annotations

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore.errors import InvalidInput
from metastore.hms.call import call
from metastore.hms.handler.base import ServiceBase
from metastore.hms.structs.statistics import desc_of
from metastore.stats import writes
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL
from metastore.store import lookup


class StatisticsWrites(ServiceBase):
    def _update(self, s: Session, stats: t.ColumnStatistics, table_level: bool) -> bool:
        desc = desc_of(stats)
        if not table_level and not desc.partName:
            raise InvalidInput("ColumnStatisticsDesc.partName is required for partition statistics")
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
            raise InvalidInput("the request needs exactly one ColumnStatistics")
        if req.needMerge:
            raise InvalidInput("needMerge is not supported here; use set_aggr_stats_for")
        stats = req.colStats[0]
        desc_of(stats).isTblLevel = table_level
        if not table_level and not stats.statsDesc.partName:
            raise InvalidInput("ColumnStatisticsDesc.partName is required for partition statistics")
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
            raise InvalidInput("SetPartitionsStatsRequest.colStats is required")
        self._write_statistics(s, request.colStats, request.engine, merge=bool(request.needMerge))
        return True

    @call(write=True)
    def delete_table_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, col_name: str | None, engine: str | None
    ) -> bool:
        db, table = lookup.table(s, db_name, tbl_name)
        writes.delete_statistics(
            s,
            TABLE_LEVEL,
            table.TBL_ID,
            table.SD_ID,
            col_name,
            engine,
            f"table {db.NAME}.{table.TBL_NAME}",
        )
        return True

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
        db, table = lookup.table(s, db_name, tbl_name)
        partition = lookup.partition(s, table, part_name)
        writes.delete_statistics(
            s,
            PARTITION_LEVEL,
            partition.PART_ID,
            partition.SD_ID,
            col_name,
            engine,
            f"partition {partition.PART_NAME} of {db.NAME}.{table.TBL_NAME}",
        )
        return True
