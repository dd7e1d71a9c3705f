"""Statistics answers encoded from their rows (metastore.hms.stats_wire) are byte for byte
what the generated code writes for the structs stats_obj builds of the same rows: every
kind of statistics with every field known or unknown, with and without the sketches the
settings return, extreme and unusual values, and the answers around them; and a server
without the cache of answers sends, on each backend, the structs of the rows it keeps."""

from __future__ import annotations

import itertools
import math
import uuid
from collections.abc import Iterator, Sequence
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa
from conftest import RunningServer, connect
from hypothesis import given, settings
from hypothesis import strategies as st
from metadata_builders import column_stats, database, fields, partition, table
from sqlalchemy.orm import Session
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.hms.stats_wire import StatsEncoder, partition_entry, partitions_map
from metastore.hms.structs.statistics import stats_obj
from metastore.stats import reads
from metastore.stats.rows import STATS_COLUMNS, StatsRow, as_row, empty_row
from metastore.thrift_stats import make_union, thrift_decimal
from metastore.vocabulary import Kind

I64_MIN, I64_MAX = -(2**63), 2**63 - 1

FIELDS: dict[Kind, tuple[str, ...]] = {
    Kind.BOOLEAN: ("NUM_TRUES", "NUM_FALSES"),
    Kind.LONG: ("LONG_LOW_VALUE", "LONG_HIGH_VALUE", "NUM_DISTINCTS", "HISTOGRAM"),
    Kind.DOUBLE: ("DOUBLE_LOW_VALUE", "DOUBLE_HIGH_VALUE", "NUM_DISTINCTS", "HISTOGRAM"),
    Kind.STRING: ("MAX_COL_LEN", "AVG_COL_LEN", "NUM_DISTINCTS"),
    Kind.BINARY: ("MAX_COL_LEN", "AVG_COL_LEN"),
    Kind.DECIMAL: (
        "BIG_DECIMAL_LOW_VALUE",
        "BIG_DECIMAL_HIGH_VALUE",
        "NUM_DISTINCTS",
        "HISTOGRAM",
    ),
    Kind.DATE: ("LONG_LOW_VALUE", "LONG_HIGH_VALUE", "NUM_DISTINCTS", "HISTOGRAM"),
    Kind.TIMESTAMP: ("LONG_LOW_VALUE", "LONG_HIGH_VALUE", "NUM_DISTINCTS", "HISTOGRAM"),
}
"""The statistics each kind's struct carries besides NUM_NULLS and BIT_VECTOR."""

TYPES = {
    Kind.BOOLEAN: "boolean",
    Kind.LONG: "bigint",
    Kind.DOUBLE: "double",
    Kind.STRING: "varchar(20)",
    Kind.BINARY: "binary",
    Kind.DECIMAL: "decimal(38,10)",
    Kind.DATE: "date",
    Kind.TIMESTAMP: "timestamp",
}

VALUES: dict[str, Any] = {
    "LONG_LOW_VALUE": -12,
    "LONG_HIGH_VALUE": 19_000,
    "DOUBLE_LOW_VALUE": -0.5,
    "DOUBLE_HIGH_VALUE": 1e300,
    "BIG_DECIMAL_LOW_VALUE": "-10.50",
    "BIG_DECIMAL_HIGH_VALUE": "12345678901234567890.1234567890",
    "NUM_DISTINCTS": 77,
    "BIT_VECTOR": b"HLL\x00\xff" * 3,
    "HISTOGRAM": b"\x05\x01KLL",
    "AVG_COL_LEN": 4.25,
    "MAX_COL_LEN": 31,
    "NUM_TRUES": 5,
    "NUM_FALSES": 6,
    "NUM_NULLS": 2,
}

SETTINGS = [(False, False), (True, False), (False, True), (True, True)]


def generated(obj: Any) -> bytes:
    """OBJ (a struct of the IDL) as the generated code encodes it."""
    buffer = TMemoryBuffer()
    obj.write(TBinaryProtocolAccelerated(buffer))
    value: bytes = buffer.getvalue()
    return value


def row_of(kind: Kind, values: dict[str, Any], name: str = "c", type_: str | None = None) -> Any:
    row: StatsRow = empty_row(name, TYPES[kind] if type_ is None else type_, kind.value, "hive")
    row.update(values)  # type: ignore[typeddict-item]
    return as_row(row)


