"""Timing of repeated calls: plans (how many times, how long), percentiles, progress lines."""

from __future__ import annotations

import dataclasses
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Benchmark the checkout this script lives in, whatever is installed.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


# ------------------------------------------------------------------------------------------
# Timing


@dataclasses.dataclass(frozen=True)
class Plan:
    """How to time one call: untimed warm-up calls, then up to COUNT timed calls, stopping
    early once BUDGET_S seconds have passed and at least MIN_COUNT calls were timed."""

    count: int
    budget_s: float
    warmup: int = 2
    min_count: int = 3


@dataclasses.dataclass(frozen=True)
class Timing:
    """Latencies of one measured call, in seconds."""

    samples: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.samples)

    def percentile(self, q: float) -> float:
        """Nearest-rank percentile: with fewer than 100 samples, p99 is the maximum."""
        ordered = sorted(self.samples)
        return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]

    @property
    def p50(self) -> float:
        return statistics.median(self.samples)

    @property
    def p99(self) -> float:
        return self.percentile(99)

    @property
    def per_second(self) -> float:
        """Calls per second of one client calling back to back."""
        return len(self.samples) / sum(self.samples)


def measure(
    fn: Callable[[], object], plan: Plan, before: Callable[[], object] | None = None
) -> Timing:
    """FN timed as PLAN says; with BEFORE, each call right after an untimed call of it (a
    write before a read of what it wrote)."""
    for _ in range(plan.warmup):
        if before is not None:
            before()
        fn()
    samples: list[float] = []
    started = time.perf_counter()
    while len(samples) < plan.count:
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
        if len(samples) >= plan.min_count and time.perf_counter() - started >= plan.budget_s:
            break
    return Timing(tuple(samples))


def measure_together(fns: dict[str, Callable[[], object]], plan: Plan) -> dict[str, Timing]:
    """Each of FNS timed as `measure` times one, in turns (one call of each per round, in
    their order), so that all meet the same moments of a machine whose speed moves: for a
    call and the floor it is compared with."""
    for _ in range(plan.warmup):
        for fn in fns.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    started = time.perf_counter()
    for _ in range(plan.count):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
        rounds = len(samples[next(iter(fns))])
        if rounds >= plan.min_count and time.perf_counter() - started >= plan.budget_s:
            break
    return {name: Timing(tuple(values)) for name, values in samples.items()}


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def report_timing(backend: str, what: str, timing: Timing) -> None:
    progress(
        f"  {backend:<10} {what:<44} p50 {timing.p50 * 1e3:9.2f} ms  "
        f"p99 {timing.p99 * 1e3:9.2f} ms  n={timing.n}"
    )


def since(started: float) -> str:
    return f"{time.perf_counter() - started:.1f} s"
