"""What the upgrade test (test_migrations_keep_data.py) fills at each earlier revision: the
metadata a client would find and the statistics as a client reads them, written through the
revision's own schema (SQLAlchemy Core on the tables reflected at that revision, never the
models of head)."""

from __future__ import annotations

import json
import warnings
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import sqlalchemy as sa
from alembic.script import ScriptDirectory

from hive_metastore_thrift import ttypes as t
from metastore.sketches.hll import HyperLogLog
from metastore.sketches.kll import kll_build
from metastore.store import migrate, transactions

SCRIPTS = ScriptDirectory.from_config(migrate.alembic_config("sqlite://"))
*EARLIER, HEAD = [script.revision for script in reversed(list(SCRIPTS.walk_revisions()))]

CREATED = 1_704_067_200  # 2024-01-01 00:00:00 UTC
ANALYZED = 1_704_153_600


# ------------------------------------------------------------------------------------------
# What is filled: the metadata a client would find, and the statistics as a client reads them


def _decimal(text: str) -> t.Decimal:
    """Hive's Thrift Decimal of TEXT, keeping its scale ('-3.10': -310, scale 2)."""
    value = Decimal(text)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    unscaled = int(value.scaleb(-exponent))
    size = (unscaled.bit_length() + 8) // 8  # one sign bit more than the magnitude needs
    return t.Decimal(unscaled=unscaled.to_bytes(size, "big", signed=True), scale=-exponent)


def _decimal_text(value: t.Decimal) -> str:
    unscaled = int.from_bytes(value.unscaled, "big", signed=True)
    return format(Decimal(unscaled).scaleb(-value.scale), "f")


# Sketches as Hive writes them: HyperLogLog bit vectors of each column's values and KLL
# histograms of the values of the columns that have a range.
IDS = np.arange(1, 1001)
AMOUNTS = np.linspace(-1.5, 1e6, 297)
PRICES = [Decimal("-3.10"), Decimal("12.50"), Decimal("12345678.50")]
DAYS = np.arange(19_723, 19_754)  # 2024-01-01 to 2024-01-31
ID_BITS = HyperLogLog().add_longs(IDS).to_bytes()
AMOUNT_BITS = HyperLogLog().add_doubles(AMOUNTS).to_bytes()
PRICE_BITS = HyperLogLog().add_decimals(PRICES).to_bytes()
NOTE_BITS = HyperLogLog().add_strings([f"note {i}" for i in range(40)]).to_bytes()
DAY_BITS = HyperLogLog().add_longs(DAYS).to_bytes()
ID_HISTOGRAM = kll_build(IDS)
AMOUNT_HISTOGRAM = kll_build(AMOUNTS)
PRICE_HISTOGRAM = kll_build([float(p) for p in PRICES])
DAY_HISTOGRAM = kll_build(DAYS)


def long_obj(
    low: int, high: int, nulls: int, ndv: int, bits: bytes | None, histogram: bytes | None
) -> t.ColumnStatisticsData:
    return t.ColumnStatisticsData(
        longStats=t.LongColumnStatsData(low, high, nulls, ndv, bits, histogram)
    )


Columns = list[tuple[str, str, str | None]]
"""(name, type, comment) of each column, as FieldSchema has them."""

ORDERS_COLUMNS: Columns = [
    ("id", "bigint", "order id"),
    ("amount", "double", None),
    ("price", "decimal(10,2)", "unit price, ünïcode comment"),
    ("note", "string", None),
    ("flag", "boolean", None),
    ("day", "date", None),
]
# The columns of the first partition, written before `flag` and `day` were added.
OLD_ORDERS_COLUMNS = ORDERS_COLUMNS[:4]
ORDERS_KEYS: Columns = [("ds", "string", "load day"), ("region", "string", None)]