def assert_same(row: Sequence[Any], fetch_bitvector: bool, fetch_histogram: bool) -> None:
    encoder = StatsEncoder(fetch_bitvector=fetch_bitvector, fetch_histogram=fetch_histogram)
    expected = generated(
        stats_obj(row, fetch_bitvector=fetch_bitvector, fetch_histogram=fetch_histogram)
    )
    assert encoder.obj(row) == expected


def _known_subsets(kind: Kind) -> list[tuple[str, ...]]:
    fields = (*FIELDS[kind], "NUM_NULLS", "BIT_VECTOR")
    return [
        combination
        for size in range(len(fields) + 1)
        for combination in itertools.combinations(fields, size)
    ]


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_with_every_field_known_or_not(kind: Kind) -> None:
    for known in _known_subsets(kind):
        for fetch_bitvector, fetch_histogram in SETTINGS:
            row = row_of(kind, {name: VALUES[name] for name in known})
            assert_same(row, fetch_bitvector, fetch_histogram)


@pytest.mark.parametrize("kind", list(Kind))
def test_statistics_of_other_kinds_in_a_row_are_not_sent(kind: Kind) -> None:
    """A row holds only its kind's statistics, but what else it may hold is left out as
    stats_obj leaves it out (a histogram of a string column, bounds of a boolean one)."""
    for fetch_bitvector, fetch_histogram in SETTINGS:
        assert_same(row_of(kind, VALUES), fetch_bitvector, fetch_histogram)


@pytest.mark.parametrize(
    "values",
    [
        {"LONG_LOW_VALUE": I64_MIN, "LONG_HIGH_VALUE": I64_MAX},
        {"LONG_LOW_VALUE": 0, "LONG_HIGH_VALUE": 0, "NUM_DISTINCTS": 0, "NUM_NULLS": 0},
        {"NUM_NULLS": I64_MAX, "NUM_DISTINCTS": I64_MIN, "NUM_TRUES": -1, "NUM_FALSES": -1},
        {"DOUBLE_LOW_VALUE": -math.inf, "DOUBLE_HIGH_VALUE": math.inf},
        {"DOUBLE_LOW_VALUE": math.nan, "DOUBLE_HIGH_VALUE": -0.0},
        {"DOUBLE_LOW_VALUE": 5e-324, "DOUBLE_HIGH_VALUE": 1.7976931348623157e308},
        {"DOUBLE_LOW_VALUE": -3, "DOUBLE_HIGH_VALUE": 7, "AVG_COL_LEN": 2},  # integers
        {"AVG_COL_LEN": 0.0, "MAX_COL_LEN": 0},
        {"BIT_VECTOR": b"", "HISTOGRAM": b""},  # present but empty
        {"BIT_VECTOR": bytes(range(256)) * 40, "HISTOGRAM": b"\x00" * 70_000},
        {"BIG_DECIMAL_LOW_VALUE": "-" + "9" * 38, "BIG_DECIMAL_HIGH_VALUE": "9" * 38},
        {"BIG_DECIMAL_LOW_VALUE": "-0.00", "BIG_DECIMAL_HIGH_VALUE": "0"},
        {"BIG_DECIMAL_LOW_VALUE": "0." + "0" * 37 + "1", "BIG_DECIMAL_HIGH_VALUE": "-1E-38"},
        # An exponent: a scale below zero, sent as scale 0 with the unscaled value scaled.
        {"BIG_DECIMAL_LOW_VALUE": "-1E+3", "BIG_DECIMAL_HIGH_VALUE": "12.5E+40"},
        {"BIG_DECIMAL_LOW_VALUE": "127", "BIG_DECIMAL_HIGH_VALUE": "128"},  # sign bytes
        {"BIG_DECIMAL_LOW_VALUE": "-128", "BIG_DECIMAL_HIGH_VALUE": "-129"},
        {"BIG_DECIMAL_LOW_VALUE": "-" + "1" * 60 + ".5", "BIG_DECIMAL_HIGH_VALUE": "2" * 80},
        {"BIG_DECIMAL_LOW_VALUE": ".5", "BIG_DECIMAL_HIGH_VALUE": "5."},
        {"BIG_DECIMAL_LOW_VALUE": "+0001.2300", "BIG_DECIMAL_HIGH_VALUE": "-0"},
        {"BIG_DECIMAL_LOW_VALUE": " 1.5 ", "BIG_DECIMAL_HIGH_VALUE": "1.5e-7"},
    ],
)
def test_extreme_values(values: dict[str, Any]) -> None:
    for kind in Kind:
        for fetch_bitvector, fetch_histogram in SETTINGS:
            assert_same(row_of(kind, {**VALUES, **values}), fetch_bitvector, fetch_histogram)


