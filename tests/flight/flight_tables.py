"""The Flight door's test stack: colstats (Thrift and Flight, in this process, on one
database) and tables whose files are written here, with their statistics written through
Thrift as a statistics job would.

`web_sales` (catalog `colstats`, database `default`, the table of airport.md's golden
request) is Parquet, partitioned by region and day, two files a partition, with a column
of every kind DuckDB reads; `events` is delimited text (LazySimpleSerDe); `json_t` and
`orc_t` cover the other readers.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
from airport_client import AirportClient
from conftest import RunningServer, connect
from metadata_builders import column_stats, database, fields, partition, storage, table
from stats_builders import dec, stats_data

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.flight.server import FlightService
from metastore.sketches import HyperLogLog

CATALOG = "colstats"
DB = "default"
PARQUET_INPUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
ORC_INPUT = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat"
ORC_SERDE = "org.apache.hadoop.hive.ql.io.orc.OrcSerde"
JSON_SERDE = "org.apache.hive.hcatalog.data.JsonSerDe"
REGIONS = ("east", "west", "north")
DAYS = (datetime.date(2024, 1, 1), datetime.date(2024, 1, 2))
ROWS_PER_FILE = 50

WEB_SALES_COLUMNS = [
    ("id", "int"),
    ("ws_price", "decimal(7,2)"),
    ("name", "string"),
    ("code", "varchar(10)"),
    ("ts", "timestamp"),
    ("score", "double"),
    ("small", "float"),
    ("flag", "boolean"),
    ("tags", "array<string>"),
    ("attrs", "map<string,int>"),
    ("info", "struct<a:int,b:string>"),
]
WEB_SALES_KEYS = [("region", "string"), ("day", "date")]
WEB_SALES_SCHEMA = pa.schema(
    [
        ("id", pa.int32()),
        ("ws_price", pa.decimal128(7, 2)),
        ("name", pa.string()),
        ("code", pa.string()),
        ("ts", pa.timestamp("us")),
        ("score", pa.float64()),
        ("small", pa.float32()),
        ("flag", pa.bool_()),
        ("tags", pa.list_(pa.string())),
        ("attrs", pa.map_(pa.string(), pa.int32())),
        ("info", pa.struct([("a", pa.int32()), ("b", pa.string())])),
    ]
)


def web_sales_rows(part: int, file: int) -> pa.Table:
    """The rows of file FILE of partition PART: ids are unique across the table."""
    first = (part * 2 + file) * ROWS_PER_FILE
    ids = list(range(first, first + ROWS_PER_FILE))
    base = datetime.datetime(2024, 1, 1, 10, 0, 0, 250_000)
    return pa.table(
        {
            "id": ids,
            "ws_price": [
                None if i % 7 == 0 else decimal.Decimal(i * 37 % 10000) / 100 for i in ids
            ],
            "name": [None if i % 5 == 0 else f"n{i % 13}é" for i in ids],
            "code": [f"c{i % 3}" for i in ids],
            "ts": [base + datetime.timedelta(seconds=i * 61) for i in ids],
            "score": [i * 0.5 for i in ids],
            "small": [i / 4 for i in ids],
            "flag": [i % 2 == 0 for i in ids],
            "tags": [[f"t{i % 4}"] if i % 3 else None for i in ids],
            "attrs": [[("k", i)] for i in ids],
            "info": [{"a": i, "b": f"b{i}"} for i in ids],
        },
        schema=WEB_SALES_SCHEMA,
    )


def partition_values() -> list[tuple[str, datetime.date]]:
    return [(region, day) for region in REGIONS for day in DAYS]


@dataclasses.dataclass
class FlightStack:
    running: RunningServer
    service: FlightService
    folder: Path

    @property
    def location(self) -> str:
        return f"grpc://127.0.0.1:{self.service.port}"

    def airport(self, **kwargs: Any) -> AirportClient:
        return AirportClient(self.location, CATALOG, **kwargs)

    def thrift(self) -> tuple[ThriftHiveMetastore.Client, Any]:
        return connect(self.running.port)


def start(running: RunningServer) -> Iterator[FlightStack]:
    """The Flight door beside RUNNING, and the tables of this module written."""
    service = FlightService(running.handler.tx, running.settings, "127.0.0.1", 0)
    service.start()
    folder = Path(tempfile.mkdtemp(prefix="flight-"))
    stack = FlightStack(running, service, folder)
    client, transport = stack.thrift()
    try:
        build_tables(client, folder)
    finally:
        transport.close()
    try:
        yield stack
    finally:
        service.stop()


def hive_db() -> str:
    return f"@{CATALOG}#{DB}"


def build_tables(client: ThriftHiveMetastore.Client, folder: Path) -> None:
    client.create_database(
        database(DB, catalogName=CATALOG, locationUri=f"file:{folder}/default.db")
    )
    parquet = dict(inputFormat=PARQUET_INPUT, serdeInfo=t.SerDeInfo("serde", PARQUET_SERDE, {}))
    location = folder / "web_sales"
    client.create_table(
        table(
            hive_db(),
            "web_sales",
            keys=fields(*WEB_SALES_KEYS),
            sd=storage(fields(*WEB_SALES_COLUMNS), f"file:{location}", **parquet),
            catName=CATALOG,
        )
    )
    parts = []
    for index, (region, day) in enumerate(partition_values()):
        part_folder = location / f"region={region}" / f"day={day.isoformat()}"
        part_folder.mkdir(parents=True)
        for file in range(2):
            pq.write_table(web_sales_rows(index, file), part_folder / f"part-{file}.parquet")
        sd = storage(fields(*WEB_SALES_COLUMNS), f"file:{part_folder}", **parquet)
        parts.append(partition(DB, "web_sales", [region, day.isoformat()], sd=sd))
        parts[-1].catName = CATALOG
    client.add_partitions(parts)
    for index, (region, day) in enumerate(partition_values()):
        rows = pa.concat_tables([web_sales_rows(index, f) for f in range(2)])
        name = f"region={region}/day={day.isoformat()}"
        stats = column_stats(DB, "web_sales", exact_statistics(rows), name)
        stats.statsDesc.catName = CATALOG
        client.update_partition_column_statistics(stats)
    build_events(client, folder)


def exact_statistics(rows: pa.Table) -> list[t.ColumnStatisticsObj]:
    """Hive-format statistics of ROWS's primitive columns, as the job writes them: numDVs
    counts NULL as one value where there are nulls, id has an HLL sketch."""
    out = []
    ids = rows.column("id").to_pylist()
    sketch = HyperLogLog(p=14)
    sketch.add_longs(np.array(ids, dtype=np.int64))
    out.append(
        obj(
            "id",
            "int",
            stats_data(
                "longStats",
                lowValue=min(ids),
                highValue=max(ids),
                numNulls=0,
                numDVs=len(set(ids)),
                bitVectors=sketch.to_bytes(),
            ),
        )
    )
    prices = [p for p in rows.column("ws_price").to_pylist() if p is not None]
    nulls = rows.num_rows - len(prices)
    out.append(
        obj(
            "ws_price",
            "decimal(7,2)",
            stats_data(
                "decimalStats",
                lowValue=dec(int(min(prices) * 100), 2),
                highValue=dec(int(max(prices) * 100), 2),
                numNulls=nulls,
                numDVs=len(set(prices)) + (1 if nulls else 0),
            ),
        )
    )
    names = [n for n in rows.column("name").to_pylist() if n is not None]
    nulls = rows.num_rows - len(names)
    out.append(
        obj(
            "name",
            "string",
            stats_data(
                "stringStats",
                maxColLen=max(len(n) for n in names),
                avgColLen=sum(len(n) for n in names) / len(names),
                numNulls=nulls,
                numDVs=len(set(names)) + 1,
            ),
        )
    )
    seconds = [
        int((v - datetime.datetime(1970, 1, 1)).total_seconds())
        for v in rows.column("ts").to_pylist()
    ]
    out.append(
        obj(
            "ts",
            "timestamp",
            stats_data(
                "timestampStats",
                lowValue=t.Timestamp(min(seconds)),
                highValue=t.Timestamp(max(seconds)),
                numNulls=0,
                numDVs=len(set(seconds)),
            ),
        )
    )
    smalls = rows.column("small").to_pylist()
    out.append(
        obj(
            "small",
            "float",
            stats_data(
                "doubleStats",
                lowValue=min(smalls),
                highValue=max(smalls),
                numNulls=0,
                numDVs=len(set(smalls)),
            ),
        )
    )
    flags = rows.column("flag").to_pylist()
    out.append(
        obj(
            "flag",
            "boolean",
            stats_data(
                "booleanStats", numTrues=sum(flags), numFalses=len(flags) - sum(flags), numNulls=0
            ),
        )
    )
    return out


def obj(column: str, hive_type: str, data: t.ColumnStatisticsData) -> t.ColumnStatisticsObj:
    return t.ColumnStatisticsObj(column, hive_type, data)


EVENTS_COLUMNS = [
    ("id", "bigint"),
    ("kind", "string"),
    ("amount", "decimal(10,3)"),
    ("day", "date"),
]


def events_text() -> str:
    lines = []
    for i in range(1, 41):
        kind = "\\N" if i % 9 == 0 else f"k{i % 4}"
        amount = "" if i % 11 == 0 else f"{i * 1.125:.3f}"
        lines.append(f"{i}|{kind}|{amount}|2024-02-{i % 28 + 1:02d}")
    return "\n".join(lines) + "\n"


def build_events(client: ThriftHiveMetastore.Client, folder: Path) -> None:
    """events: delimited text ('|'), unpartitioned; json_t and orc_t."""
    location = folder / "events"
    location.mkdir()
    (location / "000000_0").write_text(events_text())
    serde = t.SerDeInfo(
        "serde", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {"field.delim": "|"}
    )
    client.create_table(
        table(
            hive_db(),
            "events",
            sd=storage(fields(*EVENTS_COLUMNS), f"file:{location}", serdeInfo=serde),
            catName=CATALOG,
        )
    )
    json_folder = folder / "json_t"
    json_folder.mkdir()
    (json_folder / "part-0.json").write_text(
        "".join(f'{{"id": {i}, "label": "l{i}"}}\n' for i in range(10))
    )
    client.create_table(
        table(
            hive_db(),
            "json_t",
            sd=storage(
                fields(("id", "bigint"), ("label", "string")),
                f"file:{json_folder}",
                serdeInfo=t.SerDeInfo("serde", JSON_SERDE, {}),
            ),
            catName=CATALOG,
        )
    )
    orc_folder = folder / "orc_t"
    orc_folder.mkdir()
    orc.write_table(
        pa.table({"id": pa.array(range(20), pa.int64()), "v": [f"v{i}" for i in range(20)]}),
        str(orc_folder / "part-0.orc"),
    )
    client.create_table(
        table(
            hive_db(),
            "orc_t",
            sd=storage(
                fields(("id", "bigint"), ("v", "string")),
                f"file:{orc_folder}",
                inputFormat=ORC_INPUT,
                serdeInfo=t.SerDeInfo("serde", ORC_SERDE, {}),
            ),
            catName=CATALOG,
        )
    )
