"""The rows below a table or partitions (their keys and values, parameters, columns,
bucket and sort columns, serde parameters) are read in one statement, built for whether
there are none, one or several of each kind of owner: a table or a partition read alone
gives what the same one gives among several, and on PostgreSQL the statement for one table
takes its ids as plain parameters (not arrays, which PostgreSQL estimates at ten values), one
prepared statement whatever the ids' size."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect
from metadata_builders import Client, database, fields, partition, storage, table

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.hms.handler import Handler
from metastore.store import migrate, transactions

DB = "below"


def _sd(location: str | None, suffix: str) -> t.StorageDescriptor:
    return storage(
        fields(("id", "bigint", "the id"), ("name", "string")),
        location,
        serdeInfo=t.SerDeInfo("serde", "org.example.Serde", {"field.delim": suffix}),
        bucketCols=["id"],
        sortCols=[t.Order("id", 1), t.Order("name", 0)],
        numBuckets=4,
        parameters={"sd.param": suffix},
    )


@pytest.fixture
def client(database_url: str) -> Iterator[Client]:
    """A client of a server on a new database that holds table `t`, partitioned by (ds, hr)
    with three partitions, and table `u`, not partitioned, everything with parameters,
    bucket and sort columns and serde parameters of its own."""
    migrate.upgrade(database_url)
    running = RunningServer(database_url, Settings(cache_size=0))
    c, transport = connect(running.port)
    c.create_database(database(DB))
    keys = fields(("ds", "string", "the day"), ("hr", "int"))
    c.create_table(table(DB, "t", keys=keys, sd=_sd(None, "t"), parameters={"tp": "t"}))
    c.create_table(table(DB, "u", sd=_sd(None, "u"), parameters={"tp": "u"}))
    for ds, hr in (("2024-01-01", "1"), ("2024-01-01", "2"), ("2024-01-02", "1")):
        c.add_partition(
            partition(DB, "t", [ds, hr], sd=_sd(None, f"{ds}/{hr}"), parameters={"pp": hr})
        )
    yield c
    transport.close()
    running.stop()


def test_a_partition_alone_is_the_same_as_among_others(client: Client) -> None:
    together = client.get_partitions(DB, "t", -1)
    assert [p.values for p in together] == [
        ["2024-01-01", "1"],
        ["2024-01-01", "2"],
        ["2024-01-02", "1"],
    ]
    for found in together:
        alone = client.get_partition(DB, "t", found.values)
        assert alone == found
        assert client.get_partitions_by_names(DB, "t", [_name(found)]) == [found]
        ds, hr = found.values
        assert found.parameters["pp"] == hr
        assert found.sd.parameters == {"sd.param": f"{ds}/{hr}"}
        assert found.sd.serdeInfo.parameters == {"field.delim": f"{ds}/{hr}"}
        assert found.sd.bucketCols == ["id"]
        assert found.sd.sortCols == [t.Order("id", 1), t.Order("name", 0)]
        assert found.sd.cols == fields(("id", "bigint", "the id"), ("name", "string"))


def _name(found: t.Partition) -> str:
    return f"ds={found.values[0]}/hr={found.values[1]}"


def test_a_table_alone_is_the_same_as_among_others(client: Client) -> None:
    together = {
        found.tableName: found for found in client.get_table_objects_by_name(DB, ["t", "u"])
    }
    for name in ("t", "u"):
        alone = client.get_table(DB, name)
        assert alone == together[name]
        assert alone.parameters["tp"] == name
        assert alone.sd.parameters == {"sd.param": name}
        assert alone.sd.serdeInfo.parameters == {"field.delim": name}
        assert alone.sd.sortCols == [t.Order("id", 1), t.Order("name", 0)]
        assert alone.sd.cols == fields(("id", "bigint", "the id"), ("name", "string"))
    assert together["t"].partitionKeys == fields(("ds", "string", "the day"), ("hr", "int"))
    assert together["u"].partitionKeys == []


@pytest.mark.parametrize(
    "database_url", [pytest.param("postgresql", marks=pytest.mark.postgres)], indirect=True
)
def test_one_table_is_read_by_plain_parameters(client: Client, database_url: str) -> None:
    # A table whose ids are above 32,767 beside `u`, whose ids are small: psycopg 3 sends an
    # int as smallint or integer by its size, and prepares a statement per parameter types.
    psycopg = sa.make_url(database_url).set(drivername="postgresql+psycopg")
    url = psycopg.render_as_string(hide_password=False)
    admin = sa.create_engine(url)
    with admin.begin() as conn:
        for table_name, column in (("TBLS", "TBL_ID"), ("SDS", "SD_ID"), ("SERDES", "SERDE_ID")):
            conn.exec_driver_sql(
                f"SELECT setval(pg_get_serial_sequence('\"{table_name}\"', '{column}'), 40000)"
            )
    admin.dispose()
    client.create_table(table(DB, "big", sd=_sd(None, "big")))
    # One connection, so that every call runs the statements prepared on it.
    engine = transactions.create_engine(url, pool_size=1)
    try:
        handler = Handler(transactions.Transactions(engine), Settings(cache_size=0))
        for _ in range(12):
            assert handler.get_table(DB, "u").sd.parameters == {"sd.param": "u"}
            assert handler.get_table(DB, "big").sd.parameters == {"sd.param": "big"}
        with engine.connect() as conn:
            plans = conn.exec_driver_sql(
                "SELECT statement, parameter_types::text, generic_plans, custom_plans"
                " FROM pg_prepared_statements"
                " WHERE statement LIKE '%%PARTITION_KEYS%%' AND statement LIKE '%%SERDE_PARAMS%%'"
            ).all()
    finally:
        engine.dispose()
    assert len(plans) == 1, plans
    statement, types, generic, custom = plans[0]
    assert "unnest" not in statement.lower() and "[]" not in types, plans
    # Of its 24 runs, the sixth prepared it: that one and the 18 after ran on the plan made
    # once, none on a plan made for their values.
    assert (generic, custom) == (19, 0), plans
