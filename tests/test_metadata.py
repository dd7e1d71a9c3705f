"""The metadata calls (databases, tables, partitions) through the generated client.

Every test runs on SQLite and on PostgreSQL. Where a call must remove rows (drops), the rows
are looked up directly in the server's database before and after.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import connect
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore import models as m

Client = ThriftHiveMetastore.Client

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


# -- building Thrift structs ------------------------------------------------------------------


def fields(*specs: tuple[str, str] | tuple[str, str, str | None]) -> list[t.FieldSchema]:
    """FieldSchemas from (name, type) or (name, type, comment) tuples."""
    return [
        t.FieldSchema(*spec) if len(spec) == 3 else t.FieldSchema(*spec, None) for spec in specs
    ]


def database(name: str, **kwargs: Any) -> t.Database:
    kwargs.setdefault("locationUri", f"file:/warehouse/{name.lower()}.db")
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
        sd=sd or storage(cols, f"file:/warehouse/{db.lower()}.db/{name.lower()}"),
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


@pytest.fixture(scope="module")
def engine(server: Any) -> Iterator[sa.Engine]:
    """An engine on the server's own database, to check which rows a call left behind."""
    eng = sa.create_engine(server.url)
    yield eng
    eng.dispose()


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
            owned.sd_ids.append(sd_id)
        for part_id, sd_id in conn.execute(
            sa.select(m.Partition.PART_ID, m.Partition.SD_ID).where(
                m.Partition.TBL_ID.in_(owned.tbl_ids)
            )
        ):
            owned.part_ids.append(part_id)
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


# -- databases --------------------------------------------------------------------------------


def test_database_round_trip(client: Client, db_name: str) -> None:
    before = int(time.time())
    client.create_database(
        t.Database(
            name=db_name,
            description="sales data",
            locationUri=f"s3a://bucket/{db_name}.db",
            parameters={"owner.team": "analytics", "empty": "", "unicode": "é€😀"},
            ownerName="etl",
            ownerType=t.PrincipalType.ROLE,
            catalogName="hive",
        )
    )
    got = client.get_database(db_name)
    assert got.name == db_name
    assert got.description == "sales data"
    assert got.locationUri == f"s3a://bucket/{db_name}.db"
    assert got.parameters == {"owner.team": "analytics", "empty": "", "unicode": "é€😀"}
    assert got.ownerName == "etl"
    assert got.ownerType == t.PrincipalType.ROLE
    assert got.catalogName == "hive"
    assert got.createTime is not None and got.createTime >= before - 1


def test_database_without_optional_fields(client: Client, db_name: str) -> None:
    client.create_database(t.Database(name=db_name, locationUri="file:/x"))
    got = client.get_database(db_name)
    assert got.name == db_name
    assert got.parameters == {}
    assert got.catalogName == "hive"
    assert got.ownerName is None


def test_database_names_are_lower_cased(client: Client, db_name: str) -> None:
    client.create_database(database(db_name.upper(), catalogName="HIVE"))
    for name in (db_name, db_name.upper(), db_name.capitalize()):
        got = client.get_database(name)
        assert got.name == db_name
        assert got.catalogName == "hive"
    assert db_name in client.get_all_databases()
    assert db_name.upper() not in client.get_all_databases()


@pytest.mark.parametrize("prefix", ["@hive#", "@HIVE#"])
def test_get_database_with_catalog_prefix(client: Client, db_name: str, prefix: str) -> None:
    client.create_database(database(db_name))
    assert client.get_database(f"{prefix}{db_name}").name == db_name
    assert client.get_database(f"{prefix}{db_name.upper()}").name == db_name


def test_catalog_prefix_of_another_catalog_or_malformed(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.NoSuchObjectException):
        client.get_database(f"@spark#{db_name}")
    with pytest.raises(t.MetaException, match="#"):
        client.get_database(f"@hive{db_name}")


def test_create_database_twice(client: Client, db_name: str) -> None:
    client.create_database(database(db_name, description="first"))
    for name in (db_name, db_name.upper()):
        with pytest.raises(t.AlreadyExistsException, match=db_name):
            client.create_database(database(name, description="second"))
    assert client.get_database(db_name).description == "first"


@pytest.mark.parametrize("name", ["", "a-b", "a b", "a.b", "d\u00e9j\u00e0", "db\n", "db;", "*"])
def test_create_database_with_invalid_name(client: Client, name: str) -> None:
    with pytest.raises(t.InvalidObjectException):
        client.create_database(database(name))
    assert name.lower() not in client.get_all_databases()


def test_create_database_without_name(client: Client) -> None:
    with pytest.raises(t.InvalidObjectException):
        client.create_database(t.Database(locationUri="file:/x", parameters={}))


