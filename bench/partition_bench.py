"""Partition pruning benchmark: get_partitions_by_filter and get_partition_names_ps over a table
of 10,000 partitions, colstats (SQLite, PostgreSQL) against Hive Metastore 2.3.10, side by side.

    python bench/partition_bench.py [--days 400] [--hours 25] [--repeat 20]
                                    [--backends sqlite,postgresql,hms]

Each of our backends is measured cold (a server without the cache of answers: every call
reads the database) and warm (a second server on the same database, with the cache: answers
from memory once read).

The table is partitioned by (ds string, hr int), as Spark writes them; the filters are the
strings Spark 4.1 sends for its pushed-down predicates. Each server runs in a process of its
own on a loopback port and is called through the generated client, so that the timings are
what a Spark driver waits for. It prints the p50 per call and backend and the ratio to HMS;
nothing here asserts on timings.

Every timing includes the client's decoding of the answer, which depends on the answer,
not on the server's speed, and is slow in Python (the generated client builds several
objects per partition: the partition, its descriptor, serde, columns and skew info). So
the report also gives that decoding alone, timed on each answer's bytes, and the ratio of
what remains: the servers' share (their work, encoding and the socket).
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import datetime
import functools
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hms_process import hive_metastore, pyspark_jars
from rpc_bench import our_databases, our_server
from rpc_workload import connect
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TTransport
from timing import Plan, Timing, measure, progress

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
DB, TABLE = "bench", "events"
FIRST_DAY = datetime.date(2024, 1, 1)
TARGET = 5.0  # colstats at least this many times faster than HMS 2.3.10
CACHE = 256 * 1024 * 1024  # the default size of the cache of answers

# name -> (call, arguments after db and table, expected number of partitions)
Calls = dict[str, tuple[str, tuple[Any, ...], int]]


def calls(days: int, hours: int) -> Calls:
    day = FIRST_DAY + datetime.timedelta(days=days // 2)
    month_days = sum(
        1
        for i in range(days)
        if (FIRST_DAY + datetime.timedelta(days=i)).strftime("%Y-%m") == day.strftime("%Y-%m")
    )
    week = [day + datetime.timedelta(days=i) for i in range(7)]
    return {
        "filter: ds = day": ("get_partitions_by_filter", (f'ds = "{day}"', -1), hours),
        "filter: week and hr": (
            "get_partitions_by_filter",
            (f'ds >= "{week[0]}" and ds <= "{week[-1]}" and hr = 7', -1),
            7,
        ),
        "filter: (hr) in (1, 2, 3)": (
            "get_partitions_by_filter",
            ("(hr) in (1, 2, 3)", -1),
            3 * days,
        ),
        "filter: ds like month": (
            "get_partitions_by_filter",
            (f'ds like "{day.strftime("%Y-%m")}.*"', -1),
            month_days * hours,
        ),
        "filter: (ds = day or hr > 22)": (
            "get_partitions_by_filter",
            (f'(ds = "{day}" or hr > 22)', -1),
            hours + (days - 1) * max(hours - 23, 0),
        ),
        "names_ps: [day, '']": ("get_partition_names_ps", ([str(day), ""], -1), hours),
        "names_ps: ['', '7']": ("get_partition_names_ps", (["", "7"], -1), days),
    }


def create(client: ThriftHiveMetastore.Client, warehouse: str, days: int, hours: int) -> None:
    client.create_database(
        t.Database(name=DB, locationUri=f"file:{warehouse}/{DB}.db", parameters={})
    )
    sd = t.StorageDescriptor(
        cols=[t.FieldSchema("id", "bigint", None), t.FieldSchema("v", "string", None)],
        location=f"file:{warehouse}/{DB}.db/{TABLE}",
        inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=t.SerDeInfo(
            None, "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe", {}
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
        numBuckets=-1,
        compressed=False,
    )
    keys = [t.FieldSchema("ds", "string", None), t.FieldSchema("hr", "int", None)]
    client.create_table(
        t.Table(tableName=TABLE, dbName=DB, sd=sd, partitionKeys=keys, parameters={})
    )
    # HMS needs a partition's storage; its location is left for the server to derive.
    part_sd = copy.copy(sd)
    part_sd.location = None
    values = [
        [str(FIRST_DAY + datetime.timedelta(days=d)), str(h)]
        for d in range(days)
        for h in range(hours)
    ]
    for start in range(0, len(values), 500):
        parts = [
            t.Partition(values=v, dbName=DB, tableName=TABLE, parameters={}, sd=part_sd)
            for v in values[start : start + 500]
        ]
        request = t.AddPartitionsRequest(
            dbName=DB, tblName=TABLE, parts=parts, ifNotExists=False, needResult=False
        )
        client.add_partitions_req(request)
    progress(f"  created {len(values):,} partitions")


@dataclasses.dataclass(frozen=True)
class Measured:
    """One call on one server: through the client, and the client's decoding of its answer."""

    call: Timing
    decode: Timing


