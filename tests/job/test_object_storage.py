"""The statistics job on object storage: a real S3-compatible server on loopback (moto's
server, which checks credentials; tests/s3_server.py), tables registered at s3a:// locations
and analyzed by name, --path given as s3:// with the settings in its query, and the failures a
user meets (refused credentials, no such bucket, an endpoint that does not answer, a file
system PyArrow cannot open), each one line before Spark starts."""

from __future__ import annotations

import concurrent.futures
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pyarrow.fs as pafs
import pytest
from analyze_data import COLUMNS, SMALL, Col, expect_all
from conftest import RunningServer
from job_checks import (
    KEY,
    MAIN_PARTS,
    check_objs,
    names_of,
    new_db,
    partition_stats,
    run_job,
    table_stats,
    write_parts,
)
from metadata_builders import database, fields, partition, table
from pyspark.sql import SparkSession
from s3_server import BUCKET, S3Server, free_port, upload

from hive_metastore_thrift import ttypes as t
from metastore.files import listing, locations, object_storage
from metastore.files.errors import FilesError, InvalidLocation
from metastore.job.storage import HIVE_STORAGE

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def driver_settings() -> Iterator[None]:
    """Tests that list in this process leave the process's S3 settings as they were."""
    saved = object_storage.current()
    yield
    object_storage.use(saved)


def conf_options(conf: dict[str, str]) -> list[str]:
    return [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]


def register(client: Any, db: str, name: str, location: str, columns: list[Col]) -> None:
    """An external Parquet table at LOCATION partitioned by KEY, as Hive or Spark registers
    it, with a partition per folder."""
    inp, out, serde, params = HIVE_STORAGE["parquet"]

    def sd(where: str) -> t.StorageDescriptor:
        return t.StorageDescriptor(
            cols=fields(*((c.name, c.hive_type) for c in columns)),
            location=where,
            inputFormat=inp,
            outputFormat=out,
            serdeInfo=t.SerDeInfo(name, serde, dict(params)),
            bucketCols=[],
            sortCols=[],
            parameters={},
            compressed=False,
            numBuckets=-1,
        )

    client.create_database(database(db, locationUri=f"s3a://{BUCKET}/{db}.db"))
    client.create_table(
        table(
            db,
            name,
            sd=sd(location),
            keys=fields((KEY, "string")),
            tableType="EXTERNAL_TABLE",
            parameters={"EXTERNAL": "TRUE"},
        )
    )
    parts = [
        partition(db, name, [value], sd=sd(f"{location}/{folder}"))
        for value, folder in (
            (v or "__HIVE_DEFAULT_PARTITION__", n) for v, (n, _) in MAIN_PARTS.items()
        )
    ]
    client.add_partitions(parts)


def run_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "metastore.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


# ------------------------------------------------------------------------------------------
# Exact statistics, as on local files


def test_a_table_registered_on_s3a_is_analyzed_by_name_exactly(
    client: Any,
    spark: SparkSession,
    server: RunningServer,
    s3: S3Server,
    tmp_path: Path,
    driver_settings: None,
) -> None:
    data = write_parts(tmp_path / "events", {v: rows for v, (_, rows) in MAIN_PARTS.items()})
    by_part, whole = expect_all(
        COLUMNS, names_of(data, {v: name for v, (name, _) in MAIN_PARTS.items()})
    )
    location = upload(s3, tmp_path / "events", f"events-{uuid.uuid4().hex[:8]}")
    db = new_db()
    register(client, db, "events", location, COLUMNS)

    run_job(spark, server, f"{db}.events", *conf_options(s3.spark_conf()))

    got = partition_stats(client, db, "events", COLUMNS)
    assert sorted(got) == sorted(by_part)
    for part, objs in got.items():
        check_objs(objs, by_part[part], COLUMNS, f"partition {part}")
    check_objs(table_stats(client, db, "events", COLUMNS), whole, COLUMNS, "table")
    for name, rows in MAIN_PARTS.values():
        stored = client.get_partition_by_name(db, "events", name)
        assert stored.parameters["numRows"] == str(rows)
        assert stored.parameters["numFiles"] == "2"
        assert stored.sd.location == f"{location}/{name}"  # kept as registered