def test_get_unknown_database(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.get_database(db_name)


def test_get_databases_with_patterns(client: Client, db_name: str) -> None:
    created = [f"{db_name}_alpha", f"{db_name}_beta", f"{db_name}_gamma"]
    for name in created:
        client.create_database(database(name))
    everything = client.get_databases("*")
    assert set(created) <= set(everything)
    assert everything == sorted(everything)
    assert client.get_databases(f"{db_name}_a*|{db_name}_b*") == created[:2]
    assert client.get_databases(f"{db_name}_a*|{db_name}_g*") == [created[0], created[2]]
    assert client.get_databases(f"{db_name.upper()}_BETA") == [created[1]]
    assert client.get_databases(f"@hive#{db_name}_*") == created
    assert client.get_databases(f"{db_name}_delta*") == []
    all_dbs = client.get_all_databases()
    assert set(created) <= set(all_dbs)
    assert "default" not in created


def test_drop_empty_database(client: Client, db_name: str, engine: sa.Engine) -> None:
    client.create_database(database(db_name, parameters={"k": "v", "k2": "v2"}))
    owned = Owned(db_ids=[database_id(engine, db_name)])
    assert remaining(engine, owned) == {"DBS.DB_ID": 1, "DATABASE_PARAMS.DB_ID": 2}
    client.drop_database(db_name, True, False)
    assert remaining(engine, owned) == {}
    with pytest.raises(t.NoSuchObjectException):
        client.get_database(db_name)
    assert db_name not in client.get_all_databases()
    client.create_database(database(db_name))
    assert client.get_database(db_name).parameters == {}


def test_drop_database_by_upper_case_and_prefixed_name(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.drop_database(f"@hive#{db_name.upper()}", False, False)
    assert db_name not in client.get_all_databases()


def test_drop_non_empty_database_without_cascade(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["1"])
    with pytest.raises(t.InvalidOperationException, match=db_name):
        client.drop_database(db_name, True, False)
    assert client.get_all_tables(db_name) == ["t"]
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1"]


def test_drop_database_cascade_removes_tables_partitions_and_statistics(
    client: Client, db_name: str, engine: sa.Engine
) -> None:
    make_partitioned(client, db_name, "t1", ["1", "2"])
    make_partitioned(client, db_name, "t2", ["x"])
    client.create_table(table(db_name, "plain"))
    add_stats(client, db_name, "t1", ["ds=1", "ds=2"])
    add_stats(client, db_name, "t2", ["ds=x"])
    add_stats(client, db_name, "plain", [])
    other = f"{db_name}_other"
    make_partitioned(client, other, "t1", ["1"])
    add_stats(client, other, "t1", ["ds=1"])
    owned = table_rows(engine, db_name, ["t1", "t2", "plain"])
    owned.db_ids.append(database_id(engine, db_name))
    kept = table_rows(engine, other, ["t1"])
    assert stats_rows(engine, owned) == (6, 6)

    client.drop_database(db_name, True, True)

    assert remaining(engine, owned) == {}
    with pytest.raises(t.NoSuchObjectException):
        client.get_database(db_name)
    assert stats_rows(engine, kept) == (2, 2)
    assert client.get_partition_names(other, "t1", -1) == ["ds=1"]
    client.create_database(database(db_name))
    assert client.get_all_tables(db_name) == []


def test_drop_unknown_database(client: Client, db_name: str) -> None:
    for cascade in (False, True):
        with pytest.raises(t.NoSuchObjectException, match=db_name):
            client.drop_database(db_name, False, cascade)


# -- tables -----------------------------------------------------------------------------------


def full_table(db: str) -> t.Table:
    """A table that sets every field colstats keeps."""
    sd = t.StorageDescriptor(
        cols=fields(
            ("id", "bigint", "primary key"),
            ("name", "varchar(20)", "full name"),
            ("amount", "decimal(10,2)"),
            ("tags", "array<string>", ""),
        ),
        location=f"hdfs://nn:8020/warehouse/{db}.db/sales",
        inputFormat="org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        compressed=True,
        numBuckets=8,
        serdeInfo=t.SerDeInfo(
            name="orc",
            serializationLib="org.apache.hadoop.hive.ql.io.orc.OrcSerde",
            parameters={"serialization.format": "1", "field.delim": "\t"},
        ),
        bucketCols=["id", "name"],
        sortCols=[t.Order("id", 1), t.Order("name", 0)],
        parameters={"sd.key": "sd value", "orc.compress": "ZLIB"},
    )
    return t.Table(
        tableName="sales",
        dbName=db,
        owner="alice",
        createTime=1_700_000_000,
        lastAccessTime=1_700_000_100,
        retention=7,
        sd=sd,
        partitionKeys=fields(("ds", "string", "day"), ("region", "varchar(8)")),
        parameters={"EXTERNAL": "TRUE", "comment": "sales by day", "empty": ""},
        tableType="EXTERNAL_TABLE",
        ownerType=t.PrincipalType.GROUP,
    )


@pytest.mark.parametrize("call", ["create_table", "create_table_with_environment_context"])
def test_table_round_trip(client: Client, db_name: str, call: str) -> None:
    client.create_database(database(db_name))
    sent = full_table(db_name)
    before = int(time.time())
    if call == "create_table":
        client.create_table(sent)
    else:
        client.create_table_with_environment_context(
            sent, t.EnvironmentContext({"DO_NOT_UPDATE_STATS": "true"})
        )
    got = client.get_table(db_name, "sales")

    assert got.tableName == "sales"
    assert got.dbName == db_name
    assert got.catName == "hive"
    assert got.owner == "alice"
    assert got.ownerType == t.PrincipalType.GROUP
    assert got.createTime == 1_700_000_000
    assert got.lastAccessTime == 1_700_000_100
    assert got.retention == 7
    assert got.tableType == "EXTERNAL_TABLE"
    assert got.partitionKeys == sent.partitionKeys
    ddl_time = got.parameters.pop("transient_lastDdlTime")
    assert got.parameters == sent.parameters
    assert ddl_time.isdigit()
    assert int(ddl_time) == 1_700_000_000 or int(ddl_time) >= before - 1

    sd = got.sd
    assert sd.cols == sent.sd.cols
    assert sd.location == sent.sd.location
    assert sd.inputFormat == sent.sd.inputFormat
    assert sd.outputFormat == sent.sd.outputFormat
    assert sd.compressed is True
    assert sd.numBuckets == 8
    assert sd.serdeInfo.name == "orc"
    assert sd.serdeInfo.serializationLib == sent.sd.serdeInfo.serializationLib
    assert sd.serdeInfo.parameters == sent.sd.serdeInfo.parameters
    assert sd.bucketCols == ["id", "name"]
    assert sd.sortCols == [t.Order("id", 1), t.Order("name", 0)]
    assert sd.parameters == sent.sd.parameters
    assert not sd.skewedInfo or not (
        sd.skewedInfo.skewedColNames
        or sd.skewedInfo.skewedColValues
        or sd.skewedInfo.skewedColValueLocationMaps
    )
    assert not sd.storedAsSubDirectories


def test_table_defaults(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    before = int(time.time())
    client.create_table(
        t.Table(tableName="t", dbName=db_name, sd=storage(location="file:/t"), partitionKeys=[])
    )
    got = client.get_table(db_name, "t")
    assert got.tableType == "MANAGED_TABLE"
    assert got.createTime >= before - 1
    assert int(got.parameters["transient_lastDdlTime"]) >= before - 1
    assert got.partitionKeys == []
    assert got.sd.numBuckets == -1
    assert got.sd.compressed is False


def test_view_round_trip(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(
        table(
            db_name,
            "v",
            sd=storage(location=None),
            tableType="VIRTUAL_VIEW",
            viewOriginalText="select id from t",
            viewExpandedText=f"select `t`.`id` from `{db_name}`.`t`",
        )
    )
    got = client.get_table(db_name, "v")
    assert got.tableType == "VIRTUAL_VIEW"
    assert got.viewOriginalText == "select id from t"
    assert got.viewExpandedText == f"select `t`.`id` from `{db_name}`.`t`"
    assert got.sd.location is None


def test_table_column_and_table_names_are_lower_cased(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(
        table(
            db_name.upper(),
            "MyTable",
            cols=fields(("ID", "bigint"), ("Name", "string")),
            keys=fields(("DS", "string")),
        )
    )
    got = client.get_table(db_name.upper(), "MYTABLE")
    assert (got.dbName, got.tableName) == (db_name, "mytable")
    assert [c.name for c in got.sd.cols] == ["id", "name"]
    assert [k.name for k in got.partitionKeys] == ["ds"]
    assert client.get_table(f"@hive#{db_name}", "mytable").tableName == "mytable"
    assert client.get_all_tables(db_name) == ["mytable"]


def test_create_table_twice(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(table(db_name, "t", owner="first"))
    for name in ("t", "T"):
        with pytest.raises(t.AlreadyExistsException, match=f"{db_name}.t"):
            client.create_table(table(db_name, name, owner="second"))
    assert client.get_table(db_name, "t").owner == "first"


def test_create_table_in_unknown_database(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.create_table(table(db_name))
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.create_table_with_environment_context(table(db_name), None)


@pytest.mark.parametrize("name", ["", "a-b", "a b", "a.b", "t\u00e9", "t\n", "t;", "t/u"])
def test_create_table_with_invalid_name(client: Client, db_name: str, name: str) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.InvalidObjectException):
        client.create_table(table(db_name, name))
    assert client.get_all_tables(db_name) == []


@pytest.mark.parametrize(
    ("cols", "keys"),
    [
        (fields(("a", "int"), ("a", "string")), []),
        (fields(("a", "int"), ("A", "int")), []),
        (fields(("a", "int")), fields(("a", "string"))),
        (fields(("a", "int")), fields(("A", "string"))),
        (fields(("a", "int")), fields(("p", "string"), ("P", "int"))),
        (fields(("a", "int"), ("", "int")), []),
        (fields(("a", "int"), ("b", "")), []),
        (fields(("a", "int")), fields(("p", ""))),
    ],
    ids=[
        "dup-column",
        "dup-column-case",
        "key-is-column",
        "key-is-column-case",
        "dup-key",
        "unnamed-column",
        "untyped-column",
        "untyped-key",
    ],
)
def test_create_table_with_invalid_columns(
    client: Client, db_name: str, cols: list[t.FieldSchema], keys: list[t.FieldSchema]
) -> None:
    client.create_database(database(db_name))
    with pytest.raises(t.InvalidObjectException):
        client.create_table(table(db_name, cols=cols, keys=keys))
    assert client.get_all_tables(db_name) == []


def test_create_skewed_table(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    skewed = t.SkewedInfo(
        skewedColNames=["id"], skewedColValues=[["1"]], skewedColValueLocationMaps={}
    )
    with pytest.raises(t.InvalidObjectException, match=r"(?i)skew"):
        client.create_table(table(db_name, sd=storage(location="file:/t", skewedInfo=skewed)))
    assert client.get_all_tables(db_name) == []
    empty = t.SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
    client.create_table(table(db_name, sd=storage(location="file:/t", skewedInfo=empty)))
    assert client.get_all_tables(db_name) == ["t"]


def test_get_unknown_table(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException, match=db_name):
        client.get_table(db_name, "t")
    client.create_database(database(db_name))
    with pytest.raises(t.NoSuchObjectException, match="nope"):
        client.get_table(db_name, "nope")


def test_get_tables_with_patterns(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    names = ["apples", "apricots", "bananas", "cherries"]
    for name in reversed(names):
        client.create_table(table(db_name, name))
    assert client.get_all_tables(db_name) == names
    assert client.get_tables(db_name, "*") == names
    assert client.get_tables(db_name, "ap*") == ["apples", "apricots"]
    assert client.get_tables(db_name, "AP*|b*") == ["apples", "apricots", "bananas"]
    assert client.get_tables(db_name, "cherries") == ["cherries"]
    assert client.get_tables(db_name, "z*") == []
    assert client.get_tables(f"@hive#{db_name.upper()}", "*s") == names
    other = f"{db_name}_empty"
    client.create_database(database(other))
    assert client.get_all_tables(other) == []


@pytest.mark.parametrize("call", ["drop_table", "drop_table_with_environment_context"])
def test_drop_table_removes_partitions_storage_and_statistics(
    client: Client, db_name: str, engine: sa.Engine, call: str
) -> None:
    make_partitioned(client, db_name, "t", ["1", "2"])
    make_partitioned(client, db_name, "kept", ["1"])
    add_stats(client, db_name, "t", ["ds=1", "ds=2"])
    add_stats(client, db_name, "kept", ["ds=1"])
    owned = table_rows(engine, db_name, ["t"])
    kept = table_rows(engine, db_name, ["kept"])
    assert stats_rows(engine, owned) == (2, 4)
    assert len(owned.sd_ids) == 3

    if call == "drop_table":
        client.drop_table(db_name, "T", True)
    else:
        client.drop_table_with_environment_context(
            f"@hive#{db_name}", "t", False, t.EnvironmentContext({"ifPurge": "TRUE"})
        )

    assert remaining(engine, owned) == {}
    assert client.get_all_tables(db_name) == ["kept"]
    with pytest.raises(t.NoSuchObjectException):
        client.get_table(db_name, "t")
    assert stats_rows(engine, kept) == (2, 2)
    assert client.get_partition_names(db_name, "kept", -1) == ["ds=1"]
    assert client.get_table(db_name, "kept").sd.cols == fields(("id", "bigint"), ("name", "string"))

    make_partitioned(client, db_name, "t", ["1"])
    with pytest.raises(t.NoSuchObjectException):
        client.get_table_column_statistics(db_name, "t", "id")
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_column_statistics(db_name, "t", "ds=1", "id")


def test_drop_unknown_table(client: Client, db_name: str) -> None:
    with pytest.raises(t.NoSuchObjectException):
        client.drop_table(db_name, "t", False)
    client.create_database(database(db_name))
    with pytest.raises(t.NoSuchObjectException, match=rf"{db_name}\.t\b"):
        client.drop_table(db_name, "t", False)
    with pytest.raises(t.NoSuchObjectException, match=rf"{db_name}\.t\b"):
        client.drop_table_with_environment_context(db_name, "t", False, None)


# -- partitions -------------------------------------------------------------------------------


def test_add_partition_returns_the_partition_as_stored(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    before = int(time.time())
    added = client.add_partition(
        partition(db_name.upper(), "T", ["2024-01-01"], parameters={"numRows": "10"})
    )
    assert added.values == ["2024-01-01"]
    assert (added.dbName, added.tableName) == (db_name, "t")
    assert added.createTime >= before - 1
    assert added.parameters["numRows"] == "10"
    assert int(added.parameters["transient_lastDdlTime"]) >= before - 1
    assert client.get_partition(db_name, "t", ["2024-01-01"]) == added
    assert client.get_partition_by_name(db_name, "t", "ds=2024-01-01") == added


def test_partition_without_storage_inherits_the_tables(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    tbl = client.get_table(db_name, "t")
    added = client.add_partition(partition(db_name, "t", ["a/b"]))
    assert added.sd.location == f"{tbl.sd.location}/ds=a%2Fb"
    assert added.sd.cols == tbl.sd.cols
    assert added.sd.inputFormat == tbl.sd.inputFormat
    assert added.sd.outputFormat == tbl.sd.outputFormat
    assert added.sd.serdeInfo.serializationLib == tbl.sd.serdeInfo.serializationLib
    assert added.sd.serdeInfo.parameters == tbl.sd.serdeInfo.parameters
    assert client.get_partition(db_name, "t", ["a/b"]).sd == added.sd


def test_partition_with_its_own_storage(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    own = storage(
        fields(("id", "int", "narrower")),
        "s3a://elsewhere/p1",
        serdeInfo=t.SerDeInfo("p", "p.Serde", {"a": "b"}),
        parameters={"p": "1"},
        numBuckets=2,
        bucketCols=["id"],
        sortCols=[t.Order("id", 0)],
    )
    client.add_partition(partition(db_name, "t", ["1"], sd=own))
    got = client.get_partition(db_name, "t", ["1"]).sd
    assert got.cols == own.cols
    assert got.location == "s3a://elsewhere/p1"
    assert got.serdeInfo.serializationLib == "p.Serde"
    assert got.serdeInfo.parameters == {"a": "b"}
    assert got.parameters == {"p": "1"}
    assert (got.numBuckets, got.bucketCols, got.sortCols) == (2, ["id"], [t.Order("id", 0)])
    assert client.get_table(db_name, "t").sd.cols == fields(("id", "bigint"), ("name", "string"))


def test_partition_storage_without_location_gets_the_default_location(
    client: Client, db_name: str
) -> None:
    """HMS (createLocationForAddedPartition) puts a partition whose sd has no location under
    the table's location, as it does for a partition without sd."""
    make_partitioned(client, db_name)
    tbl = client.get_table(db_name, "t")
    added = client.add_partition(partition(db_name, "t", ["x:y"], sd=storage(location=None)))
    assert added.sd.location == f"{tbl.sd.location}/ds=x%3Ay"


def test_add_partition_errors(client: Client, db_name: str) -> None:
    with pytest.raises(t.InvalidObjectException):
        client.add_partition(partition(db_name, "t", ["1"]))
    make_partitioned(client, db_name, values=["1"])
    with pytest.raises(t.InvalidObjectException):
        client.add_partition(partition(db_name, "nope", ["1"]))
    for values in ([], ["1", "2"]):
        with pytest.raises(t.InvalidObjectException, match="ds"):
            client.add_partition(partition(db_name, "t", values))
    with pytest.raises(t.AlreadyExistsException, match="ds=1"):
        client.add_partition(partition(db_name, "t", ["1"]))
    client.create_table(table(db_name, "plain"))
    with pytest.raises(t.InvalidObjectException):
        client.add_partition(partition(db_name, "plain", ["1"]))
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1"]


def test_add_partitions_returns_the_count(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    assert client.add_partitions([]) == 0
    parts = [partition(db_name, "t", [v]) for v in ("3", "1", "2")]
    assert client.add_partitions(parts) == 3
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1", "ds=2", "ds=3"]


def test_add_partitions_is_all_or_nothing(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["1"])
    with pytest.raises(t.AlreadyExistsException, match="ds=1"):
        client.add_partitions([partition(db_name, "t", [v]) for v in ("0", "1", "2")])
    with pytest.raises(t.InvalidObjectException):
        client.add_partitions([partition(db_name, "t", ["5"]), partition(db_name, "t", [])])
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1"]


def test_add_partitions_req(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["1"])
    result = client.add_partitions_req(
        t.AddPartitionsRequest(
            dbName=db_name,
            tblName="t",
            ifNotExists=False,
            parts=[partition(db_name, "t", ["2"]), partition(db_name, "t", ["3"])],
        )
    )
    assert [p.values for p in result.partitions] == [["2"], ["3"]]
    assert result.partitions[0] == client.get_partition(db_name, "t", ["2"])

    result = client.add_partitions_req(
        t.AddPartitionsRequest(
            dbName=db_name,
            tblName="t",
            ifNotExists=False,
            needResult=False,
            parts=[partition(db_name, "t", ["4"])],
        )
    )
    assert not result.partitions
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1", "ds=2", "ds=3", "ds=4"]


def test_add_partitions_req_if_not_exists_skips_existing(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["1"])
    original = client.get_partition(db_name, "t", ["1"])
    result = client.add_partitions_req(
        t.AddPartitionsRequest(
            dbName=db_name,
            tblName="t",
            ifNotExists=True,
            parts=[partition(db_name, "t", [v], parameters={"new": "yes"}) for v in ("1", "2")],
        )
    )
    assert [p.values for p in result.partitions] == [["2"]]
    assert client.get_partition(db_name, "t", ["1"]) == original
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1", "ds=2"]


def test_add_partitions_req_with_an_existing_partition_writes_nothing(
    client: Client, db_name: str, engine: sa.Engine
) -> None:
    make_partitioned(client, db_name, values=["1"])
    before = row_counts(engine)
    with pytest.raises(t.AlreadyExistsException, match="ds=1"):
        client.add_partitions_req(
            t.AddPartitionsRequest(
                dbName=db_name,
                tblName="t",
                ifNotExists=False,
                parts=[partition(db_name, "t", [v]) for v in ("2", "1", "3")],
            )
        )
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1"]
    for value in ("2", "3"):
        with pytest.raises(t.NoSuchObjectException):
            client.get_partition(db_name, "t", [value])
    assert row_counts(engine) == before


@pytest.mark.parametrize("call", ["add_partitions", "add_partitions_req"])
def test_a_batch_naming_a_partition_twice_writes_nothing(
    client: Client, db_name: str, engine: sa.Engine, call: str
) -> None:
    """colstats answers AlreadyExistsException; HMS answers MetaException ("Duplicate
    partitions in the list"). Either way nothing of the batch may be written."""
    make_partitioned(client, db_name, values=["1"])
    before = row_counts(engine)
    parts = [partition(db_name, "t", [v]) for v in ("2", "3", "2")]
    with pytest.raises((t.AlreadyExistsException, t.MetaException), match="ds=2"):
        if call == "add_partitions":
            client.add_partitions(parts)
        else:
            client.add_partitions_req(
                t.AddPartitionsRequest(
                    dbName=db_name,
                    tblName="t",
                    ifNotExists=False,
                    parts=parts,
                )
            )
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1"]
    assert row_counts(engine) == before


@pytest.mark.parametrize("call", ["add_partitions", "add_partitions_req"])
def test_a_batch_with_partitions_of_another_table_writes_nothing(
    client: Client, db_name: str, engine: sa.Engine, call: str
) -> None:
    """HMS answers MetaException ("Partition does not belong to target table")."""
    make_partitioned(client, db_name, "t")
    make_partitioned(client, db_name, "u")
    before = row_counts(engine)
    parts = [partition(db_name, "t", ["1"]), partition(db_name, "u", ["1"])]
    with pytest.raises((t.MetaException, t.InvalidObjectException)) as info:
        if call == "add_partitions":
            client.add_partitions(parts)
        else:
            client.add_partitions_req(
                t.AddPartitionsRequest(
                    dbName=db_name,
                    tblName="t",
                    ifNotExists=False,
                    parts=parts,
                )
            )
    assert client.get_partition_names(db_name, "t", -1) == []
    assert client.get_partition_names(db_name, "u", -1) == []
    assert row_counts(engine) == before
    assert isinstance(info.value, t.MetaException), repr(info.value)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("a/b", "ds=a%2Fb"),
        ("a=b", "ds=a%3Db"),
        ("12:30:00", "ds=12%3A30%3A00"),
        ("a b", "ds=a b"),
        ("100%", "ds=100%25"),
        ("%2F", "ds=%252F"),
        ("tab\there", "ds=tab%09here"),
        ("#?*'\"\\{[]^", "ds=%23%3F%2A%27%22%5C%7B%5B%5D%5E"),
        ("é€😀", "ds=é€😀"),
        ("a\x01b\x7f", "ds=a%01b%7F"),
    ],
)
def test_partition_values_get_hive_escaped_names(
    client: Client, db_name: str, value: str, name: str
) -> None:
    make_partitioned(client, db_name)
    client.add_partition(partition(db_name, "t", [value]))
    assert client.get_partition_names(db_name, "t", -1) == [name]
    assert client.get_partition(db_name, "t", [value]).values == [value]
    assert client.get_partition_by_name(db_name, "t", name).values == [value]
    assert client.get_partition_by_name(db_name, "t", name.replace("ds=", "DS=")).values == [value]
    assert [p.values for p in client.get_partitions_by_names(db_name, "t", [name])] == [[value]]
    assert client.drop_partition_by_name(db_name, "t", name, False) is True
    assert client.get_partition_names(db_name, "t", -1) == []


def test_partition_names_with_several_keys(client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    client.create_table(table(db_name, keys=fields(("ds", "string"), ("Region", "string"))))
    client.add_partition(partition(db_name, "t", ["2024-01-01", "eu/west"]))
    name = "ds=2024-01-01/region=eu%2Fwest"
    assert client.get_partition_names(db_name, "t", -1) == [name]
    for given in (name, "REGION=eu%2Fwest/DS=2024-01-01", "ds=2024-01-01/region=eu%2fwest"):
        assert client.get_partition_by_name(db_name, "t", given).values == ["2024-01-01", "eu/west"]
    for bad in (
        "ds=2024-01-01",
        "ds=2024-01-01/region=eu%2Fwest/x=1",
        "region=eu%2Fwest",
        "ds=2024-01-01/region=eu/west",
    ):
        with pytest.raises(t.NoSuchObjectException):
            client.get_partition_by_name(db_name, "t", bad)


def test_get_partition_by_name_accepts_characters_left_unescaped(
    client: Client, db_name: str
) -> None:
    make_partitioned(client, db_name)
    client.add_partition(partition(db_name, "t", ["12:30 100%"]))
    assert client.get_partition_names(db_name, "t", -1) == ["ds=12%3A30 100%25"]
    assert client.get_partition_by_name(db_name, "t", "ds=12:30 100%").values == ["12:30 100%"]


def test_get_partitions(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["c", "a", "b", "d"])
    every = client.get_partitions(db_name, "t", -1)
    assert [p.values for p in every] == [["a"], ["b"], ["c"], ["d"]]
    assert all((p.dbName, p.tableName) == (db_name, "t") for p in every)
    assert [p.values for p in client.get_partitions(db_name, "t", 2)] == [["a"], ["b"]]
    assert len(client.get_partitions(db_name, "t", 100)) == 4
    assert client.get_partitions(db_name.upper(), "T", -1) == every
    client.create_table(table(db_name, "empty", keys=fields(("ds", "string"))))
    assert client.get_partitions(db_name, "empty", -1) == []


def test_get_partition_names(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["c", "a", "b"])
    assert client.get_partition_names(db_name, "t", -1) == ["ds=a", "ds=b", "ds=c"]
    assert client.get_partition_names(db_name, "t", 1) == ["ds=a"]
    assert client.get_partition_names(f"@hive#{db_name}", "T", 2) == ["ds=a", "ds=b"]


def test_get_partitions_by_names(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["a", "b", "c"])
    got = client.get_partitions_by_names(
        db_name, "t", ["ds=c", "ds=zzz", "ds=a", "x=a", "garbage", "ds=a/x=1", "DS=b"]
    )
    assert sorted(p.values[0] for p in got) == ["a", "b", "c"]
    assert client.get_partitions_by_names(db_name, "t", []) == []
    assert client.get_partitions_by_names(db_name, "t", ["ds=nope"]) == []
    assert got[0] == client.get_partition_by_name(db_name, "t", f"ds={got[0].values[0]}")


def test_partition_lookups_in_unknown_tables(client: Client, db_name: str) -> None:
    calls = [
        lambda db, tbl: client.get_partition(db, tbl, ["1"]),
        lambda db, tbl: client.get_partition_by_name(db, tbl, "ds=1"),
        lambda db, tbl: client.get_partitions(db, tbl, -1),
        lambda db, tbl: client.get_partitions_by_names(db, tbl, ["ds=1"]),
        lambda db, tbl: client.get_partition_names(db, tbl, -1),
        lambda db, tbl: client.drop_partition(db, tbl, ["1"], False),
        lambda db, tbl: client.drop_partition_by_name(db, tbl, "ds=1", False),
    ]
    for call in calls:
        with pytest.raises(t.NoSuchObjectException):
            call(db_name, "t")
    make_partitioned(client, db_name, values=["1"])
    for call in calls:
        with pytest.raises(t.NoSuchObjectException, match="nope"):
            call(db_name, "nope")


def test_wrong_number_of_values(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["1"])
    for values in ([], ["1", "2"]):
        with pytest.raises(t.InvalidObjectException):
            client.add_partition(partition(db_name, "t", values))
        with pytest.raises(t.NoSuchObjectException):
            client.get_partition(db_name, "t", values)
        with pytest.raises(t.NoSuchObjectException):
            client.drop_partition(db_name, "t", values, False)
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition(db_name, "t", ["2"])
    assert client.get_partition_names(db_name, "t", -1) == ["ds=1"]


@pytest.mark.parametrize("call", ["drop_partition", "drop_partition_by_name"])
def test_drop_partition_removes_its_statistics_only(
    client: Client, db_name: str, engine: sa.Engine, call: str
) -> None:
    make_partitioned(client, db_name, values=["a/b", "c"])
    add_stats(client, db_name, "t", ["ds=a%2Fb", "ds=c"])
    dropped = partition_rows(engine, db_name, "t", "ds=a%2Fb")
    kept = partition_rows(engine, db_name, "t", "ds=c")
    tbl = table_rows(engine, db_name, ["t"])
    assert stats_rows(engine, dropped) == (0, 2)

    if call == "drop_partition":
        assert client.drop_partition(db_name.upper(), "T", ["a/b"], True) is True
    else:
        assert client.drop_partition_by_name(db_name, "t", "DS=a%2Fb", True) is True

    assert remaining(engine, dropped) == {}
    assert stats_rows(engine, kept) == (0, 2)
    assert stats_rows(engine, tbl) == (2, 2)
    assert client.get_partition_names(db_name, "t", -1) == ["ds=c"]
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition(db_name, "t", ["a/b"])
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_column_statistics(db_name, "t", "ds=a%2Fb", "id")
    assert client.get_partition_column_statistics(db_name, "t", "ds=c", "id").statsObj
    # The table and the remaining partition share the column list; it must survive.
    cols = fields(("id", "bigint"), ("name", "string"))
    assert client.get_table(db_name, "t").sd.cols == cols
    assert client.get_partition(db_name, "t", ["c"]).sd.cols == cols
    with pytest.raises(t.NoSuchObjectException):
        if call == "drop_partition":
            client.drop_partition(db_name, "t", ["a/b"], False)
        else:
            client.drop_partition_by_name(db_name, "t", "ds=a%2Fb", False)
    # Added again, the partition has no statistics.
    client.add_partition(partition(db_name, "t", ["a/b"]))
    with pytest.raises(t.NoSuchObjectException):
        client.get_partition_column_statistics(db_name, "t", "ds=a%2Fb", "id")


def test_drop_partition_keeps_the_table_columns_after_the_last_partition(
    client: Client, db_name: str
) -> None:
    make_partitioned(client, db_name, values=["1"])
    client.drop_partition(db_name, "t", ["1"], True)
    assert client.get_table(db_name, "t").sd.cols == fields(("id", "bigint"), ("name", "string"))
    client.add_partition(partition(db_name, "t", ["2"]))
    assert client.get_partition(db_name, "t", ["2"]).sd.cols == fields(
        ("id", "bigint"), ("name", "string")
    )


# -- concurrent writers -----------------------------------------------------------------------


RACERS = 6  # with the `client` fixture's, fewer connections than the test server's 8 workers


def race(server: Any, call: Callable[[Client], object]) -> list[Exception | None]:
    """CALL made by RACERS clients at the same moment; what each got (None for success)."""
    n = RACERS
    connections = [connect(server.port) for _ in range(n)]
    results: list[Exception | None] = [None] * n
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        try:
            call(connections[i][0])
        except Exception as e:
            results[i] = e

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    for _, transport in connections:
        transport.close()
    return results


def outcome(results: list[Exception | None]) -> list[str]:
    return sorted("ok" if r is None else type(r).__name__ for r in results)


ONE_WINNER = sorted(["ok"] + ["AlreadyExistsException"] * (RACERS - 1))


def test_concurrent_create_database(server: Any, client: Client, db_name: str) -> None:
    """The losers of a race get AlreadyExistsException, which clients catch for IF NOT
    EXISTS, not the unique-constraint violation of the database."""
    for i in range(5):
        name = f"{db_name}_{i}"
        results = race(server, lambda c, name=name: c.create_database(database(name)))
        assert outcome(results) == ONE_WINNER, [str(r) for r in results if r is not None]
        assert client.get_databases(name) == [name]


def test_concurrent_create_table(server: Any, client: Client, db_name: str) -> None:
    client.create_database(database(db_name))
    for i in range(5):
        name = f"t{i}"
        results = race(server, lambda c, name=name: c.create_table(table(db_name, name)))
        assert outcome(results) == ONE_WINNER, [str(r) for r in results if r is not None]
    assert client.get_all_tables(db_name) == [f"t{i}" for i in range(5)]


def test_concurrent_add_partition(server: Any, client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    for i in range(5):
        part = partition(db_name, "t", [str(i)])
        results = race(server, lambda c, part=part: c.add_partition(part))
        assert outcome(results) == ONE_WINNER, [str(r) for r in results if r is not None]
    assert client.get_partition_names(db_name, "t", -1) == [f"ds={i}" for i in range(5)]


def test_concurrent_add_partitions_if_not_exists(server: Any, client: Client, db_name: str) -> None:
    """Parallel jobs that each register the same partitions with ifNotExists all succeed."""
    make_partitioned(client, db_name)
    for i in range(5):
        request = t.AddPartitionsRequest(
            dbName=db_name,
            tblName="t",
            ifNotExists=True,
            parts=[partition(db_name, "t", [f"{i}{v}"]) for v in "ab"],
        )
        results = race(server, lambda c, request=request: c.add_partitions_req(request))
        assert outcome(results) == ["ok"] * RACERS, [str(r) for r in results if r is not None]
    assert len(client.get_partition_names(db_name, "t", -1)) == 10


# -- the protocol -----------------------------------------------------------------------------


def _write_unknown_call(proto: TBinaryProtocol.TBinaryProtocol, name: str, seqid: int) -> None:
    """A call of NAME whose arguments hold a string, a list and a nested struct to skip."""
    proto.writeMessageBegin(name, TMessageType.CALL, seqid)
    proto.writeStructBegin("args")
    proto.writeFieldBegin("s", TType.STRING, 1)
    proto.writeString("skip me")
    proto.writeFieldEnd()
    proto.writeFieldBegin("l", TType.LIST, 2)
    proto.writeListBegin(TType.I64, 3)
    for i in range(3):
        proto.writeI64(i)
    proto.writeListEnd()
    proto.writeFieldEnd()
    proto.writeFieldBegin("req", TType.STRUCT, 3)
    proto.writeStructBegin("req")
    proto.writeFieldBegin("x", TType.I32, 1)
    proto.writeI32(7)
    proto.writeFieldEnd()
    proto.writeFieldStop()
    proto.writeStructEnd()
    proto.writeFieldEnd()
    proto.writeFieldStop()
    proto.writeStructEnd()
    proto.writeMessageEnd()
    proto.trans.flush()


@pytest.mark.parametrize("method", ["get_catalogs", "getStatus"])
def test_unknown_method_is_answered_and_the_connection_survives(
    server: Any, db_name: str, method: str
) -> None:
    socket = TSocket.TSocket("127.0.0.1", server.port)
    socket.setTimeout(10_000)
    transport = TTransport.TBufferedTransport(socket)
    proto = TBinaryProtocol.TBinaryProtocol(transport)
    transport.open()
    try:
        for seqid in (41, 42):
            _write_unknown_call(proto, method, seqid)
            name, kind, got_seqid = proto.readMessageBegin()
            assert (name, kind, got_seqid) == (method, TMessageType.EXCEPTION, seqid)
            error = TApplicationException()
            error.read(proto)
            proto.readMessageEnd()
            assert error.type == TApplicationException.UNKNOWN_METHOD
            assert method in (error.message or "")
        client = ThriftHiveMetastore.Client(proto)
        client.create_database(database(db_name))
        assert client.get_database(db_name).name == db_name
    finally:
        transport.close()


# -- alter_table / alter_partition(s): how engines write basic statistics ----------------------


def test_alter_table_replaces_parameters_owner_and_location(client: Client, db_name: str) -> None:
    """Trino and Hive write numRows and friends by sending back the table they read with
    new parameters."""
    make_partitioned(client, db_name)
    got = client.get_table(db_name, "t")
    got.parameters = {"numRows": "42", "totalSize": "1000", "EXTERNAL": "TRUE"}
    got.owner = "etl"
    got.sd.location = "file:/elsewhere/t"
    client.alter_table_with_environment_context(db_name.upper(), "T", got, None)
    after = client.get_table(db_name, "t")
    assert {k: v for k, v in after.parameters.items() if k != "transient_lastDdlTime"} == {
        "numRows": "42",
        "totalSize": "1000",
        "EXTERNAL": "TRUE",
    }
    assert after.parameters["transient_lastDdlTime"].isdigit()
    assert (after.owner, after.sd.location) == ("etl", "file:/elsewhere/t")
    assert after.sd.cols == got.sd.cols and after.partitionKeys == got.partitionKeys
    after.parameters = {"numRows": "7", "transient_lastDdlTime": "123"}
    client.alter_table(db_name, "t", after)
    assert client.get_table(db_name, "t").parameters == after.parameters


def test_alter_table_refuses_what_it_does_not_support(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name)
    with pytest.raises(t.InvalidOperationException, match="does not exist"):
        client.alter_table(db_name, "missing", table(db_name, "missing"))
    with pytest.raises(t.InvalidOperationException, match="renaming"):
        client.alter_table(db_name, "t", table(db_name, "t2", keys=fields(("ds", "string"))))
    changed_columns = client.get_table(db_name, "t")
    changed_columns.sd.cols = [*changed_columns.sd.cols, t.FieldSchema("extra", "int", None)]
    with pytest.raises(t.InvalidOperationException, match="columns"):
        client.alter_table(db_name, "t", changed_columns)
    changed_keys = client.get_table(db_name, "t")
    changed_keys.partitionKeys = fields(("ds", "int"))
    with pytest.raises(t.InvalidOperationException, match="partition keys"):
        client.alter_table(db_name, "t", changed_keys)
    commented = client.get_table(db_name, "t")
    commented.sd.cols[0].comment = "a new comment"
    with pytest.raises(t.InvalidOperationException, match="columns"):
        client.alter_table(db_name, "t", commented)
    with pytest.raises(t.InvalidOperationException, match="no new table"):
        client.alter_table(db_name, "t", None)
    same = client.get_table(db_name, "t")
    same.dbName, same.tableName, same.parameters = db_name.upper(), "T", {"numRows": "3"}
    client.alter_table(db_name, "t", same)  # names in another case are the same names
    assert client.get_table(db_name, "t").parameters["numRows"] == "3"
    assert client.get_table(db_name, "t").sd.cols == fields(("id", "bigint"), ("name", "string"))


def test_alter_partitions_replaces_parameters_all_or_nothing(client: Client, db_name: str) -> None:
    make_partitioned(client, db_name, values=["a", "b"])
    a, b = client.get_partitions_by_names(db_name, "t", ["ds=a", "ds=b"])
    a.parameters, b.parameters = {"numRows": "10"}, {"numRows": "20"}
    client.alter_partitions(db_name, "t", [a, b])
    rows = {p.values[0]: p.parameters["numRows"] for p in client.get_partitions(db_name, "t", -1)}
    assert rows == {"a": "10", "b": "20"}
    a.parameters = {"numRows": "11"}
    a.sd = storage(location="file:/moved/a")
    client.alter_partition(db_name, "t", a)
    moved = client.get_partition(db_name, "t", ["a"])
    assert (moved.parameters["numRows"], moved.sd.location) == ("11", "file:/moved/a")

    b.parameters = {"numRows": "99"}
    for bad in (partition(db_name, "t", ["zzz"]), partition(db_name, "t", ["a", "x"])):
        with pytest.raises(t.InvalidOperationException, match="ds"):
            client.alter_partitions(db_name, "t", [b, bad])
    assert client.get_partition(db_name, "t", ["b"]).parameters["numRows"] == "20"
    with pytest.raises(t.InvalidOperationException, match="does not exist"):
        client.alter_partitions("no_such_db", "t", [b])
