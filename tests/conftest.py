"""Fixtures that start real things: databases, a server on a loopback port, Thrift clients.

Every test that uses `client` runs twice, on SQLite and on PostgreSQL (127.0.0.1:5432, user
postgres, or $METASTORE_TEST_PG). Without PostgreSQL those runs are skipped, except when
CI=true, where they fail.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import sqlalchemy as sa
from core_builders import store_engine
from hms_oracle import hive_metastore_oracle
from hms_postgres import copy_of, filled_template
from hms_process import HiveMetastoreProcess
from java_tools import unavailable
from kdc import KerberosRealm, missing_tools
from pki import Pki
from s3_server import BUCKET, S3Server
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from metastore.config import Settings
from metastore.hms.handler import Handler
from metastore.hms.server import MetastoreServer
from metastore.store import migrate, transactions

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The job's tests need PySpark (and Java): without them they are not collected, except with
# CI=true, where that is an error.
if importlib.util.find_spec("pyspark") is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("pyspark is required when CI=true")
    collect_ignore_glob = ["job/test_analyze*.py", "spark_stats/test_spark_golden.py"]

PG_ADMIN_URL = os.environ.get(
    "METASTORE_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


def _postgres_or_skip() -> sa.Engine:
    engine = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect():
            pass
    except sa.exc.OperationalError as e:
        engine.dispose()
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is required when CI=true and is unreachable: {e}")
        pytest.skip(f"PostgreSQL unreachable at {PG_ADMIN_URL}")
    return engine


def empty_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """The URL of a new, empty database of BACKEND, dropped afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'metastore.db'}"
        return
    admin = _postgres_or_skip()
    name = f"colstats_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    try:
        yield sa.make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new empty database per test, on each backend."""
    yield from empty_database(request.param, tmp_path)


@pytest.fixture(scope="module", params=BACKENDS)
def migrated_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database with the schema, shared by the tests of a module, on each backend."""
    for url in empty_database(request.param, tmp_path_factory.mktemp("db")):
        migrate.upgrade(url)
        yield url


@pytest.fixture(scope="module")
def store(migrated_url: str) -> Iterator[sa.Engine]:
    """An engine of migrated_url's database, as the server makes them."""
    engine = store_engine(migrated_url)
    yield engine
    engine.dispose()


class RunningServer:
    """A server as SETTINGS describe it, in a thread of this process, on a free loopback port
    (with at most 8 workers)."""

    def __init__(self, url: str, settings: Settings) -> None:
        if settings.warehouse is None:  # never the user's data directory
            settings = dataclasses.replace(settings, warehouse=tempfile.mkdtemp(prefix="wh-"))
        self.engine = transactions.create_engine(url, pool_size=4)
        settings = dataclasses.replace(settings, workers=min(settings.workers, 8))
        self.handler = Handler(transactions.Transactions(self.engine), settings)
        self.handler.ensure_default_database()
        self.server = MetastoreServer.from_settings(
            self.handler, settings, host="127.0.0.1", port=0
        )
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = url
        self.settings = settings

    @property
    def port(self) -> int:
        return self.server.port

    def stop(self) -> None:
        self.server.stop()
        self.thread.join(timeout=10)
        self.engine.dispose()


@pytest.fixture(scope="module")
def server(migrated_url: str) -> Iterator[RunningServer]:
    """A server on an ephemeral loopback port that returns bit vectors and histograms."""
    running = RunningServer(migrated_url, Settings(fetch_bitvector=True, fetch_histogram=True))
    yield running
    running.stop()


