"""Every answer of the Thrift door's read calls is built here: Table structs (with the
spark.sql.statistics.* parameters Spark's optimizer reads, derived from the Hive-format
statistics), Partition structs, and ColumnStatisticsObj of stored statistics rows.

One place, so that what changes an answer (the settings that return sketches, the Spark
derivation) is in one module, and a cache of answers has one owner.

Partition structs come from the plain rows of metastore.store.partition_rows; the structs of
one answer share what is identical (one FieldSchema list per column list, one SerDeInfo for
serdes that differ only by id and have no parameters, one empty SkewedInfo). They are built
for the wire; no caller changes them in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import spark_stats
from metastore.config import Settings
from metastore.hms import partition_pieces
from metastore.hms.cache import AnswerCache
from metastore.hms.stats_wire import StatsEncoder
from metastore.hms.structs.statistics import stats_obj
from metastore.hms.structs.tables import table_struct
from metastore.stats import accurate, queries
from metastore.stats.rows import StatsRow, as_row
from metastore.store import lookup
from metastore.store import models as m
from metastore.store import partition_rows as pr
from metastore.vocabulary import DEFAULT_ENGINE


class Answers:
    """The answers of the read calls, for one server's settings."""

    def __init__(self, settings: Settings) -> None:
        self.fetch_bitvector = settings.fetch_bitvector
        self.fetch_histogram = settings.fetch_histogram
        self.encoder = StatsEncoder(
            fetch_bitvector=settings.fetch_bitvector, fetch_histogram=settings.fetch_histogram
        )
        """Statistics answers encoded from their rows (get_table_statistics_req and
        get_partitions_statistics_req)."""

    # -- statistics -----------------------------------------------------------------------

    def stats_obj(self, row: Sequence[Any]) -> t.ColumnStatisticsObj:
        """The ColumnStatisticsObj of a result row (metastore.stats.rows), with sketches as
        the settings say."""
        return stats_obj(
            row, fetch_bitvector=self.fetch_bitvector, fetch_histogram=self.fetch_histogram
        )

    def column_statistics(self, desc: t.ColumnStatisticsDesc, row: StatsRow) -> t.ColumnStatistics:
        """The ColumnStatistics of one column's stored ROW, described by DESC."""
        desc.lastAnalyzed = row["LAST_ANALYZED"]
        return t.ColumnStatistics(
            statsDesc=desc,
            statsObj=[self.stats_obj(as_row(row))],
            engine=row["ENGINE"],
        )

    # -- tables ---------------------------------------------------------------------------

    def tables(
        self,
        s: Session,
        db: m.Database | pr.StoredDatabase,
        tables: Sequence[m.Table | pr.StoredTable],
        storage: dict[int, Any] | None = None,
        stats: dict[int, list[StatsRow]] | None = None,
    ) -> list[t.Table]:
        """The Table structs of TABLES (of database DB), in three statements (four with
        statistics; one fewer for each of their STORAGE rows, by SD_ID, and their STATS
        rows of the default engine, by TBL_ID, given), with the spark.sql.statistics.*
        parameters Spark's optimizer reads derived from their Hive-format statistics
        (metastore.spark_stats)."""
        ids = [table.TBL_ID for table in tables]
        if storage is None:
            storage = pr.storage_rows(s, [table.SD_ID for table in tables if table.SD_ID])
        below = pr.Below.read(s, tables=ids, storage=storage.values())
        build_sd = _storage_builder(below)
        params = below.table_params
        described = [
            i for i in ids if accurate.accurate_columns(params.get(i, {}).get(accurate.KEY))
        ]
        given = stats or {}
        rows = {i: given[i] for i in described if i in given}
        for owner, row in queries.stats_rows(
            s, queries.TABLE_LEVEL, [i for i in described if i not in given], None, DEFAULT_ENGINE
        ):
            rows.setdefault(owner, []).append(row)
        structs = []
        for table in tables:
            sd_row = storage.get(table.SD_ID) if table.SD_ID else None
            sd = build_sd(sd_row) if sd_row is not None else None
            table_params_ = params.get(table.TBL_ID, {})
            spark_names = spark_stats.spark_column_names(table_params_)
            named = [
                (spark_names.get(c.name, c.name), c.type or "") for c in (sd.cols if sd else [])
            ]
            served = spark_stats.with_spark_statistics(
                table_params_, named, rows.get(table.TBL_ID, [])
            )
            keys = [
                t.FieldSchema(name=n, type=ty, comment=c)
                for n, ty, c in below.keys.get(table.TBL_ID, [])
            ]
            structs.append(table_struct(table, db, sd, keys, served))
        return structs

    def table(
        self, s: Session, db: m.Database | pr.StoredDatabase, table: m.Table | pr.StoredTable
    ) -> t.Table:
        return self.tables(s, db, [table])[0]

    def table_named(
        self, s: Session, db_arg: str | None, table_name: str | None, catalog: str | None = None
    ) -> t.Table:
        """The Table struct of table TABLE_NAME of database DB_ARG (as lookup.table names
        them): the table, its database, its storage descriptor and its statistics in one
        statement, then the rows below them."""
        found = lookup.stored_table(s, db_arg, table_name, catalog, stats_engine=DEFAULT_ENGINE)
        table = found.table
        rows = {table.SD_ID: found.storage} if found.storage is not None and table.SD_ID else {}
        stats = None
        if found.stats is not None:
            stats = {table.TBL_ID: queries.table_stats_rows(found.stats)}
        return self.tables(s, found.database, [table], rows, stats)[0]

    # -- partitions -----------------------------------------------------------------------

    def partitions(
        self,
        s: Session,
        db: m.Database | pr.StoredDatabase,
        table: m.Table | pr.StoredTable,
        selection: pr.Selection,
        limit: int | None = None,
    ) -> list[t.Partition]:
        """The Partition structs of the partitions of TABLE (of DB) that SELECTION (from
        pr.of_table) selects, ordered by PART_NAME in byte order (as HMS), at
        most LIMIT of them (None or negative: all)."""
        return self.partitions_of_rows(s, db, table, pr.partition_rows(s, selection, limit))

    def partitions_encoded(
        self,
        s: Session,
        db: m.Database | pr.StoredDatabase,
        table: m.Table | pr.StoredTable,
        selection: pr.Selection | None,
        limit: int | None,
        cache: AnswerCache,
    ) -> bytes:
        """The encoded list of the Partition structs `partitions` answers for SELECTION
        (None: no partition), from the encoded structs CACHE keeps of partitions that did
        not change (metastore.hms.partition_pieces)."""
        if selection is None:
            return partition_pieces.empty()
        rows = pr.partition_rows(s, selection, limit, with_versions=True)

        def build(changed: Sequence[Any]) -> tuple[list[t.Partition], pr.Below]:
            below = pr.Below.of_partitions(s, changed, version_of=table.TBL_ID)
            return self._partitions_below(db, table, changed, below), below

        return partition_pieces.encoded(
            rows, (db.CTLG_NAME, db.NAME, table.TBL_NAME), table.TBL_ID, cache, build
        )

    def partitions_of_rows(
        self,
        s: Session,
        db: m.Database | pr.StoredDatabase,
        table: m.Table | pr.StoredTable,
        rows: Sequence[Any],
        below: pr.Below | None = None,
    ) -> list[t.Partition]:
        """The Partition structs of the partitions of TABLE (of DB) whose rows (as
        pr.partition_rows gives them) are ROWS, in their order, with the rows BELOW them
        (read when not given)."""
        if not rows:
            return []
        if below is None:
            below = pr.Below.of_partitions(s, rows)
        return self._partitions_below(db, table, rows, below)

    @staticmethod
    def _partitions_below(
        db: m.Database | pr.StoredDatabase,
        table: m.Table | pr.StoredTable,
        rows: Sequence[Any],
        below: pr.Below,
    ) -> list[t.Partition]:
        """The Partition structs of the partitions of ROWS, with the rows BELOW them."""
        build_sd = _storage_builder(below)
        db_name, table_name, catalog = db.NAME, table.TBL_NAME, db.CTLG_NAME
        no_params: dict[str, str] = {}
        return [
            t.Partition(
                values=below.values.get(row[pr.PART_ID], []),
                dbName=db_name,
                tableName=table_name,
                createTime=row[pr.CREATE_TIME],
                lastAccessTime=row[pr.LAST_ACCESS_TIME],
                sd=build_sd(row) if row[pr.SD_ID] is not None else None,
                # Spark reads the size and row count of partitions, and column statistics
                # of tables only: partitions get the basic keys (no rows, no histograms).
                parameters=spark_stats.with_spark_statistics(
                    below.part_params.get(row[pr.PART_ID], no_params), [], []
                ),
                catName=catalog,
            )
            for row in rows
        ]

    def partition(
        self,
        s: Session,
        db: m.Database | pr.StoredDatabase,
        table: m.Table | pr.StoredTable,
        part_name: str | None,
        keys: list[str] | None = None,
    ) -> t.Partition:
        """The Partition struct of partition PART_NAME of TABLE (NotFound when it has none
        of that name)."""
        stored_name = lookup.existing_name(s, table, part_name, keys)
        selection = pr.of_table(table.TBL_ID).where(pr.PARTITIONS.c.PART_NAME == stored_name)
        found = self.partitions(s, db, table, selection)
        if not found:
            raise lookup.missing(f"partition {stored_name} of table {table.TBL_NAME}")
        return found[0]

    def partitions_by_ids(
        self,
        s: Session,
        db: m.Database | pr.StoredDatabase,
        table: m.Table | pr.StoredTable,
        part_ids: Sequence[int],
    ) -> list[t.Partition]:
        """The Partition structs of the partitions PART_IDS (a change has just written them or
        is about to delete them), in name order."""
        if not part_ids:
            return []
        selection = pr.of_table(table.TBL_ID).where(pr.PARTITIONS.c.PART_ID.in_(part_ids))
        return self.partitions(s, db, table, selection)


