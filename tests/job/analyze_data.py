"""Generated data for the Spark statistics job's tests, and its statistics computed in plain Python.

The expectations here deliberately use nothing of the job (no Arrow kernels, no sketches): sets
for distinct values, len() for lengths in code points, integer arithmetic for days and seconds.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from metastore.names import DEFAULT_PARTITION_VALUE, escape_path_name

EPOCH = datetime(1970, 1, 1)
EPOCH_UTC = EPOCH.replace(tzinfo=UTC)
EPOCH_DAY = date(1970, 1, 1)
BIG = 10**38 - 1  # the largest unscaled value of decimal(38, x)
# The extremes of decimal(38,10), from text: arithmetic would round them to 28 digits.
BIG_38_10 = Decimal("9" * 28 + "." + "9" * 10)
SMALL_38_10 = Decimal("-" + "9" * 28 + "." + "9" * 10)

Make = Callable[[random.Random], Any]


@dataclasses.dataclass(frozen=True)
class Col:
    """A generated column: its Arrow type, the Hive type HMS gets, the kind of statistics
    (None: HMS keeps none for the type), the share of NULLs and a maker of non-null values."""

    name: str
    arrow: pa.DataType
    hive_type: str
    kind: str | None
    nulls: float = 0.0
    make: Make = lambda r: None


def _string(rng: random.Random) -> str:
    """Mixed widths: ASCII, two-byte, three-byte and astral (one code point, four bytes)."""
    alphabet = "abcxyz é中😀"
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))


def _timestamp(rng: random.Random, epoch: datetime) -> datetime:
    """1900..2100 with microseconds, some in the last second before 1970 (where flooring
    and truncating to whole seconds differ)."""
    if rng.random() < 0.05:
        micros = -rng.randrange(1, 2_000_000)
    else:
        micros = rng.randrange(-2_208_988_800_000_000, 4_102_444_800_000_000)
    return epoch + timedelta(microseconds=micros)


def _long(rng: random.Random) -> int:
    return rng.choice([-(2**63), 2**63 - 1, rng.randrange(-(10**15), 10**15)])


def _float(rng: random.Random) -> float:
    # Multiples of 1/8 are exact in float32, so the expected extremes are exact too.
    return math.nan if rng.random() < 0.02 else rng.randrange(-8000, 8000) / 8


def _double(rng: random.Random) -> float:
    return math.nan if rng.random() < 0.02 else rng.uniform(-1e300, 1e300) * rng.random() ** 40


def _decimal_38_0(rng: random.Random) -> Decimal:
    return Decimal(rng.choice([-BIG, BIG, rng.randrange(-(10**20), 10**20)]))


def _decimal_38_10(rng: random.Random) -> Decimal:
    if rng.random() < 0.01:
        return rng.choice([SMALL_38_10, BIG_38_10])
    # Far enough apart that distinct values stay distinct as doubles (which the sketch hashes).
    return Decimal(rng.randrange(-(10**9), 10**9)) * Decimal("1234567.0123456789")


COLUMNS: list[Col] = [
    Col("b", pa.bool_(), "boolean", "boolean", 0.1, lambda r: r.random() < 0.3),
    Col("ti", pa.int8(), "tinyint", "long", 0.1, lambda r: r.randrange(-128, 128)),
    Col("si", pa.int16(), "smallint", "long", 0.05, lambda r: r.randrange(-32768, 32768)),
    Col("i", pa.int32(), "int", "long", 0.02, lambda r: r.randrange(-500, 500)),
    Col("l", pa.int64(), "bigint", "long", 0.02, _long),
    Col("f", pa.float32(), "float", "double", 0.05, _float),
    Col("d", pa.float64(), "double", "double", 0.05, _double),
    Col("dec38", pa.decimal128(38, 0), "decimal(38,0)", "decimal", 0.05, _decimal_38_0),
    Col("dec38s", pa.decimal128(38, 10), "decimal(38,10)", "decimal", 0.05, _decimal_38_10),
    Col(
        "dec",
        pa.decimal128(9, 2),
        "decimal(9,2)",
        "decimal",
        0.05,
        lambda r: Decimal(r.randrange(-99999, 99999)).scaleb(-2),
    ),
    Col("s", pa.string(), "string", "string", 0.1, _string),
    Col("bin", pa.binary(), "binary", "binary", 0.1, lambda r: r.randbytes(r.randrange(0, 20))),
    Col(
        "dt",
        pa.date32(),
        "date",
        "date",
        0.05,
        lambda r: EPOCH_DAY + timedelta(days=r.randrange(-25567, 47482)),
    ),
    Col(
        "ts",
        pa.timestamp("us", tz="UTC"),
        "timestamp",
        "timestamp",
        0.05,
        lambda r: _timestamp(r, EPOCH_UTC),
    ),
    Col("ntz", pa.timestamp("us"), "timestamp", "timestamp", 0.05, lambda r: _timestamp(r, EPOCH)),
    Col("nulls", pa.int64(), "bigint", "long", 1.0),
    Col("snulls", pa.string(), "string", "string", 1.0),
    Col("arr", pa.list_(pa.int32()), "array<int>", None, 0.1, lambda r: [r.randrange(9)] * 2),
    Col(
        "m",
        pa.map_(pa.string(), pa.int32()),
        "map<string,int>",
        None,
        0.1,
        lambda r: [("k", r.randrange(9))],
    ),
    Col(
        "st",
        pa.struct([("x", pa.int32()), ("y", pa.string())]),
        "struct<x:int,y:string>",
        None,
        0.1,
        lambda r: {"x": r.randrange(9), "y": "v"},
    ),
]

STAT_COLUMNS = [c for c in COLUMNS if c.kind]
COMPLEX_COLUMNS = [c for c in COLUMNS if not c.kind]


# A smaller set for the tests that run the job several times: one column of each kind.
SMALL = [c for c in COLUMNS if c.name in ("b", "i", "d", "dec38", "s", "bin", "dt", "ts")]

# The decimal(9,2) column, which text formats carry too.
DECIMAL_9_2 = next(c for c in COLUMNS if c.name == "dec")


def generate(columns: Sequence[Col], rows: int, seed: int) -> dict[str, list[Any]]:
    """ROWS rows of COLUMNS as Python values (None for NULL), the same for the same seed."""
    rng = random.Random(seed)
    data: dict[str, list[Any]] = {c.name: [] for c in columns}
    for _ in range(rows):
        for column in columns:
            value = None if rng.random() < column.nulls else column.make(rng)
            data[column.name].append(value)
    return data


def folder_of(key: str, value: str | None) -> str:
    """The Hive-style folder name of partition KEY=VALUE (None: the default partition)."""
    return (
        f"{escape_path_name(key)}={escape_path_name(value) if value else DEFAULT_PARTITION_VALUE}"
    )


def write_partition(
    base: Path,
    key: str,
    value: str | None,
    columns: Sequence[Col],
    data: dict[str, list[Any]],
    files: int = 2,
) -> Path:
    """Write DATA as FILES parquet files (several Spark tasks) of partition KEY=VALUE under
    BASE, replacing what the folder held; a partition without rows gets one empty file."""
    folder = base / folder_of(key, value)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    schema = pa.schema([pa.field(c.name, c.arrow) for c in columns])
    table = pa.table({c.name: pa.array(data[c.name], c.arrow) for c in columns}, schema=schema)
    rows = table.num_rows
    pieces = max(1, min(files, rows))
    step = -(-rows // pieces) if rows else 0
    for n in range(pieces):
        pq.write_table(table.slice(n * step, step) if rows else table, folder / f"part-{n}.parquet")
    return folder


# ----------------------------------------------------------------------------------------------
# Expected statistics


@dataclasses.dataclass
class Expected:
    """The exact statistics of a list of values; `distinct` counts non-null values only."""

    kind: str
    rows: int
    nulls: int
    distinct: int = 0
    low: Any = None
    high: Any = None
    trues: int = 0
    falses: int = 0
    max_len: int = 0
    total_len: int = 0
    finite: int = 0  # the values a histogram holds (non-null, not NaN)

    @property
    def non_null(self) -> int:
        return self.rows - self.nulls

    @property
    def avg_len(self) -> float:
        return self.total_len / self.non_null if self.non_null else 0.0


def _seconds(value: datetime) -> int:
    """Whole seconds since the epoch, floored (1969-12-31 23:59:59.5 is -1)."""
    epoch = EPOCH_UTC if value.tzinfo else EPOCH
    return (value - epoch) // timedelta(seconds=1)


def expect(kind: str | None, values: Iterable[Any]) -> Expected:
    assert kind is not None, "HMS keeps no statistics for this type"
    """The statistics Hive's conventions give VALUES of a column of KIND."""
    values = list(values)
    present = [v for v in values if v is not None]
    exp = Expected(kind, rows=len(values), nulls=len(values) - len(present))
    if kind == "boolean":
        exp.trues = sum(1 for v in present if v)
        exp.falses = len(present) - exp.trues
        return exp
    if kind in ("string", "binary"):
        lengths = [len(v) for v in present]  # str: code points; bytes: bytes
        exp.max_len = max(lengths, default=0)
        exp.total_len = sum(lengths)
        exp.distinct = len(set(present))
        return exp
    if kind == "date":
        present = [(v - EPOCH_DAY).days for v in present]
    elif kind == "timestamp":
        present = [_seconds(v) for v in present]
    ordered = [v for v in present if not (isinstance(v, float) and math.isnan(v))]
    # NaN is one distinct value (it enters the sketch), but no extreme.
    exp.distinct = len(set(ordered)) + (1 if len(ordered) < len(present) else 0)
    exp.finite = len(ordered)
    if ordered:
        exp.low, exp.high = min(ordered), max(ordered)
    return exp


def expect_all(
    columns: Sequence[Col], parts: dict[str, dict[str, list[Any]]]
) -> tuple[dict[str, dict[str, Expected]], dict[str, Expected]]:
    """Per partition name and column, and per column for the whole table."""
    by_part = {
        part: {c.name: expect(c.kind, data[c.name]) for c in columns if c.kind}
        for part, data in parts.items()
    }
    table = {
        c.name: expect(c.kind, [v for data in parts.values() for v in data[c.name]])
        for c in columns
        if c.kind
    }
    return by_part, table
