"""Skewed values (--skew, --record-skew) on local Spark against a real server, checked
against exact counts of generated data whose heavy values are far from the threshold."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from analyze_data import folder_of
from conftest import RunningServer
from job_checks import KEY, new_db, run_job
from pyspark.sql import SparkSession

from metastore.cli import analyze as analyze_command
from metastore.job import analyze
from metastore.job.errors import JobError

pytestmark = [
    pytest.mark.spark,
    # PySpark's collect() drops its local socket to the JVM without closing it.
    pytest.mark.filterwarnings(
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
    ),
]

SHARE = 0.05


def skewed_values(rng: random.Random, rows: int, heavy: dict[Any, float], tail: int) -> list[Any]:
    """ROWS values: each HEAVY value about its share of the rows, the rest spread over TAIL
    values (each far below 5%), and a few NULLs."""
    out: list[Any] = []
    for _ in range(rows):
        pick = rng.random()
        for value, share in heavy.items():
            if pick < share:
                out.append(value)
                break
            pick -= share
        else:
            out.append(None if rng.random() < 0.02 else rng.randrange(1000, 1000 + tail))
    return out


def above(values: list[Any], share: float) -> set[str]:
    """The exact answer: the text of the non-null values holding more than SHARE."""
    counts = Counter(v for v in values if v is not None)
    return {str(v) for v, n in counts.items() if n > share * len(values)}


def write(path: Path, parts: dict[str, dict[str, list[Any]]]) -> None:
    for value, columns in parts.items():
        folder = path / folder_of(KEY, value)
        folder.mkdir(parents=True)
        table = pa.table({"x": pa.array(columns["x"], pa.int64()), "y": pa.array(columns["y"])})
        half = table.num_rows // 2
        pq.write_table(table.slice(0, half), folder / "part-0.parquet")
        pq.write_table(table.slice(half), folder / "part-1.parquet")


def run(spark: SparkSession, server: RunningServer, *args: str) -> analyze.AnalyzeResult:
    import argparse

    parser = argparse.ArgumentParser()
    analyze_command.add_arguments(parser)
    options = analyze_command.options(
        parser.parse_args([*args[:1], "--uri", f"thrift://127.0.0.1:{server.port}", *args[1:]])
    )
    return analyze.run(spark, options)


def test_skewed_values_per_partition_and_table_match_exact_counts(
    client: Any,
    spark: SparkSession,
    server: RunningServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    rng = random.Random(50)
    parts = {
        # In p1, 6 holds ~20% and 20 ~12%; 30 holds ~1%, under the share.
        "p1": {"x": skewed_values(rng, 20_000, {6: 0.20, 20: 0.12, 30: 0.01}, 3000)},
        # In p2, 40 holds ~30%; 6 ~2%.
        "p2": {"x": skewed_values(rng, 10_000, {40: 0.30, 6: 0.02}, 5000)},
    }
    for columns in parts.values():
        columns["y"] = [
            None if x is None else ("hot" if x in (6, 40) else f"v{x}") for x in columns["x"]
        ]
    path = tmp_path / "t"
    write(path, parts)
    db = new_db()
    caplog.set_level("INFO", logger="metastore.job")
    result = run(spark, server, f"{db}.t", "--path", str(path), "--skew")
    assert result.share == SHARE
    every_x = parts["p1"]["x"] + parts["p2"]["x"]
    every_y = parts["p1"]["y"] + parts["p2"]["y"]
    assert {v for v, _ in result.skewed["x"]} == above(every_x, SHARE) == {"6", "20", "40"}
    assert {v for v, _ in result.skewed["y"]} == above(every_y, SHARE)
    counts = Counter(every_x)
    for value, estimate in result.skewed["x"]:
        assert abs(estimate - counts[int(value)]) <= 3.5 / 1024 * len(every_x), value
    for part, columns in parts.items():
        line = next(
            r.getMessage() for r in caplog.records if f"of x in ds={part}:" in r.getMessage()
        )
        shown = {item.split(" ")[0] for item in line.split(": ", 1)[1].split(", ")}
        assert shown == above(columns["x"], SHARE), part
    summary = analyze.summary_text(result)
    assert "skewed values (each more than 5.0% of the rows):" in summary
    assert "  x: 6 (" in summary
    # A share of its own: at 12%, 6 (14% of all rows) stays; 40 (10%) and 20 (8%) do not.
    stricter = run(spark, server, f"{db}.t", "--path", str(path), "--skew", "0.12")
    assert {v for v, _ in stricter.skewed["x"]} == above(every_x, 0.12) == {"6"}


def test_record_skew_stores_the_table_skewed_info(
    client: Any, spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    rng = random.Random(51)
    x = skewed_values(rng, 20_000, {6: 0.25, 20: 0.10}, 4000)
    y = [None if v is None else ("a" if v == 6 and rng.random() < 0.5 else "b") for v in x]
    path = tmp_path / "t"
    write(path, {"only": {"x": x, "y": y}})
    db = new_db()
    run_job(spark, server, f"{db}.t", "--path", str(path), "--record-skew", "X")
    info = client.get_table(db, "t").sd.skewedInfo
    assert info.skewedColNames == ["x"]
    assert sorted(info.skewedColValues) == [[v] for v in sorted(above(x, SHARE))]

    # Two columns: the values of both together, as list bucketing keeps them.
    run_job(spark, server, f"{db}.t", "--path", str(path), "--record-skew", "y,x")
    info = client.get_table(db, "t").sd.skewedInfo
    assert info.skewedColNames == ["y", "x"]
    pairs = [
        f"{b}\x00{a}" if a is not None and b is not None else None
        for a, b in zip(x, y, strict=True)
    ]
    expected = sorted(value.split("\x00") for value in above(pairs, SHARE))
    assert sorted(info.skewedColValues) == expected
    assert ["a", "6"] in expected and ["b", "6"] in expected and ["b", "20"] in expected


def test_record_skew_of_an_unknown_column_is_refused(
    spark: SparkSession, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "t"
    write(path, {"only": {"x": [1, 2], "y": ["a", "b"]}})
    with pytest.raises(JobError, match="--record-skew z: not an analyzed column"):
        run_job(spark, server, f"{new_db()}.t", "--path", str(path), "--record-skew", "z")
