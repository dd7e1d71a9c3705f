"""Progress of a run: a bar on a terminal, plain log lines otherwise.

    [##########..........]  512/1,024 partitions  1.2 GiB/2.4 GiB  85.0 MiB/s  0:00:15 left

It moves with the bytes read, not with whole tasks: while a task reads a split it sends the
driver, at most twice a second, how far it has got (a UDP datagram to a port the driver
opens for the run, tagged with the run's random token: see Channel), and Spark's
accumulator adds each split whole when its task ends (what counts when datagrams do not
arrive, as on a cluster whose executors cannot reach the driver by UDP). A thread of the
driver shows the larger of the two twice a second (watch()): on a terminal the bar is
redrawn in place, otherwise a log line is written every LOG_EVERY seconds. When the scan
ends the line says the statistics are being written, and "done" only once they are
(Progress.done).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.accumulators import Accumulator

    from metastore.files.listing import Split

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
        self.state = "scan"
        """scan, then write (the data is read, the statistics being written), then done."""

    def line(self) -> str:
        """The progress as one line of text."""
        elapsed = self.clock() - self.started
        fraction = self.done_bytes / self.total_bytes if self.total_bytes else 1.0
        if not self.total_bytes and self.partitions:
            fraction = self.done_partitions / self.partitions
        fraction = min(max(fraction, 0.0), 1.0)
        filled = int(fraction * WIDTH)
        rate = self.done_bytes / elapsed if elapsed > 0 else 0.0
        if self.state == "done":
            left = "done"
        elif self.state == "write":
            left = "read; writing the statistics"
        elif fraction >= 1.0:
            left = "read"
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
        """The scan is over: the line says the statistics are being written."""
        self.state = "write"
        self._show_final()

    def done(self, written: int) -> None:
        """The statistics of WRITTEN partitions are written: the line says done."""
        self.state = "done"
        self.partitions = max(self.partitions, written)
        self._show_final()

    def _show_final(self) -> None:
        if self.terminal:
            self.stream.write("\r" + self.line() + "\x1b[K\n")
            self.stream.flush()
        else:
            log.info("scan: %s", self.line())


_DATAGRAM = struct.Struct("!8sId")
"""A task's report: the run's token, the split's index, the fraction of it read."""
REPORT_EVERY = 0.5


@dataclass(frozen=True)
class Reporter:
    """What a task needs to report its progress (pickled into the task)."""

    host: str
    port: int
    token: bytes

    def sender(self) -> Sender:
        return Sender(self)


class Sender:
    """A task's end of the channel: send(split index, fraction read) sends at most every
    REPORT_EVERY seconds, and always a split's end (fraction 1); it never fails the task."""

    def __init__(self, reporter: Reporter) -> None:
        self.reporter = reporter
        family = socket.AF_INET6 if ":" in reporter.host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_DGRAM)
        self.last = 0.0

    def __call__(self, index: int, fraction: float) -> None:
        now = time.monotonic()
        if fraction < 1.0 and now - self.last < REPORT_EVERY:
            return
        self.last = now
        reporter = self.reporter
        # Unreachable this way (a firewall, another network): the accumulator counts.
        with contextlib.suppress(OSError):
            self.socket.sendto(
                _DATAGRAM.pack(reporter.token, index, fraction), (reporter.host, reporter.port)
            )

    def close(self) -> None:
        self.socket.close()


class Channel:
    """The driver's end: the fraction read of each split, as the tasks report it."""

    def __init__(self, driver_host: str) -> None:
        family = socket.AF_INET6 if ":" in driver_host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_DGRAM)
        self.socket.bind(("", 0))
        self.socket.settimeout(POLL)
        self.reporter = Reporter(driver_host, self.socket.getsockname()[1], os.urandom(8))
        self.fractions: dict[int, float] = {}

    def receive(self, until: float) -> None:
        """Read the reports that arrive before the monotonic time UNTIL."""
        while (left := until - time.monotonic()) > 0:
            self.socket.settimeout(left)
            try:
                data = self.socket.recv(64)
            except (TimeoutError, OSError):
                return
            if len(data) != _DATAGRAM.size:
                continue
            token, index, fraction = _DATAGRAM.unpack(data)
            if token == self.reporter.token:
                self.fractions[index] = max(self.fractions.get(index, 0.0), min(fraction, 1.0))

    def read(self, splits: Sequence[Split], file_bytes: Sequence[int]) -> tuple[int, float]:
        """(bytes, partitions) read as the reports say: each split's fraction of its bytes
        (FILE_BYTES, by index) and of its share of its partition."""
        done_bytes, partitions = 0.0, 0.0
        for index, fraction in self.fractions.items():
            done_bytes += fraction * file_bytes[index]
            partitions += fraction * splits[index].share
        return int(done_bytes), partitions

    def close(self) -> None:
        self.socket.close()


@contextmanager
def watch(
    sc: SparkContext, progress: Progress, splits: Sequence[Split] = ()
) -> Iterator[tuple[Accumulator[tuple[int, float]], Reporter | None]]:
    """An accumulator of (bytes, partitions) for the tasks to add to when they end, and a
    Reporter for them to send how far they have got in SPLITS (None when the driver cannot
    open a port), shown by PROGRESS while the block runs (and once more at its end)."""
    from pyspark.accumulators import AccumulatorParam

    class Pair(AccumulatorParam[tuple[int, float]]):
        def zero(self, value: tuple[int, float]) -> tuple[int, float]:
            return (0, 0.0)

        def addInPlace(self, a: tuple[int, float], b: tuple[int, float]) -> tuple[int, float]:
            return (a[0] + b[0], a[1] + b[1])

    accumulator = sc.accumulator((0, 0.0), Pair())
    channel: Channel | None = None
    try:
        channel = Channel(sc.getConf().get("spark.driver.host") or "127.0.0.1")
    except OSError as e:
        log.debug("no progress channel: %s", e)
    totals: dict[str, int] = {}
    for split in splits:
        if split.counts_file:
            totals[split.partition] = totals.get(split.partition, 0) + split.size
    # A split's bytes: its share of its partition's (a piece of a large Parquet file too).
    file_bytes = [round(split.share * totals.get(split.partition, 0)) for split in splits]
    stop = threading.Event()

    def current() -> tuple[float, int]:
        done_bytes, partitions = accumulator.value
        if channel is not None:
            reported_bytes, reported_partitions = channel.read(splits, file_bytes)
            done_bytes = max(done_bytes, reported_bytes)
            partitions = max(partitions, reported_partitions)
        return partitions, done_bytes

    def show() -> None:
        while not stop.is_set():
            if channel is not None:
                channel.receive(time.monotonic() + POLL)
            elif stop.wait(POLL):
                break
            progress.update(*current())

    thread = threading.Thread(target=show, name="colstats-progress", daemon=True)
    thread.start()
    try:
        yield accumulator, channel.reporter if channel is not None else None
    finally:
        stop.set()
        thread.join()
        if channel is not None:
            channel.close()
        progress.update(*current())
        progress.finish()
