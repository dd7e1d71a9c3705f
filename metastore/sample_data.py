"""A small, realistic sample table for trying colstats: shop orders, one Parquet file per day
in Hive-style partition folders (`ds=2024-01-01/part-0.parquet`).

Columns cover every kind of statistics the job writes: bigint, int, double, decimal, string,
boolean, date and timestamp, with NULLs, skewed values (a few customers order most) and a
long tail. The same seed gives the same files.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

COUNTRIES = ("DE", "FR", "US", "GB", "NL", "ES", "IT", "SE", "PL", "JP")
FIRST_DAY = dt.date(2024, 1, 1)


@dataclass(frozen=True)
class SampleTable:
    """Where the files are, and what they hold."""

    path: Path
    rows: int
    partitions: list[str]
    """Partition names, ds=YYYY-MM-DD."""


def write_orders(path: Path, *, rows: int = 20_000, days: int = 7, seed: int = 7) -> SampleTable:
    """ROWS orders over DAYS days under PATH (created; files already there are replaced)."""
    if rows < days or days < 1:
        raise ValueError(f"need at least one day and one row per day, not {rows} rows in {days}")
    rng = np.random.default_rng(seed)
    path.mkdir(parents=True, exist_ok=True)
    per_day = np.diff(np.linspace(0, rows, days + 1).astype(np.int64))
    partitions = []
    first_id = 1
    for day, count in enumerate(per_day.tolist()):
        date = FIRST_DAY + dt.timedelta(days=day)
        name = f"ds={date.isoformat()}"
        folder = path / name
        folder.mkdir(exist_ok=True)
        pq.write_table(_orders(rng, date, first_id, count), folder / "part-0.parquet")
        partitions.append(name)
        first_id += count
    return SampleTable(path, rows, partitions)


def _orders(rng: np.random.Generator, date: dt.date, first_id: int, n: int) -> pa.Table:
    def nulls(fraction: float) -> np.ndarray:
        mask: np.ndarray = rng.random(n) < fraction
        return mask

    midnight = dt.datetime.combine(date, dt.time(), tzinfo=dt.UTC)
    # Orders in the day, busier in the evening.
    seconds = np.clip(rng.normal(18 * 3600, 4 * 3600, n), 0, 86_399).astype(np.int64)
    ordered_at = np.datetime64(midnight.replace(tzinfo=None), "s") + seconds
    customers = np.minimum(rng.zipf(1.3, n), 5_000)
    amount = np.round(rng.lognormal(3.5, 0.9, n), 2)
    quantity = rng.integers(1, 11, n, dtype=np.int32)
    discount_cents = np.where(rng.random(n) < 0.7, 0, rng.integers(50, 5_000, n))
    shipped_after = rng.integers(0, 6, n)
    ship_date = np.datetime64(date, "D") + shipped_after
    countries = np.array(COUNTRIES)[np.minimum(rng.geometric(0.35, n) - 1, len(COUNTRIES) - 1)]
    return pa.table(
        {
            "order_id": pa.array(np.arange(first_id, first_id + n, dtype=np.int64)),
            "customer": pa.array([f"customer-{c:05d}" for c in customers.tolist()]),
            "country": pa.array(countries.tolist(), mask=nulls(0.02)),
            "amount": pa.array(amount, mask=nulls(0.01)),
            "quantity": pa.array(quantity),
            "discount": pa.array(
                [Decimal(c).scaleb(-2) for c in discount_cents.tolist()], type=pa.decimal128(8, 2)
            ),
            "is_gift": pa.array(rng.random(n) < 0.12, mask=nulls(0.05)),
            "ordered_at": pa.array(ordered_at, type=pa.timestamp("us", tz="UTC")),
            "ship_date": pa.array(ship_date, type=pa.date32(), mask=nulls(0.08)),
        }
    )