ORDERS_STATS = {
    "id": long_obj(1, 1000, 0, 1000, ID_BITS, ID_HISTOGRAM),
    "amount": t.ColumnStatisticsData(
        doubleStats=t.DoubleColumnStatsData(-1.5, 1e6, 3, 297, AMOUNT_BITS, AMOUNT_HISTOGRAM)
    ),
    "price": t.ColumnStatisticsData(
        decimalStats=t.DecimalColumnStatsData(
            _decimal("-3.10"), _decimal("12345678.50"), 1, 3, PRICE_BITS, PRICE_HISTOGRAM
        )
    ),
    "note": t.ColumnStatisticsData(
        stringStats=t.StringColumnStatsData(120, 7.25, 5, 40, NOTE_BITS)
    ),
    "flag": t.ColumnStatisticsData(booleanStats=t.BooleanColumnStatsData(600, 390, 10, None)),
    "day": t.ColumnStatisticsData(
        dateStats=t.DateColumnStatsData(
            t.Date(19_723), t.Date(19_753), 0, 31, DAY_BITS, DAY_HISTOGRAM
        )
    ),
}
# What another engine wrote for the same table: the extremes of the types.
IMPALA_STATS = {
    "id": long_obj(-(2**63), 2**63 - 1, 0, 2, None, None),
    "amount": t.ColumnStatisticsData(
        doubleStats=t.DoubleColumnStatsData(-1.7976931348623157e308, 5e-324, 0, 2, None, None)
    ),
}
PARTITIONS = {
    "ds=2024-01-01/region=eu": ["2024-01-01", "eu"],
    "ds=2024-01-02/region=us": ["2024-01-02", "us"],
    "ds=2024-01-02/region=__HIVE_DEFAULT_PARTITION__": ["2024-01-02", "__HIVE_DEFAULT_PARTITION__"],
}
PARTITION_STATS = {
    "ds=2024-01-01/region=eu": {
        "id": long_obj(1, 400, 0, 400, HyperLogLog().add_longs(IDS[:400]).to_bytes(), None),
        "amount": t.ColumnStatisticsData(
            doubleStats=t.DoubleColumnStatsData(0.0, 17.125, 0, 12, None, kll_build([0, 17.125]))
        ),
        "note": t.ColumnStatisticsData(stringStats=t.StringColumnStatsData(0, 0.0, 400, 0, None)),
    },
    "ds=2024-01-02/region=us": {
        "id": long_obj(401, 1000, 2, 598, None, kll_build(IDS[400:])),
        "price": t.ColumnStatisticsData(
            decimalStats=t.DecimalColumnStatsData(
                _decimal("0.00"), _decimal("99.99"), 0, 2, None, kll_build([0.0, 99.99])
            )
        ),
        "flag": t.ColumnStatisticsData(booleanStats=t.BooleanColumnStatsData(1, 597, 2, None)),
        "day": t.ColumnStatisticsData(
            dateStats=t.DateColumnStatsData(t.Date(19_724), None, 5, 1, None, None)
        ),
    },
}
EVENTS_COLUMNS: Columns = [("user_id", "bigint", None), ("payload", "string", None)]
# Statistics from a writer that kept no sketches (Hive 2).
EVENTS_STATS = {
    "user_id": long_obj(7, 7_000_000_000, 12, 52_000, None, None),
    "payload": t.ColumnStatisticsData(
        stringStats=t.StringColumnStatsData(65_535, 812.0625, 0, 90_000, None)
    ),
}


def _accurate(*columns: str) -> str:
    return json.dumps(
        {"BASIC_STATS": "true", "COLUMN_STATS": dict.fromkeys(sorted(columns), "true")},
        separators=(",", ":"),
    )


SALES_PARAMS = {"owner.team": "analytics", "retention.days": "30", "empty": ""}
ORDERS_PARAMS = {
    "COLUMN_STATS_ACCURATE": _accurate(*ORDERS_STATS),
    "numRows": "1000",
    "numFiles": "3",
    "totalSize": "104857600",
    "transient_lastDdlTime": str(CREATED),
    "comment": "orders — ünïcode, 'quoted'",
}
ORDERS_SERDE = ("orders", "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe")
ORDERS_SERDE_PARAMS = {"serialization.format": "1"}
ORDERS_SD_PARAMS = {"parquet.compression": "ZSTD"}
PARTITION_PARAMS = {
    "ds=2024-01-01/region=eu": {
        "COLUMN_STATS_ACCURATE": _accurate(*PARTITION_STATS["ds=2024-01-01/region=eu"]),
        "numRows": "400",
    },
    "ds=2024-01-02/region=us": {
        "COLUMN_STATS_ACCURATE": _accurate(*PARTITION_STATS["ds=2024-01-02/region=us"]),
        "numRows": "600",
    },
    "ds=2024-01-02/region=__HIVE_DEFAULT_PARTITION__": {"numRows": "0"},
}
EVENTS_PARAMS = {
    "EXTERNAL": "TRUE",
    "COLUMN_STATS_ACCURATE": _accurate(*EVENTS_STATS),
    "skip.header.line.count": "1",
}
VIEW_TEXT = "SELECT id, amount FROM sales.orders WHERE region = 'eu'"
VIEW_EXPANDED = "SELECT `orders`.`id`, `orders`.`amount` FROM `sales`.`orders` WHERE ..."
SKEWED_VALUES = [["eu"], ["us"]]
PARQUET = (
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
)
EVENTS_SERDE_PARAMS = {"field.delim": ",", "escape.delim": "\\", "serialization.format": ","}
FUNCTION_RESOURCES = [
    (t.ResourceType.JAR, "s3a://lake/udf.jar"),
    (t.ResourceType.FILE, "s3a://lake/dict.txt"),
]


