"""`metastore ping`: does a metastore answer at this URI? (The compose stack's health check.)"""

from __future__ import annotations

import argparse
from typing import Any

from metastore.cli import remote


def add_parser(commands: Any) -> None:
    ping = commands.add_parser(
        "ping",
        help="check that a metastore answers",
        description="Make one Thrift call (get_all_databases) to a metastore, colstats or "
        "HMS, and say how long it took; exit 1 with the reason when it fails.",
    )
    ping.add_argument(
        "--timeout", type=float, default=10.0, help="seconds to wait for the answer (default 10)"
    )
    remote.add_arguments(ping)
    ping.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    answer = remote.check(remote.connection(args), timeout_s=args.timeout)
    print(
        f"{answer.uri}: a Hive Metastore answered in {answer.seconds * 1000:.0f} ms "
        f"({len(answer.databases)} database(s))"
    )
    return 0
