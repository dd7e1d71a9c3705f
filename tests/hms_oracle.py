"""One real Hive Metastore 2.3.10 for the tests that compare colstats with it: pyspark's jars,
Derby in a folder of the session, started once for the session (the `hms_oracle` fixture of
conftest).

It has HMS's transaction tables, which DataNucleus's auto-create does not make
(hms_process.make_transaction_tables). Its locks time out after LOCK_TIMEOUT_S without
a heartbeat: the timeout needs HMS's housekeeping service, which runs with the compactor's
initiator and Hive's DbTxnManager set, and here looks every second.

Tests that share it create no databases of names another test uses, and take locks only on
names of their own.
"""

from __future__ import annotations

import contextlib
import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

from hms_process import (
    HiveMetastoreProcess,
    make_transaction_tables,
    pyspark_jars,
    started_hive_metastore,
)
from java_tools import unavailable
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from hive_metastore_thrift import ThriftHiveMetastore

LOCK_TIMEOUT_S = 5

# Derby stops optimizing a statement after a time that depends on the machine's load, so that
# HMS's direct SQL may get a plan that fails; full optimization makes it the same every run.
# HMS retries a call whose query fails, 10 times 2 s apart (RetryingHMSHandler); what fails
# here fails every time, so once and at once (0 attempts keeps it from starting).
JAVA_OPTIONS = (
    "-Dderby.optimizer.noTimeout=true",
    "-Dhive.hmshandler.retry.attempts=1",
    "-Dhive.hmshandler.retry.interval=0",
)

LOCK_CONF = {
    "hive.txn.timeout": f"{LOCK_TIMEOUT_S}s",
    "hive.timedout.txn.reaper.start": "1s",
    "hive.timedout.txn.reaper.interval": "1s",
    "hive.compactor.initiator.on": "true",
    "hive.support.concurrency": "true",
    "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
}


def jars() -> Path:
    """pyspark's jars, with Java to run them (else unavailable)."""
    if importlib.util.find_spec("pyspark") is None:
        unavailable("pyspark is not installed (pip install -e '.[spark]')")
    if shutil.which("java") is None:
        unavailable("java is not installed (a JDK 17 is needed)")
    return pyspark_jars()


def client(port: int) -> tuple[ThriftHiveMetastore.Client, TTransport.TTransportBase]:
    socket = TSocket.TSocket("127.0.0.1", port)
    socket.setTimeout(60_000)
    transport = TTransport.TBufferedTransport(socket)
    transport.open()
    return ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport)), transport


@contextlib.contextmanager
def hive_metastore_oracle(home: Path) -> Iterator[HiveMetastoreProcess]:
    """HMS 2.3.10 with its Derby in HOME, its transaction tables made, listening."""
    found = jars()
    make_transaction_tables(found, home, JAVA_OPTIONS)
    with started_hive_metastore(found, JAVA_OPTIONS, LOCK_CONF, home) as oracle:
        oracle.wait()
        yield oracle
