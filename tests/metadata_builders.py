"""Building the Thrift structs of metadata calls, and looking at the rows a server keeps
for them (to check that drops remove everything)."""

from __future__ import annotations

import atexit
import dataclasses
import shutil
import tempfile
from typing import Any

import sqlalchemy as sa

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.store import models as m

Client = ThriftHiveMetastore.Client

# The folder test databases live in: the server creates (and on drops deletes) the folders of
# databases, tables and partitions, as HMS does.
WAREHOUSE = tempfile.mkdtemp(prefix="colstats-tests-")
atexit.register(shutil.rmtree, WAREHOUSE, True)

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


# -- building Thrift structs ------------------------------------------------------------------


def fields(*specs: tuple[str, str] | tuple[str, str, str | None]) -> list[t.FieldSchema]:
    """FieldSchemas from (name, type) or (name, type, comment) tuples."""
    return [
        t.FieldSchema(*spec) if len(spec) == 3 else t.FieldSchema(*spec, None) for spec in specs
    ]


EVERY_TYPE = fields(
    ("b", "boolean"),
    ("i", "bigint"),
    ("f", "double"),
    ("s", "string"),
    ("bin", "binary"),
    ("dec", "decimal(10,2)"),
    ("d", "date"),
    ("ts", "timestamp"),
)
"""A column of each kind of statistics Hive keeps."""


def database(name: str, **kwargs: Any) -> t.Database:
    kwargs.setdefault("locationUri", f"file:{WAREHOUSE}/{name.lower()}.db")
    kwargs.setdefault("parameters", {})
    return t.Database(name=name, **kwargs)


def storage(
    cols: list[t.FieldSchema] | None = None, location: str | None = None, **kwargs: Any
) -> t.StorageDescriptor:
    kwargs.setdefault("inputFormat", TEXT_INPUT)
    kwargs.setdefault("outputFormat", TEXT_OUTPUT)
    kwargs.setdefault("serdeInfo", t.SerDeInfo("serde", LAZY_SERDE, {"field.delim": ","}))
    kwargs.setdefault("bucketCols", [])
    kwargs.setdefault("sortCols", [])
    kwargs.setdefault("parameters", {})
    kwargs.setdefault("compressed", False)
    kwargs.setdefault("numBuckets", -1)
    return t.StorageDescriptor(
        cols=cols if cols is not None else fields(("id", "bigint"), ("name", "string")),
        location=location,
        **kwargs,
    )


def table(
    db: str,
    name: str = "t",
    *,
    cols: list[t.FieldSchema] | None = None,
    keys: list[t.FieldSchema] | None = None,
    sd: t.StorageDescriptor | None = None,
    **kwargs: Any,
) -> t.Table:
    kwargs.setdefault("parameters", {})
    kwargs.setdefault("tableType", "MANAGED_TABLE")
    kwargs.setdefault("owner", "hive")
    return t.Table(
        tableName=name,
        dbName=db,
        sd=sd or storage(cols, f"file:{WAREHOUSE}/{db.lower()}.db/{name.lower()}"),
        partitionKeys=keys if keys is not None else [],
        **kwargs,
    )


def partition(
    db: str, tbl: str, values: list[str], sd: t.StorageDescriptor | None = None, **kwargs: Any
) -> t.Partition:
    kwargs.setdefault("parameters", {})
    return t.Partition(values=values, dbName=db, tableName=tbl, sd=sd, **kwargs)


def long_stats(column: str, low: int, high: int) -> t.ColumnStatisticsObj:
    data = t.LongColumnStatsData(lowValue=low, highValue=high, numNulls=0, numDVs=high - low + 1)
    return t.ColumnStatisticsObj(column, "bigint", t.ColumnStatisticsData(longStats=data))


def string_stats(column: str) -> t.ColumnStatisticsObj:
    data = t.StringColumnStatsData(maxColLen=10, avgColLen=4.5, numNulls=1, numDVs=3)
    return t.ColumnStatisticsObj(column, "string", t.ColumnStatisticsData(stringStats=data))


def column_stats(
    db: str, tbl: str, objs: list[t.ColumnStatisticsObj], part_name: str | None = None
) -> t.ColumnStatistics:
    desc = t.ColumnStatisticsDesc(
        isTblLevel=part_name is None, dbName=db, tableName=tbl, partName=part_name
    )
    return t.ColumnStatistics(statsDesc=desc, statsObj=objs)


def add_stats(client: Client, db: str, tbl: str, part_names: list[str]) -> None:
    """Statistics for both columns of TBL and of each partition in PART_NAMES."""
    objs = [long_stats("id", 1, 10), string_stats("name")]
    assert client.update_table_column_statistics(column_stats(db, tbl, objs))
    for name in part_names:
        assert client.update_partition_column_statistics(column_stats(db, tbl, objs, name))


def make_partitioned(
    client: Client, db: str, tbl: str = "t", values: list[str] | None = None
) -> None:
    """Database DB (if missing), table TBL partitioned by ds, and partitions of VALUES."""
    if db not in client.get_databases(db):
        client.create_database(database(db))
    client.create_table(table(db, tbl, keys=fields(("ds", "string"))))
    if values:
        assert client.add_partitions([partition(db, tbl, [v]) for v in values]) == len(values)


# -- looking at the server's rows -------------------------------------------------------------


@dataclasses.dataclass
class Owned:
    """Ids of the rows that make up databases, tables or partitions."""

    db_ids: list[int] = dataclasses.field(default_factory=list)
    tbl_ids: list[int] = dataclasses.field(default_factory=list)
    part_ids: list[int] = dataclasses.field(default_factory=list)
    sd_ids: list[int] = dataclasses.field(default_factory=list)
    serde_ids: list[int] = dataclasses.field(default_factory=list)
    cd_ids: list[int] = dataclasses.field(default_factory=list)


