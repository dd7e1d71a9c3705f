"""docker-compose.yml brought up for real (podman, local Debian base images): PostgreSQL, the
migration, the metastore with its Thrift health check, and the job that writes a sample table
and analyzes it. The statistics are then read from this host through the published port
with the generated client, and the stack is torn down with its volume.

Needs podman, runc, docker-compose and debootstrap (`.ci/run` installs them), and root for
debootstrap and rootful podman. Without them the test is skipped, except with CI=true, where
it fails.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from compose_stack import ROOT, HealthChecks, PodmanService, missing_tools
from conftest import connect

from hive_metastore_thrift import ttypes as t

pytestmark = pytest.mark.compose

ROWS = 5_000
DAYS = 7


@dataclass
class Stack:
    service: PodmanService
    project: str
    port: int
    job_exit: int
    job_log: str

    def compose(self, *argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return self.service.run("docker-compose", "-p", self.project, *argv, timeout=timeout)

    def container_state(self, name: str, template: str) -> str:
        return self.service.run(
            "podman", "inspect", "--format", template, f"{self.project}_{name}_1", timeout=30
        ).stdout.strip()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    missing = missing_tools()
    if missing or os.geteuid() != 0:
        reason = f"missing {', '.join(missing)}" if missing else "not root (debootstrap)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the compose test is required when CI=true: {reason}")
        pytest.skip(f"the compose test needs podman, docker-compose, debootstrap: {reason}")
    service = PodmanService(tmp_path_factory.mktemp("podman"))
    project = f"colstats-test-{uuid.uuid4().hex[:8]}"
    port = _free_port()
    service.env.update({"COLSTATS_PORT": str(port), "JOB_ROWS": str(ROWS)})
    health = None
    try:
        service.run("bash", "docker/local-base-images.sh", timeout=900)
        service.run("bash", "docker/wheelhouse.sh", timeout=900)
        started = time.monotonic()
        service.run("docker-compose", "-p", project, "build", timeout=1800)
        print(f"images built in {time.monotonic() - started:.0f} s", file=sys.stderr)
        health = HealthChecks(service, project)
        started = time.monotonic()
        # Waits for PostgreSQL to be healthy, the migration to finish and the server to be
        # healthy before it starts the job.
        service.run("docker-compose", "-p", project, "up", "-d", "--no-build", "job", timeout=600)
        waited = service.run("podman", "wait", f"{project}_job_1", timeout=900)
        job_log = service.run(
            "docker-compose", "-p", project, "logs", "--no-color", "job", timeout=60
        ).stdout
        print(f"stack up and job done in {time.monotonic() - started:.0f} s", file=sys.stderr)
        yield Stack(service, project, port, int(waited.stdout.strip()), job_log)
    finally:
        if health is not None:
            health.stop()
        service.run(
            "docker-compose", "-p", project, "down", "-v", "--remove-orphans",
            timeout=300, check=False,
        )  # fmt: skip
        service.stop()


def test_the_job_ran_after_a_healthy_server_and_a_completed_migration(stack: Stack) -> None:
    assert stack.job_exit == 0, stack.job_log
    assert stack.container_state("migrate", "{{.State.ExitCode}}") == "0"
    assert stack.container_state("server", "{{.State.Health.Status}}") == "healthy"
    assert stack.container_state("postgres", "{{.State.Health.Status}}") == "healthy"
    for stage in ("[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]", "histogram of amount"):
        assert stage in stack.job_log


def test_statistics_read_from_the_host_through_the_published_port(stack: Stack) -> None:
    client, transport = connect(stack.port)
    try:
        assert "sales" in client.get_all_databases()
        table = client.get_table("sales", "orders")
        names = client.get_partition_names("sales", "orders", -1)
        columns = [c.name for c in table.sd.cols]
        stats = client.get_table_statistics_req(
            t.TableStatsRequest(dbName="sales", tblName="orders", colNames=columns)
        ).tableStats
        parts = client.get_partitions_statistics_req(
            t.PartitionsStatsRequest(
                dbName="sales", tblName="orders", colNames=["order_id"], partNames=names
            )
        ).partStats
        partitions = client.get_partitions_by_names("sales", "orders", names)
    finally:
        transport.close()
    assert [k.name for k in table.partitionKeys] == ["ds"]
    assert names == [f"ds=2024-01-0{d}" for d in range(1, DAYS + 1)]
    by_name = {o.colName: o.statsData for o in stats}
    assert set(by_name) == set(columns)
    order_id = by_name["order_id"].longStats
    assert (order_id.lowValue, order_id.highValue, order_id.numNulls) == (1, ROWS, 0)
    assert abs(order_id.numDVs - ROWS) < ROWS * 0.05
    assert order_id.histogram  # the server of the stack returns histograms
    assert by_name["is_gift"].booleanStats.numTrues > 0
    assert by_name["ship_date"].dateStats.numNulls > 0
    assert sum(int(p.parameters["numRows"]) for p in partitions) == ROWS
    assert set(parts) == set(names)


def test_describe_from_the_host(stack: Stack) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metastore.cli", "describe", "sales.orders", "amount",
         "--partition", "ds=2024-01-02", "--uri", f"thrift://127.0.0.1:{stack.port}"],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "# sales.orders partition ds=2024-01-02" in done.stdout
    assert "histogram of amount (10 bins" in done.stdout
    assert f"numRows {ROWS // DAYS}," in done.stdout