def test_path_with_settings_in_its_query_as_a_user_types_it(
    client: Any, server: RunningServer, s3: S3Server, tmp_path: Path
) -> None:
    """`metastore analyze` with --path s3://...?endpoint_override=...: the table is registered
    at the location without the query, and no secret reaches the output."""
    data = write_parts(tmp_path / "t", {"1": 120, "2": 80}, SMALL, seed=5)
    by_part, whole = expect_all(SMALL, names_of(data, {"1": "ds=1", "2": "ds=2"}))
    prefix = f"query-{uuid.uuid4().hex[:8]}"
    upload(s3, tmp_path / "t", prefix)
    query = urlencode(  # a secret key may hold + and /: encoded, as in any URL
        {
            "endpoint_override": f"127.0.0.1:{s3.port}",
            "scheme": "http",
            "region": "us-east-1",
            "access_key": s3.access_key,
            "secret_key": s3.secret_key,
        }
    )
    db = new_db()
    done = run_cli(
        "analyze",
        f"{db}.t",
        "--uri",
        f"thrift://127.0.0.1:{server.port}",
        "--path",
        f"s3://{BUCKET}/{prefix}?{query}",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert s3.secret_key not in done.stdout + done.stderr
    stored = client.get_table(db, "t")
    assert stored.sd.location == f"s3://{BUCKET}/{prefix}"
    assert sorted(p.sd.location for p in client.get_partitions(db, "t", -1)) == [
        f"s3://{BUCKET}/{prefix}/ds=1",
        f"s3://{BUCKET}/{prefix}/ds=2",
    ]
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")


# ------------------------------------------------------------------------------------------
# Failures: one line each, before Spark starts


def _failure(server: RunningServer, path: str, conf: dict[str, str], code: int = 1) -> str:
    done = run_cli(
        "analyze",
        f"{new_db()}.t",
        "--uri",
        f"thrift://127.0.0.1:{server.port}",
        "--path",
        path,
        *conf_options(conf),
        timeout=120,
    )
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr and not done.stdout.strip()
    for key, value in conf.items():
        if key.endswith(("secret.key", "access.key")):
            assert value not in done.stderr
    return lines[0]


def test_refused_credentials_are_one_line(
    server: RunningServer, s3: S3Server, tmp_path: Path
) -> None:
    location = upload(s3, _one_file(tmp_path), "creds")
    conf = {**s3.spark_conf(), "spark.hadoop.fs.s3a.secret.key": "not-the-secret"}
    line = _failure(server, location, conf)
    assert line.startswith(f"metastore analyze: error: cannot list {location}: ")
    assert "the credentials were refused: check spark.hadoop.fs.s3a.access.key" in line


def test_a_missing_bucket_is_one_line(server: RunningServer, s3: S3Server) -> None:
    """Exit 2: --path names what is not there."""
    line = _failure(server, "s3a://no-such-bucket/sales", s3.spark_conf(), code=2)
    assert line == (
        "metastore analyze: error: s3a://no-such-bucket/sales does not exist: the bucket "
        f"no-such-bucket does not exist at {s3.endpoint}"
    )


def test_an_endpoint_that_does_not_answer_is_one_line(server: RunningServer, s3: S3Server) -> None:
    endpoint = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    conf = {**s3.spark_conf(), "spark.hadoop.fs.s3a.endpoint": endpoint}
    line = _failure(server, "s3a://lake/sales", conf)
    assert f"{endpoint} does not answer: check spark.hadoop.fs.s3a.endpoint" in line


def test_a_file_system_pyarrow_cannot_open_offers_spark_table(server: RunningServer) -> None:
    line = _failure(server, "hdfs://127.0.0.1:1/warehouse/sales", {})
    assert line.startswith("metastore analyze: error: the job cannot read hdfs://127.0.0.1:1/")
    assert line.endswith(
        "give --spark-table DB.TABLE so that Spark reads the files and the job computes "
        "the statistics"
    )


def test_an_unknown_option_in_the_query_is_refused(server: RunningServer) -> None:
    done = run_cli(
        "analyze",
        "db.t",
        "--uri",
        f"thrift://127.0.0.1:{server.port}",
        "--path",
        "s3://lake/sales?endpoint=x",
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "metastore analyze: error: --path s3://lake/sales: unknown option 'endpoint' in the "
        "location's query; known: endpoint_override, region, scheme, access_key, secret_key, "
        "session_token"
    ]


def _one_file(tmp_path: Path) -> Path:
    folder = tmp_path / "one"
    write_parts(folder, {"1": 5}, SMALL)
    return folder


# ------------------------------------------------------------------------------------------
# Listing


def test_listing_is_paged_not_one_call_per_folder(s3: S3Server, driver_settings: None) -> None:
    """1,005 objects in 201 partition folders: two pages of one listing (a thousand objects
    a page) after a look at the folder itself, not a call per folder."""
    fs = s3.filesystem()
    prefix = f"many-{uuid.uuid4().hex[:8]}"

    def put(n: int) -> None:
        with fs.open_output_stream(f"{BUCKET}/{prefix}/ds={n // 5}/part-{n % 5}.parquet") as f:
            f.write(b"x")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(put, range(1005)))
    object_storage.use(object_storage.S3Settings.from_spark_conf(s3.spark_conf(), {}))
    before = s3.requests("list-type=2"), s3.requests("max-keys=1000")
    listed = listing.list_files(f"s3a://{BUCKET}/{prefix}")
    after = s3.requests("list-type=2"), s3.requests("max-keys=1000")
    assert (after[0] - before[0], after[1] - before[1]) == (3, 2)
    assert len(listed.files) == 201
    assert all(len(found) == 5 for found in listed.files.values())
    assert listed.files["ds=7"][0] == (f"s3a://{BUCKET}/{prefix}/ds=7/part-0.parquet", 1)
    assert listed.folders["ds=7"] == f"s3a://{BUCKET}/{prefix}/ds=7"


