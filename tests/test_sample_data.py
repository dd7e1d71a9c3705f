"""The demo's sample table: Hive-style partition folders of Parquet files, every kind of
column the job writes statistics for, NULLs where the demo shows them, the same
files from the same seed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metastore.sample_data import write_orders


def test_partitions_rows_and_columns(tmp_path: Path) -> None:
    sample = write_orders(tmp_path / "orders", rows=1000, days=3)
    assert sample.partitions == ["ds=2024-01-01", "ds=2024-01-02", "ds=2024-01-03"]
    tables = [pq.read_table(tmp_path / "orders" / p / "part-0.parquet") for p in sample.partitions]
    assert sum(t.num_rows for t in tables) == 1000
    whole = pa.concat_tables(tables)
    assert whole.schema.names == [
        "order_id", "customer", "country", "amount", "quantity", "discount", "is_gift",
        "ordered_at", "ship_date",
    ]  # fmt: skip
    assert str(whole.schema.field("discount").type) == "decimal128(8, 2)"
    assert str(whole.schema.field("ordered_at").type) == "timestamp[us, tz=UTC]"
    assert whole.column("order_id").to_pylist() == list(range(1, 1001))
    assert whole.column("ship_date").null_count > 0 and whole.column("amount").null_count > 0
    assert whole.column("order_id").null_count == 0
    first_day = tables[0].column("ordered_at").to_pylist()
    assert all(v.date().isoformat() == "2024-01-01" for v in first_day)


def test_the_same_seed_writes_the_same_data(tmp_path: Path) -> None:
    write_orders(tmp_path / "a", rows=500, days=2)
    write_orders(tmp_path / "b", rows=500, days=2)
    for day in ("ds=2024-01-01", "ds=2024-01-02"):
        a = pq.read_table(tmp_path / "a" / day / "part-0.parquet")
        b = pq.read_table(tmp_path / "b" / day / "part-0.parquet")
        assert a.equals(b)


def test_too_few_rows_for_the_days(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one day and one row per day"):
        write_orders(tmp_path, rows=3, days=7)
