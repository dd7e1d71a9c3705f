"""Adopting databases of Hive Metastore 3.1 and 4.0's schemas, which the tests make from the
facts of Hive's scripts (tests/hive_schemas.py; no HMS of those versions runs here): refused
before adoption with the version named, the same in meaning as the models once adopted,
filled through colstats's own calls and read back as written, in rows that HMS of that
version finds (names in the statistics rows, ids drawn from SEQUENCE_TABLE, HMS's own lock
tables), renames and drops under HMS's foreign keys, and given back by `--undo` exactly as it
was, with what colstats wrote.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hive_schemas
import metadata_builders as mb
import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect, empty_database
from stats_builders import SKETCH, stats_data
from thrift.Thrift import TApplicationException

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.cli import EXIT_FAILED
from metastore.config import Settings
from metastore.store import adopt, migrate

pytestmark = pytest.mark.postgres

Client = ThriftHiveMetastore.Client
PARTS = ["2024-01-01", "2024-01-02", "2024-01-03"]


@pytest.fixture(params=hive_schemas.VERSIONS)
def version(request: pytest.FixtureRequest) -> str:
    found: str = request.param
    return found


@pytest.fixture
def hive_url(version: str, tmp_path: Path) -> Iterator[str]:
    """A new PostgreSQL database holding Hive's schema VERSION as its script makes it."""
    for url in empty_database("postgresql", tmp_path):
        hive_schemas.build(url, version)
        yield url


@pytest.fixture
def colstats(hive_url: str) -> Iterator[Client]:
    """A client of a colstats server (returning bit vectors) on the database, adopted."""
    adopt.adopt(hive_url)
    server = RunningServer(hive_url, Settings(fetch_bitvector=True))
    client, transport = connect(server.port)
    yield client
    transport.close()
    server.stop()


def _schema(url: str) -> dict[str, Any]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return adopt.snapshot(conn)
    finally:
        engine.dispose()


def _rows(url: str, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(sa.text(sql), params)]
    finally:
        engine.dispose()


def _insert(url: str, table: str, row: dict[str, Any]) -> None:
    """Insert ROW into TABLE, as HMS writes it (the version triggers see HMS's changes)."""
    columns = ", ".join(f'"{c}"' for c in row)
    values = ", ".join(f":{c}" for c in row)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(f'INSERT INTO "{table}" ({columns}) VALUES ({values})'), row)
    finally:
        engine.dispose()