class Filled(NamedTuple):
    """What the fill could write at its revision (tables added later are not there)."""

    skewed: bool
    functions: bool


# ------------------------------------------------------------------------------------------
# Filling a database through the schema of its revision


def reflect(conn: sa.Connection) -> sa.MetaData:
    metadata = sa.MetaData()
    with warnings.catch_warnings():
        # PostgreSQL's index in byte order (0004) is on an expression; rows are what matters.
        warnings.filterwarnings("ignore", ".*expression-based index")
        metadata.reflect(conn)
    return metadata


class _Writer:
    """Inserts rows into the tables reflected from the database, as its revision has them."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn
        self.tables = reflect(conn).tables

    def add(self, table: str, **values: Any) -> None:
        self.conn.execute(self.tables[table].insert().values(**values))

    def new(self, table: str, **values: Any) -> int:
        """Insert a row whose id the database assigns; its id."""
        key = self.conn.execute(self.tables[table].insert().values(**values)).inserted_primary_key
        assert key is not None and len(key) == 1
        return int(key[0])

    def count(self, table: str) -> int:
        counted = sa.select(sa.func.count()).select_from(self.tables[table])
        return int(self.conn.execute(counted).scalar_one())

    def params(self, table: str, owner: dict[str, int], params: dict[str, str]) -> None:
        for key, value in params.items():
            self.add(table, **owner, PARAM_KEY=key, PARAM_VALUE=value)

    def columns(self, columns: Columns) -> int:
        cd = self.new("CDS")
        for idx, (name, type_, comment) in enumerate(columns):
            self.add(
                "COLUMNS_V2",
                CD_ID=cd,
                COLUMN_NAME=name,
                TYPE_NAME=type_,
                COMMENT=comment,
                INTEGER_IDX=idx,
            )
        return cd

    def storage(
        self,
        cd: int,
        location: str | None,
        serde: tuple[str | None, str | None],
        serde_params: dict[str, str],
        *,
        formats: tuple[str, str] | tuple[None, None] = (None, None),
        compressed: bool = False,
        buckets: int = -1,
    ) -> int:
        serde_id = self.new("SERDES", NAME=serde[0], SLIB=serde[1])
        self.params("SERDE_PARAMS", {"SERDE_ID": serde_id}, serde_params)
        return self.new(
            "SDS",
            CD_ID=cd,
            SERDE_ID=serde_id,
            INPUT_FORMAT=formats[0],
            OUTPUT_FORMAT=formats[1],
            LOCATION=location,
            IS_COMPRESSED=compressed,
            NUM_BUCKETS=buckets,
            IS_STOREDASSUBDIRECTORIES=False,
        )

    def table(
        self, db: int, name: str, kind: str, sd: int, params: dict[str, str], **values: Any
    ) -> int:
        tbl = self.new(
            "TBLS",
            DB_ID=db,
            TBL_NAME=name,
            TBL_TYPE=kind,
            OWNER="etl",
            OWNER_TYPE="USER",
            CREATE_TIME=CREATED,
            LAST_ACCESS_TIME=0,
            RETENTION=0,
            SD_ID=sd,
            **values,
        )
        self.params("TABLE_PARAMS", {"TBL_ID": tbl}, params)
        return tbl

    def stats(
        self,
        table: str,
        owner: dict[str, int],
        columns: Columns,
        stats: dict[str, t.ColumnStatisticsData],
        **values: Any,
    ) -> None:
        types = {name: type_ for name, type_, _ in columns}
        for column, data in stats.items():
            self.add(
                table,
                **owner,
                COLUMN_NAME=column,
                COLUMN_TYPE=types[column],
                LAST_ANALYZED=ANALYZED,
                **_stats_values(data),
                **self.owner_names(table, owner),
                **values,
            )

    def owner_names(self, table: str, owner: dict[str, int]) -> dict[str, str]:
        """The names a statistics row of TABLE gives its OWNER, where the revision has them
        (from 0007): its database's, its table's and a partition's."""
        if "DB_NAME" not in self.tables[table].c:
            return {}
        tbls, dbs, parts = self.tables["TBLS"], self.tables["DBS"], self.tables["PARTITIONS"]
        names = sa.select(dbs.c.NAME, tbls.c.TBL_NAME).join_from(
            tbls, dbs, dbs.c.DB_ID == tbls.c.DB_ID
        )
        if "PART_ID" in owner:
            found = self.conn.execute(
                names.add_columns(parts.c.PART_NAME)
                .join(parts, parts.c.TBL_ID == tbls.c.TBL_ID)
                .where(parts.c.PART_ID == owner["PART_ID"])
            ).one()
            return {"DB_NAME": found[0], "TABLE_NAME": found[1], "PARTITION_NAME": found[2]}
        found = self.conn.execute(names.where(tbls.c.TBL_ID == owner["TBL_ID"])).one()
        return {"DB_NAME": found[0], "TABLE_NAME": found[1]}