# ------------------------------------------------------------------------------------------
# Settings


def test_settings_come_from_spark_hadoop_keys_per_bucket_first() -> None:
    settings = object_storage.S3Settings.from_spark_conf(
        {
            "spark.hadoop.fs.s3a.endpoint": "http://minio:9000",
            "spark.hadoop.fs.s3a.bucket.other.endpoint": "https://other:443",
            "spark.hadoop.fs.s3a.path.style.access": "false",
            "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1",
            "spark.hadoop.fs.s3a.connection.establish.timeout": "2s",
            "spark.hadoop.fs.s3a.attempts.maximum": "5",
            "spark.executor.memory": "4g",
        },
        {},
    )
    lake = settings.options("lake")
    assert lake["endpoint_override"] == "minio:9000" and lake["scheme"] == "http"
    assert lake["region"] == "eu-west-1" and lake["force_virtual_addressing"] is True
    assert lake["connect_timeout"] == 2.0
    assert settings.options("other")["endpoint_override"] == "other:443"
    assert settings.options("other")["scheme"] == "https"
    assert "access_key" not in lake  # left to the AWS SDK's chain in each process


def test_credentials_from_the_aws_environment_travel_with_the_settings() -> None:
    env = {
        "AWS_ACCESS_KEY_ID": "AKIA1",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t",
        "AWS_SESSION_TOKEN": "tk",
        "AWS_REGION": "ap-south-1",
    }
    settings = object_storage.S3Settings.from_spark_conf({}, env)
    options = settings.options("lake")
    assert options["region"] == "ap-south-1"
    assert (options["access_key"], options["secret_key"], options["session_token"]) == (
        "AKIA1",
        "s3cr3t",
        "tk",
    )
    # Spark's settings win over the environment.
    given = object_storage.S3Settings.from_spark_conf(
        {"spark.hadoop.fs.s3a.access.key": "A2", "spark.hadoop.fs.s3a.secret.key": "S2"}, env
    )
    assert given.options("lake")["access_key"] == "A2"
    assert "session_token" not in given.options("lake")


def test_secrets_never_print() -> None:
    settings = object_storage.S3Settings.from_spark_conf(
        {
            "spark.hadoop.fs.s3a.access.key": "AKIA-VISIBLE-NOT",
            "spark.hadoop.fs.s3a.bucket.b.secret.key": "very-secret",
            "spark.hadoop.fs.s3a.session.token": "token-secret",
            "spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9",
        },
        {},
    )
    shown = repr(settings) + str(settings)
    for secret in ("AKIA-VISIBLE-NOT", "very-secret", "token-secret"):
        assert secret not in shown
    assert "endpoint=http://127.0.0.1:9" in shown


def test_a_query_becomes_settings_of_its_bucket() -> None:
    location, conf = object_storage.split_location(
        "s3://lake/t?endpoint_override=h:1&scheme=http&access_key=A&secret_key=S"
    )
    assert location == "s3://lake/t"
    assert conf == [
        ("spark.hadoop.fs.s3a.bucket.lake.endpoint", "h:1"),
        ("spark.hadoop.fs.s3a.bucket.lake.connection.ssl.enabled", "false"),
        ("spark.hadoop.fs.s3a.bucket.lake.access.key", "A"),
        ("spark.hadoop.fs.s3a.bucket.lake.secret.key", "S"),
    ]
    assert object_storage.split_location("file:/a?b") == ("file:/a?b", [])
    with pytest.raises(InvalidLocation, match="unknown option 'x'"):
        object_storage.split_location("s3a://lake/t?x=1")


def test_a_location_without_a_bucket_is_refused() -> None:
    with pytest.raises(FilesError, match="names no bucket"):
        locations.filesystem("s3a:///sales")


# ------------------------------------------------------------------------------------------
# The server on object-storage locations


def test_the_server_leaves_object_storage_alone(
    client: Any, s3: S3Server, tmp_path: Path, db_name: str
) -> None:
    """No fast statistics from files on object storage, and a drop with deleteData leaves
    the objects (docs/engines/index.md): the server has no credentials of its own for them."""
    location = upload(s3, _one_file(tmp_path), f"kept-{uuid.uuid4().hex[:8]}")
    register(client, db_name, "kept", location, SMALL)
    stored = client.get_partition(db_name, "kept", ["2024-01-01"])
    assert "numFiles" not in stored.parameters and "totalSize" not in stored.parameters
    client.drop_table(db_name, "kept", True)
    prefix = location.removeprefix("s3a://")
    left = s3.filesystem().get_file_info(pafs.FileSelector(prefix, recursive=True))
    kept = sorted(i.base_name for i in left if i.type == pafs.FileType.File)
    assert kept == ["part-0.parquet", "part-1.parquet"]