def connect(
    port: int, *, framed: bool = False
) -> tuple[ThriftHiveMetastore.Client, TTransport.TTransportBase]:
    socket = TSocket.TSocket("127.0.0.1", port)
    socket.setTimeout(30_000)
    transport = (
        TTransport.TFramedTransport(socket) if framed else TTransport.TBufferedTransport(socket)
    )
    client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))
    transport.open()
    return client, transport


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> bool:
    """Whether CONDITION holds within SECONDS (polled): for what a server thread or process
    does after the client has seen its part."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture(scope="module")
def engine(server: RunningServer) -> Iterator[sa.Engine]:
    """An engine on the server's own database, to check which rows a call left behind."""
    eng = sa.create_engine(server.url)
    yield eng
    eng.dispose()


@pytest.fixture
def client(server: RunningServer) -> Iterator[ThriftHiveMetastore.Client]:
    """A generated client connected to `server`."""
    c, transport = connect(server.port)
    yield c
    transport.close()


@pytest.fixture
def db_name() -> str:
    """A database name no other test uses."""
    return f"db_{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One local Spark session for every test of the job, with the settings of the session
    the job creates, but for Arrow batches of 256 rows: with two files per partition they
    make every partition's statistics a merge of several partial states from several tasks.
    A session time zone other than UTC must not change timestamps."""
    from pyspark.sql import SparkSession

    from metastore.job.analyze import SESSION_SETTINGS

    os.environ["PYSPARK_PYTHON"] = sys.executable
    warehouse = tmp_path_factory.mktemp("warehouse")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("colstats tests")
        .config(map=SESSION_SETTINGS)
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.warehouse.dir", str(warehouse))
        .config("spark.sql.session.timeZone", "America/Los_Angeles")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "256")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def hms_oracle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveMetastoreProcess]:
    """The real Hive Metastore 2.3.10 that tests compare colstats with, one for the session
    (tests/hms_oracle.py says what it has and how tests share it)."""
    with hive_metastore_oracle(tmp_path_factory.mktemp("hms-oracle")) as hms:
        yield hms


@pytest.fixture(scope="session")
def hms_postgres_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL database that HMS 2.3.10 made and filled, once for the session, its name:
    the template of `hms_database` (tests/hms_postgres.py)."""
    _postgres_or_skip().dispose()
    with filled_template(PG_ADMIN_URL, tmp_path_factory.mktemp("hms-postgres")) as name:
        yield name


@pytest.fixture
def hms_database(hms_postgres_template: str) -> Iterator[str]:
    """The URL of a copy of the database HMS 2.3.10 made and filled, for one test."""
    with copy_of(PG_ADMIN_URL, hms_postgres_template) as url:
        yield url


@pytest.fixture(scope="session")
def kerberos_realm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KerberosRealm]:
    """A KDC for COLSTATS.TEST on 127.0.0.1, started for the session. Its KRB5_CONFIG and
    replay-cache directory are set in this process's environment for the session: servers
    started in process accept tickets with them, Python clients get tickets with them."""
    missing = missing_tools()
    if missing:
        unavailable(f"{', '.join(missing)} not found (apt-get install krb5-kdc krb5-user)")
    for module in ("gssapi", "puresasl", "kerberos"):
        if importlib.util.find_spec(module) is None:
            unavailable(f"the {module} package is missing (pip install -e '.[kerberos,test]')")
    realm = KerberosRealm(tmp_path_factory.mktemp("krb")).start()
    saved = {key: os.environ.get(key) for key in realm.env}
    os.environ.update(realm.env)
    try:
        yield realm
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        realm.stop()


@pytest.fixture(scope="session")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    """A test CA with server and client certificates (see tests/pki.py)."""
    if shutil.which("openssl") is None:
        unavailable("openssl is not installed")
    return Pki(tmp_path_factory.mktemp("pki")).make()


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """An S3-compatible server on loopback (moto's, checking credentials; tests/s3_server.py)
    with the bucket `lake`."""
    if importlib.util.find_spec("moto") is None:
        unavailable("moto is not installed (pip install -e '.[test]')")
    server = S3Server(tmp_path_factory.mktemp("s3"))
    server.filesystem().create_dir(BUCKET)
    yield server
    server.stop()