def test_upgrade_refuses_it_before_adoption_and_names_its_version(
    hive_url: str, version: str
) -> None:
    before = _schema(hive_url)
    done = subprocess.run(
        [sys.executable, "-m", "metastore.cli", "db", "upgrade", "--db", hive_url],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == EXIT_FAILED, done.stderr
    assert f"is a Hive Metastore database (schema {version}), which colstats serves once " in (
        done.stderr
    )
    assert "`metastore db adopt --db URL`" in done.stderr
    with pytest.raises(migrate.UnadoptedHiveDatabase, match=f"schema {version}"):
        migrate.upgrade(hive_url)
    assert _schema(hive_url) == before


def test_adopted_it_means_what_the_models_mean_and_undo_gives_it_back(
    hive_url: str, version: str
) -> None:
    before = _schema(hive_url)
    adopted = adopt.adopt(hive_url)
    assert (adopted.found.version, adopted.duplicates) == (version, [])
    assert migrate.schema_differences(hive_url) == []
    tables = set(_schema(hive_url)["tables"])
    # HMS's own lock tables serve colstats: no second pair beside them.
    locks = {"HIVE_LOCKS", "NEXT_LOCK_ID", "hive_locks", "next_lock_id"} & tables
    quoted = version != "3.1.0"
    assert locks == ({"HIVE_LOCKS", "NEXT_LOCK_ID"} if quoted else {"hive_locks", "next_lock_id"})
    adopt.undo(hive_url)
    assert _schema(hive_url) == before


def _stats() -> list[t.ColumnStatisticsObj]:
    """Statistics of orders' columns, two with bit vectors."""
    return [
        t.ColumnStatisticsObj(
            "id",
            "bigint",
            stats_data(
                "longStats",
                lowValue=1,
                highValue=30,
                numNulls=0,
                numDVs=30,
                bitVectors=SKETCH,
            ),
        ),
        t.ColumnStatisticsObj(
            "amount",
            "double",
            stats_data("doubleStats", lowValue=0.5, highValue=99.5, numNulls=2, numDVs=20),
        ),
        t.ColumnStatisticsObj(
            "note",
            "string",
            stats_data(
                "stringStats",
                maxColLen=40,
                avgColLen=7.5,
                numNulls=1,
                numDVs=12,
                bitVectors=SKETCH,
            ),
        ),
    ]


def _fill(client: Client, warehouse: Path) -> dict[str, Any]:
    """Databases, a partitioned table with partitions and statistics of both levels, a table
    with skewed values, a view and a function, written through colstats; what was written."""
    client.create_database(
        mb.database("sales", locationUri=f"file:{warehouse}/sales.db", parameters={"team": "a"})
    )
    client.create_database(mb.database("scratch", locationUri=f"file:{warehouse}/scratch.db"))
    cols = mb.fields(("id", "bigint"), ("amount", "double"), ("note", "string", "free text"))
    orders = mb.table(
        "sales",
        "orders",
        cols=cols,
        keys=mb.fields(("ds", "string")),
        parameters={"owner_team": "a"},
    )
    orders.sd.location = f"file:{warehouse}/sales.db/orders"
    client.create_table(orders)
    client.add_partitions(
        [
            mb.partition(
                "sales",
                "orders",
                [day],
                sd=mb.storage(cols, f"file:{warehouse}/sales.db/orders/ds={day}"),
                parameters={"numRows": "10"},
            )
            for day in PARTS
        ]
    )
    stats = _stats()
    assert client.update_table_column_statistics(mb.column_stats("sales", "orders", stats))
    for day in PARTS:
        written = mb.column_stats("sales", "orders", stats[:1], f"ds={day}")
        assert client.update_partition_column_statistics(written)
    skewed = t.SkewedInfo(["name"], [["a"], ["b"]], {("a",): f"file:{warehouse}/skew/a"})
    events_sd = mb.storage(
        location=f"file:{warehouse}/sales.db/events",
        bucketCols=["id"],
        numBuckets=8,
        sortCols=[t.Order("id", 1)],
        skewedInfo=skewed,
    )
    client.create_table(mb.table("sales", "events", sd=events_sd))
    view = mb.table(
        "sales",
        "big_orders",
        tableType="VIRTUAL_VIEW",
        viewOriginalText="select * from orders where amount > 100",
        viewExpandedText="select `orders`.`id` from `sales`.`orders` where `amount` > 100",
    )
    view.sd.location = None
    client.create_table(view)
    function = t.Function(
        "to_cents",
        "sales",
        "com.example.ToCents",
        "hive",
        t.PrincipalType.USER,
        0,
        t.FunctionType.JAVA,
        [t.ResourceUri(t.ResourceType.JAR, f"file:{warehouse}/udfs.jar")],
    )
    client.create_function(function)
    scratch = mb.table("scratch", "t", keys=mb.fields(("ds", "string")))
    scratch.sd.location = f"file:{warehouse}/scratch.db/t"
    client.create_table(scratch)
    client.add_partition(mb.partition("scratch", "t", ["1"]))
    mb.add_stats(client, "scratch", "t", ["ds=1"])
    return {"orders": orders, "events": events_sd, "view": view, "function": function}


def _read_back(client: Client, written: dict[str, Any]) -> None:
    """Everything _fill wrote, as colstats answers it."""
    sales = client.get_database("sales")
    assert (sales.parameters, sales.catalogName) == ({"team": "a"}, "hive")
    orders = client.get_table("sales", "orders")
    assert (orders.sd.cols, orders.partitionKeys) == (
        written["orders"].sd.cols,
        written["orders"].partitionKeys,
    )
    assert orders.parameters["owner_team"] == "a"
    assert orders.catName == "hive"
    assert client.get_partition_names("sales", "orders", -1) == [f"ds={d}" for d in PARTS]
    partition = client.get_partition("sales", "orders", ["2024-01-02"])
    assert partition.parameters["numRows"] == "10"
    events = client.get_table("sales", "events").sd
    assert (events.bucketCols, events.numBuckets, events.sortCols, events.skewedInfo) == (
        written["events"].bucketCols,
        written["events"].numBuckets,
        written["events"].sortCols,
        written["events"].skewedInfo,
    )
    view = client.get_table("sales", "big_orders")
    assert (view.tableType, view.viewOriginalText, view.viewExpandedText) == (
        "VIRTUAL_VIEW",
        written["view"].viewOriginalText,
        written["view"].viewExpandedText,
    )
    function = client.get_function("sales", "to_cents")
    assert (function.className, function.resourceUris) == (
        written["function"].className,
        written["function"].resourceUris,
    )
    table_stats = client.get_table_statistics_req(
        t.TableStatsRequest("sales", "orders", ["id", "amount", "note"])
    ).tableStats
    assert sorted(table_stats, key=lambda s: s.colName) == sorted(_stats(), key=lambda s: s.colName)
    parts = client.get_partitions_statistics_req(
        t.PartitionsStatsRequest("sales", "orders", ["id"], [f"ds={d}" for d in PARTS])
    ).partStats
    assert parts == {f"ds={d}": _stats()[:1] for d in PARTS}


def _statistics_rows(url: str) -> dict[str, set[tuple[Any, ...]]]:
    """The names each statistics row gives its owner by, with its column (and for a table's,
    whether it has a bit vector), in the columns of HMS 3.1 and 4.0."""
    return {
        "table": set(
            _rows(
                url,
                'SELECT "CAT_NAME", "DB_NAME", "TABLE_NAME", "COLUMN_NAME", '
                '"BIT_VECTOR" IS NOT NULL FROM "TAB_COL_STATS"',
            )
        ),
        "partition": set(
            _rows(
                url,
                'SELECT "CAT_NAME", "DB_NAME", "TABLE_NAME", "PARTITION_NAME", "COLUMN_NAME" '
                'FROM "PART_COL_STATS"',
            )
        ),
    }


def _ids_behind_their_sequences(url: str) -> None:
    """Every id colstats took is below its DataNucleus class's NEXT_VAL, so that HMS's next
    block of ids starts after them."""
    for (table, column), sequence in adopt.ID_SEQUENCES.items():
        (highest,) = _rows(url, f'SELECT max("{column}") FROM "{table}"')[0]
        if highest is None:
            continue
        found = _rows(
            url,
            'SELECT "NEXT_VAL" FROM "SEQUENCE_TABLE" WHERE "SEQUENCE_NAME" = :name',
            name=sequence,
        )
        assert found and found[0][0] > highest, (table, column, found, highest)


def test_colstats_fills_it_in_rows_hms_finds_and_undo_keeps_them(
    hive_url: str, version: str, tmp_path: Path
) -> None:
    before = _schema(hive_url)
    adopt.adopt(hive_url)
    server = RunningServer(hive_url, Settings(fetch_bitvector=True))
    client, transport = connect(server.port)
    try:
        written = _fill(client, tmp_path)
        _read_back(client, written)
        assert set(_rows(hive_url, 'SELECT "NAME", "CTLG_NAME" FROM "DBS"')) == {
            ("default", "hive"),
            ("sales", "hive"),
            ("scratch", "hive"),
        }
        rows = _statistics_rows(hive_url)
        assert {r for r in rows["table"] if r[2] == "orders"} == {
            ("hive", "sales", "orders", "id", True),
            ("hive", "sales", "orders", "amount", False),
            ("hive", "sales", "orders", "note", True),
        }
        assert {r for r in rows["partition"] if r[2] == "orders"} == {
            ("hive", "sales", "orders", f"ds={d}", "id") for d in PARTS
        }
        for table in ("TAB_COL_STATS", "PART_COL_STATS"):
            assert _rows(hive_url, f'SELECT DISTINCT "ENGINE" FROM "{table}"') == [("hive",)]
        _ids_behind_their_sequences(hive_url)
        # The other sequences of the script are left alone.
        assert ("org.apache.hadoop.hive.metastore.model.MNotificationLog", 1) in set(
            _rows(hive_url, 'SELECT "SEQUENCE_NAME", "NEXT_VAL" FROM "SEQUENCE_TABLE"')
        )

        renamed = client.get_partition("sales", "orders", ["2024-01-03"])
        renamed.values = ["2024-01-09"]
        client.rename_partition("sales", "orders", ["2024-01-03"], renamed)
        moved = client.get_table("sales", "orders")
        moved.tableName = "orders_2024"
        client.alter_table("sales", "orders", moved)
        client.drop_partition("sales", "orders_2024", ["2024-01-01"], True)
        client.drop_table("sales", "events", True)
        client.drop_database("scratch", True, True)
        rows = _statistics_rows(hive_url)
        assert {r[:3] for r in rows["table"]} == {("hive", "sales", "orders_2024")}
        assert {r[:4] for r in rows["partition"]} == {
            ("hive", "sales", "orders_2024", "ds=2024-01-02"),
            ("hive", "sales", "orders_2024", "ds=2024-01-09"),
        }
        assert sorted(client.get_all_tables("sales")) == ["big_orders", "orders_2024"]
        assert client.get_all_databases() == ["default", "sales"]
        _ids_behind_their_sequences(hive_url)
    finally:
        transport.close()
        server.stop()

    adopt.undo(hive_url)
    after = _schema(hive_url)
    for table in sorted(set(before["tables"]) | set(after["tables"])):
        assert after["tables"].get(table) == before["tables"].get(table), table
    assert after == before
    assert set(_rows(hive_url, 'SELECT "NAME" FROM "DBS"')) == {("default",), ("sales",)}
    assert set(_rows(hive_url, 'SELECT "TBL_NAME" FROM "TBLS"')) == {
        ("big_orders",),
        ("orders_2024",),
    }
    assert _statistics_rows(hive_url) == {
        "table": {
            ("hive", "sales", "orders_2024", "id", True),
            ("hive", "sales", "orders_2024", "amount", False),
            ("hive", "sales", "orders_2024", "note", True),
        },
        "partition": {
            ("hive", "sales", "orders_2024", "ds=2024-01-02", "id"),
            ("hive", "sales", "orders_2024", "ds=2024-01-09", "id"),
        },
    }


def _owner_ids(url: str) -> dict[str, int]:
    """The ids of sales, sales.orders, its first partition and its column list."""
    ((db_id, tbl_id, cd_id),) = _rows(
        url,
        'SELECT d."DB_ID", t."TBL_ID", s."CD_ID" FROM "DBS" d '
        'JOIN "TBLS" t ON t."DB_ID" = d."DB_ID" JOIN "SDS" s ON s."SD_ID" = t."SD_ID" '
        "WHERE d.\"NAME\" = 'sales' AND t.\"TBL_NAME\" = 'orders'",
    )
    ((part_id,),) = _rows(
        url,
        'SELECT "PART_ID" FROM "PARTITIONS" WHERE "TBL_ID" = :t AND "PART_NAME" = :p',
        t=tbl_id,
        p="ds=2024-01-01",
    )
    return {"db": db_id, "tbl": tbl_id, "cd": cd_id, "part": part_id}


def _beside(ids: dict[str, int]) -> dict[str, dict[str, Any]]:
    """The rows HMS keeps beside a database, a table and a partition, which colstats has no
    model of: a grant to `etl` in each privilege table, a constraint, a materialized view's
    use of the table."""
    grant = {"CREATE_TIME": 0, "GRANT_OPTION": 0, "PRINCIPAL_NAME": "etl", "PRINCIPAL_TYPE": "USER"}
    return {
        "DB_PRIVS": {**grant, "DB_GRANT_ID": 1, "DB_PRIV": "ALL", "DB_ID": ids["db"]},
        "TBL_PRIVS": {**grant, "TBL_GRANT_ID": 1, "TBL_PRIV": "ALL", "TBL_ID": ids["tbl"]},
        "TBL_COL_PRIVS": {
            **grant,
            "TBL_COLUMN_GRANT_ID": 1,
            "COLUMN_NAME": "id",
            "TBL_COL_PRIV": "SELECT",
            "TBL_ID": ids["tbl"],
        },
        "PART_PRIVS": {**grant, "PART_GRANT_ID": 1, "PART_PRIV": "ALL", "PART_ID": ids["part"]},
        "PART_COL_PRIVS": {
            **grant,
            "PART_COLUMN_GRANT_ID": 1,
            "COLUMN_NAME": "id",
            "PART_COL_PRIV": "SELECT",
            "PART_ID": ids["part"],
        },
        "KEY_CONSTRAINTS": {
            "CONSTRAINT_NAME": "orders_pk",
            "POSITION": 1,
            "PARENT_CD_ID": ids["cd"],
            "PARENT_TBL_ID": ids["tbl"],
            "PARENT_INTEGER_IDX": 0,
            "CONSTRAINT_TYPE": 0,
            "ENABLE_VALIDATE_RELY": 0,
        },
        "MV_TABLES_USED": {"MV_CREATION_METADATA_ID": 1, "TBL_ID": ids["tbl"]},
    }


def test_drops_take_along_what_hms_keeps_beside_them_under_its_keys(
    colstats: Client, hive_url: str
) -> None:
    """HMS's foreign keys to DBS, TBLS and PARTITIONS do not cascade: each drop deletes the
    rows that refer to what it drops first."""
    mb.make_partitioned(colstats, "sales", "orders", ["2024-01-01", "2024-01-02"])
    mb.add_stats(colstats, "sales", "orders", ["ds=2024-01-01", "ds=2024-01-02"])
    view = {"CAT_NAME": "hive", "DB_NAME": "sales", "TBL_NAME": "mv", "MATERIALIZATION_TIME": 0}
    _insert(hive_url, "MV_CREATION_METADATA", {"MV_CREATION_METADATA_ID": 1, **view})
    beside = _beside(_owner_ids(hive_url))
    for table, row in beside.items():
        _insert(hive_url, table, row)
    colstats.drop_partition("sales", "orders", ["2024-01-01"], True)
    assert _rows(hive_url, 'SELECT count(*) FROM "PART_PRIVS"') == [(0,)]
    assert _rows(hive_url, 'SELECT count(*) FROM "PART_COL_PRIVS"') == [(0,)]
    colstats.drop_table("sales", "orders", True)
    colstats.drop_database("sales", True, True)
    for table in beside:
        assert _rows(hive_url, f'SELECT count(*) FROM "{table}"') == [(0,)], table
    # The materialized view's own row is not the table's.
    assert _rows(hive_url, 'SELECT count(*) FROM "MV_CREATION_METADATA"') == [(1,)]
    assert colstats.get_all_databases() == ["default"]


def test_statistics_hms_writes_are_read_in_the_kind_of_its_version(
    colstats: Client, hive_url: str, version: str
) -> None:
    """A timestamp column's statistics, written by HMS in its own columns (no STATS_KIND):
    HMS 3.1, which has no timestampStats, wrote and answers longStats; HMS 4.0 answers
    timestampStats."""
    colstats.create_database(mb.database("sales"))
    colstats.create_table(mb.table("sales", "events", cols=mb.fields(("at", "timestamp"))))
    ((tbl_id,),) = _rows(hive_url, 'SELECT "TBL_ID" FROM "TBLS" WHERE "TBL_NAME" = \'events\'')
    names = {"CAT_NAME": "hive", "DB_NAME": "sales", "TABLE_NAME": "events", "TBL_ID": tbl_id}
    values = {"LONG_LOW_VALUE": 1700000000, "LONG_HIGH_VALUE": 1700086400, "NUM_NULLS": 0}
    row = {**names, "COLUMN_NAME": "at", "COLUMN_TYPE": "timestamp", **values}
    row |= {"NUM_DISTINCTS": 5, "LAST_ANALYZED": 1700090000}
    if version == "4.0.0":
        row["ENGINE"] = "hive"  # NOT NULL without a default in 4.0's schema
    _insert(hive_url, "TAB_COL_STATS", row)
    (read,) = colstats.get_table_column_statistics("sales", "events", "at").statsObj
    if version == "3.1.0":
        expected = stats_data(
            "longStats", lowValue=1700000000, highValue=1700086400, numNulls=0, numDVs=5
        )
    else:
        expected = stats_data(
            "timestampStats",
            lowValue=t.Timestamp(1700000000),
            highValue=t.Timestamp(1700086400),
            numNulls=0,
            numDVs=5,
        )
    assert read.statsData == expected


def _lock(table: str) -> t.LockRequest:
    """An exclusive lock of table TABLE of sales."""
    component = t.LockComponent(
        type=t.LockType.EXCLUSIVE, level=t.LockLevel.TABLE, dbname="sales", tablename=table
    )
    return t.LockRequest(component=[component], user="etl", hostname="worker-1")


def test_locks_are_kept_in_hms_own_lock_tables(
    colstats: Client, hive_url: str, version: str
) -> None:
    """In lower case in 3.1's schema (its script does not quote their names, nor do HMS
    3.1's statements on them), in upper case in 4.0's (which quotes both)."""
    (locks,) = [table for table in hive_schemas.tables(version) if table.name == "HIVE_LOCKS"]
    name = locks.identifier
    columns = ", ".join(
        name(c) for c in ("HL_LOCK_EXT_ID", "HL_TXNID", "HL_DB", "HL_TABLE", "HL_LOCK_STATE")
    )
    held_now = f"SELECT {columns} FROM {name('HIVE_LOCKS')} ORDER BY 1"
    next_id = f"SELECT {name('NL_NEXT')} FROM {name('NEXT_LOCK_ID')}"

    first, second = colstats.lock(_lock("orders")), colstats.lock(_lock("orders"))
    assert (first.state, second.state) == (t.LockState.ACQUIRED, t.LockState.WAITING)
    assert _rows(hive_url, held_now) == [
        (first.lockid, 0, "sales", "orders", "a"),
        (second.lockid, 0, "sales", "orders", "w"),
    ]
    assert _rows(hive_url, next_id) == [(second.lockid + 1,)]
    colstats.unlock(t.UnlockRequest(first.lockid))
    assert colstats.check_lock(t.CheckLockRequest(second.lockid)).state == t.LockState.ACQUIRED
    colstats.unlock(t.UnlockRequest(second.lockid))
    assert _rows(hive_url, held_now) == []


def test_a_lock_is_refused_a_name_wider_than_hms_lock_table_keeps(
    colstats: Client, version: str
) -> None:
    """HL_TABLE is 128 wide in 3.1's schema (a table's name may be 256 long): a lock of a
    longer name is refused with the width, not with the database's error."""
    wide = "t" * 200
    if version == "3.1.0":
        with pytest.raises(TApplicationException, match="table name is longer than 128 "):
            colstats.lock(_lock(wide))
    else:
        colstats.unlock(t.UnlockRequest(colstats.lock(_lock(wide)).lockid))


def test_a_dropped_function_takes_its_resources_along(colstats: Client) -> None:
    colstats.create_database(mb.database("sales"))
    uri = t.ResourceUri(t.ResourceType.JAR, f"file:{mb.WAREHOUSE}/udfs.jar")
    colstats.create_function(
        t.Function("f", "sales", "com.example.F", "hive", t.PrincipalType.USER, 0, 1, [uri])
    )
    colstats.drop_function("sales", "f")
    assert colstats.get_functions("sales", "*") == []