@pytest.mark.parametrize(
    ("name", "type_"),
    [
        ("é ü ß", "varchar(10)"),
        ("列名", "decimal(10,2)"),
        ("emoji_🙂", "struct<a:int,b:string>"),
        ("", ""),
        ("x" * 5000, "bigint"),
        ("c", None),  # a type unknown: left out, as the generated code leaves it
    ],
)
def test_names_and_types(name: str, type_: str | None) -> None:
    for kind in Kind:
        row: StatsRow = empty_row(name, type_ or "", kind.value, "hive")
        row.update(VALUES)  # type: ignore[typeddict-item]
        values = as_row(row)
        if type_ is None:
            values = tuple(None if i == 1 else v for i, v in enumerate(values))
        assert_same(values, True, True)


def _stats_value(column: str) -> st.SearchStrategy[Any]:
    if column in ("DOUBLE_LOW_VALUE", "DOUBLE_HIGH_VALUE", "AVG_COL_LEN"):
        return st.floats(allow_nan=False)
    if column in ("BIG_DECIMAL_LOW_VALUE", "BIG_DECIMAL_HIGH_VALUE"):
        return st.decimals(allow_nan=False, allow_infinity=False).map(str)
    if column in ("BIT_VECTOR", "HISTOGRAM"):
        return st.binary(max_size=40)
    return st.integers(I64_MIN, I64_MAX)


_ROW_VALUES = st.fixed_dictionaries(
    {
        column: st.none() | _stats_value(column)
        for column in STATS_COLUMNS
        if column not in ("COLUMN_NAME", "COLUMN_TYPE", "STATS_KIND", "ENGINE", "LAST_ANALYZED")
    }
)


@settings(max_examples=400, deadline=None)
@given(
    kind=st.sampled_from(list(Kind)),
    values=_ROW_VALUES,
    name=st.text(min_size=1, max_size=12),
    sketches=st.sampled_from(SETTINGS),
)
def test_random_rows(kind: Kind, values: dict[str, Any], name: str, sketches: Any) -> None:
    assert_same(row_of(kind, values, name=name), *sketches)


def _rows(count: int) -> list[Any]:
    """Rows of every kind of count partitions, PART_NAME first, sketches in some."""
    rows = []
    for n in range(count):
        for kind in Kind:
            values = {**VALUES, "NUM_NULLS": n, "LONG_HIGH_VALUE": n * 1000}
            if n % 2:
                values["BIT_VECTOR"] = None
            rows.append((f"ds=2024-01-0{n}/é={n}", *row_of(kind, values, name=f"c_{kind}")))
    return rows


@pytest.mark.parametrize("count", [0, 1, 5])
def test_answers_are_those_of_the_generated_code(count: int) -> None:
    encoder = StatsEncoder(fetch_bitvector=True, fetch_histogram=True)
    rows = _rows(count)

    def obj(row: Sequence[Any]) -> t.ColumnStatisticsObj:
        return stats_obj(row, fetch_bitvector=True, fetch_histogram=True)

    table = [row[1:] for row in rows]
    expected_table = generated(t.TableStatsResult(tableStats=[obj(row) for row in table]))
    assert encoder.table_result(table) == expected_table
    # Rows of a partition apart from each other: the map keeps the first one's place.
    mixed = rows[::2] + rows[1::2]
    by_name: dict[str, list[t.ColumnStatisticsObj]] = {}
    for row in mixed:
        by_name.setdefault(row[0], []).append(obj(row[1:]))
    expected = generated(t.PartitionsStatsResult(partStats=by_name))
    assert encoder.partitions_result(mixed) == expected
    entries = [
        partition_entry(name, [encoder.obj(row[1:]) for row in mixed if row[0] == name])
        for name in by_name
    ]
    assert partitions_map([b"", *entries, b""]) == expected


# ------------------------------------------------------------------------------------------
# Through a server


@pytest.fixture(scope="module")
def plain(migrated_url: str) -> Iterator[RunningServer]:
    """A server without the cache of answers, returning sketches."""
    running = RunningServer(
        migrated_url, Settings(fetch_bitvector=True, fetch_histogram=True, cache_size=0)
    )
    yield running
    running.stop()


