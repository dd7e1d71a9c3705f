"""Every command's errors are one line a person can act on, with the documented exit codes;
`metastore ping` against a real server, a closed port and a port where something else
listens; `--traceback` shows the trace."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from conftest import PG_ADMIN_URL, RunningServer, empty_database

from metastore.cli import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, main
from metastore.cli.errors import CliError, explain
from metastore.job.errors import (
    Interrupted,
    JobError,
    MetastoreCallFailed,
    MetastoreRefused,
    MetastoreUnreachable,
    NoSuchObject,
    OptionsError,
)
from metastore.store import migrate


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def not_a_metastore() -> Iterator[int]:
    """A port where an HTTP-like server answers every connection with a line and closes it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


def test_ping_a_real_server(capsys: pytest.CaptureFixture[str], server: RunningServer) -> None:
    code, out, err = run(capsys, "ping", "--uri", f"thrift://127.0.0.1:{server.port}")
    assert code == EXIT_OK, err
    assert out.startswith(f"thrift://127.0.0.1:{server.port}: a Hive Metastore answered in ")
    assert "database(s)" in out


def test_ping_reads_metastore_uri_from_the_environment(
    server: RunningServer, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metastore.cli", "ping"],
        capture_output=True,
        text=True,
        env={"METASTORE_URI": f"thrift://127.0.0.1:{server.port}", "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert "a Hive Metastore answered" in done.stdout


@pytest.mark.parametrize(
    ("uri", "code", "message"),
    [
        ("thrift://127.0.0.1:{closed}", EXIT_FAILED, "connection refused (is `metastore serve`"),
        ("thrift://no-such-host.invalid:9083", EXIT_FAILED, "unknown host"),
        ("thrift://127.0.0.1:{other}", EXIT_FAILED, "does not answer as a Hive Metastore"),
        ("http://127.0.0.1:9083", EXIT_USAGE, "is not of the form thrift://HOST:PORT"),
    ],
)
def test_ping_failures(
    capsys: pytest.CaptureFixture[str],
    not_a_metastore: int,
    uri: str,
    code: int,
    message: str,
) -> None:
    target = uri.format(closed=_closed_port(), other=not_a_metastore)
    got, out, err = run(capsys, "ping", "--uri", target, "--timeout", "5")
    assert (got, out) == (code, "")
    assert err.startswith("metastore ping: error: ") and err.count("\n") == 1
    assert message in err, err


def test_analyze_checks_the_metastore_and_the_path_before_spark(
    not_a_metastore: int, tmp_path: Path
) -> None:
    """In a process of its own, to see that Spark was never loaded."""
    program = (
        "import sys\nfrom metastore.cli import main\ncode = main(sys.argv[1:])\n"
        "assert 'pyspark' not in sys.modules\nsys.exit(code)"
    )
    closed, other, nope = _closed_port(), not_a_metastore, str(tmp_path / "nope")
    cases = [
        (f"thrift://127.0.0.1:{closed}", str(tmp_path), EXIT_FAILED, "cannot reach the metastore"),
        (f"thrift://127.0.0.1:{other}", str(tmp_path), EXIT_FAILED, "does not answer as a Hive"),
        (f"thrift://127.0.0.1:{closed}", nope, EXIT_USAGE, "no such file or folder"),
    ]
    for uri, path, code, message in cases:
        done = subprocess.run(
            [sys.executable, "-c", program, "analyze", "d.t", "--uri", uri, "--path", path],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == code, done.stderr
        assert done.stderr.startswith("metastore analyze: error: ")
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("url", "code", "message"),
    [
        ("nonsense", EXIT_USAGE, "must look like sqlite:///PATH"),
        ("oracle+nothing://x/y", EXIT_USAGE, "unknown database in the URL"),
        (
            "postgresql+psycopg://postgres@127.0.0.1:{closed}/x",
            EXIT_FAILED,
            "is the server running, and are the host, port, user and password right?",
        ),
    ],
)
@pytest.mark.parametrize("command", ["upgrade", "current", "check", "downgrade"])
def test_unusable_database_urls(
    capsys: pytest.CaptureFixture[str], command: str, url: str, code: int, message: str
) -> None:
    extra = ["--revision", "base", "--yes"] if command == "downgrade" else []
    got, _, err = run(capsys, "db", command, "--db", url.format(closed=_closed_port()), *extra)
    assert got == code
    assert err.startswith(f"metastore db {command}: error: ") and err.count("\n") == 1, err
    assert message in err


@pytest.mark.parametrize(
    ("command", "code", "stream", "message"),
    [
        ("upgrade", EXIT_FAILED, "err", "does its folder exist"),
        ("current", EXIT_OK, "out", "no database file yet"),
        ("check", EXIT_FAILED, "out", "no database file; run `metastore db upgrade`"),
        ("downgrade", EXIT_USAGE, "err", "no database at /no/such/folder/m.db"),
    ],
)
def test_a_sqlite_file_in_a_missing_folder(
    capsys: pytest.CaptureFixture[str], command: str, code: int, stream: str, message: str
) -> None:
    extra = ["--revision", "base", "--yes"] if command == "downgrade" else []
    got, out, err = run(capsys, "db", command, "--db", "sqlite:////no/such/folder/m.db", *extra)
    assert got == code
    assert message in (out if stream == "out" else err)
    assert (out if stream == "out" else err).count("\n") == 1


@pytest.mark.parametrize("undo", [[], ["--undo"], ["--dry-run"]])
def test_adopt_takes_only_postgresql(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, undo: list[str]
) -> None:
    """A SQLite URL is refused before anything is opened: no file is created."""
    path = tmp_path / "hms.db"
    got, _, err = run(capsys, "db", "adopt", "--db", f"sqlite:///{path}", *undo)
    assert got == EXIT_USAGE
    assert err.endswith(
        "is not a PostgreSQL database: colstats adopts the PostgreSQL databases of Hive "
        "Metastores; copy any other one with `metastore db import --from thrift://HOST:9083`\n"
    ), err
    assert err.count("\n") == 1
    assert not path.exists()


def test_downgrade_to_base_asks_first(tmp_path: Path) -> None:
    """Without a terminal and without --yes, dropping every table is refused (exit 2) and
    the database keeps its schema; with --yes it is done."""
    url = f"sqlite:///{tmp_path / 'm.db'}"
    migrate.upgrade(url)
    command = [sys.executable, "-m", "metastore.cli", "db", "downgrade", "--db", url]
    done = subprocess.run(
        [*command, "--revision", "base"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr == (
        f"metastore db downgrade: error: --revision base drops every table of {url} with all "
        "its data; add --yes to do it without a terminal to confirm on\n"
    )
    assert migrate.current_revision(url) == migrate.head_revision()
    done = subprocess.run(
        [*command, "--revision", "base", "--yes"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert migrate.current_revision(url) is None


def test_serve_with_an_unusable_database_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "metastore.cli", "serve", "--db", "sqlite:////no/such/m.db"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == EXIT_FAILED
    assert done.stderr.splitlines()[-1].startswith("metastore serve: error: the database cannot")
    assert "Traceback" not in done.stderr


def test_traceback_shows_the_trace(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(Exception, match="Could not parse SQLAlchemy URL"):
        main(["--traceback", "db", "current", "--db", "nonsense"])


def test_exit_codes() -> None:
    """The codes README documents, by kind of error (metastore.cli.errors says the rule)."""
    assert (EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED) == (0, 1, 2, 130)
    assert explain(KeyboardInterrupt()) == (EXIT_INTERRUPTED, "interrupted")
    assert explain(Interrupted("3 of 10 partition(s) were written")) == (
        EXIT_INTERRUPTED,
        "interrupted; 3 of 10 partition(s) were written",
    )
    assert explain(OptionsError("no such column(s): x")) == (EXIT_USAGE, "no such column(s): x")
    assert explain(CliError("no table d.t", EXIT_USAGE)) == (EXIT_USAGE, "no table d.t")
    assert explain(JobError("cannot read f as parquet")) == (
        EXIT_FAILED,
        "cannot read f as parquet",
    )
    assert explain(MetastoreRefused("create_table", "MetaException", "bob lacks it")) == (
        EXIT_FAILED,
        "the metastore refused: bob lacks it",
    )
    assert explain(NoSuchObject("get_table", "NoSuchObjectException", None)) == (
        EXIT_FAILED,
        "the metastore refused: NoSuchObjectException",
    )
    assert explain(MetastoreUnreachable([("thrift://h:1", "unknown host")], False)) == (
        EXIT_FAILED,
        "cannot reach the metastore at thrift://h:1: unknown host",
    )
    assert explain(MetastoreCallFailed("thrift://h:1", "get_table", "timed out")) == (
        EXIT_FAILED,
        "get_table to the metastore at thrift://h:1 failed: timed out",
    )
    code, message = explain(ModuleNotFoundError("No module named 'psycopg2'", name="psycopg2"))
    assert code == EXIT_FAILED and "pip install 'colstats[psycopg2]'" in message
    code, message = explain(RuntimeError("boom\nsecond line"))
    assert code == EXIT_FAILED
    assert message == (
        "unexpected RuntimeError: boom (run `metastore --traceback ...` for the full trace)"
    )


def test_ctrl_c_exits_130(tmp_path: Path) -> None:
    """SIGINT while `metastore demo` writes its sample data: 130 and one line."""
    process = subprocess.Popen(
        [sys.executable, "-m", "metastore.cli", "demo", "--rows", "3000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path)},  # its log
    )
    assert process.stdout is not None
    for line in process.stdout:  # until the sample data is being written
        if line.startswith("[2/5]"):
            break
    else:
        pytest.fail(f"the demo ended before writing its data: {process.communicate()}")
    process.send_signal(2)
    _, err = process.communicate(timeout=60)
    assert process.returncode == EXIT_INTERRUPTED
    assert err == "metastore demo: error: interrupted\n"  # and nothing of the log


def test_ctrl_c_while_spark_computes_exits_130(tmp_path: Path) -> None:
    """Ctrl-C on a terminal (SIGINT to the whole process group: the demo, Spark's JVM and its
    Python workers) while Spark computes: 130 and one line, as `metastore analyze`."""
    process = subprocess.Popen(
        [sys.executable, "-m", "metastore.cli", "demo", "--rows", "2000000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        start_new_session=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("[4/5] computing"):
            break
    else:
        pytest.fail(f"the demo ended before Spark computed: {process.communicate()}")
    time.sleep(1.0)  # the scan is under way (it takes seconds for these rows)
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == EXIT_INTERRUPTED, (out, err)
    assert err == "metastore demo: error: interrupted\n", err


def test_db_check_downgrade_and_upgrade(
    capsys: pytest.CaptureFixture[str], database_url: str
) -> None:
    code, out, _ = run(capsys, "db", "check", "--db", database_url)
    if database_url.startswith("sqlite"):  # the file does not exist yet, and is not made
        assert code == EXIT_FAILED and "no database file; run `metastore db upgrade`" in out
    else:
        assert code == EXIT_FAILED and "the schema differs from the models" in out
        assert "run `metastore db upgrade` to migrate it" in out
    assert run(capsys, "db", "upgrade", "--db", database_url)[0] == EXIT_OK
    code, out, _ = run(capsys, "db", "check", "--db", database_url)
    assert code == EXIT_OK and out.endswith(": the schema matches the models\n")
    code, out, err = run(capsys, "db", "downgrade", "--db", database_url, "--revision", "-1")
    assert code == EXIT_OK, err
    code, out, _ = run(capsys, "db", "current", "--db", database_url)
    assert "behind the newest revision" in out
    code, out, _ = run(capsys, "db", "check", "--db", database_url)
    assert code == EXIT_FAILED and "run `metastore db upgrade` to migrate it" in out
    # The newest revision (0012) adds nothing on SQLite and changes functions' bodies only
    # on PostgreSQL: the schema matches, its revision is behind.
    assert "revision is 0011, not the newest (0012)" in out
    # The newest schema under an older revision (one that changes nothing on its backend, as
    # 0004 on SQLite, or a revision stamped by hand): check says it is not the newest.
    assert run(capsys, "db", "upgrade", "--db", database_url)[0] == EXIT_OK
    command.stamp(migrate.alembic_config(database_url), "0004")
    code, out, _ = run(capsys, "db", "check", "--db", database_url)
    assert code == EXIT_FAILED and "run `metastore db upgrade` to migrate it" in out
    assert f"revision is 0004, not the newest ({migrate.head_revision()})" in out
    command.stamp(migrate.alembic_config(database_url), "head")
    code, out, _ = run(
        capsys, "db", "downgrade", "--db", database_url, "--revision", "base", "--yes"
    )
    assert code == EXIT_OK and out.endswith("is at revision (empty)\n")
    code, _, err = run(capsys, "db", "downgrade", "--db", database_url, "--revision", "zzz")
    assert code == EXIT_USAGE, err
    assert err == (
        "metastore db downgrade: error: --revision zzz: the database is empty, there is "
        "nothing to downgrade\n"
    )
    head = migrate.head_revision()
    code, _, err = run(capsys, "db", "upgrade", "--db", database_url, "--revision", "9999")
    assert code == EXIT_USAGE, err
    assert err == (
        "metastore db upgrade: error: --revision 9999 is not a revision of this colstats: give "
        f"head, +N to move N revisions, or a revision from 0001 to {head} (`metastore db "
        "history`)\n"
    )
    # Revisions the other way from the database's, and further than there are revisions.
    assert run(capsys, "db", "upgrade", "--db", database_url, "--revision", "0005")[0] == EXIT_OK
    code, _, err = run(capsys, "db", "downgrade", "--db", database_url, "--revision", "0008")
    assert code == EXIT_USAGE, err
    assert err.endswith(
        "--revision 0008 is newer than the database's revision 0005: `metastore db upgrade "
        "--revision 0008 --db URL` goes forward to it\n"
    )
    for older in ("0003", "base", "head-9", "-1"):
        code, _, err = run(capsys, "db", "upgrade", "--db", database_url, "--revision", older)
        assert code == EXIT_USAGE, err
        assert f"--revision {older} is older than the database's revision 0005: `metastore " in err
    code, _, err = run(capsys, "db", "downgrade", "--db", database_url, "--revision", "-9")
    assert code == EXIT_USAGE, err
    assert err.endswith(
        "--revision -9 is not within its revisions: give base, -N to move N revisions back, or "
        "a revision from 0001 to 0004 (`metastore db history`)\n"
    )
    code, _, err = run(capsys, "db", "upgrade", "--db", database_url, "--revision", "+9")
    assert code == EXIT_USAGE and "--revision +9 is not within its revisions: give head" in err
    assert ": revision 0005, behind" in run(capsys, "db", "current", "--db", database_url)[1]
    # A database that a newer colstats migrated: mended by running that one, not by retyping.
    engine = sa.create_engine(database_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE alembic_version SET version_num = '0099'"))
    engine.dispose()
    newer = "is at revision 0099, which this colstats does not have (its newest is "
    for argv in (
        ["upgrade"],
        ["downgrade", "--revision", "-1"],
        ["downgrade", "--revision", "base"],
        ["check"],
    ):
        code, _, err = run(capsys, "db", *argv, "--db", database_url)
        assert code == EXIT_FAILED and newer in err, err
        assert err.endswith(
            f"run that one, or its `metastore db downgrade --revision {head} --db URL` first\n"
        )
    code, out, _ = run(capsys, "db", "current", "--db", database_url)
    assert code == EXIT_OK and out.endswith(
        f": revision 0099, from a newer colstats (this one's newest is {head})\n"
    )
    for migrating in ([], ["--no-migrate"]):
        code, _, err = run(capsys, "serve", "--db", database_url, "--port", "0", *migrating)
        assert code == EXIT_FAILED and newer in err, err
    code, _, err = run(capsys, "db", "downgrade", "--db", database_url)
    assert code == EXIT_USAGE and "--revision" in err


@pytest.mark.postgres
def test_psycopg2_urls_work(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """postgresql+psycopg2:// (the psycopg2 extra) migrates and checks a real database."""
    for url in empty_database("postgresql", tmp_path):
        url2 = url.replace("postgresql+psycopg://", "postgresql+psycopg2://")
        assert url2 != url or PG_ADMIN_URL.startswith("postgresql+psycopg2")
        assert run(capsys, "db", "upgrade", "--db", url2)[0] == EXIT_OK
        code, out, _ = run(capsys, "db", "check", "--db", url2)
        assert code == EXIT_OK and "matches the models" in out