def _stats_values(data: t.ColumnStatisticsData) -> dict[str, Any]:
    """The columns of a statistics row that hold DATA, in the schema's families: LONG_* for
    longs and dates (days), DOUBLE_*, BIG_DECIMAL_* as text that keeps the scale."""
    (member,) = [k for k, v in vars(data).items() if v is not None]
    s = getattr(data, member)
    row: dict[str, Any] = {
        "STATS_KIND": member.removesuffix("Stats"),
        "NUM_NULLS": s.numNulls,
        "BIT_VECTOR": s.bitVectors,
    }
    if member == "booleanStats":
        return row | {"NUM_TRUES": s.numTrues, "NUM_FALSES": s.numFalses}
    row["NUM_DISTINCTS"] = s.numDVs
    if member == "stringStats":
        return row | {"MAX_COL_LEN": s.maxColLen, "AVG_COL_LEN": s.avgColLen}
    row["HISTOGRAM"] = s.histogram
    if member == "longStats":
        return row | {"LONG_LOW_VALUE": s.lowValue, "LONG_HIGH_VALUE": s.highValue}
    if member == "doubleStats":
        return row | {"DOUBLE_LOW_VALUE": s.lowValue, "DOUBLE_HIGH_VALUE": s.highValue}
    if member == "decimalStats":
        return row | {
            "BIG_DECIMAL_LOW_VALUE": s.lowValue and _decimal_text(s.lowValue),
            "BIG_DECIMAL_HIGH_VALUE": s.highValue and _decimal_text(s.highValue),
        }
    assert member == "dateStats", member
    return row | {
        "LONG_LOW_VALUE": s.lowValue and s.lowValue.daysSinceEpoch,
        "LONG_HIGH_VALUE": s.highValue and s.highValue.daysSinceEpoch,
    }


def fill(url: str, warehouse: Path) -> Filled:
    """Fill the database at URL, at whatever revision it is, with a metastore's content;
    every table gets rows."""
    engine = transactions.create_engine(url)
    try:
        with engine.begin() as conn:
            w = _Writer(conn)
            sales = _databases(w, warehouse)
            orders_sd = _orders(w, sales, warehouse)
            _other_tables(w, sales, warehouse)
            filled = Filled(skewed="SKEWED_VALUES" in w.tables, functions="FUNCS" in w.tables)
            if filled.skewed:
                _skewed_values(w, orders_sd, warehouse)
            if filled.functions:
                _function(w, sales)
            if "TBL_VERSIONS" in w.tables:
                _versions(w)
            if "HIVE_LOCKS" in w.tables:
                _lock(w)
            empty = [name for name in w.tables if name != "alembic_version" and not w.count(name)]
            assert not empty, f"the fill writes no rows to {empty}: add some"
            return filled
    finally:
        engine.dispose()


