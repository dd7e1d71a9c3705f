"""The job on a real Spark cluster: a standalone master and two workers on loopback, started
from pyspark's own jars, and the job submitted to it with spark-submit, as a cluster runs it.
The executors are processes of their own (on the workers), not the driver's: what the tasks
need must reach them with the tasks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from analyze_data import SMALL, expect_all
from conftest import RunningServer
from java_tools import unavailable
from job_checks import (
    check_objs,
    names_of,
    new_db,
    partition_stats,
    table_stats,
    write_parts,
)
from s3_server import S3Server, free_port, upload

pytestmark = [pytest.mark.spark]
BIN = Path(sys.executable).parent


class Cluster:
    """A standalone master and WORKERS workers of one core each, on 127.0.0.1."""

    def __init__(self, folder: Path, workers: int = 2) -> None:
        self.port, self.ui = free_port(), free_port()
        self.folder = folder
        self.processes: list[subprocess.Popen[bytes]] = []
        env = {
            **os.environ,
            "SPARK_LOG_DIR": str(folder / "logs"),
            "SPARK_WORKER_DIR": str(folder / "work"),
            "PYSPARK_PYTHON": sys.executable,
        }
        self._start(
            "master",
            ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"],
            ["--port", str(self.port), "--webui-port", str(self.ui)],
            env,
        )
        self._wait(lambda state: True, "the master")
        for n in range(workers):
            self._start(
                f"worker-{n}",
                ["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1"],
                ["--cores", "1", "--memory", "1g", "--webui-port", str(free_port())],
                env,
            )
        self._wait(
            lambda state: sum(w["state"] == "ALIVE" for w in state["workers"]) == workers,
            f"{workers} workers",
        )

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, main: list[str], options: list[str], env: dict[str, str]) -> None:
        with (self.folder / f"{name}.log").open("wb") as log:
            self.processes.append(
                subprocess.Popen(
                    [str(spark_class()), *main, *options],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                )
            )

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui}/json/", timeout=5) as reply:
            found: dict[str, Any] = json.load(reply)
            return found

    def _wait(self, ready: Any, what: str) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"a Spark process stopped: {self.logs()}")
            try:
                if ready(self.state()):
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"{what} did not start within 120 s: {self.logs()}")

    def logs(self) -> str:
        return "\n".join(p.read_text()[-1500:] for p in sorted(self.folder.glob("*.log")))

    def stop(self) -> None:
        for process in reversed(self.processes):
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def spark_class() -> Path:
    found = BIN / "spark-class"
    return found if found.exists() else Path(shutil.which("spark-class") or "spark-class")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        unavailable("Java is not installed (a JDK 17)")
    if not spark_class().exists():
        unavailable("spark-class not found (pip install -e '.[spark]')")
    running = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield running
    finally:
        running.stop()


def submit(
    cluster: Cluster, events: Path, *args: str, conf: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """spark-submit --master spark://... of the job's file with ARGS (and Spark settings
    CONF), Spark's event log written to EVENTS."""
    script = subprocess.run(
        [sys.executable, "-m", "metastore.job", "--path-of-script"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    events.mkdir()
    settings = {
        "spark.executor.cores": "1",
        "spark.cores.max": "2",
        "spark.executor.memory": "512m",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
        "spark.eventLog.dir": events.as_uri(),
        **(conf or {}),
    }
    spark_submit = BIN / "spark-submit"
    return subprocess.run(
        [
            str(spark_submit) if spark_submit.exists() else "spark-submit",
            *("--master", cluster.url),
            *(arg for key, value in settings.items() for arg in ("--conf", f"{key}={value}")),
            script,
            *args,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
        timeout=600,
    )


def test_spark_submit_to_a_standalone_cluster(
    client: Any, server: RunningServer, cluster: Cluster, tmp_path: Path
) -> None:
    """spark-submit --master spark://... of the job's file: exact statistics, computed by
    executors on both workers."""
    path = tmp_path / "t"
    data = write_parts(path, {"1": 300, "2": 200, "3": 100}, SMALL, seed=23)
    by_part, whole = expect_all(SMALL, names_of(data, {v: f"ds={v}" for v in data}))
    db = new_db()
    uri = f"thrift://127.0.0.1:{server.port}"
    done = submit(cluster, tmp_path / "events", f"{db}.t", "--uri", uri, "--path", str(path))
    assert done.returncode == 0, done.stderr[-3000:] + cluster.logs()
    assert f"statistics of {db}.t" in done.stdout
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")
    apps = cluster.state()["completedapps"]
    assert [a["name"] for a in apps].count("colstats analyze") >= 1
    ran_on_both_workers(tmp_path / "events")


def test_object_storage_settings_reach_the_executors(
    client: Any, server: RunningServer, cluster: Cluster, s3: S3Server, tmp_path: Path
) -> None:
    """A table on S3 with the S3A settings given to spark-submit only: the driver lists it,
    the executors (other processes, with none of the driver's state) read it with the
    settings sent with their tasks."""
    local = tmp_path / "t"
    data = write_parts(local, {"a": 250, "b": 150}, SMALL, seed=29)
    by_part, whole = expect_all(SMALL, names_of(data, {v: f"ds={v}" for v in data}))
    location = upload(s3, local, f"cluster-{uuid.uuid4().hex[:8]}")
    db = new_db()
    uri = f"thrift://127.0.0.1:{server.port}"
    done = submit(
        cluster,
        tmp_path / "events",
        *(f"{db}.t", "--uri", uri, "--path", location),
        conf=s3.spark_conf(),
    )
    assert done.returncode == 0, done.stderr[-3000:] + cluster.logs()
    assert s3.secret_key not in done.stdout + done.stderr
    for part, objs in partition_stats(client, db, "t", SMALL).items():
        check_objs(objs, by_part[part], SMALL, part)
    check_objs(table_stats(client, db, "t", SMALL), whole, SMALL, "table")
    ran_on_both_workers(tmp_path / "events")


def ran_on_both_workers(events: Path) -> None:
    """The application had an executor on each worker, and tasks ran on both (from Spark's
    event log of the run)."""
    log_lines = [
        json.loads(line)
        for log in events.rglob("*")
        if log.is_file()
        for line in log.read_text().splitlines()
    ]
    executors = {
        e["Executor ID"]: e["Executor Info"]["Host"]
        for e in log_lines
        if e["Event"] == "SparkListenerExecutorAdded"
    }
    assert len(executors) == 2, executors
    ran_on = {
        e["Task Info"]["Executor ID"] for e in log_lines if e["Event"] == "SparkListenerTaskEnd"
    }
    assert ran_on == set(executors), (ran_on, executors)
