"""The Flight door scans tables on object storage with the server's own S3A settings: `metastore
serve` started as a user starts it, the settings in its configuration file (`[s3a]`) or in
METASTORE_S3A, the credentials from the AWS environment, against the S3-compatible server on
loopback that the job's tests use (it checks credentials). Refused credentials and an
endpoint that does not answer are one-line errors that name the server's settings; the
secrets never reach the log."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
import pytest
from airport_client import AirportClient
from conftest import connect
from duckdb_filters import column, compare, constant, json_filters
from metadata_builders import database, fields, partition, storage, table
from s3_server import BUCKET, REGION, S3Server, free_port, upload

from hive_metastore_thrift import ttypes as t

ROOT = Path(__file__).resolve().parents[2]
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUTPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"


class Served:
    """`metastore serve` with a Flight port, as a subprocess; its log when stopped."""

    def __init__(self, folder: Path, config: str, env: dict[str, str]) -> None:
        self.thrift_port, self.flight_port = free_port(), free_port()
        path = folder / "metastore.toml"
        path.write_text(f"flight_port = {self.flight_port}\n{config}")
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "metastore.cli", "--config", str(path), "serve"),
                *("--host", "127.0.0.1", "--port", str(self.thrift_port)),
                *("--db", f"sqlite:///{folder / 'm.db'}", "--warehouse", str(folder / "wh")),
            ],
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**_without_aws(os.environ), **env, "PYTHONWARNINGS": "ignore"},
        )
        self.log = ""
        self.airport = AirportClient(f"grpc://127.0.0.1:{self.flight_port}", "hive")
        deadline = time.monotonic() + 60
        while True:
            try:
                self.airport.create_transaction()
                break
            except flight.FlightUnavailableError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.process.kill()
                    raise AssertionError(self.process.communicate()[1]) from None
                time.sleep(0.2)

    def stop(self) -> str:
        self.airport.close()
        self.process.send_signal(signal.SIGTERM)
        _, self.log = self.process.communicate(timeout=60)
        assert self.process.returncode == 0, self.log
        return self.log


def _without_aws(env: os._Environ[str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not k.startswith(("AWS_", "METASTORE_"))}


@pytest.fixture(scope="module")
def files(s3: S3Server, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two partitions of Parquet files on S3; their table's s3a:// location."""
    local = tmp_path_factory.mktemp("sales")
    for day, amounts in (("2024-01-01", [10, 20, None]), ("2024-01-02", [30])):
        folder = local / f"ds={day}"
        folder.mkdir()
        rows = pa.table(
            {
                "amount": pa.array(amounts, pa.int64()),
                "item": pa.array([f"i{a}" for a in amounts], pa.string()),
            }
        )
        pq.write_table(rows, folder / "part-0.parquet")
    return upload(s3, local, "flight/sales")


def _register(served: Served, location: str) -> None:
    client, transport = connect(served.thrift_port)
    try:
        client.create_database(database("shop", locationUri=f"s3a://{BUCKET}/flight"))
        sd = storage(
            fields(("amount", "bigint"), ("item", "string")),
            location,
            inputFormat=PARQUET_INPUT,
            outputFormat=PARQUET_OUTPUT,
            serdeInfo=t.SerDeInfo("parquet", PARQUET_SERDE, {}),
        )
        client.create_table(table("shop", "sales", sd=sd, keys=fields(("ds", "string"))))
        for day in ("2024-01-01", "2024-01-02"):
            part_sd = storage(
                sd.cols,
                f"{location}/ds={day}",
                inputFormat=PARQUET_INPUT,
                outputFormat=PARQUET_OUTPUT,
                serdeInfo=t.SerDeInfo("parquet", PARQUET_SERDE, {}),
            )
            client.add_partition(partition("shop", "sales", [day], part_sd))
    finally:
        transport.close()


def _s3a_table(s3: S3Server, **overrides: str) -> str:
    settings = {
        "fs.s3a.endpoint": s3.endpoint,
        "fs.s3a.path.style.access": "true",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.endpoint.region": REGION,
        **overrides,
    }
    lines = "".join(f'"{key}" = "{value}"\n' for key, value in settings.items())
    return f"[s3a]\n{lines}"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[Served]]:
    started: list[Served] = []
    yield started
    for server in started:
        if server.process.poll() is None:
            server.process.kill()
            server.process.communicate()


def test_a_table_on_object_storage_is_scanned_with_the_servers_settings(
    s3: S3Server, files: str, tmp_path: Path, served: list[Served]
) -> None:
    # The endpoint in the configuration file, the credentials in the AWS environment.
    env = {"AWS_ACCESS_KEY_ID": s3.access_key, "AWS_SECRET_ACCESS_KEY": s3.secret_key}
    server = Served(tmp_path, _s3a_table(s3), env)
    served.append(server)
    _register(server, files)
    sales = server.airport.tables()[("shop", "sales")]
    rows = server.airport.scan(sales).sort_by([("ds", "ascending"), ("amount", "ascending")])
    assert rows.column("amount").to_pylist() == [10, 20, None, 30]
    assert rows.column("ds").to_pylist() == ["2024-01-01"] * 3 + ["2024-01-02"]
    names = sales.schema.names
    day = compare(
        "COMPARE_EQUAL", column("ds", "VARCHAR", names), constant("2024-01-02", "VARCHAR")
    )
    pruned = server.airport.scan(sales, json_filters=json_filters([day], names))
    assert pruned.column("amount").to_pylist() == [30]
    log = server.stop()
    assert "object storage for scans: S3Settings(" in log
    assert "access.key=***" in log and "secret.key=***" in log
    assert s3.secret_key not in log and s3.access_key not in log


def test_settings_from_the_environment_and_refused_credentials(
    s3: S3Server, files: str, tmp_path: Path, served: list[Served]
) -> None:
    wrong = (
        f"fs.s3a.endpoint={s3.endpoint},fs.s3a.path.style.access=true,"
        f"fs.s3a.endpoint.region={REGION},fs.s3a.access.key={s3.access_key},"
        "fs.s3a.secret.key=not-the-secret"
    )
    server = Served(tmp_path, "", {"METASTORE_S3A": wrong})
    served.append(server)
    _register(server, files)
    sales = server.airport.tables()[("shop", "sales")]
    with pytest.raises(flight.FlightError) as refused:
        server.airport.scan(sales)
    message = str(refused.value).splitlines()[0]
    assert "hive.shop.sales: cannot list" in message
    assert "the credentials were refused: check fs.s3a.access.key, secret.key" in message
    assert "spark.hadoop" not in message and "not-the-secret" not in message
    log = server.stop()
    assert "not-the-secret" not in log


def test_an_endpoint_that_does_not_answer(
    s3: S3Server, files: str, tmp_path: Path, served: list[Served]
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    config = _s3a_table(s3, **{"fs.s3a.endpoint": closed, "fs.s3a.attempts.maximum": "1"})
    env = {"AWS_ACCESS_KEY_ID": s3.access_key, "AWS_SECRET_ACCESS_KEY": s3.secret_key}
    server = Served(tmp_path, config, env)
    served.append(server)
    _register(server, files)
    sales = server.airport.tables()[("shop", "sales")]
    started = time.monotonic()
    with pytest.raises(flight.FlightError) as failed:
        server.airport.scan(sales)
    assert time.monotonic() - started < 60
    message = str(failed.value).splitlines()[0]
    assert f"{closed} does not answer: check fs.s3a.endpoint" in message
    server.stop()