def _databases(w: _Writer, warehouse: Path) -> int:
    """default, sales and staging; the id of sales."""
    w.new(
        "DBS",
        NAME="default",
        DESC="Default Hive database",
        DB_LOCATION_URI=f"file:{warehouse}",
        OWNER_NAME="public",
        OWNER_TYPE="ROLE",
        CREATE_TIME=CREATED,
        TYPE="NATIVE",
    )
    sales = w.new(
        "DBS",
        NAME="sales",
        DESC="orders and events — ünïcode",
        DB_LOCATION_URI=f"file:{warehouse}/sales.db",
        OWNER_NAME="etl",
        OWNER_TYPE="USER",
        CREATE_TIME=CREATED,
        DB_MANAGED_LOCATION_URI=f"file:{warehouse}/managed/sales.db",
    )
    w.params("DATABASE_PARAMS", {"DB_ID": sales}, SALES_PARAMS)
    # CTLG_NAME and TYPE left to their server defaults.
    staging = w.new("DBS", NAME="staging", DB_LOCATION_URI=f"file:{warehouse}/staging.db")
    w.params("DATABASE_PARAMS", {"DB_ID": staging}, {"purpose": "scratch space"})
    w.table(
        staging,
        "scratch",
        "MANAGED_TABLE",
        w.storage(
            w.columns([("x", "int", None)]),
            f"file:{warehouse}/staging.db/scratch",
            (None, None),
            {},
        ),
        {},
    )
    return sales


def _orders(w: _Writer, sales: int, warehouse: Path) -> int:
    """sales.orders: managed, partitioned, bucketed and sorted, with statistics of every kind
    on the table and its partitions; the id of its storage descriptor."""
    orders_cd = w.columns(ORDERS_COLUMNS)
    orders_sd = w.storage(
        orders_cd,
        f"file:{warehouse}/sales.db/orders",
        ORDERS_SERDE,
        ORDERS_SERDE_PARAMS,
        formats=PARQUET,
        compressed=True,
        buckets=4,
    )
    w.params("SD_PARAMS", {"SD_ID": orders_sd}, ORDERS_SD_PARAMS)
    w.add("BUCKETING_COLS", SD_ID=orders_sd, INTEGER_IDX=0, BUCKET_COL_NAME="id")
    w.add("SORT_COLS", SD_ID=orders_sd, INTEGER_IDX=0, COLUMN_NAME="id", ORDER=1)
    orders = w.table(sales, "orders", "MANAGED_TABLE", orders_sd, ORDERS_PARAMS, WRITE_ID=17)
    for idx, (name, type_, comment) in enumerate(ORDERS_KEYS):
        w.add(
            "PARTITION_KEYS",
            TBL_ID=orders,
            PKEY_NAME=name,
            PKEY_TYPE=type_,
            PKEY_COMMENT=comment,
            INTEGER_IDX=idx,
        )
    owner = {"TBL_ID": orders}
    w.stats("TAB_COL_STATS", owner, ORDERS_COLUMNS, ORDERS_STATS, ENGINE="hive")
    # A row of another engine, which reads of the default engine must not return.
    w.stats("TAB_COL_STATS", owner, ORDERS_COLUMNS, IMPALA_STATS, ENGINE="impala")

    old_cd = w.columns(OLD_ORDERS_COLUMNS)
    for number, (name, values) in enumerate(PARTITIONS.items()):
        sd = w.storage(
            old_cd if number == 0 else orders_cd,
            f"file:{warehouse}/sales.db/orders/{name}",
            ORDERS_SERDE,
            ORDERS_SERDE_PARAMS,
            formats=PARQUET,
            buckets=4,
        )
        part = w.new(
            "PARTITIONS",
            TBL_ID=orders,
            PART_NAME=name,
            CREATE_TIME=CREATED + number,
            LAST_ACCESS_TIME=0,
            SD_ID=sd,
        )
        for idx, value in enumerate(values):
            w.add("PARTITION_KEY_VALS", PART_ID=part, INTEGER_IDX=idx, PART_KEY_VAL=value)
        w.params("PARTITION_PARAMS", {"PART_ID": part}, PARTITION_PARAMS[name])
        # ENGINE left to its server default.
        w.stats("PART_COL_STATS", {"PART_ID": part}, ORDERS_COLUMNS, PARTITION_STATS.get(name, {}))
    return orders_sd


