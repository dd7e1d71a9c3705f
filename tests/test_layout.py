"""The architecture holds: the handler answers every call of the IDL, the core imports nothing
generated from it, the job loads no database layer, the server loads no Spark, PyArrow or
NumPy, modules stay small and the docs' layout table names each of them, the wheel carries the
migrations."""

from __future__ import annotations

import inspect
import os
import signal
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from conftest import connect
from stats_builders import EXAMPLES, PART, column_stats, make_table, obj

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.hms.handler import Handler

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 700
# Data tables, not code: Hive's HyperLogLog bias constants.
DATA_MODULES = {ROOT / "metastore" / "sketches" / "hll_constants.py"}


def idl_methods() -> list[str]:
    return [name for name, _ in inspect.getmembers(ThriftHiveMetastore.Iface, inspect.isfunction)]


def test_the_handler_answers_every_method_of_the_idl() -> None:
    methods = idl_methods()
    assert len(methods) > 30
    missing = [name for name in methods if not callable(getattr(Handler, name, None))]
    assert missing == []
    for name in methods:
        declared = list(inspect.signature(getattr(ThriftHiveMetastore.Iface, name)).parameters)
        method = getattr(Handler, name)
        served = list(inspect.signature(method).parameters)
        if hasattr(method, "__wrapped__"):  # a `call`: its session parameter is not the caller's
            served.remove("s")
        assert served == declared, f"{name}: the handler takes {served}, the IDL {declared}"


def test_no_hand_written_module_is_over_700_lines() -> None:
    too_long = {}
    for folder in ("metastore", "tests", "bench", "scripts"):
        for path in (ROOT / folder).rglob("*.py"):
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_MODULE_LINES and path not in DATA_MODULES:
                too_long[str(path.relative_to(ROOT))] = lines
    assert too_long == {}, "split these modules by role"


def test_every_migration_has_a_title_of_one_line() -> None:
    """Alembic logs a revision's title (its docstring's first paragraph) as `db upgrade` runs
    it: a title of two lines prints its second without the log line's prefix."""
    long_titles = []
    for path in sorted((ROOT / "metastore" / "migrations" / "versions").glob("0*.py")):
        docstring = path.read_text(encoding="utf-8").split('"""')[1]
        if "\n\n" not in docstring or "\n" in docstring.split("\n\n")[0]:
            long_titles.append(path.name)
    assert long_titles == []


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return {name.split(".")[0] for name in out.split()}


def test_the_job_loads_no_database_layer() -> None:
    loaded = _modules_after(
        "import importlib, pkgutil, metastore.job\n"
        "for m in pkgutil.walk_packages(metastore.job.__path__, 'metastore.job.'):\n"
        "    if m.name != 'metastore.job.__main__':\n"
        "        importlib.import_module(m.name)\n"
        "import metastore.cli.analyze"
    )
    assert "pyarrow" in loaded  # the job's modules were loaded indeed
    assert not loaded & {"sqlalchemy", "alembic", "psycopg", "psycopg2", "sqlite3"}


def test_the_core_imports_nothing_generated_from_the_idl() -> None:
    """The statistics core, the schema's queries, the Spark bridge, a table's files and what
    every operation needs serve any door: only the Thrift door (metastore.hms) and the IDL's
    clients know the IDL."""
    loaded = _modules_after(
        "import importlib, pkgutil, metastore.stats, metastore.store, metastore.spark_stats\n"
        "import metastore.files, metastore.columns, metastore.spark_properties\n"
        "from metastore import stats, store, spark_stats, files\n"
        "for package in (stats, store, spark_stats, files):\n"
        "    for m in pkgutil.walk_packages(package.__path__, package.__name__ + '.'):\n"
        "        importlib.import_module(m.name)\n"
        "import metastore.operation, metastore.errors, metastore.vocabulary"
    )
    assert "sqlalchemy" in loaded  # the core's modules were loaded indeed
    assert not loaded & {"hive_metastore_thrift", "thrift"}


