"""Throughput of building p=10 HyperLogLog sketches: vectorized, scalar and DataSketches.

Prints values per second for hashing plus register update, for longs and for short
strings ("v123456"), through:

* ``HyperLogLog.add_longs`` / ``add_strings`` (vectorized NumPy over arrays),
* the scalar path (``hash_long`` / ``hash_string`` then ``add_hash``, one Python call
  per value),
* ``datasketches.hll_sketch(10).update`` per value (it has no batch update API),

and the ratios between them. Each figure is the best of a few runs, on one core.

Usage: ``python bench/sketch_bench.py [--n 2000000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import datasketches
import numpy as np
import pyarrow as pa

from metastore.sketches import HyperLogLog, hash_long, hash_string

SCALAR_SHARE = 20  # the per-value paths run on n / SCALAR_SHARE values to stay quick


def best_rate(count: int, run: Callable[[], object], repeat: int) -> float:
    """Values per second of the fastest of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return count / best


def scalar_longs(values: list[int]) -> HyperLogLog:
    sketch = HyperLogLog(10)
    for value in values:
        sketch.add_hash(hash_long(value))
    return sketch


def scalar_strings(values: list[str]) -> HyperLogLog:
    sketch = HyperLogLog(10)
    for value in values:
        sketch.add_hash(hash_string(value))
    return sketch


def datasketches_update(values: list[int] | list[str]) -> datasketches.hll_sketch:
    sketch = datasketches.hll_sketch(10)
    update = sketch.update
    for value in values:
        update(value)
    return sketch


def report(title: str, rates: dict[str, float]) -> None:
    print(f"\n{title}")
    for name, rate in rates.items():
        print(f"  {name:<44} {rate / 1e6:9.2f} M values/s")
    reference = rates["datasketches hll_sketch.update (per value)"]
    vectorized = next(rate for name, rate in rates.items() if name.startswith("vectorized"))
    scalar = rates["scalar hash + add_hash (per value)"]
    print(f"  vectorized / datasketches = {vectorized / reference:6.2f}x")
    print(f"  vectorized / scalar       = {vectorized / scalar:6.2f}x")
    print(f"  scalar / datasketches     = {scalar / reference:6.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000, help="values per vectorized run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best kept)")
    args = parser.parse_args()
    n, few = args.n, max(1, args.n // SCALAR_SHARE)

    longs = np.arange(n, dtype=np.int64) * 7919
    long_list = longs[:few].tolist()
    check = HyperLogLog(10).add_longs(longs[:few])
    assert scalar_longs(long_list) == check, "scalar and vectorized sketches differ"
    report(
        f"longs (vectorized n={n:,}, per-value n={few:,})",
        {
            "vectorized add_longs (int64 array)": best_rate(
                n, lambda: HyperLogLog(10).add_longs(longs), args.repeat
            ),
            "scalar hash + add_hash (per value)": best_rate(
                few, lambda: scalar_longs(long_list), args.repeat
            ),
            "datasketches hll_sketch.update (per value)": best_rate(
                few, lambda: datasketches_update(long_list), args.repeat
            ),
        },
    )

    strings = [f"v{i}" for i in range(100_000, 100_000 + n)]
    arrow = pa.array(strings, type=pa.string())
    string_few = strings[:few]
    assert scalar_strings(string_few) == HyperLogLog(10).add_strings(string_few)
    report(
        f"short strings 'v123456' (vectorized n={n:,}, per-value n={few:,})",
        {
            "vectorized add_strings (Arrow array)": best_rate(
                n, lambda: HyperLogLog(10).add_strings(arrow), args.repeat
            ),
            "add_strings (Python list, to Arrow)": best_rate(
                n, lambda: HyperLogLog(10).add_strings(strings), args.repeat
            ),
            "scalar hash + add_hash (per value)": best_rate(
                few, lambda: scalar_strings(string_few), args.repeat
            ),
            "datasketches hll_sketch.update (per value)": best_rate(
                few, lambda: datasketches_update(string_few), args.repeat
            ),
        },
    )


if __name__ == "__main__":
    main()
