"""Hive's own Java Thrift client (hive-metastore-2.3.10.jar from pyspark) against the server.

java/HiveClientInterop.java uses the raw generated `ThriftHiveMetastore.Client` over an unframed
socket and the binary protocol, as Hive 2.3 and Spark do. Its `run` phase writes statistics of
every kind that client knows, reads them back, checks the error paths and prints a line per
check, leaving the table in place; this test then reads what it wrote through the Python client
to compare exact values, and its `drop` phase drops the table and the database.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from java_tools import compile_java, pyspark_jars

from hive_metastore_thrift import ttypes as t

JAVA_SOURCE = Path(__file__).parent / "java" / "HiveClientInterop.java"
TABLE = "interop_stats"

# The jars the generated client needs: the client and its structs (hive-metastore), Thrift, fb303
# (the service's parent), hive-common with commons-lang3 and guava (the structs' constructors
# intern strings with them), hadoop-client-api (for Warehouse.makePartName) and slf4j.
JARS = (
    "hive-metastore-2.3.10.jar",
    "hive-common-2.3.10.jar",
    "libthrift-*.jar",
    "libfb303-*.jar",
    "commons-lang3-*.jar",
    "guava-*.jar",
    "hadoop-client-api-*.jar",
    "slf4j-api-*.jar",
)

COLUMNS = (
    "c_boolean",
    "c_tinyint",
    "c_int",
    "c_bigint",
    "c_float",
    "c_double",
    "c_decimal",
    "c_string",
    "c_varchar",
    "c_binary",
    "c_date",
)
# Partition names as Hive escapes them; the last value is "2024/01:02=x %é".
PART_NAMES = ("ds=2024-01-01/hr=0", "ds=2024-01-01/hr=23", "ds=2024%2F01%3A02%3Dx %25é/hr=7")

RUN_CHECKS = (
    "create_database",
    "create_table",
    "add_partition",
    "add_partitions",
    "get_partition_names",
    "get_partitions_by_names",
    "update_table_column_statistics",
    *(f"update_partition_column_statistics [{i}]" for i in range(len(PART_NAMES))),
    *(f"get_table_column_statistics {c}" for c in COLUMNS),
    *(
        f"get_partition_column_statistics [{i}] {c}"
        for i in range(len(PART_NAMES))
        for c in COLUMNS
    ),
    "names are case-insensitive",
    "update_table_column_statistics unknown column -> InvalidObjectException",
    "update_partition_column_statistics unknown column -> InvalidObjectException",
    "update_table_column_statistics wrong kind -> InvalidInputException",
    "update_table_column_statistics unknown table -> NoSuchObjectException",
    "get_table_column_statistics unknown table -> NoSuchObjectException",
    "get_partition_column_statistics unknown partition -> NoSuchObjectException",
    "get_table unknown table -> NoSuchObjectException",
    "get_partition_names unknown table -> MetaException",
    "delete_table_column_statistics",
    "get_table_column_statistics after delete -> NoSuchObjectException",
    "delete_table_column_statistics again -> NoSuchObjectException",
    "other columns keep their statistics",
    "delete_partition_column_statistics",
    "get_partition_column_statistics after delete -> NoSuchObjectException",
)
DROP_CHECKS = (
    "drop_table",
    "get_table after drop -> NoSuchObjectException",
    "get_table_column_statistics after drop -> NoSuchObjectException",
    "drop_database",
)


@pytest.fixture(scope="module")
def java_classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The classpath of the compiled HiveClientInterop: its classes and pyspark's jars."""
    jars = pyspark_jars(JARS)
    return compile_java(JAVA_SOURCE, jars, tmp_path_factory.mktemp("interop-classes"))


def _run_java(classpath: str, port: int, db_name: str, mode: str, checks: tuple[str, ...]) -> None:
    """Run HiveClientInterop in MODE and assert that it passed every check in CHECKS."""
    quiet = "-Dslf4j.internal.verbosity=ERROR"  # no SLF4J binding is needed; don't warn of it
    done = subprocess.run(
        ["java", quiet, "-cp", classpath, "HiveClientInterop", str(port), db_name, mode],
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        timeout=300,
    )
    report = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, report
    lines = set(done.stdout.splitlines())
    missing = [c for c in checks if f"OK {c}" not in lines]
    assert not missing, f"checks not reported as passed: {missing}\n{report}"


