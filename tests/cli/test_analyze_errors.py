"""`metastore analyze` when the scan fails (a damaged Parquet file, a file of another format
among the others, a csv row that does not parse with --strict) and without Java: one line
that names the file (and the row) and what to do, no trace but with --traceback, and
nothing registered."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runs import databases, error_lines, metastore
from conftest import RunningServer

from metastore import sample_data
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


def _analyze(server: RunningServer, *args: str) -> tuple[int, list[str], str]:
    done = metastore("analyze", *args, "--uri", f"thrift://127.0.0.1:{server.port}")
    return done.returncode, error_lines(done.stderr), done.stderr


def _damaged_page(path: Path) -> None:
    """Garble the data pages of a Parquet file, keeping its header and footer."""
    data = bytearray(path.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little")
    for i in range(64, len(data) - footer - 8):
        data[i] = (data[i] * 7 + 13) % 256
    path.write_bytes(bytes(data))


def test_a_damaged_parquet_file_is_one_line_that_names_it(
    sqlite_server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "orders"
    sample_data.write_orders(path, rows=2000)
    damaged = path / "ds=2024-01-04" / "part-0.parquet"
    _damaged_page(damaged)
    code, errors, stderr = _analyze(sqlite_server, "bad.t", "--path", str(path))
    assert code == EXIT_FAILED
    (line,) = errors
    assert line.startswith(f"metastore analyze: error: cannot read {damaged} as parquet: ")
    assert line.endswith(
        "(a damaged file, or one of another format: replace it or move it out of the table's "
        "folder); nothing was written: the metastore is as it was"
    )
    assert "Traceback" not in stderr and "at org.apache" not in stderr
    assert "bad" not in databases(sqlite_server)
    done = metastore(
        "--traceback", "analyze", "bad.t", "--path", str(path),
        "--uri", f"thrift://127.0.0.1:{sqlite_server.port}",
    )  # fmt: skip
    assert done.returncode != 0 and "Traceback" in done.stderr  # the whole story, on request


def test_a_file_of_another_format_among_the_others(
    sqlite_server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "orders"
    sample_data.write_orders(path, rows=2000)
    other = path / "ds=2024-01-06" / "part-0.parquet"
    other.write_text("a,b\n1,2\n")
    code, errors, _ = _analyze(sqlite_server, "other.t", "--path", str(path))
    assert code == EXIT_FAILED
    (line,) = errors
    assert line.startswith(f"metastore analyze: error: cannot read {other} as parquet: ")
    assert "other" not in databases(sqlite_server)


def test_a_csv_row_that_does_not_parse_with_strict(
    sqlite_server: RunningServer, tmp_path: Path
) -> None:
    """Named with its row; without --strict, the run counts it and goes on."""
    folder = tmp_path / "t" / "ds=1"
    folder.mkdir(parents=True)
    rows = "".join(f"{i},{i * 2}\n" for i in range(1, 50))
    (folder / "a.csv").write_text("i,j\n" + rows + "50,fifty\n")
    args = ("--path", str(tmp_path / "t"), "--format", "csv", "--schema", "i INT, j BIGINT")
    code, errors, _ = _analyze(sqlite_server, "strict.t", *args, "--strict")
    assert code == EXIT_FAILED
    assert errors == [
        f"metastore analyze: error: {folder / 'a.csv'} row 50, column j: 'fifty' does not "
        "parse as bigint (correct the file, or run without --strict to read such values as "
        "NULL); nothing was written: the metastore is as it was"
    ]
    assert "strict" not in databases(sqlite_server)
    done = metastore(
        "analyze", "strict.t", *args, "--uri", f"thrift://127.0.0.1:{sqlite_server.port}"
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"1 value in 1 file did not parse as its type and was read as NULL (e.g. "
        f"{folder / 'a.csv'} row 50, column j: 'fifty')" in done.stdout
    )


def test_without_java(sqlite_server: RunningServer, tmp_path: Path) -> None:
    pq.write_table(pa.table({"a": [1, 2]}), tmp_path / "a.parquet")
    done = metastore(
        "analyze", "d.t", "--path", str(tmp_path), "--uri", f"thrift://127.0.0.1:{sqlite_server.port}",
        env={"JAVA_HOME": str(tmp_path / "no-java")},
    )  # fmt: skip
    # (spark-submit's script says itself that it found no java, before that line)
    errors = [line for line in done.stderr.splitlines() if line.startswith("metastore analyze")]
    assert done.returncode == EXIT_FAILED
    assert len(errors) == 1 and "Spark failed: [JAVA_GATEWAY_EXITED]" in errors[0]
    assert errors[0].endswith(
        "(Spark needs Java 17: is it installed, and is JAVA_HOME unset or right?)"
    )
