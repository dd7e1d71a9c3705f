"""Calls that read column statistics: the single-object getters, the batch *_req reads
(one SQL query each) and get_aggr_stats_for. The reads are the core's
(metastore.stats.reads); the answers are built by metastore.hms.answers, and those of the
*_req reads encoded straight from the rows (metastore.hms.stats_wire)."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.orm import Session
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ttypes as t
from metastore.hms import aggr_pieces, held, pieces
from metastore.hms.cache import AnswerCache
from metastore.hms.call import call
from metastore.hms.handler.base import ServiceBase
from metastore.stats import reads
from metastore.stats.queries import PARTITION_LEVEL, TABLE_LEVEL
from metastore.stats.rows import as_row
from metastore.store import lookup
from metastore.store.versions import TableName

Result = TypeVar("Result", t.TableStatsResult, t.PartitionsStatsResult)


def _decoded(result: Result, encoded: bytes) -> Result:
    """RESULT (an empty struct) read from its ENCODED bytes."""
    result.read(TBinaryProtocolAccelerated(TMemoryBuffer(encoded)))
    return result


def _target(request: Any, with_partitions: bool) -> reads.StatsTarget:
    """The StatsTarget of a TableStatsRequest or PartitionsStatsRequest (None included)."""

    def field(name: str) -> Any:
        return getattr(request, name, None)

    return reads.target(
        field("dbName"),
        field("tblName"),
        field("colNames"),
        field("partNames"),
        catalog=field("catName"),
        engine=field("engine"),
        with_partitions=with_partitions,
    )


class StatisticsReads(ServiceBase):
    @call(write=False)
    def get_table_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, col_name: str
    ) -> t.ColumnStatistics:
        db, table = lookup.table(s, db_name, tbl_name)
        row = reads.column_statistics(
            s,
            TABLE_LEVEL,
            table.TBL_ID,
            table.SD_ID,
            col_name,
            f"table {db.NAME}.{table.TBL_NAME}",
        )
        desc = t.ColumnStatisticsDesc(
            isTblLevel=True, dbName=db.NAME, tableName=table.TBL_NAME, catName=db.CTLG_NAME
        )
        return self.answers.column_statistics(desc, row)

    @call(write=False)
    def get_partition_column_statistics(
        self, s: Session, db_name: str, tbl_name: str, part_name: str, col_name: str
    ) -> t.ColumnStatistics:
        db, table = lookup.table(s, db_name, tbl_name)
        partition = lookup.partition(s, table, part_name)
        row = reads.column_statistics(
            s,
            PARTITION_LEVEL,
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
        return self.answers.column_statistics(desc, row)

    # The server's processor sends these two answers as encoded here, from the rows
    # (metastore.hms.stats_wire); the calls decode them, for callers in process.

    @call(write=False)
    def get_table_statistics_req(
        self, s: Session, request: t.TableStatsRequest
    ) -> t.TableStatsResult:
        return _decoded(t.TableStatsResult(), self._table_statistics(s, request))

    @call(write=False)
    def get_partitions_statistics_req(
        self, s: Session, request: t.PartitionsStatsRequest
    ) -> t.PartitionsStatsResult:
        encoded = pieces.whole(s, _target(request, with_partitions=True), self.answers.encoder)
        return _decoded(t.PartitionsStatsResult(), encoded)

    def _table_statistics(self, s: Session, request: t.TableStatsRequest) -> bytes:
        rows = reads.table_statistics(s, _target(request, with_partitions=False))
        return self.answers.encoder.table_result(rows)

    def table_statistics_encoded(self, request: t.TableStatsRequest) -> bytes:
        """The answer of get_table_statistics_req to REQUEST, encoded (the result's
        TableStatsResult): the same operation as the call, with its errors."""
        return self.operations.run(
            "get_table_statistics_req",
            lambda s: self._table_statistics(s, request),
            write=False,
        )

    def partitions_statistics_encoded(
        self, request: t.PartitionsStatsRequest, cache: AnswerCache | None, variant: str
    ) -> bytes:
        """The answer of get_partitions_statistics_req to REQUEST, encoded (the result's
        PartitionsStatsResult), its parts held with the request in CACHE
        (metastore.hms.pieces), read whole without one: the same operation as the call,
        with its errors."""
        encoder = self.answers.encoder

        def answer(s: Session) -> bytes:
            target = _target(request, with_partitions=True)
            if cache is None:
                return pieces.whole(s, target, encoder)
            return pieces.answer(s, target, cache, variant, encoder)

        return self.operations.run(pieces.CALL, answer, write=False)

    @call(write=False)
    def get_aggr_stats_for(self, s: Session, request: t.PartitionsStatsRequest) -> t.AggrStats:
        merged, found = reads.aggregate_statistics(
            s,
            _target(request, with_partitions=True),
            merge_histograms=self.settings.fetch_histogram,
        )
        return t.AggrStats(
            colStats=[self.answers.stats_obj(as_row(row)) for row in merged], partsFound=found
        )

    def aggr_stats_encoded(
        self, request: t.PartitionsStatsRequest, cache: AnswerCache, variant: str
    ) -> bytes:
        """The answer of get_aggr_stats_for to REQUEST, encoded (the result's AggrStats),
        its runs of partitions held with the request in CACHE (metastore.hms.aggr_pieces):
        the same operation as the call, with its errors."""
        return self.operations.run(
            aggr_pieces.CALL,
            lambda s: aggr_pieces.answer(
                s,
                _target(request, with_partitions=True),
                cache,
                variant,
                self.answers.stats_obj,
                self.settings.fetch_histogram,
            ),
            write=False,
        )

    def answer_since(
        self,
        name: str,
        table: TableName,
        request: t.PartitionsStatsRequest,
        cache: AnswerCache,
        variant: str,
    ) -> held.Read | None:
        """The versions of TABLE (REQUEST's, as the cache names it) and the answer of call
        NAME (get_partitions_statistics_req or get_aggr_stats_for) to REQUEST rebuilt from
        what CACHE keeps of its partitions for VARIANT and the rows that changed since, in
        one statement (metastore.hms.held.changes): None when nothing is kept of REQUEST, no
        answer when it cannot be rebuilt. Not an operation: the processor has checked the
        caller's right, and falls back to the call itself, with its errors, on None or any
        failure here."""
        target = _target(request, with_partitions=True)
        if name == pieces.CALL:
            return pieces.since_answer(self.tx, table, target, cache, variant, self.answers.encoder)
        return aggr_pieces.since_answer(
            self.tx,
            table,
            target,
            cache,
            variant,
            self.answers.stats_obj,
            self.settings.fetch_histogram,
        )
