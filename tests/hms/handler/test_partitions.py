"""The partition calls through the generated client, on SQLite and PostgreSQL."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import sqlalchemy as sa
from metadata_builders import (
    add_stats,
    database,
    fields,
    make_partitioned,
    partition,
    partition_rows,
    remaining,
    row_counts,
    stats_rows,
    storage,
    table,
    table_rows,
)

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client

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
    calls: list[Callable[[str, str], object]] = [
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


# -- reads: each partition's own storage, shared pieces kept apart ----------------------------


def test_partitions_read_back_their_own_storage(client: Client, db_name: str) -> None:
    """Every part of a partition's storage comes back through each read call: columns
    differing from the table's, bucket and sort columns, descriptor and serde parameters,
    skewed values; partitions sharing the table's column list are not affected by one
    that has its own, nor by a later change of another partition."""
    make_partitioned(client, db_name, values=["a"])
    own = storage(
        fields(("id", "bigint"), ("extra", "string", "added")),
        bucketCols=["id"],
        numBuckets=4,
        sortCols=[t.Order("id", 0)],
        parameters={"sd.key": "sd value"},
        serdeInfo=t.SerDeInfo("own", "org.example.Serde", {"serde.key": "1"}),
        skewedInfo=t.SkewedInfo(["id"], [["7"], ["9"]], {("7",): "file:/skew/7"}),
        storedAsSubDirectories=True,
    )
    client.add_partition(partition(db_name, "t", ["b"], sd=own))
    client.add_partition(partition(db_name, "t", ["c"], parameters={"k": "v"}))
    table_cols = client.get_table(db_name, "t").sd.cols
    answers = [
        client.get_partitions(db_name, "t", -1),
        client.get_partitions_by_filter(db_name, "t", 'ds >= "a"', -1),
        client.get_partitions_by_names(db_name, "t", ["ds=c", "ds=b", "ds=a"]),
        client.get_partitions_ps(db_name, "t", [], -1),
        [client.get_partition_by_name(db_name, "t", f"ds={v}") for v in "abc"],
        [client.get_partition(db_name, "t", [v]) for v in "abc"],
    ]
    for a, b, c in answers:
        assert [a.values, b.values, c.values] == [["a"], ["b"], ["c"]]
        assert a.sd.cols == c.sd.cols == table_cols
        assert b.sd.cols == own.cols
        assert (b.sd.bucketCols, b.sd.numBuckets, b.sd.sortCols) == (["id"], 4, [t.Order("id", 0)])
        assert b.sd.parameters == {"sd.key": "sd value"}
        assert b.sd.serdeInfo.parameters == {"serde.key": "1"}
        assert b.sd.serdeInfo.serializationLib == "org.example.Serde"
        assert b.sd.skewedInfo == own.skewedInfo
        assert b.sd.storedAsSubDirectories is True
        assert a.sd.skewedInfo == t.SkewedInfo([], [], {})
        assert (a.sd.bucketCols, a.sd.sortCols, a.sd.parameters) == ([], [], {})
        assert c.parameters["k"] == "v" and "k" not in a.parameters
    assert answers[0] == answers[1] == answers[2] == answers[3] == answers[4] == answers[5]
    changed = client.get_partition(db_name, "t", ["a"])
    changed.sd.cols = fields(("id", "bigint"))
    client.alter_partition(db_name, "t", changed)
    a, b, c = client.get_partitions(db_name, "t", -1)
    assert [col.name for col in a.sd.cols] == ["id"]
    assert b.sd.cols == own.cols
    assert c.sd.cols == table_cols


def test_the_database_gathers_statistics_of_partitions_as_they_are_added(
    client: Client, db_name: str, engine: sa.Engine
) -> None:
    """Without them the planner ignores the key value index (SQLite keeps none by itself;
    PostgreSQL's autovacuum gathers them only up to a minute later, or never where it is
    off). On PostgreSQL the partitions' parameters and storage get theirs too, and so do the
    tables of tables and databases: autovacuum may never analyze a few rows, and without
    statistics the planner takes a table's lookup for many tables' partitions."""
    make_partitioned(client, db_name, values=["a", "b"])
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            analyzed = set(conn.exec_driver_sql("SELECT tbl FROM sqlite_stat1").scalars())
        else:
            analyzed = set(
                conn.exec_driver_sql(
                    "SELECT relname FROM pg_class WHERE relname IN "
                    "('PARTITIONS', 'PARTITION_KEY_VALS', 'PARTITION_PARAMS', 'SDS', 'SERDES') "
                    "AND reltuples > 0 OR relname IN ('TBLS', 'DBS') AND reltuples >= 0"
                ).scalars()
            )
            assert {"TBLS", "DBS", "PARTITION_PARAMS", "SDS", "SERDES"} <= analyzed
    assert {"PARTITIONS", "PARTITION_KEY_VALS"} <= analyzed
    assert client.get_partition_names_ps(db_name, "t", ["b"], -1) == ["ds=b"]


def test_partition_names_in_byte_order_limited_and_of_known_tables_only(
    client: Client, db_name: str
) -> None:
    """get_partition_names is one statement when there are names; without, it still tells
    an unknown table or database from a table without partitions."""
    make_partitioned(client, db_name, values=["b", "B", "a", "é"])
    assert client.get_partition_names(db_name, "t", -1) == ["ds=B", "ds=a", "ds=b", "ds=é"]
    assert client.get_partition_names(db_name, "t", 2) == ["ds=B", "ds=a"]
    assert client.get_partition_names(db_name, "t", 0) == []
    assert client.get_partition_names(db_name.upper(), "T", 1) == ["ds=B"]
    assert client.get_partition_names(f"@hive#{db_name}", "t", 1) == ["ds=B"]
    make_partitioned(client, db_name, "empty")
    assert client.get_partition_names(db_name, "empty", -1) == []
    with pytest.raises(t.NoSuchObjectException, match="does not exist"):
        client.get_partition_names(db_name, "missing", -1)
    with pytest.raises(t.NoSuchObjectException, match="does not exist"):
        client.get_partition_names(f"{db_name}_missing", "t", -1)
