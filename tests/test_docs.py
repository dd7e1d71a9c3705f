"""The documentation: the site builds with warnings as errors, and every command its pages
and the README show is run, or listed in NOT_RUN with the reason.

The commands are the fenced `sh`, `python` and `sql` blocks of README.md, of every page of
docs/ and of the files the pages include (`--8<-- "bench/README.md"`). `toml` blocks are
loaded as settings files. Blocks of other programs' settings (`properties`, `xml`) and of
output (no language) are not commands. A block of a language not named here fails the
test, and so does a block that is neither run nor listed: a command added to the pages is
run here, or listed here on purpose.

How a block runs, on loopback and in a folder of its own:

* `sh`: bash with `set -euo pipefail`. `metastore serve` runs in the background until the
  block ends (SIGTERM then), and the next line waits until it listens. The environment
  stands in for the machine: `METASTORE_HOST=127.0.0.1`, `METASTORE_PORT` a free port,
  `METASTORE_URI` and `METASTORE_HOME` to match; the folder holds the test CA's `ca.crt`,
  `server.crt` and `server.key`.
* `python`: the block as a script, with the virtualenv's Python.
* the PostgreSQL page's `sql` block: run by the `pg_role` fixture on the PostgreSQL of the
  tests, with a role and database name of its own instead of `colstats`.

The examples' hosts are replaced by loopback: `thrift://HOST:9083` is the block's own server
when it starts one, else the server shared by the module (SQLite, a Flight port, the
sample table `sales.orders` analyzed by the job); `grpc://HOST:8815` that server's Flight
port; `postgresql+psycopg://...@dbhost/...` the role and database `pg_role` made;
`/data/orders` the sample table's files (metastore.sample_data); the warehouses of the
Spark and pyiceberg examples a temporary folder.

Needs Java 17 and pyspark (the shared server's table is written by the job), PostgreSQL for
the blocks that use it, mkdocs (the `docs` extra) for the build; each is skipped without
it, except with CI=true, where it fails. About 2 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import PG_ADMIN_URL, _postgres_or_skip
from java_tools import unavailable
from pki import Pki

from metastore import config
from metastore.cli import build_parser
from metastore.sample_data import write_orders

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent

COMMANDS = {"sh", "python", "sql"}
SETTINGS = {"toml"}
NOT_COMMANDS = {"", "properties", "xml"}

NOT_RUN: list[tuple[str, str, str]] = [
    # (the page, a part of its block's first line, why the block is not run here)
    # Installs, and the suite itself.
    ("README.md", "&& metastore demo", "tests/test_readme.py runs it from a clean clone"),
    ("docs/getting-started/quickstart.md", "&& metastore demo", "the README's: test_readme.py"),
    ("README.md", "&& pytest", "the whole suite: .ci/run runs it (test_ci_runs_the_readmes...)"),
    ("docs/getting-started/quickstart.md", "&& pytest", "the README's: .ci/run runs it"),
    ("docs/contributing/tests.md", ".[test,spark,kerberos,psycopg2]", "the README's: .ci/run"),
    ("docs/contributing/tests.md", "pytest tests/engines", "parts of the suite (Spark, HMS)"),
    ("docs/job/analyze.md", "pip install", "an install; tests/test_readme.py installs .[spark]"),
    ("docs/contributing/tests.md", '.[docs]"', "an install; .ci/run installs the docs extra"),
    (
        "docs/contributing/tests.md",
        "mkdocs build --strict",
        "test_the_site_builds_with_warnings_as_errors builds the site into a temporary folder "
        "(not the checkout's site/); `mkdocs serve` runs until stopped",
    ),
    (
        "bench/README.md",
        "python bench/rpc_bench.py",
        "a benchmark's usage, [options] in brackets: 6-8 minutes with PostgreSQL and HMS "
        "2.3.10, and benchmarks measure without asserting",
    ),
    # Machines, clusters and services a test machine does not have.
    (
        "docs/getting-started/compose.md",
        "docker compose up",
        "root and podman: tests/compose/test_compose_stack.py brings the stack up and runs "
        "these steps",
    ),
    (
        "docs/job/object-storage.md",
        "metastore analyze lake.sales",
        "an S3 store and its credentials (minio:9000): tests/job/test_object_storage.py gives "
        "the job the same settings against moto's S3 server on loopback",
    ),
    (
        "docs/job/cluster.md",
        "--master spark://",
        "a Spark standalone cluster: tests/job/test_spark_cluster.py submits the job to a "
        "master and two workers",
    ),
    ("docs/job/cluster.md", "--master yarn", "a YARN cluster"),
    ("docs/job/cluster.md", "--master k8s://", "a Kubernetes cluster and an image registry"),
    (
        "docs/job/connection.md",
        "kinit alice@EXAMPLE.COM",
        "the Kerberos realm EXAMPLE.COM and its metastores: tests/cli/test_secure_metastores.py "
        "runs the commands with Kerberos against a test KDC",
    ),
    (
        "docs/operating/security.md",
        "spark-submit",
        "the Kerberos realm EXAMPLE.COM and a Spark application: "
        "tests/hms/security/test_kerberos.py runs Hive's Java client with these settings "
        "against a test KDC",
    ),
    (
        "docs/operating/security.md",
        "--conf spark.hadoop.hive.metastore.use.SSL=true",
        "not a command: options of the spark-submit before it",
    ),
    (
        "docs/operating/security.md",
        "from thrift.protocol.TBinaryProtocol",
        "a Kerberos ticket for hive/metastore.example.com: tests/hms/security/test_kerberos.py "
        "connects this way with a test KDC",
    ),
    (
        "docs/operating/moving-from-hms.md",
        "metastore db adopt",
        "a Hive Metastore's database: tests/cli/test_db_adopt.py adopts one that HMS 2.3.10 made",
    ),
    (
        "docs/engines/duckdb.md",
        "INSTALL airport FROM community",
        "DuckDB downloads the Airport extension from its own server, which test machines do "
        "not reach: tests/flight replays the extension's requests",
    ),
    (
        "docs/engines/duckdb.md",
        "CREATE SECRET colstats",
        "the Airport extension: tests/flight/test_flight_serve.py calls with the token over TLS",
    ),
]

EXPECT: list[tuple[str, str, list[str]]] = [
    # (the page, a part of its block's first line, what the block's output holds)
    ("README.md", "# listens on", ["a Hive Metastore answered in"]),
    ("README.md", "metastore serve &", ["9 column(s), 7 partition(s) analyzed", "col_name"]),
    ("docs/cli.md", "metastore ping", ["answered in", "orders", "ds=2024-01-03"]),
    (
        "docs/engines/duckdb.md",
        "import msgpack",
        [
            "['catalog_version', 'column_statistics', 'create_transaction', 'endpoints', "
            "'list_schemas']",
            "'is_fixed': False",
            "order_id: int64",
            "rows in the first endpoint",
        ],
    ),
    ("docs/engines/iceberg.md", "import pyarrow", ["3\n"]),
    ("docs/engines/spark.md", "from pyspark.sql", ["orders"]),
    ("docs/operating/postgresql.md", "export METASTORE_DB", ["the schema matches the models"]),
    (
        "docs/operating/upgrades.md",
        "metastore db upgrade",
        ["up to date", "0006 -> 0007", "the schema matches the models"],
    ),
    ("docs/contributing/sketches.md", "import numpy", ["(1024,)", "EquiHeightHistogram"]),
]

IN_CHECKOUT = [("docs/operating/upgrades.md", "alembic upgrade head")]
"""Blocks run from the checkout (alembic.ini is there)."""


@dataclasses.dataclass(frozen=True)
class Block:
    page: str
    line: int
    lang: str
    text: str

    @property
    def first_line(self) -> str:
        return next(line for line in self.text.splitlines() if line.strip()).strip()

    @property
    def key(self) -> str:
        return f"{self.page}:{self.line} {self.first_line[:60]}"

    def is_(self, page: str, part: str) -> bool:
        return self.page == page and part in self.first_line


FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)\s*$")
INCLUDE = re.compile(r'^--8<-- "(?P<path>[^"]+)"\s*$', re.M)


def pages() -> list[Path]:
    docs = sorted((ROOT / "docs").rglob("*.md"))
    included = [ROOT / m["path"] for page in docs for m in INCLUDE.finditer(page.read_text())]
    return [ROOT / "README.md", *docs, *included]


def blocks_of(path: Path) -> list[Block]:
    found = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent, start = len(opening["indent"]), i
        i += 1
        body = []
        while not re.match(rf"^ {{{indent}}}```\s*$", lines[i]):
            body.append(lines[i][indent:])
            i += 1
        page = path.relative_to(ROOT).as_posix()
        found.append(Block(page, start + 1, opening["lang"], "\n".join(body) + "\n"))
        i += 1
    return found


BLOCKS = [block for page in pages() for block in blocks_of(page)]


def _matches(page: str, part: str) -> list[Block]:
    return [b for b in BLOCKS if b.lang in COMMANDS and b.is_(page, part)]


def _not_run(block: Block) -> bool:
    return any(block.is_(page, part) for page, part, _ in NOT_RUN)


RUN = [b for b in BLOCKS if b.lang in COMMANDS and not _not_run(b)]


def _once(blocks: list[Block]) -> list[Block]:
    """One block of each text (the README repeats the quickstart's)."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for block in blocks:
        if (block.lang, block.text) not in seen:
            seen.add((block.lang, block.text))
            kept.append(block)
    return kept


# -- what the lists say ------------------------------------------------------------------------


def test_every_block_is_of_a_known_kind_and_every_command_runs_or_is_listed() -> None:
    assert len(BLOCKS) > 30 and any(b.page == "bench/README.md" for b in BLOCKS)
    unknown = [
        f"{b.page}:{b.line} ```{b.lang}"
        for b in BLOCKS
        if b.lang not in COMMANDS | SETTINGS | NOT_COMMANDS
    ]
    assert unknown == [], "a language this test does not know: add it to one of its sets"
    for page, part, reason in NOT_RUN:
        assert len(_matches(page, part)) == 1, f"NOT_RUN: not one block of {page} has {part!r}"
        for path in re.findall(r"(?:tests|bench)/[\w/]+\.py", reason):
            assert (ROOT / path).exists(), f"{path}, named in NOT_RUN, is not there"
    for page, part in [(page, part) for page, part, _ in EXPECT] + IN_CHECKOUT:
        matched = _matches(page, part)
        assert len(matched) == 1 and matched[0] in RUN, f"not one block of {page} runs {part!r}"


def test_ci_runs_the_readmes_test_command() -> None:
    """The README's test command is CI's: the same extras (and docs), then `pytest`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r'pip install -e "\.\[([\w,]+)\]" && pytest\n', readme)
    assert command is not None
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    installed = re.search(r'^pip install -q -e "\.\[([\w,]+)\]"$', ci, re.M)
    assert installed is not None
    assert set(command[1].split(",")) | {"docs"} == set(installed[1].split(","))
    assert "\npytest\n" in ci
    assert re.search(r"^NO_MKDOCS_2_WARNING=1 mkdocs build --strict ", ci, re.M)


def test_the_site_builds_with_warnings_as_errors(tmp_path: Path) -> None:
    if shutil.which("mkdocs", path=str(VENV_BIN)) is None:
        unavailable("mkdocs is not installed (pip install -e '.[docs]')")
    built = subprocess.run(
        [str(VENV_BIN / "mkdocs"), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    assert (tmp_path / "site" / "contributing" / "benchmarks" / "index.html").exists()


def test_the_configuration_page_names_every_flag_of_serve() -> None:
    """The settings table of docs/operating/configuration.md has a row for each of
    `metastore serve`'s flags, and names none it does not have."""
    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    flags = {o for a in commands.choices["serve"]._actions for o in a.option_strings}
    page = (ROOT / "docs" / "operating" / "configuration.md").read_text(encoding="utf-8")
    first_cells = [line.split(" | ")[0] for line in page.splitlines() if line.startswith("| `--")]
    documented = set(re.findall(r"`(--[\w-]+)", "\n".join(first_cells)))
    assert documented == flags - {"-h", "--help"}


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.lang in SETTINGS], ids=lambda b: b.key)
def test_a_settings_file_of_the_docs_loads(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in list(os.environ):
        if name.startswith("METASTORE_"):
            monkeypatch.delenv(name)
    path = tmp_path / "metastore.toml"
    path.write_text(block.text)
    config.load(str(path))


# -- the machine the blocks run on ----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _environment(home: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("METASTORE_")}
    env.update(
        PATH=os.pathsep.join([str(VENV_BIN), env.get("PATH", "")]),
        PYSPARK_PYTHON=sys.executable,
        METASTORE_HOME=str(home),
        METASTORE_HOST="127.0.0.1",
        METASTORE_PORT=str(port),
        METASTORE_URI=f"thrift://127.0.0.1:{port}",
    )
    return env


@dataclasses.dataclass
class Shared:
    """The server the blocks share, and the sample table's files."""

    port: int
    flight_port: int
    orders: Path


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    if shutil.which("java") is None:
        unavailable("the docs' blocks need Java 17 (the job writes the shared sample table)")
    base = tmp_path_factory.mktemp("shared")
    orders = write_orders(base / "orders").path
    port, flight_port = _free_port(), _free_port()
    env = _environment(base / "home", port)
    server = subprocess.Popen(
        [
            *(str(VENV_BIN / "metastore"), "serve", "--flight-port", str(flight_port)),
            *("--db", f"sqlite:///{base / 'shared.db'}", "--warehouse", str(base / "wh")),
            *("--fetch-bitvector", "--fetch-histogram", "--log-level", "WARNING"),
        ],
        env=env,
        cwd=base,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(
            [str(VENV_BIN / "metastore"), "ping", "--timeout", "2"], env=env, capture_output=True
        ).returncode:
            assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        analyzed = subprocess.run(
            [str(VENV_BIN / "metastore"), "analyze", "sales.orders", "--path", str(orders)],
            env=env,
            cwd=base,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert analyzed.returncode == 0, analyzed.stderr
        yield Shared(port, flight_port, orders)
    finally:
        server.send_signal(signal.SIGTERM)
        _, log = server.communicate(timeout=60)
    assert server.returncode == 0, log


@pytest.fixture(scope="module")
def pg_role() -> Iterator[str]:
    """The role and database the PostgreSQL page's SQL makes, named for this run; their URL
    (as psycopg's, with the page's password)."""
    [block] = [b for b in BLOCKS if b.page == "docs/operating/postgresql.md" and b.lang == "sql"]
    name = f"docs_{uuid.uuid4().hex[:10]}"
    sql = re.sub(r"\bcolstats\b", name, block.text)
    assert "CREATE ROLE" in sql and "CREATE DATABASE" in sql
    password = re.search(r"PASSWORD '([^']*)'", sql)
    assert password is not None
    admin = _postgres_or_skip()
    try:
        with admin.connect() as conn:
            for statement in filter(str.strip, sql.split(";")):
                conn.exec_driver_sql(statement)
        url = sa.make_url(PG_ADMIN_URL).set(
            drivername="postgresql+psycopg", username=name, password=password[1], database=name
        )
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.exec_driver_sql(f'DROP ROLE IF EXISTS "{name}"')
        admin.dispose()


def test_the_postgresql_pages_role_owns_its_database(pg_role: str) -> None:
    engine = sa.create_engine(pg_role)
    try:
        with engine.connect() as conn:
            user, owner = conn.exec_driver_sql(
                "SELECT current_user, pg_get_userbyid(datdba) FROM pg_database "
                "WHERE datname = current_database()"
            ).one()
            conn.exec_driver_sql("CREATE TABLE can_create (x int)")  # in public, as colstats
            conn.rollback()
    finally:
        engine.dispose()
    assert user == owner == sa.make_url(pg_role).username


# -- the blocks -----------------------------------------------------------------------------------

PG_URL = re.compile(r"postgresql\+(?P<driver>psycopg2?)://[^@\s/]+@dbhost(?::\d+)?/\w+")
SERVE = re.compile(r"^metastore serve\b")


def _substituted(
    text: str, request: pytest.FixtureRequest, shared: Shared, port: int, work: Path
) -> str:
    text = re.sub(r"thrift://[\w.-]+:9083", f"thrift://127.0.0.1:{port}", text)
    text = text.replace("--flight-port 8815", f"--flight-port {_free_port()}")
    text = re.sub(r"grpc://[\w.-]+:8815", f"grpc://127.0.0.1:{shared.flight_port}", text)
    text = text.replace("/data/orders", str(shared.orders))
    text = text.replace('"s3://lake/warehouse"', f'"{(work / "lake").as_uri()}"')
    text = text.replace('"hdfs:///warehouse"', f'"{(work / "warehouse").as_uri()}"')
    if PG_URL.search(text):
        url = sa.make_url(request.getfixturevalue("pg_role"))

        def pg(m: re.Match[str]) -> str:
            own = url.set(drivername=f"postgresql+{m['driver']}")
            return own.render_as_string(hide_password=False)

        text = PG_URL.sub(pg, text)
    return text


def _shell_script(text: str) -> str:
    """TEXT with each `metastore serve` in the background until the script ends."""
    lines = []
    for line in text.splitlines():
        if SERVE.match(line):
            command = re.sub(r"\s+#\s.*$", "", line).rstrip().removesuffix("&").rstrip()
            line = f"{command} &\nlistening $!"
        lines.append(line)
    return (
        "set -euo pipefail\n"
        "trap 'status=$?; set +e; kill $(jobs -p) 2>/dev/null; wait; exit $status' EXIT\n"
        "listening() {\n"
        "  for _ in $(seq 600); do\n"
        '    kill -0 "$1" 2>/dev/null || { echo "metastore serve exited" >&2; exit 1; }\n'
        '    (exec 3<>"/dev/tcp/127.0.0.1/$METASTORE_PORT") 2>/dev/null && return 0\n'
        "    sleep 0.1\n"
        "  done\n"
        '  echo "metastore serve did not listen within 60 s" >&2; exit 1\n'
        "}\n" + "\n".join(lines) + "\n"
    )


@pytest.mark.parametrize("block", _once(RUN), ids=lambda b: b.key)
def test_a_command_of_the_docs_runs(
    block: Block, request: pytest.FixtureRequest, shared: Shared, pki: Pki, tmp_path: Path
) -> None:
    if block.lang == "sql":
        assert block.page == "docs/operating/postgresql.md", "which database runs this SQL?"
        request.getfixturevalue("pg_role")  # runs it: see test_the_postgresql_pages_role...
        return
    port = _free_port() if "metastore serve" in block.text else shared.port
    for name in ("ca.crt", "server.crt", "server.key"):
        shutil.copy(pki.path(name), tmp_path / name)
    text = _substituted(block.text, request, shared, port, tmp_path)
    env = _environment(tmp_path / "home", port)
    cwd = ROOT if any(block.is_(page, part) for page, part in IN_CHECKOUT) else tmp_path
    if block.lang == "sh":
        command = ["bash", "-c", _shell_script(text)]
    else:
        script = tmp_path / "block.py"
        script.write_text(text)
        command = [sys.executable, str(script)]
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{block.page}:{block.line}\n{text}\n{output[-4000:]}"
    expected_parts = [e for page, part, e in EXPECT if block.is_(page, part)]
    for expected in [x for parts in expected_parts for x in parts]:
        assert expected in output, f"{block.page}:{block.line}: {expected!r} not in\n{output}"
    if cwd == ROOT:
        assert not list(ROOT.glob("*.db")), "the block left a database in the checkout"