def _other_tables(w: _Writer, sales: int, warehouse: Path) -> None:
    """sales.events, external, with statistics without sketches; sales.orders_eu, a view."""
    events_sd = w.storage(
        w.columns(EVENTS_COLUMNS),
        "s3a://lake/raw/events",
        ("events", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
        EVENTS_SERDE_PARAMS,
        formats=(
            "org.apache.hadoop.mapred.TextInputFormat",
            "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        ),
    )
    events = w.table(sales, "events", "EXTERNAL_TABLE", events_sd, EVENTS_PARAMS)
    w.stats("TAB_COL_STATS", {"TBL_ID": events}, EVENTS_COLUMNS, EVENTS_STATS, ENGINE="hive")

    w.table(
        sales,
        "orders_eu",
        "VIRTUAL_VIEW",
        w.storage(w.columns(ORDERS_COLUMNS[:2]), None, (None, None), {}),
        {"comment": "orders in the EU"},
        VIEW_ORIGINAL_TEXT=VIEW_TEXT,
        VIEW_EXPANDED_TEXT=VIEW_EXPANDED,
    )


def _skewed_values(w: _Writer, sd: int, warehouse: Path) -> None:
    """The skewed values of orders (SKEWED BY (region) ON ('eu'), ('us') STORED AS
    DIRECTORIES), from revision 0002."""
    w.add("SKEWED_COL_NAMES", SD_ID=sd, INTEGER_IDX=0, SKEWED_COL_NAME="region")
    for idx, value in enumerate(SKEWED_VALUES):
        values_id = w.new("SKEWED_STRING_LIST")
        for position, text in enumerate(value):
            w.add(
                "SKEWED_STRING_LIST_VALUES",
                STRING_LIST_ID=values_id,
                INTEGER_IDX=position,
                STRING_LIST_VALUE=text,
            )
        w.add("SKEWED_VALUES", SD_ID_OID=sd, INTEGER_IDX=idx, STRING_LIST_ID_EID=values_id)
        w.add(
            "SKEWED_COL_VALUE_LOC_MAP",
            SD_ID=sd,
            STRING_LIST_ID_KID=values_id,
            LOCATION=skewed_location(warehouse, value),
        )


def skewed_location(warehouse: Path, value: list[str]) -> str:
    return f"file:{warehouse}/sales.db/orders/region={value[0]}"


def _function(w: _Writer, sales: int) -> None:
    """sales.to_upper with two resources, from revision 0002."""
    func = w.new(
        "FUNCS",
        DB_ID=sales,
        FUNC_NAME="to_upper",
        CLASS_NAME="com.example.udf.ToUpper",
        OWNER_NAME="etl",
        OWNER_TYPE="USER",
        CREATE_TIME=CREATED,
        FUNC_TYPE=t.FunctionType.JAVA,
    )
    for idx, (kind, uri) in enumerate(FUNCTION_RESOURCES):
        w.add("FUNC_RU", FUNC_ID=func, INTEGER_IDX=idx, RESOURCE_TYPE=kind, RESOURCE_URI=uri)


def _versions(w: _Writer) -> None:
    """A version of every table, as a server that has changed each once leaves them, and
    (from 0008) of every partition, as a write of its statistics leaves it."""
    versions, tables = w.tables["TBL_VERSIONS"], w.tables["TBLS"]
    w.conn.execute(
        versions.insert().from_select(
            ["TBL_ID", "VERSION"], sa.select(tables.c.TBL_ID, tables.c.TBL_ID + 100)
        )
    )
    if "PART_VERSIONS" in w.tables:
        parts = w.tables["PARTITIONS"]
        w.conn.execute(
            w.tables["PART_VERSIONS"]
            .insert()
            .from_select(["PART_ID", "VERSION"], sa.select(parts.c.PART_ID, parts.c.TBL_ID + 100))
        )


def _lock(w: _Writer) -> None:
    """A lock held on sales.orders by a writer that has not heartbeated since 2024, and the
    next lock id after it."""
    w.add(
        "HIVE_LOCKS",
        HL_LOCK_EXT_ID=41,
        HL_LOCK_INT_ID=1,
        HL_TXNID=0,
        HL_DB="sales",
        HL_TABLE="orders",
        HL_LOCK_STATE="a",
        HL_LOCK_TYPE="e",
        HL_LAST_HEARTBEAT=1_718_000_000_000,
        HL_ACQUIRED_AT=1_718_000_000_000,
        HL_USER="etl",
        HL_HOST="worker-7",
        HL_HEARTBEAT_COUNT=0,
        HL_AGENT_INFO="Iceberg-41",
    )
    w.conn.execute(w.tables["NEXT_LOCK_ID"].update().values(NL_NEXT=42))
