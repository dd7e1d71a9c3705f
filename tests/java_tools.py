"""Compiling and running Java programs against Hive's client jars from pyspark."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest


def unavailable(reason: str) -> NoReturn:
    """Skip, except in CI, which installs every tool and package and so must run the test."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}, and CI=true requires it")
    pytest.skip(reason)


def pyspark_jars(patterns: tuple[str, ...]) -> list[Path]:
    """One jar of pyspark's per glob pattern."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        unavailable("pyspark is not installed (pip install -e '.[spark]')")
    jars_dir = Path(spec.origin).parent / "jars"
    found = []
    for pattern in patterns:
        matches = sorted(jars_dir.glob(pattern))
        if len(matches) != 1:
            unavailable(f"expected one {pattern} in {jars_dir}, found {[p.name for p in matches]}")
        found.append(matches[0])
    return found


def compile_java(source: Path, jars: list[Path], classes: Path) -> str:
    """Compile SOURCE against JARS into CLASSES; the classpath to run it with."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        unavailable("javac or java is not installed (a JDK 17 is needed)")
    classpath = os.pathsep.join(str(jar) for jar in jars)
    compiled = subprocess.run(
        ["javac", "-encoding", "UTF-8", "-d", str(classes), "-cp", classpath, str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if compiled.returncode != 0:
        pytest.fail(f"javac failed:\n{compiled.stdout}{compiled.stderr}")
    return os.pathsep.join([str(classes), classpath])