def _storage_builder(below: pr.Below) -> Callable[[Any], t.StorageDescriptor]:
    """A function from a row of partition_rows to its StorageDescriptor."""
    serde_params, sd_params = below.serde_params, below.sd_params
    buckets, skewed = below.buckets, below.skewed
    columns = {
        cd: [t.FieldSchema(name=n, type=ty, comment=c) for n, ty, c in cols]
        for cd, cols in below.columns.items()
    }
    sorts = {sd: [t.Order(col=c, order=o) for c, o in cols] for sd, cols in below.sorts.items()}
    no_columns: list[t.FieldSchema] = []
    no_skew = t.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
    # Serdes without parameters, by their columns: one SerDeInfo for identical ones.
    plain_serdes: dict[tuple[Any, ...], t.SerDeInfo] = {}

    def serde_info(row: Any) -> t.SerDeInfo:
        params = serde_params.get(row[pr.SERDE_ID])
        key = tuple(row[pr.SERDE_NAME : pr.SERDE_TYPE + 1])
        if params is None and key in plain_serdes:
            return plain_serdes[key]
        info = t.SerDeInfo(
            name=row[pr.SERDE_NAME],
            serializationLib=row[pr.SLIB],
            parameters=params if params is not None else {},
            description=row[pr.SERDE_DESCRIPTION],
            serializerClass=row[pr.SERIALIZER_CLASS],
            deserializerClass=row[pr.DESERIALIZER_CLASS],
            serdeType=row[pr.SERDE_TYPE],
        )
        if params is None:
            plain_serdes[key] = info
        return info

    def build(row: Any) -> t.StorageDescriptor:
        sd_id = row[pr.SD_ID]
        skew = skewed.get(sd_id)
        return t.StorageDescriptor(
            cols=columns.get(row[pr.CD_ID], no_columns) if row[pr.CD_ID] is not None else [],
            location=row[pr.LOCATION],
            inputFormat=row[pr.INPUT_FORMAT],
            outputFormat=row[pr.OUTPUT_FORMAT],
            compressed=_flag(row[pr.IS_COMPRESSED]),
            numBuckets=row[pr.NUM_BUCKETS],
            serdeInfo=serde_info(row) if row[pr.SERDE_ID] is not None else None,
            bucketCols=buckets.get(sd_id, []),
            sortCols=sorts.get(sd_id, []),
            parameters=sd_params.get(sd_id, {}),
            skewedInfo=t.SkewedInfo(
                skewedColNames=list(skew.names),
                skewedColValues=[list(v) for v in skew.values],
                skewedColValueLocationMaps={
                    tuple(value): location for value, location in skew.locations
                },
            )
            if skew is not None
            else no_skew,
            storedAsSubDirectories=_flag(row[pr.IS_STOREDASSUBDIRECTORIES]),
        )

    return build


def _flag(value: Any) -> bool | None:
    """A boolean column of a row read on the driver (SQLite's 0 and 1), None kept."""
    return None if value is None else bool(value)
