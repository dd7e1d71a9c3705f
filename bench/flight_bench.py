"""The Flight door for DuckDB, measured side by side in one run:

1. `column_statistics` latency on a 100-column table (p50, p99 over every column, many
   rounds), as DuckDB's optimizer asks it (one DoAction per column);
2. scan throughput: a table's Parquet files read through Flight (endpoints, then every
   endpoint's DoGet, two at a time as DuckDB's threads on 2 cores) against DuckDB reading
   the same files directly (read_parquet into Arrow), rounds taking turns; the ratio
   direct time / Flight time (target: at least 0.5);
3. pruning: a query on 1 of 100 partitions: its endpoints, and the bytes the server read
   (its /proc rchar) against that partition's bytes and the table's.

The server is `metastore serve --flight-port` in a process of its own (SQLite), as a user
starts it; the tables are registered through Thrift.

    python bench/flight_bench.py [--rows 4000000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import msgpack
import pyarrow as pa
import pyarrow.flight as flight
import pyarrow.parquet as pq
from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport
from timing import Timing

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t

ROOT = Path(__file__).resolve().parent.parent
PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
USER_AGENT = [(b"airport-user-agent", b"airport/20250723")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def pack(value: Any) -> bytes:
    packer = msgpack.Packer(use_bin_type=True, unicode_errors="surrogateescape")
    return bytes(packer.pack(value))


def text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


class Server:
    """metastore serve with a Flight port, in its own process."""

    def __init__(self, folder: Path) -> None:
        self.port, self.flight_port = free_port(), free_port()
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "metastore.cli", "serve", "--host", "127.0.0.1"),
                *("--port", str(self.port), "--flight-port", str(self.flight_port)),
                *("--db", f"sqlite:///{folder / 'bench.db'}", "--log-level", "WARNING"),
                *("--warehouse", str(folder / "warehouse")),
            ],
            cwd=ROOT,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                self.thrift()[1].close()
                break
            except TTransport.TTransportException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        self.flight = flight.FlightClient(f"grpc://127.0.0.1:{self.flight_port}")

    def thrift(self) -> tuple[ThriftHiveMetastore.Client, TTransport.TTransportBase]:
        transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", self.port))
        client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))
        transport.open()
        return client, transport

    def read_bytes(self) -> int:
        """Bytes the server process has read with read() so far (its /proc rchar)."""
        for line in Path(f"/proc/{self.process.pid}/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
        raise RuntimeError("no rchar in /proc")

    def stop(self) -> None:
        self.flight.close()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)

    def action(self, name: str, body: bytes) -> bytes:
        options = flight.FlightCallOptions(
            headers=[*USER_AGENT, (b"airport-action-name", name.encode())]
        )
        results = list(self.flight.do_action(flight.Action(name, body), options=options))
        return bytes(results[0].body.to_pybytes())


def register(
    client: ThriftHiveMetastore.Client,
    name: str,
    columns: list[tuple[str, str]],
    location: Path,
    keys: list[tuple[str, str]] | None = None,
) -> None:
    sd = t.StorageDescriptor(
        cols=[t.FieldSchema(n, ty, None) for n, ty in columns],
        location=f"file:{location}",
        inputFormat=PARQUET_INPUT,
        outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        serdeInfo=t.SerDeInfo("serde", PARQUET_SERDE, {}),
        bucketCols=[],
        sortCols=[],
        parameters={},
        compressed=False,
        numBuckets=-1,
    )
    client.create_table(
        t.Table(
            tableName=name,
            dbName="default",
            sd=sd,
            partitionKeys=[t.FieldSchema(n, ty, None) for n, ty in keys or []],
            parameters={},
            tableType="EXTERNAL_TABLE",
        )
    )


def descriptor(table: str) -> bytes:
    return bytes(flight.FlightDescriptor.for_path("hive", "default", "table", table).serialize())


# -- 1. column_statistics on 100 columns ------------------------------------------------------


def statistics_latency(server: Server, folder: Path, rounds: int) -> Timing:
    columns = [(f"c{i:03d}", "bigint" if i % 2 else "double") for i in range(100)]
    location = folder / "wide"
    location.mkdir()
    data = {
        name: pa.array(range(1000), pa.int64() if ty == "bigint" else pa.float64())
        for name, ty in columns
    }
    pq.write_table(pa.table(data), location / "part-0.parquet")
    client, transport = server.thrift()
    register(client, "wide", columns, location)
    objs = []
    for name, ty in columns:
        if ty == "bigint":
            stats = t.LongColumnStatsData(lowValue=0, highValue=999, numNulls=0, numDVs=1000)
            data_ = t.ColumnStatisticsData(longStats=stats)
        else:
            stats_d = t.DoubleColumnStatsData(
                lowValue=0.0, highValue=999.0, numNulls=0, numDVs=1000
            )
            data_ = t.ColumnStatisticsData(doubleStats=stats_d)
        objs.append(t.ColumnStatisticsObj(name, ty, data_))
    desc = t.ColumnStatisticsDesc(isTblLevel=True, dbName="default", tableName="wide")
    client.update_table_column_statistics(t.ColumnStatistics(statsDesc=desc, statsObj=objs))
    transport.close()
    wide = descriptor("wide")
    bodies = [
        pack(
            {
                "flight_descriptor": text(wide),
                "column_name": name,
                "type": "BIGINT" if ty == "bigint" else "DOUBLE",
            }
        )
        for name, ty in columns
    ]
    for body in bodies[:10]:  # warm-up
        server.action("column_statistics", body)
    samples = []
    for _ in range(rounds):
        for body in bodies:
            started = time.perf_counter()
            server.action("column_statistics", body)
            samples.append(time.perf_counter() - started)
    return Timing(tuple(samples))


# -- 2. scan throughput ------------------------------------------------------------------------


def scan_files(server: Server, folder: Path, rows: int) -> list[Path]:
    location = folder / "big"
    location.mkdir()
    files = []
    per_file = rows // 8
    for n in range(8):
        first = n * per_file
        ids = pa.array(range(first, first + per_file), pa.int64())
        table = pa.table(
            {
                "id": ids,
                "amount": pa.compute.multiply(ids.cast(pa.float64()), 0.25),
                "qty": pa.compute.cast(pa.compute.bit_wise_and(ids, 1023), pa.int32()),
                "label": pa.compute.cast(pa.compute.bit_wise_and(ids, 4095), pa.string()),
                "day": pa.compute.cast(
                    pa.compute.bit_wise_and(ids, 8191).cast(pa.int32()), pa.date32()
                ),
                "flag": pa.compute.equal(pa.compute.bit_wise_and(ids, 1), 0),
            }
        )
        path = location / f"part-{n}.parquet"
        pq.write_table(table, path, row_group_size=256 * 1024)
        files.append(path)
    client, transport = server.thrift()
    register(
        client,
        "big",
        [
            ("id", "bigint"),
            ("amount", "double"),
            ("qty", "int"),
            ("label", "string"),
            ("day", "date"),
            ("flag", "boolean"),
        ],
        location,
    )
    transport.close()
    return files


def flight_scan(
    server: Server, table: str, columns: int, json_filters: str = "", threads: int = 2
) -> tuple[int, int]:
    """(rows, endpoints) of a whole scan through Flight, THREADS endpoints at a time."""
    body = pack(
        {
            "descriptor": text(descriptor(table)),
            "parameters": {
                "json_filters": json_filters,
                "column_ids": list(range(columns)),
                "table_function_parameters": "",
                "table_function_input_schema": "",
                "at_unit": "",
                "at_value": "",
            },
        }
    )
    endpoints = [
        flight.FlightEndpoint.deserialize(e)
        for e in msgpack.unpackb(server.action("endpoints", body))
    ]

    def read(endpoint: flight.FlightEndpoint) -> int:
        options = flight.FlightCallOptions(headers=USER_AGENT)
        rows: int = server.flight.do_get(endpoint.ticket, options=options).read_all().num_rows
        return rows

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return sum(pool.map(read, endpoints)), len(endpoints)


def direct_scan(files: list[Path]) -> int:
    con = duckdb.connect()
    con.execute("SET threads = 2")
    listed = ", ".join(f"'{f}'" for f in files)
    relation = con.sql(f"SELECT * FROM read_parquet([{listed}])")
    to_arrow = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
    rows: int = to_arrow().num_rows
    return rows


# -- 3. pruning ------------------------------------------------------------------------------------


def pruning(server: Server, folder: Path) -> tuple[int, int, int, int]:
    """(endpoints, bytes read by the server, the partition's bytes, the table's bytes) of
    a query on 1 of 100 partitions."""
    location = folder / "parts"
    client, transport = server.thrift()
    register(client, "parts", [("id", "bigint"), ("v", "string")], location, [("p", "string")])
    sizes = {}
    partitions = []
    for n in range(100):
        part = location / f"p=k{n:02d}"
        part.mkdir(parents=True)
        ids = pa.array(range(n * 20000, (n + 1) * 20000), pa.int64())
        pq.write_table(
            pa.table({"id": ids, "v": pa.compute.cast(ids, pa.string())}), part / "f.parquet"
        )
        sizes[n] = (part / "f.parquet").stat().st_size
        partitions.append(
            t.Partition(
                values=[f"k{n:02d}"], dbName="default", tableName="parts", sd=None, parameters={}
            )
        )
    client.add_partitions(partitions)
    transport.close()
    constant = {"type": {"id": "VARCHAR", "type_info": None}, "is_null": False, "value": "k42"}
    flt = {
        "expression_class": "BOUND_COMPARISON",
        "type": "COMPARE_EQUAL",
        "alias": "",
        "query_location": 2**64 - 1,
        "left": {
            "expression_class": "BOUND_COLUMN_REF",
            "type": "BOUND_COLUMN_REF",
            "alias": "p",
            "query_location": 2**64 - 1,
            "return_type": {"id": "VARCHAR", "type_info": None},
            "binding": {"table_index": 0, "column_index": 2},
            "depth": 0,
        },
        "right": {
            "expression_class": "BOUND_CONSTANT",
            "type": "VALUE_CONSTANT",
            "alias": "",
            "query_location": 2**64 - 1,
            "value": constant,
        },
    }
    filters = json.dumps({"filters": [flt], "column_binding_names_by_index": ["id", "v", "p"]})
    before = server.read_bytes()
    rows, endpoints = flight_scan(server, "parts", 3, filters)
    read = server.read_bytes() - before
    assert rows == 20000, rows
    return endpoints, read, sizes[42], sum(sizes.values())


def main() -> int:
    logging.getLogger("thrift").setLevel(logging.CRITICAL)  # connection attempts at start
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=4_000_000, help="rows of the scanned table")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flight-bench-") as tmp:
        folder = Path(tmp)
        server = Server(folder)
        try:
            latency = statistics_latency(server, folder, args.rounds * 4)
            print(
                f"column_statistics, 100-column table: p50 {latency.p50 * 1e3:.2f} ms, "
                f"p99 {latency.percentile(99) * 1e3:.2f} ms ({latency.n} calls)"
            )
            files = scan_files(server, folder, args.rows)
            megabytes = sum(f.stat().st_size for f in files) / 1e6
            flight_times, direct_times = [], []
            flight_scan(server, "big", 6)
            direct_scan(files)
            for _ in range(args.rounds):
                started = time.perf_counter()
                rows, endpoints = flight_scan(server, "big", 6)
                flight_times.append(time.perf_counter() - started)
                started = time.perf_counter()
                direct_rows = direct_scan(files)
                direct_times.append(time.perf_counter() - started)
                assert rows == direct_rows == args.rows, (rows, direct_rows)
            flight_s, direct_s = (
                sorted(flight_times)[len(flight_times) // 2],
                sorted(direct_times)[len(direct_times) // 2],
            )
            print(
                f"scan of {args.rows:,} rows x 6 columns ({megabytes:.0f} MB of Parquet, "
                f"{endpoints} endpoints), median of {args.rounds}: Flight {flight_s:.2f} s "
                f"({args.rows / flight_s / 1e6:.2f} M rows/s), DuckDB read_parquet "
                f"{direct_s:.2f} s ({args.rows / direct_s / 1e6:.2f} M rows/s); "
                f"Flight / direct = {direct_s / flight_s:.2f}x (target 0.5x)"
            )
            endpoints, read, partition_bytes, table_bytes = pruning(server, folder)
            print(
                f"1 of 100 partitions: {endpoints} endpoint(s); the server read {read:,} bytes "
                f"for a partition of {partition_bytes:,} bytes (table: {table_bytes:,} bytes), "
                f"{read / partition_bytes:.2f}x the partition, {read / table_bytes:.3f}x the table"
            )
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("QUERY_FARM_TELEMETRY_OPT_OUT", "1")
    sys.exit(main())
