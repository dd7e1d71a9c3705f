"""A real Hive Metastore 2.3.10 (pyspark's jars, embedded Derby in a temp dir) in a process of
its own, for benchmarks and tests that compare colstats with it (the tests import it through
pytest's `pythonpath`)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from timing import progress, since

# Hive Metastore 2.3.10 as a benchmark opponent: embedded Derby in a temp dir, schema created
# on first use, direct SQL on (its default) and the aggregate stats cache off, so that
# get_aggr_stats_for computes every answer as ours does. Logs go to the temp dir at WARN.
HMS_CONF = {
    "datanucleus.schema.autoCreateAll": "true",
    "hive.metastore.schema.verification": "false",
    "hive.async.log.enabled": "false",
    "datanucleus.connectionPoolingType": "DBCP",
    "hive.metastore.try.direct.sql": "true",
    # Off: with it on (2.3's default), get_aggr_stats_for answers from a cache that a write of
    # statistics leaves as it was (the answer read right after a write is stale).
    "hive.metastore.aggregate.stats.cache.enabled": "false",
}
HMS_START_TIMEOUT_S = 240.0


def pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hms_command(
    jars: Path,
    home: Path,
    port: int,
    java_options: Sequence[str] = (),
    hive_conf: Mapping[str, str] | None = None,
    classpath: Sequence[str] = (),
) -> list[str]:
    """The command that runs HMS: pyspark's JARS (and CLASSPATH, a JDBC driver for a
    database other than Derby) with HMS_CONF and HIVE_CONF."""
    conf = {
        **HMS_CONF,
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={home / 'metastore_db'};create=true"
        ),
        "hive.metastore.warehouse.dir": str(home / "warehouse"),
        **(hive_conf or {}),
    }
    command = [
        "java",
        *java_options,
        f"-Dhive.log.dir={home / 'logs'}",
        "-Dhive.log.level=WARN",
        f"-Dderby.stream.error.file={home / 'derby.log'}",
        f"-Djava.io.tmpdir={home / 'tmp'}",
        "-cp",
        os.pathsep.join([f"{jars}/*", *classpath]),
        "org.apache.hadoop.hive.metastore.HiveMetaStore",
        "-p",
        str(port),
    ]
    for key, value in conf.items():
        command += ["-hiveconf", f"{key}={value}"]
    return command


def _log_tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path | None) -> None:
    """Wait until PROCESS (HMS, or our server when LOG is None) listens on PORT."""
    what = "HMS" if log is not None else "our server"
    deadline = time.monotonic() + HMS_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = _log_tail(log) if log is not None else "(its output is above)"
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{tail}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on {port} in {HMS_START_TIMEOUT_S:.0f} s")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Terminate PROCESS (its own process group), then kill it if it lingers."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


@dataclasses.dataclass(frozen=True)
class HiveMetastoreProcess:
    """A started HMS: PORT it will listen on, HOME (Derby, logs in HOME/logs), the process."""

    port: int
    home: Path
    process: subprocess.Popen[bytes]

    @property
    def log(self) -> Path:
        return self.home / "hms.log"

    def wait(self) -> None:
        """Wait until it listens (HMS_START_TIMEOUT_S at most)."""
        started = time.perf_counter()
        wait_for_port(self.port, self.process, self.log)
        progress(f"hms: listening on {self.port} after {since(started)}")


@contextlib.contextmanager
def started_hive_metastore(
    jars: Path,
    java_options: Sequence[str] = (),
    hive_conf: Mapping[str, str] | None = None,
    home: Path | None = None,
    classpath: Sequence[str] = (),
) -> Iterator[HiveMetastoreProcess]:
    """HMS 2.3.10 starting on a free loopback port with Derby in a temp dir (or in HOME,
    kept afterwards, for a metastore started again on the same Derby), not waited for, so
    that the caller can do something else in the tens of seconds it takes to start.
    HIVE_CONF: settings besides HMS_CONF.

    It runs in its own session, so that Ctrl-C reaches only this script, whose finally
    blocks then stop it and remove the temp dir.
    """
    with contextlib.ExitStack() as stack:
        if home is None:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="colstats-hms-")))
        (home / "tmp").mkdir(exist_ok=True)
        port = free_port()
        with (home / "hms.log").open("ab") as out:
            process = subprocess.Popen(
                hms_command(jars, home, port, java_options, hive_conf, classpath),
                cwd=home,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            yield HiveMetastoreProcess(port, home, process)
        finally:
            stop_process(process)


def make_transaction_tables(
    jars: Path,
    home: Path,
    java_options: Sequence[str] = (),
    hive_conf: Mapping[str, str] | None = None,
    classpath: Sequence[str] = (),
) -> None:
    """Make HMS's transaction tables (HIVE_LOCKS, NEXT_LOCK_ID, TXNS, ...) in the Derby of
    HOME (or the Derby database HIVE_CONF names: HMS runs Derby's statements; on PostgreSQL,
    use make_postgres_transaction_tables), which DataNucleus's auto-create does not make,
    so that the lock calls work: start HMS once with hive.in.test=true and ask for its
    locks, which makes its TxnHandler create them. HMS must then be started again without
    that setting (with it, HMS refuses a lock whose operationType is UNSET, as pyiceberg
    sends)."""
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    from hive_metastore_thrift import ThriftHiveMetastore
    from hive_metastore_thrift import ttypes as t

    conf = {**(hive_conf or {}), "hive.in.test": "true"}
    with started_hive_metastore(jars, java_options, conf, home, classpath) as first:
        first.wait()
        socket = TSocket.TSocket("127.0.0.1", first.port)
        socket.setTimeout(120_000)
        transport = TTransport.TBufferedTransport(socket)
        transport.open()
        try:
            client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
            client.show_locks(t.ShowLocksRequest())
        finally:
            transport.close()


@contextlib.contextmanager
def hive_metastore(jars: Path, *, transactions: bool = False) -> Iterator[tuple[int, Path]]:
    """HMS 2.3.10 on a free loopback port with Derby in a temp dir, listening (with its
    transaction tables, for the lock calls, when TRANSACTIONS); yields (port, home)."""
    with tempfile.TemporaryDirectory(prefix="colstats-hms-") as tmp:
        home = Path(tmp)
        if transactions:
            make_transaction_tables(jars, home)
        with started_hive_metastore(jars, home=home) as hms:
            hms.wait()
            yield hms.port, hms.home


JDBC_DRIVER = Path("/usr/share/java/postgresql.jar")
"""Debian's PostgreSQL JDBC driver (libpostgresql-jdbc-java), for HMS on PostgreSQL."""