def test_the_flight_door_imports_nothing_of_the_thrift_door() -> None:
    """metastore.flight serves DuckDB from the core: nothing of metastore.hms nor of the
    IDL's generated code is loaded with it."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import importlib, pkgutil, sys, metastore.flight\n"
            "for m in pkgutil.walk_packages(metastore.flight.__path__, 'metastore.flight.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(' '.join(sorted(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    assert "metastore.flight.server" in out  # the door's modules were loaded indeed
    thrift = ("metastore.hms", "hive_metastore_thrift", "thrift")
    assert [name for name in out if name.split(".")[0] in thrift or name.startswith(thrift)] == []


LAYOUT_PAGE = ROOT / "docs" / "contributing" / "architecture.md"


def _layout_rows() -> list[str]:
    page = LAYOUT_PAGE.read_text(encoding="utf-8")
    section = page.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| `")]


def test_the_docs_layout_names_every_module() -> None:
    """Each module is in the layout table of docs/contributing/architecture.md: by its path,
    or by its name in the row of its package (`metastore/hms/`) that also names its
    sub-folders (`handler/`)."""
    rows = _layout_rows()
    unnamed = []
    for path in sorted((ROOT / "metastore").rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if path.name.startswith("__") or "migrations" in parts:
            continue
        full = f"`{'/'.join(parts)}`"
        package = f"`{'/'.join(parts[:2])}/`"
        folders = [f"`{folder}/`" for folder in parts[2:-1]]
        if not any(
            full in row
            or (package in row and f"`{path.name}`" in row and all(f in row for f in folders))
            for row in rows
        ):
            unnamed.append("/".join(parts))
    assert unnamed == [], "name these modules in docs/contributing/architecture.md's layout table"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_serve_loads_no_spark_pyarrow_or_numpy(tmp_path: Path, db_name: str) -> None:
    """`metastore serve`, started as a user starts it, serves metadata and statistics calls
    (aggregates without sketches included) without importing the job's libraries."""
    port = _free_port()
    server = subprocess.Popen(
        [
            *(sys.executable, "-X", "importtime", "-m", "metastore.cli", "serve"),
            *("--host", "127.0.0.1", "--port", str(port)),
            *("--db", f"sqlite:///{tmp_path / 'm.db'}", "--log-level", "WARNING"),
        ],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                client, transport = connect(port)
                break
            except Exception:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        make_table(client, db_name)
        examples = [obj(column, data) for column, (_, data) in EXAMPLES.items()]
        client.update_table_column_statistics(column_stats(db_name, examples))
        client.update_partition_column_statistics(column_stats(db_name, examples, PART))
        columns = list(EXAMPLES)
        assert client.get_table_statistics_req(
            t.TableStatsRequest(dbName=db_name, tblName="t", colNames=columns)
        ).tableStats
        aggregate = client.get_aggr_stats_for(
            t.PartitionsStatsRequest(
                dbName=db_name, tblName="t", colNames=columns, partNames=[PART, "ds=x/region=y"]
            )
        )
        assert aggregate.partsFound == 1
        transport.close()
    finally:
        server.send_signal(signal.SIGTERM)
        _, imports = server.communicate(timeout=30)
    imported = {
        line.split("|")[-1].strip().split(".")[0]
        for line in imports.splitlines()
        if line.startswith("import time:")
    }
    assert "sqlalchemy" in imported  # the import log is complete
    assert not imported & {"pyspark", "pyarrow", "numpy", "datasketches"}


def test_the_wheel_carries_the_migrations(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("colstats-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "metastore/migrations/env.py" in names
    assert "metastore/migrations/script.py.mako" in names
    assert "metastore/migrations/versions/0001_initial_schema.py" in names
    assert "hive_metastore_thrift/ThriftHiveMetastore.py" in names
    assert not any(name.startswith(("tests/", "bench/")) for name in names)


def test_test_modules_have_names_of_their_own() -> None:
    """Test folders are not packages: pytest and mypy import each test module by its file
    name, so two of one name in two folders collide."""
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert twice == {}, "rename one of each: module names must be unique under tests/"