def decoding(call: str, answer: Sequence[Any], plan: Plan) -> Timing:
    """How long the client takes to decode ANSWER, the success of CALL: its reply encoded
    as the server sent it (the binary protocol), then decoded as the client does."""
    result_type = getattr(ThriftHiveMetastore, f"{call}_result")
    buffer = TTransport.TMemoryBuffer()
    result_type(success=answer).write(TBinaryProtocolAccelerated(buffer))
    encoded = buffer.getvalue()

    def decode() -> None:
        result_type().read(TBinaryProtocolAccelerated(TTransport.TMemoryBuffer(encoded)))

    return measure(decode, plan)


def run(
    backend: str, port: int, args: argparse.Namespace, warehouse: str | None = None
) -> dict[str, Measured]:
    """Each call timed on the server at PORT, after creating the table in WAREHOUSE when
    given."""
    out: dict[str, Measured] = {}
    plan = Plan(count=args.repeat, budget_s=args.budget)
    with connect(port) as client:
        if warehouse is not None:
            create(client, warehouse, args.days, args.hours)
        for name, (call, call_args, expected) in calls(args.days, args.hours).items():
            method: Callable[..., Sequence[Any]] = getattr(client, call)
            answer = method(DB, TABLE, *call_args)
            if len(answer) != expected:
                raise RuntimeError(f"{backend} {name}: {len(answer)} partitions, not {expected}")
            timed = functools.partial(method, DB, TABLE, *call_args)
            out[name] = Measured(measure(timed, plan), decoding(call, answer, plan))
            progress(
                f"  {backend:<10} {name:<32} p50 {out[name].call.p50 * 1e3:9.2f} ms "
                f"(decoding {out[name].decode.p50 * 1e3:.2f} ms)"
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=400)
    parser.add_argument("--hours", type=int, default=25)
    parser.add_argument("--repeat", type=int, default=20, help="timed calls per measurement")
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per measurement")
    parser.add_argument("--backends", default="sqlite,postgresql,hms")
    args = parser.parse_args(argv)
    backends = args.backends.split(",")
    results: dict[str, dict[str, Measured]] = {}
    with tempfile.TemporaryDirectory(prefix="colstats-bench-") as warehouse:
        for backend, url in our_databases(backends, PG_ADMIN_URL):
            # Cold: without a cache, every call reads the database; warm: answers from the
            # cache of answers of a second server on the same database.
            cold, warm = f"{backend} cold", f"{backend} warm"
            with our_server(url, Path(warehouse) / f"{backend}.json") as port:
                results[cold] = run(cold, port, args, f"{warehouse}/{backend}")
            with our_server(url, Path(warehouse) / f"{backend}-warm.json", CACHE) as port:
                results[warm] = run(warm, port, args)
        if "hms" in backends:
            progress("hms: starting Hive Metastore 2.3.10")
            with hive_metastore(pyspark_jars()) as (port, home):
                results["hms"] = run("hms", port, args, str(home / "warehouse"))
    print_report(results, args)
    return 0


def print_report(results: dict[str, dict[str, Measured]], args: argparse.Namespace) -> None:
    ours = [b for b in results if b != "hms"]
    backends = [*ours, *(["hms"] if "hms" in results else [])]
    print(
        f"\npartition calls over {args.days * args.hours:,} partitions "
        f"({args.days} days x {args.hours} hours), p50 in ms, each server in its own process:"
    )
    header = ["call", *backends]
    if "hms" in results:
        header += [f"HMS / {b}" for b in ours] + [f"target >= {TARGET:g}x"]
    rows = [header]
    for name in calls(args.days, args.hours):
        row = [name] + [f"{results[b][name].call.p50 * 1e3:.2f}" for b in backends]
        if "hms" in results:
            hms = results["hms"][name].call.p50
            ratios = [hms / results[b][name].call.p50 for b in ours]
            row += [f"{r:.1f}x" for r in ratios]
            row += ["met" if ratios and min(ratios) >= TARGET else "MISSED"]
        rows.append(row)
    print_table(rows)
    print(
        "\nthe client's decoding of each answer (included above), and the servers' share "
        "(the p50 less the decoding):"
    )
    header = ["call", *(f"decoding {b}" for b in backends)]
    header += [f"HMS / {b}, servers' share" for b in ours if "hms" in results]
    rows = [header]
    for name in calls(args.days, args.hours):
        row = [name] + [f"{results[b][name].decode.p50 * 1e3:.2f}" for b in backends]
        if "hms" in results:
            hms = servers_share(results["hms"][name])
            row += [f"{hms / servers_share(results[b][name]):.1f}x" for b in ours]
        rows.append(row)
    print_table(rows)


def servers_share(measured: Measured) -> float:
    """The p50 of a call less the client's decoding of its answer (never below 1 us)."""
    return max(measured.call.p50 - measured.decode.p50, 1e-6)


def print_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for i, row in enumerate(rows):
        cells = zip(row, widths, strict=True)
        print("  ".join(v.rjust(w) if i and j else v.ljust(w) for j, (v, w) in enumerate(cells)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


if __name__ == "__main__":
    sys.exit(main())