def postgres_conf(url: str, *, verify: bool) -> dict[str, str]:
    """HMS's settings for the PostgreSQL database at URL (a SQLAlchemy URL): with VERIFY,
    schema verification on (HMS then refuses a database whose VERSION is not its own, and
    creates no table); without, DataNucleus creates the tables it needs and HMS records its
    schema version."""
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    conf = {
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:postgresql://{parsed.host or '127.0.0.1'}:{parsed.port or 5432}/"
            f"{parsed.database}"
        ),
        "javax.jdo.option.ConnectionDriverName": "org.postgresql.Driver",
        "javax.jdo.option.ConnectionUserName": parsed.username or "postgres",
        "javax.jdo.option.ConnectionPassword": parsed.password or "",
    }
    if verify:
        conf |= {
            "datanucleus.schema.autoCreateAll": "false",
            "hive.metastore.schema.verification": "true",
        }
    else:
        conf["hive.metastore.schema.verification.record.version"] = "true"
    return conf


POSTGRES_TRANSACTION_TABLES = (
    "CREATE TABLE TXNS (TXN_ID bigint PRIMARY KEY, TXN_STATE char(1) NOT NULL, "
    "TXN_STARTED bigint NOT NULL, TXN_LAST_HEARTBEAT bigint NOT NULL, "
    "TXN_USER varchar(128) NOT NULL, TXN_HOST varchar(128) NOT NULL, "
    "TXN_AGENT_INFO varchar(128), TXN_META_INFO varchar(128), TXN_HEARTBEAT_COUNT integer)",
    "CREATE TABLE TXN_COMPONENTS (TC_TXNID bigint REFERENCES TXNS (TXN_ID), "
    "TC_DATABASE varchar(128) NOT NULL, TC_TABLE varchar(128), "
    "TC_PARTITION varchar(767) DEFAULT NULL, TC_OPERATION_TYPE char(1) NOT NULL)",
    "CREATE TABLE COMPLETED_TXN_COMPONENTS (CTC_TXNID bigint, "
    "CTC_DATABASE varchar(128) NOT NULL, CTC_TABLE varchar(256), CTC_PARTITION varchar(767))",
    "CREATE TABLE NEXT_TXN_ID (NTXN_NEXT bigint NOT NULL)",
    "INSERT INTO NEXT_TXN_ID VALUES (1)",
    "CREATE TABLE HIVE_LOCKS (HL_LOCK_EXT_ID bigint NOT NULL, HL_LOCK_INT_ID bigint NOT NULL, "
    "HL_TXNID bigint, HL_DB varchar(128) NOT NULL, HL_TABLE varchar(128), "
    "HL_PARTITION varchar(767) DEFAULT NULL, HL_LOCK_STATE char(1) NOT NULL, "
    "HL_LOCK_TYPE char(1) NOT NULL, HL_LAST_HEARTBEAT bigint NOT NULL, "
    "HL_ACQUIRED_AT bigint, HL_USER varchar(128) NOT NULL, HL_HOST varchar(128) NOT NULL, "
    "HL_HEARTBEAT_COUNT integer, HL_AGENT_INFO varchar(128), HL_BLOCKEDBY_EXT_ID bigint, "
    "HL_BLOCKEDBY_INT_ID bigint, PRIMARY KEY (HL_LOCK_EXT_ID, HL_LOCK_INT_ID))",
    "CREATE INDEX HL_TXNID_INDEX ON HIVE_LOCKS USING hash (HL_TXNID)",
    "CREATE TABLE NEXT_LOCK_ID (NL_NEXT bigint NOT NULL)",
    "INSERT INTO NEXT_LOCK_ID VALUES (1)",
    "CREATE TABLE COMPACTION_QUEUE (CQ_ID bigint PRIMARY KEY, CQ_DATABASE varchar(128) NOT NULL, "
    "CQ_TABLE varchar(128) NOT NULL, CQ_PARTITION varchar(767), CQ_STATE char(1) NOT NULL, "
    "CQ_TYPE char(1) NOT NULL, CQ_TBLPROPERTIES varchar(2048), CQ_WORKER_ID varchar(128), "
    "CQ_START bigint, CQ_RUN_AS varchar(128), CQ_HIGHEST_TXN_ID bigint, CQ_META_INFO bytea, "
    "CQ_HADOOP_JOB_ID varchar(32))",
    "CREATE TABLE NEXT_COMPACTION_QUEUE_ID (NCQ_NEXT bigint NOT NULL)",
    "INSERT INTO NEXT_COMPACTION_QUEUE_ID VALUES (1)",
    "CREATE TABLE COMPLETED_COMPACTIONS (CC_ID bigint PRIMARY KEY, "
    "CC_DATABASE varchar(128) NOT NULL, CC_TABLE varchar(128) NOT NULL, "
    "CC_PARTITION varchar(767), CC_STATE char(1) NOT NULL, CC_TYPE char(1) NOT NULL, "
    "CC_TBLPROPERTIES varchar(2048), CC_WORKER_ID varchar(128), CC_START bigint, "
    "CC_END bigint, CC_RUN_AS varchar(128), CC_HIGHEST_TXN_ID bigint, CC_META_INFO bytea, "
    "CC_HADOOP_JOB_ID varchar(32))",
    "CREATE TABLE AUX_TABLE (MT_KEY1 varchar(128) NOT NULL, MT_KEY2 bigint NOT NULL, "
    "MT_COMMENT varchar(255), PRIMARY KEY (MT_KEY1, MT_KEY2))",
    "CREATE TABLE WRITE_SET (WS_DATABASE varchar(128) NOT NULL, WS_TABLE varchar(128) NOT NULL, "
    "WS_PARTITION varchar(767), WS_TXNID bigint NOT NULL, WS_COMMIT_ID bigint NOT NULL, "
    "WS_OPERATION_TYPE char(1) NOT NULL)",
    "CREATE TABLE TXN_MAP (REPL_POLICY varchar(128) NOT NULL, SRC_TXN_ID bigint NOT NULL, "
    "TARGET_TXN_ID bigint NOT NULL, PRIMARY KEY (REPL_POLICY, SRC_TXN_ID))",
)
"""HMS 2.3's transaction tables (HIVE_LOCKS, NEXT_LOCK_ID, TXNS, ...) on PostgreSQL, for its
lock calls, as Hive's hive-txn-schema-2.3.0.postgres.sql makes them (names not quoted, so in
lower case; one row in each NEXT_* table), to run before HMS first starts on the database:
its TxnHandler makes them only on Derby (make_transaction_tables)."""


def make_postgres_transaction_tables(url: str) -> None:
    """Make POSTGRES_TRANSACTION_TABLES in the PostgreSQL database at URL (a SQLAlchemy URL)."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in POSTGRES_TRANSACTION_TABLES:
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


@contextlib.contextmanager
def hive_metastore_on_postgres(
    jars: Path, url: str, home: Path, *, verify: bool, java_options: Sequence[str] = ()
) -> Iterator[HiveMetastoreProcess]:
    """HMS 2.3.10 on the PostgreSQL database at URL (see postgres_conf), listening."""
    if not JDBC_DRIVER.exists():
        raise RuntimeError(f"{JDBC_DRIVER} is missing (apt-get install libpostgresql-jdbc-java)")
    conf = postgres_conf(url, verify=verify)
    with started_hive_metastore(jars, java_options, conf, home, [str(JDBC_DRIVER)]) as hms:
        hms.wait()
        yield hms