def _decimal(unscaled: int, scale: int) -> t.Decimal:
    """A Thrift Decimal with the minimal big-endian two's complement bytes, as Java writes it."""
    size = (unscaled if unscaled >= 0 else ~unscaled).bit_length() // 8 + 1
    return t.Decimal(unscaled=unscaled.to_bytes(size, "big", signed=True), scale=scale)


def _stats(client: Any, db_name: str, column: str, part_name: str | None = None) -> Any:
    """The statsData union of one column, at table level or of PART_NAME."""
    if part_name is None:
        got = client.get_table_column_statistics(db_name, TABLE, column)
    else:
        got = client.get_partition_column_statistics(db_name, TABLE, part_name, column)
    [obj] = got.statsObj
    return obj.statsData


@pytest.mark.java
def test_hive_java_client(java_classpath: str, server: Any, client: Any, db_name: str) -> None:
    _run_java(java_classpath, server.port, db_name, "run", RUN_CHECKS)

    # What the Java client wrote, read through the Python client (values from statistics()).
    assert sorted(client.get_partition_names(db_name, TABLE, -1)) == sorted(PART_NAMES)
    decimals = _stats(client, db_name, "c_decimal").decimalStats
    assert decimals.lowValue == _decimal(-12345678900123456789, 10)
    assert decimals.highValue == _decimal(10**38 - 1, 10)
    assert (decimals.numNulls, decimals.numDVs) == (0, 42)
    ints = _stats(client, db_name, "c_int").longStats
    assert (ints.lowValue, ints.highValue) == (-(2**31), 2**31 - 1)
    assert ints.bitVectors == b"{0, 1, 2}{0, 3}"
    doubles = _stats(client, db_name, "c_double").doubleStats
    assert (doubles.lowValue, doubles.highValue) == (-1.7976931348623157e308, 5e-324)
    bigints = _stats(client, db_name, "c_bigint", PART_NAMES[0]).longStats
    assert (bigints.lowValue, bigints.highValue) == (-(2**63) + 1, 2**63 - 2)
    escaped_part = PART_NAMES[2]
    part_decimals = _stats(client, db_name, "c_decimal", escaped_part).decimalStats
    assert part_decimals.lowValue == _decimal(-1350, 2)  # -13.50
    assert part_decimals.highValue == _decimal(200, 2)  # 2.00
    strings = _stats(client, db_name, "c_string", PART_NAMES[1]).stringStats
    assert strings == t.StringColumnStatsData(
        maxColLen=102, avgColLen=13.0, numNulls=9, numDVs=9, bitVectors=b"{0}{1, 30}"
    )
    binaries = _stats(client, db_name, "c_binary", escaped_part).binaryStats
    assert binaries == t.BinaryColumnStatsData(maxColLen=1_048_579, avgColLen=2051.25, numNulls=4)
    dates = _stats(client, db_name, "c_date", PART_NAMES[1]).dateStats
    assert (dates.lowValue, dates.highValue) == (t.Date(19_725), t.Date(19_743))
    with pytest.raises(t.NoSuchObjectException):  # deleted by the Java client
        client.get_partition_column_statistics(db_name, TABLE, escaped_part, "c_date")

    _run_java(java_classpath, server.port, db_name, "drop", DROP_CHECKS)


LOCK_SOURCE = Path(__file__).parent / "java" / "HiveLockClient.java"
LOCK_CHECKS = (
    "lock isAcid=true",
    "lock isAcid=false waits",
    "show_locks",
    "show_locks names the holder",
    "heartbeat",
    "check_lock acquires",
    "check_lock after unlock -> NoSuchLockException",
)


@pytest.mark.java
def test_hive_java_client_takes_locks(
    server: Any, tmp_path_factory: pytest.TempPathFactory, db_name: str
) -> None:
    """Hive 2.3's generated client takes, shows, heartbeats and releases HMS locks: its
    LockComponent's isAcid is field 7, which Hive 4 calls isTransactional."""
    classpath = compile_java(LOCK_SOURCE, pyspark_jars(JARS), tmp_path_factory.mktemp("locks"))
    java = ["java", "-Dslf4j.internal.verbosity=ERROR", "-cp", classpath, "HiveLockClient"]
    done = subprocess.run(
        [*java, str(server.port), db_name],
        capture_output=True,
        encoding="utf-8",
        errors="replace",
        timeout=300,
    )
    report = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, report
    assert [line.removeprefix("OK ") for line in done.stdout.splitlines()] == list(LOCK_CHECKS)