def _storage_ids(conn: sa.Connection, owned: Owned) -> None:
    for cd_id, serde_id in conn.execute(
        sa.select(m.StorageDescriptor.CD_ID, m.StorageDescriptor.SERDE_ID).where(
            m.StorageDescriptor.SD_ID.in_(owned.sd_ids)
        )
    ):
        if cd_id is not None and cd_id not in owned.cd_ids:
            owned.cd_ids.append(cd_id)
        if serde_id is not None:
            owned.serde_ids.append(serde_id)


def database_id(engine: sa.Engine, db: str) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.select(m.Database.DB_ID).where(m.Database.NAME == db)).scalar_one()


def table_rows(engine: sa.Engine, db: str, tables: list[str]) -> Owned:
    """The ids of TABLES of DB, of their partitions and of all their storage."""
    owned = Owned()
    with engine.connect() as conn:
        for tbl_id, sd_id in conn.execute(
            sa.select(m.Table.TBL_ID, m.Table.SD_ID)
            .join(m.Database, m.Database.DB_ID == m.Table.DB_ID)
            .where(m.Database.NAME == db, m.Table.TBL_NAME.in_(tables))
        ):
            owned.tbl_ids.append(tbl_id)
            if sd_id is not None:
                owned.sd_ids.append(sd_id)
        for part_id, sd_id in conn.execute(
            sa.select(m.Partition.PART_ID, m.Partition.SD_ID).where(
                m.Partition.TBL_ID.in_(owned.tbl_ids)
            )
        ):
            owned.part_ids.append(part_id)
            if sd_id is not None:
                owned.sd_ids.append(sd_id)
        _storage_ids(conn, owned)
    assert len(owned.tbl_ids) == len(tables)
    return owned


def partition_rows(engine: sa.Engine, db: str, tbl: str, part_name: str) -> Owned:
    """The ids of one partition and of its storage descriptor; not the shared column list."""
    owned = Owned()
    tbl_id = table_rows(engine, db, [tbl]).tbl_ids[0]
    with engine.connect() as conn:
        part_id, sd_id = conn.execute(
            sa.select(m.Partition.PART_ID, m.Partition.SD_ID).where(
                m.Partition.TBL_ID == tbl_id, m.Partition.PART_NAME == part_name
            )
        ).one()
        owned.part_ids.append(part_id)
        if sd_id is not None:
            owned.sd_ids.append(sd_id)
        _storage_ids(conn, owned)
    owned.cd_ids.clear()
    return owned


# Which rows belong to which ids: (model, owner column, Owned field).
_CHILDREN: list[tuple[type[Any], str, str]] = [
    (m.Database, "DB_ID", "db_ids"),
    (m.DatabaseParam, "DB_ID", "db_ids"),
    (m.Table, "DB_ID", "db_ids"),
    (m.Table, "TBL_ID", "tbl_ids"),
    (m.TableParam, "TBL_ID", "tbl_ids"),
    (m.PartitionKey, "TBL_ID", "tbl_ids"),
    (m.TableColumnStats, "TBL_ID", "tbl_ids"),
    (m.Partition, "TBL_ID", "tbl_ids"),
    (m.Partition, "PART_ID", "part_ids"),
    (m.PartitionKeyValue, "PART_ID", "part_ids"),
    (m.PartitionParam, "PART_ID", "part_ids"),
    (m.PartitionColumnStats, "PART_ID", "part_ids"),
    (m.StorageDescriptor, "SD_ID", "sd_ids"),
    (m.StorageDescriptorParam, "SD_ID", "sd_ids"),
    (m.BucketingColumn, "SD_ID", "sd_ids"),
    (m.SortColumn, "SD_ID", "sd_ids"),
    (m.SerDe, "SERDE_ID", "serde_ids"),
    (m.SerDeParam, "SERDE_ID", "serde_ids"),
    (m.ColumnDescriptor, "CD_ID", "cd_ids"),
    (m.Column, "CD_ID", "cd_ids"),
]


def remaining(engine: sa.Engine, owned: Owned) -> dict[str, int]:
    """How many rows of each table still belong to OWNED (tables with none are left out)."""
    counts: dict[str, int] = {}
    with engine.connect() as conn:
        for model, column, attr in _CHILDREN:
            ids = getattr(owned, attr)
            if not ids:
                continue
            n = conn.execute(
                sa.select(sa.func.count()).select_from(model).where(getattr(model, column).in_(ids))
            ).scalar_one()
            if n:
                key = f"{model.__tablename__}.{column}"
                counts[key] = counts.get(key, 0) + n
    return counts


def row_counts(engine: sa.Engine) -> dict[str, int]:
    """The number of rows in every table that tables and partitions use."""
    with engine.connect() as conn:
        return {
            model.__tablename__: conn.execute(
                sa.select(sa.func.count()).select_from(model)
            ).scalar_one()
            for model, _, _ in _CHILDREN
        }


def stats_rows(engine: sa.Engine, owned: Owned) -> tuple[int, int]:
    """(TAB_COL_STATS rows, PART_COL_STATS rows) of OWNED."""
    with engine.connect() as conn:
        tab = conn.execute(
            sa.select(sa.func.count())
            .select_from(m.TableColumnStats)
            .where(m.TableColumnStats.TBL_ID.in_(owned.tbl_ids))
        ).scalar_one()
        part = conn.execute(
            sa.select(sa.func.count())
            .select_from(m.PartitionColumnStats)
            .where(m.PartitionColumnStats.PART_ID.in_(owned.part_ids))
        ).scalar_one()
    return tab, part
