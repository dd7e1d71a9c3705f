"""`metastore analyze` on files that are not in the format it was told, and without Java:
the error in one line, with a hint."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunningServer

from metastore.cli import EXIT_FAILED
from metastore.config import Settings
from metastore.store import migrate

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def sqlite_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'metastore.db'}"
    migrate.upgrade(url)
    running = RunningServer(url, Settings())
    yield running
    running.stop()


def test_csv_files_read_as_parquet(sqlite_server: RunningServer, tmp_path: Path) -> None:
    (tmp_path / "ds=1").mkdir()
    (tmp_path / "ds=1" / "part.csv").write_text("a,b\n1,2\n")
    done = subprocess.run(
        [sys.executable, "-m", "metastore.cli", "analyze", "d.t",
         "--uri", f"thrift://127.0.0.1:{sqlite_server.port}", "--path", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == EXIT_FAILED
    errors = [line for line in done.stderr.splitlines() if line.startswith("metastore analyze")]
    assert errors == [
        f"metastore analyze: error: cannot read {tmp_path}/ds=1/part.csv as parquet: Parquet "
        "magic bytes not found in footer. Either the file is corrupted or this is not a parquet "
        "file. (do the files match --format?)"
    ]
    assert "Traceback" not in done.stderr


def test_without_java(sqlite_server: RunningServer, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metastore.cli", "analyze", "d.t",
         "--uri", f"thrift://127.0.0.1:{sqlite_server.port}", "--path", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "JAVA_HOME": str(tmp_path / "no-java")},
    )  # fmt: skip
    assert done.returncode == EXIT_FAILED
    errors = [line for line in done.stderr.splitlines() if line.startswith("metastore analyze")]
    assert len(errors) == 1 and "Spark failed: [JAVA_GATEWAY_EXITED]" in errors[0]
    assert errors[0].endswith(
        "(Spark needs Java 17: is it installed, and is JAVA_HOME unset or right?)"
    )