def _objs(n: int) -> list[t.ColumnStatisticsObj]:
    """Statistics of every kind, varied by N, some fields and sketches unset."""
    bits = bytes(range(n, n + 40)) if n % 2 else None
    histogram = b"KLL" * n if n % 3 else None
    low, high = (-n, n * 1000) if n % 4 else (None, None)
    decimal = "-" + "9" * 30 + ".25"
    data: dict[Kind, Any] = {
        Kind.BOOLEAN: t.BooleanColumnStatsData(n, n + 1, 2, bits),
        Kind.LONG: t.LongColumnStatsData(low, high, 1, n + 1, bits, histogram),
        Kind.DOUBLE: t.DoubleColumnStatsData(-n / 3, None, 0, n + 2, bits, histogram),
        Kind.STRING: t.StringColumnStatsData(n + 3, 4.25, 1, n + 1, bits),
        Kind.BINARY: t.BinaryColumnStatsData(n + 7, 3.5, 0, bits),
        Kind.DECIMAL: t.DecimalColumnStatsData(
            thrift_decimal(Decimal(decimal)), None, 0, n, bits, histogram
        ),
        Kind.DATE: t.DateColumnStatsData(
            None if low is None else t.Date(19_000 + low), t.Date(19_000), 0, n, bits, histogram
        ),
        Kind.TIMESTAMP: t.TimestampColumnStatsData(
            t.Timestamp(1_700_000_000), None, 3, n, bits, histogram
        ),
    }
    return [
        t.ColumnStatisticsObj(f"é_{kind.value}", TYPES[kind], make_union(kind, stats))
        for kind, stats in data.items()
    ]


def test_a_server_sends_the_structs_of_its_rows(plain: RunningServer, store: sa.Engine) -> None:
    client, transport = connect(plain.port)
    db = f"wire_{uuid.uuid4().hex[:10]}"
    cols = fields(*((f"é_{kind.value}", TYPES[kind]) for kind in Kind))
    names = [c.name for c in cols]
    values = ["2024-01-01", "ü x", "2024-01-03", "2024-01-04", "2024-01-05"]
    client.create_database(database(db))
    client.create_table(table(db, "u", cols=cols))
    client.create_table(table(db, "t", keys=fields(("ds", "string")), cols=cols))
    client.add_partitions([partition(db, "t", [v]) for v in values])
    client.update_table_column_statistics(column_stats(db, "u", _objs(5)))
    for n, v in enumerate(values[:-1]):  # the last partition has no statistics
        client.update_partition_column_statistics(column_stats(db, "t", _objs(n), f"ds={v}"))
    parts = [f"ds={v}" for v in values]
    table_request = t.TableStatsRequest(db, "u", names)
    parts_request = t.PartitionsStatsRequest(db, "t", names, parts)
    got_table = client.get_table_statistics_req(table_request)
    got_parts = client.get_partitions_statistics_req(parts_request)
    transport.close()
    # The handler's calls, for callers in process, decode what the server sends.
    assert plain.handler.get_table_statistics_req(table_request) == got_table
    assert plain.handler.get_partitions_statistics_req(parts_request) == got_parts

    def obj(row: Sequence[Any]) -> t.ColumnStatisticsObj:
        return stats_obj(row, fetch_bitvector=True, fetch_histogram=True)

    with Session(store) as s:
        target = reads.target(
            db, "u", names, None, catalog=None, engine=None, with_partitions=False
        )
        table_rows = reads.table_statistics(s, target)
        target = reads.target(
            db, "t", names, parts, catalog=None, engine=None, with_partitions=True
        )
        part_rows = reads.partition_statistics(s, target)
    assert len(table_rows) == len(Kind) and len(part_rows) == len(Kind) * 4
    assert got_table == t.TableStatsResult(tableStats=[obj(row) for row in table_rows])
    by_name: dict[str, list[t.ColumnStatisticsObj]] = {}
    for row in part_rows:
        by_name.setdefault(row[0], []).append(obj(row[1:]))
    assert got_parts == t.PartitionsStatsResult(partStats=by_name)
    long_stats = {o.colName: o for o in got_parts.partStats["ds=ü x"]}["é_long"].statsData
    assert long_stats.longStats.bitVectors == bytes(range(1, 41))
