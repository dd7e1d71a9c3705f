"""The real Hive Metastore 2.3.10 on PostgreSQL (pyspark's jars, Debian's JDBC driver), for
the tests of adopting an HMS database: a database whose schema HMS itself made (DataNucleus's
auto-create; its transaction tables as Hive's script for them makes them, since HMS's
TxnHandler makes them only on Derby), filled through HMS's own calls.

HMS fills one template database per session (`hms_postgres_template` in conftest); a test
takes a copy of it (PostgreSQL's CREATE DATABASE ... TEMPLATE, a file copy) and may start HMS
on its copy again (`hive_metastore_on`), with schema verification on when it checks that HMS
still accepts the database.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import metadata_builders as mb
import sqlalchemy as sa
from hms_oracle import JAVA_OPTIONS, client, jars
from hms_process import (
    JDBC_DRIVER,
    HiveMetastoreProcess,
    hive_metastore_on_postgres,
    make_postgres_transaction_tables,
)
from java_tools import unavailable

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

Client = ThriftHiveMetastore.Client


def jdbc_driver() -> Path:
    """Debian's PostgreSQL JDBC driver (else unavailable)."""
    if not JDBC_DRIVER.exists():
        unavailable(f"{JDBC_DRIVER} is missing (apt-get install libpostgresql-jdbc-java)")
    return JDBC_DRIVER


@contextlib.contextmanager
def hive_metastore_on(url: str, home: Path, *, verify: bool) -> Iterator[HiveMetastoreProcess]:
    """HMS 2.3.10 on the PostgreSQL database at URL, listening (hms_process.postgres_conf)."""
    jdbc_driver()
    with hive_metastore_on_postgres(
        jars(), url, home, verify=verify, java_options=JAVA_OPTIONS
    ) as hms:
        yield hms


def fill(hms: Client, warehouse: Path) -> None:
    """What HMS holds before adoption: two databases (one with parameters), a partitioned
    managed table with partitions, parameters and statistics of both levels, an external
    table with bucket and sort columns and skewed values, a view, and a function."""
    hms.create_database(
        mb.database("sales", locationUri=f"file:{warehouse}/sales.db", parameters={"team": "a"})
    )
    hms.create_database(mb.database("empty", locationUri=f"file:{warehouse}/empty.db"))
    orders = mb.table(
        "sales",
        "orders",
        cols=mb.fields(("id", "bigint"), ("amount", "double"), ("note", "string", "free text")),
        keys=mb.fields(("ds", "string")),
        parameters={"numRows": "30", "owner_team": "a"},
    )
    orders.sd.location = f"file:{warehouse}/sales.db/orders"
    hms.create_table(orders)
    for day in ("2024-01-01", "2024-01-02", "2024-01-03"):
        hms.add_partition(
            mb.partition(
                "sales",
                "orders",
                [day],
                sd=mb.storage(orders.sd.cols, f"file:{warehouse}/sales.db/orders/ds={day}"),
                parameters={"numRows": "10"},
            )
        )
    hms.update_table_column_statistics(
        mb.column_stats("sales", "orders", [mb.long_stats("id", 1, 30), mb.string_stats("note")])
    )
    for i, day in enumerate(("2024-01-01", "2024-01-02")):
        hms.update_partition_column_statistics(
            mb.column_stats(
                "sales", "orders", [mb.long_stats("id", i * 10, i * 10 + 9)], f"ds={day}"
            )
        )
    skewed = t.SkewedInfo(["name"], [["a"], ["b"]], {("a",): f"file:{warehouse}/skew/a"})
    events_sd = mb.storage(
        mb.fields(("id", "bigint"), ("name", "string")),
        f"file:{warehouse}/events",
        bucketCols=["id"],
        numBuckets=8,
        sortCols=[t.Order("id", 1)],
        skewedInfo=skewed,
    )
    hms.create_table(
        mb.table(
            "sales",
            "events",
            sd=events_sd,
            tableType="EXTERNAL_TABLE",
            parameters={"EXTERNAL": "TRUE"},
        )
    )
    view = mb.table(
        "sales",
        "big_orders",
        tableType="VIRTUAL_VIEW",
        viewOriginalText="select * from orders where amount > 100",
        viewExpandedText="select `orders`.`id` from `sales`.`orders` where `amount` > 100",
    )
    view.sd.location = None
    hms.create_table(view)
    # A table and partition made and dropped, so that DataNucleus makes the tables of what
    # a drop deletes with them (privileges, constraints), as a database in service has them.
    scratch = mb.table("empty", "scratch", keys=mb.fields(("ds", "string")))
    scratch.sd.location = f"file:{warehouse}/empty.db/scratch"
    hms.create_table(scratch)
    hms.add_partition(
        mb.partition(
            "empty", "scratch", ["1"], sd=mb.storage(location=f"{scratch.sd.location}/ds=1")
        )
    )
    hms.drop_partition("empty", "scratch", ["1"], True)
    hms.drop_table("empty", "scratch", True)
    hms.create_function(
        t.Function(
            "to_cents",
            "sales",
            "com.example.ToCents",
            "hive",
            t.PrincipalType.USER,
            0,
            t.FunctionType.JAVA,
            [t.ResourceUri(t.ResourceType.JAR, f"file:{warehouse}/udfs.jar")],
        )
    )


@contextlib.contextmanager
def filled_template(admin_url: str, home: Path) -> Iterator[str]:
    """A PostgreSQL database made and filled by HMS 2.3.10 (with its transaction tables),
    its name; dropped afterwards."""
    name = f"colstats_hms_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    url = sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        make_postgres_transaction_tables(url)
        with hive_metastore_on(url, home, verify=False) as hms:
            hms_client, transport = client(hms.port)
            try:
                fill(hms_client, home / "warehouse")
            finally:
                transport.close()
        yield name
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@contextlib.contextmanager
def copy_of(admin_url: str, template: str) -> Iterator[str]:
    """A new database copied from TEMPLATE, its URL; dropped afterwards."""
    name = f"colstats_hmscopy_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    try:
        yield sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()
