"""Progress of the scan: a bar on a terminal, plain log lines otherwise.

    [##########..........]  512/1,024 partitions  1.2 GiB/2.4 GiB  85.0 MiB/s  0:00:15 left

The tasks add (bytes, partitions) to a Spark accumulator as they finish their files; a
thread of the driver reads it twice a second (watch()) and shows it: on a terminal the bar is
redrawn in place, otherwise a log line is written every LOG_EVERY seconds and at the end.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.accumulators import Accumulator

log = logging.getLogger("metastore.job")

WIDTH = 20
LOG_EVERY = 10.0
POLL = 0.5


def size_text(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(count) < 1024 or unit == "TiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def duration_text(seconds: float) -> str:
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class Progress:
    """Shows PARTITIONS and BYTES done of their totals on STREAM: redrawn in place when it
    is a terminal, else as log lines at most every LOG_EVERY seconds."""

    def __init__(
        self,
        partitions: int,
        total_bytes: int,
        stream: IO[str],
        *,
        clock: Callable[[], float] = time.monotonic,
        terminal: bool | None = None,
    ) -> None:
        self.partitions, self.total_bytes = partitions, total_bytes
        self.stream, self.clock = stream, clock
        self.terminal = stream.isatty() if terminal is None else terminal
        self.started = clock()
        self.last_line = -LOG_EVERY
        self.done_partitions, self.done_bytes = 0.0, 0

    def line(self) -> str:
        """The progress as one line of text."""
        elapsed = self.clock() - self.started
        fraction = self.done_bytes / self.total_bytes if self.total_bytes else 1.0
        if not self.total_bytes and self.partitions:
            fraction = self.done_partitions / self.partitions
        fraction = min(max(fraction, 0.0), 1.0)
        filled = int(fraction * WIDTH)
        rate = self.done_bytes / elapsed if elapsed > 0 else 0.0
        if fraction >= 1.0:
            left = "done"
        elif fraction > 0 and elapsed > 0:
            left = f"{duration_text(elapsed * (1 - fraction) / fraction)} left"
        else:
            left = "time left unknown"
        # A partition read by several tasks counts once all of them are done.
        shown = min(int(self.done_partitions + 1e-9), self.partitions)
        return (
            f"[{'#' * filled}{'.' * (WIDTH - filled)}] {shown:,}/{self.partitions:,} partitions  "
            f"{size_text(self.done_bytes)}/{size_text(self.total_bytes)}  "
            f"{size_text(rate)}/s  {left}"
        )

    def update(self, partitions: float, done_bytes: int) -> None:
        self.done_partitions, self.done_bytes = partitions, done_bytes
        now = self.clock()
        if self.terminal:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
        elif now - self.last_line >= LOG_EVERY:
            self.last_line = now
            log.info("scan: %s", self.line())

    def finish(self) -> None:
        """The final state: the bar's line ended, or a last log line."""
        if self.terminal:
            self.stream.write("\r" + self.line() + "\x1b[K\n")
            self.stream.flush()
        else:
            log.info("scan: %s", self.line())


@contextmanager
def watch(sc: SparkContext, progress: Progress) -> Iterator[Accumulator[tuple[int, float]]]:
    """An accumulator of (bytes, partitions) for the tasks to add to, shown by PROGRESS
    while the block runs (and once more at its end)."""
    from pyspark.accumulators import AccumulatorParam

    class Pair(AccumulatorParam[tuple[int, float]]):
        def zero(self, value: tuple[int, float]) -> tuple[int, float]:
            return (0, 0.0)

        def addInPlace(self, a: tuple[int, float], b: tuple[int, float]) -> tuple[int, float]:
            return (a[0] + b[0], a[1] + b[1])

    accumulator = sc.accumulator((0, 0.0), Pair())
    stop = threading.Event()

    def show() -> None:
        while not stop.wait(POLL):
            done_bytes, partitions = accumulator.value
            progress.update(partitions, done_bytes)

    thread = threading.Thread(target=show, name="colstats-progress", daemon=True)
    thread.start()
    try:
        yield accumulator
    finally:
        stop.set()
        thread.join()
        done_bytes, partitions = accumulator.value
        progress.update(partitions, done_bytes)
        progress.finish()
