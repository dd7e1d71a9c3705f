"""The KLL sketches kll_build writes, read by DataSketches for Java as Hive 4 reads them
(pyspark's datasketches-java jar): the same count, extremes and median, written back byte
for byte, and merged."""

from __future__ import annotations

import subprocess
from pathlib import Path

import datasketches
import numpy as np
from java_tools import compile_java, pyspark_jars

from metastore.sketches import kll_build

SOURCE = Path(__file__).parent / "java" / "KllRead.java"


def test_java_reads_the_sketches_kll_build_writes(tmp_path: Path) -> None:
    jars = pyspark_jars(("datasketches-java-*.jar", "datasketches-memory-*.jar"))
    classpath = compile_java(SOURCE, jars, tmp_path)
    rng = np.random.default_rng(11)
    blobs = [kll_build(rng.normal(0, 1, size)) for size in (5, 201, 1000, 131_072, 500_001)]
    run = subprocess.run(
        ["java", "-cp", classpath, "KllRead"],
        input="".join(blob.hex() + "\n" for blob in blobs),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = run.stdout.splitlines()
    for blob, line in zip(blobs, lines, strict=True):
        n, low, high, median, written, merged = line.split()
        sketch = datasketches.kll_floats_sketch.deserialize(blob)
        assert int(n) == sketch.n and int(merged) == sketch.n + 1
        f32 = np.float32  # Java prints the shortest text of a float
        assert (f32(low), f32(high)) == (f32(sketch.get_min_value()), f32(sketch.get_max_value()))
        assert f32(median) == f32(sketch.get_quantile(0.5, True))
        assert bytes.fromhex(written) == blob
