"""Calls made by many clients at the same moment, for the tests of concurrent writers."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from conftest import connect
from metadata_builders import Client

T = TypeVar("T")


def at_once(port: int, count: int, call: Callable[[int, Client], T]) -> list[T | Exception]:
    """CALL(n, client) made by COUNT clients of the server on PORT, each over a connection
    of its own, all released at the same moment; what each answered or raised, by n."""
    connections = [connect(port) for _ in range(count)]
    outcomes: list[T | Exception] = [RuntimeError("did not finish")] * count
    barrier = threading.Barrier(count)

    def run(n: int) -> None:
        barrier.wait()
        try:
            outcomes[n] = call(n, connections[n][0])
        except Exception as e:  # reported to the test
            outcomes[n] = e

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    for _, transport in connections:
        transport.close()
    return outcomes
