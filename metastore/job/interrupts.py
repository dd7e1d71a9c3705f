"""Ctrl-C and SIGTERM during a run: stop soon, cancel Spark's work, leave nothing half-written.

`metastore analyze` installs these handlers for SIGINT and SIGTERM (install()). A signal:

* asks Spark to cancel its jobs (in a thread of its own: the main thread may be inside a
  call to the JVM), when a session has been registered with watch_spark();
* raises KeyboardInterrupt in the main thread, which unwinds the run, unless the run is
  writing one unit to the metastore (a batch of partitions, the table level: see
  deferred()), which is finished first, so that no partition is left half-written; the
  KeyboardInterrupt comes at the end of the unit.

Spark's own SIGINT handler, which SparkContext installs when it starts in the main thread,
is kept out by starting Spark in a thread of its own (off_main_thread()), and replaced again
by watch_spark() where Spark was started elsewhere. Without install() (a program that calls
the job itself), the signals keep their handlers and deferred() does nothing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pyspark import SparkContext

log = logging.getLogger("metastore.job")

SIGNALS = (signal.SIGINT, signal.SIGTERM)

T = TypeVar("T")


class _State:
    def __init__(self) -> None:
        self.installed = False
        self.received: int | None = None
        self.writing = 0
        self.context: SparkContext | None = None
        self.previous: dict[int, Any] = {}


_state = _State()


def install() -> None:
    """Handle SIGINT and SIGTERM as this module says (in the main thread)."""
    _state.received = None
    for number in SIGNALS:
        _state.previous[number] = signal.signal(number, _handle)
    _state.installed = True


def uninstall() -> None:
    """The handlers that were there before install()."""
    for number, handler in _state.previous.items():
        signal.signal(number, handler)
    _state.previous.clear()
    _state.installed = False
    _state.context = None


def received() -> int | None:
    """The signal that interrupted the run, if one did."""
    return _state.received


def off_main_thread(work: Callable[[], T]) -> T:
    """WORK's result, WORK run in a thread of its own while this one waits, where a signal
    interrupts the wait (raising KeyboardInterrupt here) and not WORK: for starting Spark.

    In the main thread, a signal while pyspark starts the JVM would unwind pyspark's launch,
    which removes the folder the JVM is about to write its port to while the JVM runs on
    (it then prints a stack trace on the terminal); and SparkContext would install its own
    SIGINT handler until watch_spark() replaces it, so that a Ctrl-C meanwhile failed the
    run with a Spark error instead of interrupting it. After an interrupted wait, the JVM is
    stopped by stop_children() and WORK ends with an error nobody reads."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = work()
        except BaseException as e:
            outcome["error"] = e

    thread = threading.Thread(target=run, name="colstats-spark-start", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    result: T = outcome["result"]
    return result


def watch_spark(context: SparkContext) -> None:
    """Cancel CONTEXT's jobs on a signal; raise at once if one came while Spark started."""
    _state.context = context
    if _state.installed:
        signal.signal(signal.SIGINT, _handle)  # SparkContext installed its own
    if _state.received is not None:
        _cancel_spark()
        raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """A unit of writes that a signal does not cut: it raises KeyboardInterrupt after it."""
    _state.writing += 1
    try:
        yield
    finally:
        _state.writing -= 1
    if _state.installed and _state.writing == 0 and _state.received is not None:
        raise KeyboardInterrupt


def _handle(number: int, frame: FrameType | None) -> None:
    first = _state.received is None
    _state.received = number
    if first:
        _cancel_spark()
    if _state.writing:
        if first:
            log.warning("interrupted: finishing the write in progress, then stopping")
        return
    raise KeyboardInterrupt


def _cancel_spark() -> None:
    context = _state.context
    if context is None:
        return

    def cancel() -> None:
        try:
            context.cancelAllJobs()
        except Exception as e:  # the JVM may be gone already
            log.debug("cancelling Spark's jobs failed: %s", e)

    threading.Thread(target=cancel, name="colstats-cancel", daemon=True).start()


def stop_children(wait_s: float = 5.0) -> None:
    """Terminate this process's children (the JVM that pyspark started, when the interrupt
    came while it was starting and pyspark had not yet handed it over), and wait for them
    up to WAIT_S seconds. Linux only (it reads /proc); elsewhere, the JVM ends by itself
    when it finds its parent gone."""
    children = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                # pid (comm) state ppid ...: comm may hold spaces and parentheses.
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid():
            children.append(int(entry))
    for pid in children:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    for pid in children:
        while time.monotonic() < deadline:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                break
            if done:
                break
            time.sleep(0.05)
