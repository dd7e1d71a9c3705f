"""Table, storage descriptor and column structs, and the rows of TBLS, SDS and their parts.

A missing required field becomes an InvalidObjectException whose message names the field.
"""

from __future__ import annotations

from collections.abc import Mapping

from hive_metastore_thrift import ttypes as t
from metastore import names, vocabulary
from metastore.hms.structs import now, valid_name
from metastore.store import models as m
from metastore.store.partition_rows import StoredDatabase, StoredTable
from metastore.store.storage import ColumnDef, Skewed, Storage


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
            vocabulary.check_type(f.type)
        except vocabulary.HiveTypeError as e:
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
        ColumnDef(f.name, f.type, f.comment, i)
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
    row: m.Table | StoredTable,
    db: m.Database | StoredDatabase,
    sd: t.StorageDescriptor | None,
    keys: list[t.FieldSchema],
    params: dict[str, str],
) -> t.Table:
    return t.Table(
        tableName=row.TBL_NAME,
        dbName=db.NAME,
        owner=row.OWNER,
        createTime=row.CREATE_TIME,
        lastAccessTime=row.LAST_ACCESS_TIME,
        retention=row.RETENTION,
        sd=sd,
        partitionKeys=keys,
        parameters=params,
        viewOriginalText=row.VIEW_ORIGINAL_TEXT,
        viewExpandedText=row.VIEW_EXPANDED_TEXT,
        tableType=row.TBL_TYPE,
        rewriteEnabled=row.IS_REWRITE_ENABLED,
        catName=db.CTLG_NAME,
        ownerType=t.PrincipalType._NAMES_TO_VALUES.get(row.OWNER_TYPE) if row.OWNER_TYPE else None,
        id=row.TBL_ID,
    )
