"""The README's quickstart, followed as a new user would: a clean clone of the repository,
the demo's command block run as written in a fresh virtualenv, and what it prints.

Needs git, Java 17 and the package index pip is set up with (a few minutes: it installs
PySpark); skipped without Java, except with CI=true, where it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from java_tools import unavailable

pytestmark = pytest.mark.readme

ROOT = Path(__file__).resolve().parents[1]


def quickstart_blocks() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def test_the_quickstart_is_two_commands_one_for_the_demo_one_for_the_tests() -> None:
    demo, tests = quickstart_blocks()[:2]
    assert demo.count("\n") == 1 and demo.rstrip().endswith("metastore demo")
    assert tests.count("\n") == 1 and tests.rstrip().endswith("&& pytest")
    assert demo.startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e")


def test_the_quickstart_demo_runs_in_a_fresh_virtualenv_from_a_clean_clone(
    tmp_path: Path,
) -> None:
    if shutil.which("java") is None:
        unavailable("the demo needs Java 17 (apt-get install openjdk-17-jre-headless)")
    demo = quickstart_blocks()[0]
    clone = tmp_path / "colstats"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    # A new user's shell: none of this test run's virtualenv.
    ours = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != ours)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PATH=path, METASTORE_HOME=str(tmp_path / "home"))
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + demo],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, f"{out[-3000:]}\n{done.stderr[-3000:]}"
    assert (clone / ".venv" / "bin" / "metastore").exists()
    stages = [line for line in out.splitlines() if re.match(r"\[\d/5\] ", line)]
    assert [s[:5] for s in stages] == ["[1/5]", "[2/5]", "[3/5]", "[4/5]", "[5/5]"]
    assert "7 daily partitions (ds=2024-01-01 .. ds=2024-01-07), Parquet" in out
    assert "9 columns, 7 partitions analyzed" in out
    assert "# sales.orders\n" in out and "column statistics (engine hive):" in out
    assert re.search(r"^order_id +bigint +1 +20000 +0 ", out, re.M)
    assert "histogram of amount (10 bins of equal width, KLL estimate):" in out
    assert "# sales.orders partition ds=2024-01-03" in out
    assert "metastore stopped, temporary files removed" in out
    assert re.search(r"^done in \d+\.\d s$", out, re.M)
    assert not (tmp_path / "home").exists()  # the demo never touched the user's metastore
