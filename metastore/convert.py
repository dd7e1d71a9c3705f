"""Conversion between Thrift structs and rows, with the validation that the wire cannot do.

Python's Thrift code never enforces `required`, so every required field is checked here and
a missing one becomes an InvalidInputException (statistics) or InvalidObjectException
(metadata) whose message names the field.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import String

from hive_metastore_thrift import ttypes as t
from metastore import hive_types, names
from metastore import models as m
from metastore.stats_store import STATS_COLUMNS
from metastore.store import Skewed, Storage
from metastore.vocabulary import (
    Kind,
    decimal_text,
    kinds_for_type,
    set_kinds,
    thrift_decimal,
)

# ------------------------------------------------------------------------------------------
# Metadata

_VALID_NAME = re.compile(r"[A-Za-z0-9_]+")


def valid_name(kind: str, name: str | None) -> str:
    """A database or table name, lower-cased; Hive allows letters, digits and '_'."""
    if not name or not _VALID_NAME.fullmatch(name):
        raise t.InvalidObjectException(
            f"invalid {kind} name {name!r}: use letters, digits and '_' only"
        )
    return names.identifier(name)


def now() -> int:
    return int(time.time())


def database_row(db: t.Database, catalog: str) -> m.Database:
    return m.Database(
        NAME=valid_name("database", db.name),
        CTLG_NAME=catalog,
        DESC=db.description,
        DB_LOCATION_URI=db.locationUri or "",
        OWNER_NAME=db.ownerName,
        OWNER_TYPE=t.PrincipalType._VALUES_TO_NAMES.get(db.ownerType) if db.ownerType else None,
        CREATE_TIME=db.createTime or now(),
        DB_MANAGED_LOCATION_URI=db.managedLocationUri,
        TYPE=t.DatabaseType._VALUES_TO_NAMES.get(db.type, "NATIVE") if db.type else "NATIVE",
        DATACONNECTOR_NAME=db.connector_name,
        REMOTE_DBNAME=db.remote_dbname,
    )


def database_struct(row: m.Database, params: dict[str, str]) -> t.Database:
    return t.Database(
        name=row.NAME,
        description=row.DESC,
        locationUri=row.DB_LOCATION_URI,
        parameters=params,
        ownerName=row.OWNER_NAME,
        ownerType=t.PrincipalType._NAMES_TO_VALUES.get(row.OWNER_TYPE) if row.OWNER_TYPE else None,
        catalogName=row.CTLG_NAME,
        createTime=row.CREATE_TIME,
        managedLocationUri=row.DB_MANAGED_LOCATION_URI,
        type=t.DatabaseType._NAMES_TO_VALUES.get(row.TYPE),
        connector_name=row.DATACONNECTOR_NAME,
        remote_dbname=row.REMOTE_DBNAME,
    )


def field_schemas(fields: list[t.FieldSchema] | None, what: str) -> list[t.FieldSchema]:
    """Validated column or partition-key definitions with lower-cased names."""
    out: list[t.FieldSchema] = []
    seen: set[str] = set()
    for f in fields or []:
        if not f.name:
            raise t.InvalidObjectException(f"a {what} has no name")
        if not f.type:
            raise t.InvalidObjectException(f"{what} {f.name!r} has no type")
        try:
            hive_types.check_type(f.type)
        except hive_types.HiveTypeError as e:
            raise t.InvalidObjectException(f"{what} {f.name!r}: {e}") from None
        name = names.identifier(f.name)
        if name in seen:
            raise t.InvalidObjectException(f"duplicate {what} {name!r}")
        seen.add(name)
        out.append(t.FieldSchema(name=name, type=f.type, comment=f.comment))
    return out


def storage_rows(sd: t.StorageDescriptor | None) -> Storage:
    sd = sd or t.StorageDescriptor()
    serde = None
    if sd.serdeInfo is not None:
        info = sd.serdeInfo
        serde = m.SerDe(
            NAME=info.name,
            SLIB=info.serializationLib,
            DESCRIPTION=info.description,
            SERIALIZER_CLASS=info.serializerClass,
            DESERIALIZER_CLASS=info.deserializerClass,
            SERDE_TYPE=info.serdeType,
        )
    columns = [
        m.Column(COLUMN_NAME=f.name, TYPE_NAME=f.type, COMMENT=f.comment, INTEGER_IDX=i)
        for i, f in enumerate(field_schemas(sd.cols, "column"))
    ]
    return Storage(
        sd=m.StorageDescriptor(
            INPUT_FORMAT=sd.inputFormat,
            OUTPUT_FORMAT=sd.outputFormat,
            LOCATION=sd.location,
            IS_COMPRESSED=bool(sd.compressed),
            NUM_BUCKETS=sd.numBuckets if sd.numBuckets is not None else -1,
            IS_STOREDASSUBDIRECTORIES=bool(sd.storedAsSubDirectories),
        ),
        columns=columns,
        serde=serde,
        serde_params=dict(sd.serdeInfo.parameters or {}) if sd.serdeInfo else {},
        sd_params=dict(sd.parameters or {}),
        bucket_cols=list(sd.bucketCols or []),
        sort_cols=[(o.col or "", o.order if o.order is not None else 1) for o in sd.sortCols or []],
        skewed=skewed_rows(sd.skewedInfo),
    )


def skewed_rows(info: t.SkewedInfo | None) -> Skewed:
    """SkewedInfo as lists: column names, values (one list per skewed value), and the
    location of each value that has one (list bucketing's folders)."""
    if info is None:
        return Skewed([], [], [])
    names_ = [names.identifier(n) for n in info.skewedColNames or [] if n is not None]
    values = [list(v or []) for v in info.skewedColValues or []]
    locations = [(list(k), v) for k, v in (info.skewedColValueLocationMaps or {}).items()]
    for value in [*values, *(k for k, _ in locations)]:
        if len(value) != len(names_) or any(v is None for v in value):
            raise t.InvalidObjectException(
                f"skewed value {value} does not name one value per skewed column {names_}"
            )
    return Skewed(names_, values, locations)


def storage_struct(storage: Storage | None) -> t.StorageDescriptor | None:
    if storage is None:
        return None
    sd = storage.sd
    serde = storage.serde
    return t.StorageDescriptor(
        cols=[
            t.FieldSchema(name=c.COLUMN_NAME, type=c.TYPE_NAME, comment=c.COMMENT)
            for c in storage.columns
        ],
        location=sd.LOCATION,
        inputFormat=sd.INPUT_FORMAT,
        outputFormat=sd.OUTPUT_FORMAT,
        compressed=sd.IS_COMPRESSED,
        numBuckets=sd.NUM_BUCKETS,
        serdeInfo=t.SerDeInfo(
            name=serde.NAME,
            serializationLib=serde.SLIB,
            parameters=storage.serde_params,
            description=serde.DESCRIPTION,
            serializerClass=serde.SERIALIZER_CLASS,
            deserializerClass=serde.DESERIALIZER_CLASS,
            serdeType=serde.SERDE_TYPE,
        )
        if serde is not None
        else None,
        bucketCols=storage.bucket_cols,
        sortCols=[t.Order(col=c, order=o) for c, o in storage.sort_cols],
        parameters=storage.sd_params,
        skewedInfo=t.SkewedInfo(
            skewedColNames=list(storage.skewed.names),
            skewedColValues=[list(v) for v in storage.skewed.values],
            skewedColValueLocationMaps={
                tuple(value): location for value, location in storage.skewed.locations
            },
        ),
        storedAsSubDirectories=sd.IS_STOREDASSUBDIRECTORIES,
    )


MANAGED_TABLE = "MANAGED_TABLE"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"


def table_type(table: t.Table) -> str:
    """The type HMS stores: the EXTERNAL parameter decides between managed and external."""
    kind = table.tableType or MANAGED_TABLE
    external = (table.parameters or {}).get("EXTERNAL", "").upper() == "TRUE"
    if kind == MANAGED_TABLE and external:
        return EXTERNAL_TABLE
    if kind == EXTERNAL_TABLE and not external:
        return MANAGED_TABLE
    return kind


def transactional(params: Mapping[str, str] | None) -> bool:
    """Whether table parameters make an ACID table, which colstats does not serve."""
    return (params or {}).get("transactional", "").strip().lower() == "true"


def table_row(table: t.Table, db_id: int) -> m.Table:
    created = table.createTime or now()
    return m.Table(
        DB_ID=db_id,
        TBL_NAME=valid_name("table", table.tableName),
        TBL_TYPE=table_type(table),
        OWNER=table.owner,
        OWNER_TYPE=t.PrincipalType._VALUES_TO_NAMES.get(table.ownerType or t.PrincipalType.USER),
        CREATE_TIME=created,
        LAST_ACCESS_TIME=table.lastAccessTime or 0,
        RETENTION=table.retention or 0,
        VIEW_ORIGINAL_TEXT=table.viewOriginalText,
        VIEW_EXPANDED_TEXT=table.viewExpandedText,
        IS_REWRITE_ENABLED=bool(table.rewriteEnabled),
        WRITE_ID=table.writeId if table.writeId is not None and table.writeId > 0 else 0,
    )


def table_struct(
    row: m.Table,
    db: m.Database,
    storage: Storage | None,
    keys: list[m.PartitionKey],
    params: dict[str, str],
) -> t.Table:
    return t.Table(
        tableName=row.TBL_NAME,
        dbName=db.NAME,
        owner=row.OWNER,
        createTime=row.CREATE_TIME,
        lastAccessTime=row.LAST_ACCESS_TIME,
        retention=row.RETENTION,
        sd=storage_struct(storage),
        partitionKeys=[
            t.FieldSchema(name=k.PKEY_NAME, type=k.PKEY_TYPE, comment=k.PKEY_COMMENT) for k in keys
        ],
        parameters=params,
        viewOriginalText=row.VIEW_ORIGINAL_TEXT,
        viewExpandedText=row.VIEW_EXPANDED_TEXT,
        tableType=row.TBL_TYPE,
        rewriteEnabled=row.IS_REWRITE_ENABLED,
        catName=db.CTLG_NAME,
        ownerType=t.PrincipalType._NAMES_TO_VALUES.get(row.OWNER_TYPE) if row.OWNER_TYPE else None,
        id=row.TBL_ID,
    )


# ------------------------------------------------------------------------------------------
# Column statistics


def _bad(column: str, problem: str) -> t.InvalidInputException:
    return t.InvalidInputException(f"column {column!r}: {problem}")


def _required(column: str, member: str, data: Any, *fields: str) -> None:
    for field in fields:
        if getattr(data, field) is None:
            raise _bad(column, f"{member}.{field} is required")


def _blob(value: bytes | str | None) -> bytes | None:
    """A sketch as bytes; empty means absent. Clients with 2.x IDLs send strings."""
    if value is None or len(value) == 0:
        return None
    return value.encode("latin-1") if isinstance(value, str) else value


def _decimal_text(column: str, value: t.Decimal | None) -> str | None:
    """The exact decimal text of a Thrift Decimal ('-10.50'), or InvalidInputException."""
    if value is None:
        return None
    try:
        return decimal_text(value)
    except ValueError as e:
        raise _bad(column, str(e)) from None


def decimal_struct(text: str | None) -> t.Decimal | None:
    """The Thrift Decimal of stored decimal text."""
    return None if text is None else thrift_decimal(Decimal(text))


def _width(column: str) -> int:
    """The width of a text column of the statistics tables (the HMS schema's)."""
    type_ = m.TableColumnStats.__table__.c[column].type
    assert isinstance(type_, String) and type_.length is not None
    return type_.length


MAX_TYPE_LENGTH = _width("COLUMN_TYPE")
MAX_ENGINE_LENGTH = _width("ENGINE")
MAX_DECIMAL_TEXT_LENGTH = _width("BIG_DECIMAL_LOW_VALUE")


def _check_length(column: str, field: str, text: str | None, limit: int) -> None:
    if text is not None and len(text) > limit:
        raise _bad(column, f"{field} is {len(text)} characters long; at most {limit} are kept")


def _check_range(column: str, low: Any, high: Any) -> None:
    if low is not None and high is not None and low > high:
        raise _bad(column, f"lowValue {low} is greater than highValue {high}")


def _check_double(column: str, field: str, value: float | None, finite: bool = False) -> None:
    if value is None:
        return
    if math.isnan(value):
        raise _bad(column, f"{field} is NaN")
    if finite and math.isinf(value):
        raise _bad(column, f"{field} is infinite")


def stats_row(obj: t.ColumnStatisticsObj, column_type: str) -> dict[str, Any]:
    """The row for one ColumnStatisticsObj of a column of COLUMN_TYPE (the table's).

    Every key of the statistics tables is present so that rows can be written in bulk;
    None means the caller left the field unset.
    """
    column = names.identifier(obj.colName)
    data = obj.statsData
    kinds = set_kinds(data)
    if len(kinds) != 1:
        raise _bad(
            column, f"statsData must hold exactly one kind of statistics, found {len(kinds)}"
        )
    kind = kinds[0]
    member = kind.member
    allowed = kinds_for_type(column_type)
    if kind not in allowed:
        expected = (
            " or ".join(k.member for k in allowed) or "none (no statistics are kept for this type)"
        )
        raise _bad(
            column, f"{member} does not fit a column of type {column_type!r}; expected {expected}"
        )
    stats = getattr(data, member)
    row: dict[str, Any] = dict.fromkeys(STATS_COLUMNS)
    stored_type = (obj.colType or column_type).lower()
    _check_length(column, "colType", stored_type, MAX_TYPE_LENGTH)
    row.update(COLUMN_NAME=column, COLUMN_TYPE=stored_type, STATS_KIND=kind.value)
    if kind is Kind.BOOLEAN:
        _required(column, member, stats, "numTrues", "numFalses", "numNulls")
        row.update(NUM_TRUES=stats.numTrues, NUM_FALSES=stats.numFalses)
    elif kind in (Kind.STRING, Kind.BINARY):
        _required(column, member, stats, "maxColLen", "avgColLen", "numNulls")
        _check_double(column, f"{member}.avgColLen", stats.avgColLen, finite=True)
        row.update(MAX_COL_LEN=stats.maxColLen, AVG_COL_LEN=stats.avgColLen)
        if kind is Kind.STRING:
            _required(column, member, stats, "numDVs")
            row.update(NUM_DISTINCTS=stats.numDVs)
    else:
        _required(column, member, stats, "numNulls", "numDVs")
        row.update(NUM_DISTINCTS=stats.numDVs, HISTOGRAM=_blob(stats.histogram))
        low, high = stats.lowValue, stats.highValue
        if kind is Kind.LONG:
            _check_range(column, low, high)
            row.update(LONG_LOW_VALUE=low, LONG_HIGH_VALUE=high)
        elif kind is Kind.DOUBLE:
            _check_double(column, f"{member}.lowValue", low)
            _check_double(column, f"{member}.highValue", high)
            _check_range(column, low, high)
            row.update(DOUBLE_LOW_VALUE=low, DOUBLE_HIGH_VALUE=high)
        elif kind is Kind.DECIMAL:
            low_text, high_text = _decimal_text(column, low), _decimal_text(column, high)
            _check_range(column, low_text and Decimal(low_text), high_text and Decimal(high_text))
            _check_length(column, f"{member}.lowValue", low_text, MAX_DECIMAL_TEXT_LENGTH)
            _check_length(column, f"{member}.highValue", high_text, MAX_DECIMAL_TEXT_LENGTH)
            row.update(BIG_DECIMAL_LOW_VALUE=low_text, BIG_DECIMAL_HIGH_VALUE=high_text)
        else:
            field = "daysSinceEpoch" if kind is Kind.DATE else "secondsSinceEpoch"
            low_v = _holder_value(column, member, low, field)
            high_v = _holder_value(column, member, high, field)
            _check_range(column, low_v, high_v)
            row.update(LONG_LOW_VALUE=low_v, LONG_HIGH_VALUE=high_v)
    row["NUM_NULLS"] = stats.numNulls
    row["BIT_VECTOR"] = _blob(stats.bitVectors)
    return row


def _holder_value(column: str, member: str, holder: Any, field: str) -> int | None:
    if holder is None:
        return None
    value: int | None = getattr(holder, field)
    if value is None:
        raise _bad(column, f"{member} value holder needs {field}")
    return value


def as_row(mapping: Mapping[str, Any]) -> tuple[Any, ...]:
    """A mapping of statistics columns in the shape stats_obj reads."""
    return tuple(mapping[name] for name in STATS_COLUMNS)


# Positions of the statistics columns in a row that stats_obj reads.
COLUMN_NAME = STATS_COLUMNS.index("COLUMN_NAME")
COLUMN_TYPE = STATS_COLUMNS.index("COLUMN_TYPE")
STATS_KIND = STATS_COLUMNS.index("STATS_KIND")
LONG_LOW_VALUE = STATS_COLUMNS.index("LONG_LOW_VALUE")
LONG_HIGH_VALUE = STATS_COLUMNS.index("LONG_HIGH_VALUE")
DOUBLE_LOW_VALUE = STATS_COLUMNS.index("DOUBLE_LOW_VALUE")
DOUBLE_HIGH_VALUE = STATS_COLUMNS.index("DOUBLE_HIGH_VALUE")
BIG_DECIMAL_LOW_VALUE = STATS_COLUMNS.index("BIG_DECIMAL_LOW_VALUE")
BIG_DECIMAL_HIGH_VALUE = STATS_COLUMNS.index("BIG_DECIMAL_HIGH_VALUE")
NUM_DISTINCTS = STATS_COLUMNS.index("NUM_DISTINCTS")
BIT_VECTOR = STATS_COLUMNS.index("BIT_VECTOR")
HISTOGRAM = STATS_COLUMNS.index("HISTOGRAM")
AVG_COL_LEN = STATS_COLUMNS.index("AVG_COL_LEN")
MAX_COL_LEN = STATS_COLUMNS.index("MAX_COL_LEN")
NUM_TRUES = STATS_COLUMNS.index("NUM_TRUES")
NUM_FALSES = STATS_COLUMNS.index("NUM_FALSES")
NUM_NULLS = STATS_COLUMNS.index("NUM_NULLS")
LAST_ANALYZED = STATS_COLUMNS.index("LAST_ANALYZED")


def stats_obj(
    row: Sequence[Any], *, fetch_bitvector: bool, fetch_histogram: bool
) -> t.ColumnStatisticsObj:
    """The ColumnStatisticsObj of a stored row, with the member that was written.

    ROW holds stats_store.STATS_COLUMNS in that order: a result row, or as_row of a mapping.
    Positions, not names, because this runs for every one of up to 20,000 rows of a call
    and index access on result rows is several times cheaper than access by name.
    """
    kind: str = row[STATS_KIND]
    bit_vector = row[BIT_VECTOR] if fetch_bitvector else None
    data: Any
    if kind == Kind.BOOLEAN:
        data = t.BooleanColumnStatsData(
            numTrues=row[NUM_TRUES],
            numFalses=row[NUM_FALSES],
            numNulls=row[NUM_NULLS],
            bitVectors=bit_vector,
        )
    elif kind == Kind.STRING:
        data = t.StringColumnStatsData(
            maxColLen=row[MAX_COL_LEN],
            avgColLen=row[AVG_COL_LEN],
            numNulls=row[NUM_NULLS],
            numDVs=row[NUM_DISTINCTS],
            bitVectors=bit_vector,
        )
    elif kind == Kind.BINARY:
        data = t.BinaryColumnStatsData(
            maxColLen=row[MAX_COL_LEN],
            avgColLen=row[AVG_COL_LEN],
            numNulls=row[NUM_NULLS],
            bitVectors=bit_vector,
        )
    else:
        histogram = row[HISTOGRAM] if fetch_histogram else None
        nulls, ndv = row[NUM_NULLS], row[NUM_DISTINCTS]
        if kind == Kind.LONG:
            data = t.LongColumnStatsData(
                row[LONG_LOW_VALUE], row[LONG_HIGH_VALUE], nulls, ndv, bit_vector, histogram
            )
        elif kind == Kind.DOUBLE:
            data = t.DoubleColumnStatsData(
                row[DOUBLE_LOW_VALUE], row[DOUBLE_HIGH_VALUE], nulls, ndv, bit_vector, histogram
            )
        elif kind == Kind.DECIMAL:
            data = t.DecimalColumnStatsData(
                decimal_struct(row[BIG_DECIMAL_LOW_VALUE]),
                decimal_struct(row[BIG_DECIMAL_HIGH_VALUE]),
                nulls,
                ndv,
                bit_vector,
                histogram,
            )
        elif kind == Kind.DATE:
            data = t.DateColumnStatsData(
                _maybe(t.Date, row[LONG_LOW_VALUE]),
                _maybe(t.Date, row[LONG_HIGH_VALUE]),
                nulls,
                ndv,
                bit_vector,
                histogram,
            )
        else:
            data = t.TimestampColumnStatsData(
                _maybe(t.Timestamp, row[LONG_LOW_VALUE]),
                _maybe(t.Timestamp, row[LONG_HIGH_VALUE]),
                nulls,
                ndv,
                bit_vector,
                histogram,
            )
    union = t.ColumnStatisticsData(**{_MEMBERS[kind]: data})
    return t.ColumnStatisticsObj(row[COLUMN_NAME], row[COLUMN_TYPE], union)


# The union member of each STATS_KIND text, looked up without building a Kind per row.
_MEMBERS = {kind.value: kind.member for kind in Kind}


def _maybe(holder: Any, value: int | None) -> Any:
    return None if value is None else holder(value)
