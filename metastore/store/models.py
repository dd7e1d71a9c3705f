"""SQLAlchemy models of the Hive Metastore schema that colstats keeps.

Table and column names are HMS's, so that people who know HMS's backing database find their
way around, and so that rows can be copied between the two. Three things are better than HMS:

* the statistics tables have a unique key on (owner id, COLUMN_NAME, ENGINE), so concurrent
  writers cannot create the duplicate rows that break Trino (HIVE-28578), and writes are
  upserts on that key;
* every child row has a foreign key with ON DELETE CASCADE to its owner, so dropping a table
  or a partition removes its statistics, parameters and key values in the same statement;
* every table has a version (TBL_VERSIONS, metastore.store.versions) that each change to it
  moves, so that a cache of answers can be exact.

Statistics keep typed low/high values per family as HMS does: LONG_* for integer types,
dates (days since epoch) and timestamps (seconds since epoch), DOUBLE_* for float and double,
BIG_DECIMAL_* as exact decimal text that keeps the scale ("-10.50"). STATS_KIND, which HMS
does not have, records which member of the Thrift ColumnStatisticsData union was written, so
that a read returns that member (Trino writes longStats for timestamp columns; HMS would
answer with timestampStats, which Trino cannot read).
"""

from __future__ import annotations

from typing import ClassVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    Sequence,
    String,
    Text,
    UniqueConstraint,
    false,
    text,
)
from sqlalchemy import Column as SaColumn
from sqlalchemy import Table as SaTable
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# SQLite only auto-increments an INTEGER PRIMARY KEY; everywhere else ids are 64-bit.
Id = BigInteger().with_variant(Integer(), "sqlite")

NAMING_CONVENTION = {
    "ix": "%(table_name)s_%(column_0_N_name)s_IDX",
    "uq": "%(table_name)s_%(column_0_N_name)s_UQ",
    "fk": "%(table_name)s_%(column_0_name)s_FK",
    "pk": "%(table_name)s_PK",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    # Every model maps one table (DeclarativeBase declares the wider FromClause).
    __table__: ClassVar[SaTable]


def _owner(target: str) -> Mapped[int]:
    """A NOT NULL reference to the row that owns this one, removed together with it."""
    return mapped_column(Id, ForeignKey(target, ondelete="CASCADE"), nullable=False)


class Database(Base):
    __tablename__ = "DBS"
    __table_args__ = (UniqueConstraint("NAME", "CTLG_NAME"),)

    DB_ID: Mapped[int] = mapped_column(Id, primary_key=True)
    NAME: Mapped[str] = mapped_column(String(128))
    CTLG_NAME: Mapped[str] = mapped_column(String(256), server_default="hive")
    DESC: Mapped[str | None] = mapped_column(String(4000))
    DB_LOCATION_URI: Mapped[str] = mapped_column(String(4000))
    OWNER_NAME: Mapped[str | None] = mapped_column(String(128))
    OWNER_TYPE: Mapped[str | None] = mapped_column(String(10))
    CREATE_TIME: Mapped[int | None] = mapped_column(BigInteger)
    DB_MANAGED_LOCATION_URI: Mapped[str | None] = mapped_column(String(4000))
    TYPE: Mapped[str] = mapped_column(String(32), server_default="NATIVE")
    DATACONNECTOR_NAME: Mapped[str | None] = mapped_column(String(128))
    REMOTE_DBNAME: Mapped[str | None] = mapped_column(String(128))


class DatabaseParam(Base):
    __tablename__ = "DATABASE_PARAMS"

    DB_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("DBS.DB_ID", ondelete="CASCADE"), primary_key=True
    )
    PARAM_KEY: Mapped[str] = mapped_column(String(180), primary_key=True)
    PARAM_VALUE: Mapped[str | None] = mapped_column(Text)


class SerDe(Base):
    __tablename__ = "SERDES"

    SERDE_ID: Mapped[int] = mapped_column(Id, primary_key=True)
    NAME: Mapped[str | None] = mapped_column(String(128))
    SLIB: Mapped[str | None] = mapped_column(String(4000))
    DESCRIPTION: Mapped[str | None] = mapped_column(String(4000))
    SERIALIZER_CLASS: Mapped[str | None] = mapped_column(String(4000))
    DESERIALIZER_CLASS: Mapped[str | None] = mapped_column(String(4000))
    SERDE_TYPE: Mapped[int | None] = mapped_column(Integer)


class SerDeParam(Base):
    __tablename__ = "SERDE_PARAMS"

    SERDE_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("SERDES.SERDE_ID", ondelete="CASCADE"), primary_key=True
    )
    PARAM_KEY: Mapped[str] = mapped_column(String(256), primary_key=True)
    PARAM_VALUE: Mapped[str | None] = mapped_column(Text)


class ColumnDescriptor(Base):
    """A list of columns, shared by a table's storage descriptor and its partitions'."""

    __tablename__ = "CDS"

    CD_ID: Mapped[int] = mapped_column(Id, primary_key=True)


class Column(Base):
    __tablename__ = "COLUMNS_V2"

    CD_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("CDS.CD_ID", ondelete="CASCADE"), primary_key=True
    )
    COLUMN_NAME: Mapped[str] = mapped_column(String(767), primary_key=True)
    TYPE_NAME: Mapped[str | None] = mapped_column(Text)
    COMMENT: Mapped[str | None] = mapped_column(String(4000))
    INTEGER_IDX: Mapped[int] = mapped_column(Integer)


class StorageDescriptor(Base):
    __tablename__ = "SDS"

    SD_ID: Mapped[int] = mapped_column(Id, primary_key=True)
    CD_ID: Mapped[int | None] = mapped_column(Id, ForeignKey("CDS.CD_ID"), index=True)
    SERDE_ID: Mapped[int | None] = mapped_column(Id, ForeignKey("SERDES.SERDE_ID"), index=True)
    INPUT_FORMAT: Mapped[str | None] = mapped_column(String(4000))
    OUTPUT_FORMAT: Mapped[str | None] = mapped_column(String(4000))
    LOCATION: Mapped[str | None] = mapped_column(String(4000))
    IS_COMPRESSED: Mapped[bool] = mapped_column(Boolean)
    NUM_BUCKETS: Mapped[int] = mapped_column(BigInteger)
    IS_STOREDASSUBDIRECTORIES: Mapped[bool] = mapped_column(Boolean)


class StorageDescriptorParam(Base):
    __tablename__ = "SD_PARAMS"

    SD_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("SDS.SD_ID", ondelete="CASCADE"), primary_key=True
    )
    PARAM_KEY: Mapped[str] = mapped_column(String(256), primary_key=True)
    PARAM_VALUE: Mapped[str | None] = mapped_column(Text)


class BucketingColumn(Base):
    __tablename__ = "BUCKETING_COLS"

    SD_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("SDS.SD_ID", ondelete="CASCADE"), primary_key=True
    )
    INTEGER_IDX: Mapped[int] = mapped_column(Integer, primary_key=True)
    BUCKET_COL_NAME: Mapped[str | None] = mapped_column(String(256))


class SortColumn(Base):
    __tablename__ = "SORT_COLS"

    SD_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("SDS.SD_ID", ondelete="CASCADE"), primary_key=True
    )
    INTEGER_IDX: Mapped[int] = mapped_column(Integer, primary_key=True)
    COLUMN_NAME: Mapped[str | None] = mapped_column(String(767))
    ORDER: Mapped[int] = mapped_column(Integer)


class Table(Base):
    __tablename__ = "TBLS"
    __table_args__ = (UniqueConstraint("DB_ID", "TBL_NAME"),)

    TBL_ID: Mapped[int] = mapped_column(Id, primary_key=True)
    DB_ID: Mapped[int] = _owner("DBS.DB_ID")
    TBL_NAME: Mapped[str] = mapped_column(String(256))
    TBL_TYPE: Mapped[str | None] = mapped_column(String(128))
    OWNER: Mapped[str | None] = mapped_column(String(767))
    OWNER_TYPE: Mapped[str | None] = mapped_column(String(10))
    CREATE_TIME: Mapped[int] = mapped_column(BigInteger)
    LAST_ACCESS_TIME: Mapped[int] = mapped_column(BigInteger)
    RETENTION: Mapped[int] = mapped_column(BigInteger)
    SD_ID: Mapped[int | None] = mapped_column(Id, ForeignKey("SDS.SD_ID"), index=True)
    VIEW_ORIGINAL_TEXT: Mapped[str | None] = mapped_column(Text)
    VIEW_EXPANDED_TEXT: Mapped[str | None] = mapped_column(Text)
    IS_REWRITE_ENABLED: Mapped[bool] = mapped_column(Boolean, server_default=false())
    WRITE_ID: Mapped[int] = mapped_column(BigInteger, server_default="0")


class TableParam(Base):
    __tablename__ = "TABLE_PARAMS"

    TBL_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("TBLS.TBL_ID", ondelete="CASCADE"), primary_key=True
    )
    PARAM_KEY: Mapped[str] = mapped_column(String(256), primary_key=True)
    PARAM_VALUE: Mapped[str | None] = mapped_column(Text)


class TableVersion(Base):
    """The version of a table (not in HMS's schema): a number that every change to the
    table, its columns, partitions, parameters or statistics moves, in the transaction of
    the change (metastore.store.versions). A cache of answers is exact when it serves an
    answer only while the versions it was read at are current."""

    __tablename__ = "TBL_VERSIONS"

    TBL_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("TBLS.TBL_ID", ondelete="CASCADE"), primary_key=True
    )
    VERSION: Mapped[int] = mapped_column(BigInteger)
    PARTS_VERSION: Mapped[int | None] = mapped_column(BigInteger)
    """The VERSION of the table's last change that may have changed its partitions without
    moving their PART_VERSIONS (schema 0008): any change but a write of statistics or an
    alter of partitions."""
    SEEN_VERSION: Mapped[int | None] = mapped_column(BigInteger)
    """The VERSION colstats (0008 or later) last gave the table: another VERSION means a
    change by another writer (an older server, HMS's triggers in an adopted database), which
    may have changed any partition."""


class PartitionVersion(Base):
    """The version of a partition (not in HMS's schema, schema 0008): the table's VERSION at
    the last write of its statistics or alter of it (metastore.store.versions). What a
    partition's version does not cover, its table's PARTS_VERSION does."""

    __tablename__ = "PART_VERSIONS"

    PART_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("PARTITIONS.PART_ID", ondelete="CASCADE"), primary_key=True
    )
    VERSION: Mapped[int] = mapped_column(BigInteger)


VERSION_SEQUENCE = Sequence("TBL_VERSION_SEQ", metadata=Base.metadata)
"""PostgreSQL's source of versions: a sequence takes no lock, so writers on several servers
never wait for each other to draw one (SQLite has no sequences; see VersionCounter)."""

WRITE_FUNCTION = "colstats_write_statistics"
"""PostgreSQL's function that makes a per-call statistics write one statement (schema 0009,
metastore.stats.one_statement)."""
WRITE_ALONE_FUNCTION = "colstats_write_statistics_alone"
"""PostgreSQL's function that makes a per-call statistics write one statement outside a
transaction, its rows checked before it (schema 0010, metastore.stats.one_statement)."""


class VersionCounter(Base):
    """SQLite's source of versions: one row whose NEXT_VERSION each changing transaction
    takes and increments (SQLite runs one writer at a time). Kept on PostgreSQL too, unused
    there, so that both backends have one schema."""

    __tablename__ = "TBL_VERSION_COUNTER"

    ID: Mapped[int] = mapped_column(Integer, primary_key=True)
    NEXT_VERSION: Mapped[int] = mapped_column(BigInteger)


class PartitionKey(Base):
    __tablename__ = "PARTITION_KEYS"

    TBL_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("TBLS.TBL_ID", ondelete="CASCADE"), primary_key=True
    )
    PKEY_NAME: Mapped[str] = mapped_column(String(128), primary_key=True)
    PKEY_TYPE: Mapped[str] = mapped_column(String(767))
    PKEY_COMMENT: Mapped[str | None] = mapped_column(String(4000))
    INTEGER_IDX: Mapped[int] = mapped_column(Integer)


class Partition(Base):
    __tablename__ = "PARTITIONS"
    __table_args__ = (UniqueConstraint("TBL_ID", "PART_NAME"),)

    PART_ID: Mapped[int] = mapped_column(Id, primary_key=True)
    TBL_ID: Mapped[int] = _owner("TBLS.TBL_ID")
    PART_NAME: Mapped[str] = mapped_column(String(767))
    CREATE_TIME: Mapped[int] = mapped_column(BigInteger)
    LAST_ACCESS_TIME: Mapped[int] = mapped_column(BigInteger)
    SD_ID: Mapped[int | None] = mapped_column(Id, ForeignKey("SDS.SD_ID"), index=True)
    WRITE_ID: Mapped[int] = mapped_column(BigInteger, server_default="0")


BYTE_ORDER_INDEX = "PARTITION_KEY_VALS_BYTE_ORDER_IDX"
"""PostgreSQL's index of partition key values in byte order (schema 0004)."""


class PartitionKeyValue(Base):
    __tablename__ = "PARTITION_KEY_VALS"
    # Partial specifications (get_partition_names_ps, get_partitions_ps) start from the
    # partitions that have a key's value, not from every partition of the table.
    # Filters compare string keys in byte order, as HMS's Java strings; on PostgreSQL that is
    # COLLATE "C", which the first index (in the database's collation) cannot serve for a
    # range or a `like` prefix: the second one can. SQLite compares bytes anyway.
    __table_args__ = (
        Index(None, "INTEGER_IDX", "PART_KEY_VAL"),
        Index(BYTE_ORDER_INDEX, "INTEGER_IDX", text('"PART_KEY_VAL" COLLATE "C"')).ddl_if(
            dialect="postgresql"
        ),
    )

    PART_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("PARTITIONS.PART_ID", ondelete="CASCADE"), primary_key=True
    )
    INTEGER_IDX: Mapped[int] = mapped_column(Integer, primary_key=True)
    PART_KEY_VAL: Mapped[str | None] = mapped_column(String(256))


class PartitionParam(Base):
    __tablename__ = "PARTITION_PARAMS"

    PART_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("PARTITIONS.PART_ID", ondelete="CASCADE"), primary_key=True
    )
    PARAM_KEY: Mapped[str] = mapped_column(String(256), primary_key=True)
    PARAM_VALUE: Mapped[str | None] = mapped_column(Text)


class SkewedStringList(Base):
    """A list of strings: one skewed value (a value per skewed column)."""

    __tablename__ = "SKEWED_STRING_LIST"

    STRING_LIST_ID: Mapped[int] = mapped_column(Id, primary_key=True)


class SkewedStringListValue(Base):
    __tablename__ = "SKEWED_STRING_LIST_VALUES"

    STRING_LIST_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("SKEWED_STRING_LIST.STRING_LIST_ID", ondelete="CASCADE"), primary_key=True
    )
    INTEGER_IDX: Mapped[int] = mapped_column(Integer, primary_key=True)
    STRING_LIST_VALUE: Mapped[str | None] = mapped_column(String(256))


class SkewedColumnName(Base):
    """The skewed columns of a storage descriptor (SkewedInfo.skewedColNames)."""

    __tablename__ = "SKEWED_COL_NAMES"

    SD_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("SDS.SD_ID", ondelete="CASCADE"), primary_key=True
    )
    INTEGER_IDX: Mapped[int] = mapped_column(Integer, primary_key=True)
    SKEWED_COL_NAME: Mapped[str | None] = mapped_column(String(256))


class SkewedValue(Base):
    """The skewed values of a storage descriptor (SkewedInfo.skewedColValues), in order."""

    __tablename__ = "SKEWED_VALUES"

    SD_ID_OID: Mapped[int] = mapped_column(
        Id, ForeignKey("SDS.SD_ID", ondelete="CASCADE"), primary_key=True
    )
    INTEGER_IDX: Mapped[int] = mapped_column(Integer, primary_key=True)
    STRING_LIST_ID_EID: Mapped[int] = mapped_column(
        Id, ForeignKey("SKEWED_STRING_LIST.STRING_LIST_ID"), index=True
    )


class SkewedValueLocation(Base):
    """Where the rows of one skewed value are (SkewedInfo.skewedColValueLocationMaps)."""

    __tablename__ = "SKEWED_COL_VALUE_LOC_MAP"

    SD_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("SDS.SD_ID", ondelete="CASCADE"), primary_key=True
    )
    STRING_LIST_ID_KID: Mapped[int] = mapped_column(
        Id, ForeignKey("SKEWED_STRING_LIST.STRING_LIST_ID"), primary_key=True
    )
    LOCATION: Mapped[str | None] = mapped_column(String(4000))


class Function(Base):
    """A permanent function of a database (CREATE FUNCTION)."""

    __tablename__ = "FUNCS"
    __table_args__ = (UniqueConstraint("FUNC_NAME", "DB_ID"),)

    FUNC_ID: Mapped[int] = mapped_column(Id, primary_key=True)
    DB_ID: Mapped[int] = _owner("DBS.DB_ID")
    FUNC_NAME: Mapped[str] = mapped_column(String(128))
    CLASS_NAME: Mapped[str | None] = mapped_column(String(4000))
    OWNER_NAME: Mapped[str | None] = mapped_column(String(128))
    OWNER_TYPE: Mapped[str | None] = mapped_column(String(10))
    CREATE_TIME: Mapped[int] = mapped_column(BigInteger)
    FUNC_TYPE: Mapped[int] = mapped_column(Integer)


class FunctionResource(Base):
    """A resource (jar, file, archive) a function needs (FUNC_RU)."""

    __tablename__ = "FUNC_RU"

    FUNC_ID: Mapped[int] = mapped_column(
        Id, ForeignKey("FUNCS.FUNC_ID", ondelete="CASCADE"), primary_key=True
    )
    INTEGER_IDX: Mapped[int] = mapped_column(Integer, primary_key=True)
    RESOURCE_TYPE: Mapped[int] = mapped_column(Integer)
    RESOURCE_URI: Mapped[str | None] = mapped_column(String(4000))


class ColumnStatsMixin:
    """The statistics columns shared by TAB_COL_STATS and PART_COL_STATS.

    CAT_NAME, DB_NAME and TABLE_NAME (and PART_COL_STATS's PARTITION_NAME) name the owner as
    HMS does: HMS finds statistics by these names, not by the owner's id, so every write sets
    them and every rename moves them (a database HMS shares reads the same rows)."""

    CS_ID: Mapped[int] = mapped_column(Id, primary_key=True)
    CAT_NAME: Mapped[str] = mapped_column(String(256), server_default="hive")
    DB_NAME: Mapped[str] = mapped_column(String(128))
    TABLE_NAME: Mapped[str] = mapped_column(String(256))
    COLUMN_NAME: Mapped[str] = mapped_column(String(767))
    COLUMN_TYPE: Mapped[str] = mapped_column(String(128))
    STATS_KIND: Mapped[str] = mapped_column(String(16))
    ENGINE: Mapped[str] = mapped_column(String(128), server_default="hive")
    LONG_LOW_VALUE: Mapped[int | None] = mapped_column(BigInteger)
    LONG_HIGH_VALUE: Mapped[int | None] = mapped_column(BigInteger)
    DOUBLE_LOW_VALUE: Mapped[float | None] = mapped_column(Float(53))
    DOUBLE_HIGH_VALUE: Mapped[float | None] = mapped_column(Float(53))
    BIG_DECIMAL_LOW_VALUE: Mapped[str | None] = mapped_column(String(4000))
    BIG_DECIMAL_HIGH_VALUE: Mapped[str | None] = mapped_column(String(4000))
    NUM_NULLS: Mapped[int] = mapped_column(BigInteger)
    NUM_DISTINCTS: Mapped[int | None] = mapped_column(BigInteger)
    BIT_VECTOR: Mapped[bytes | None] = mapped_column(LargeBinary)
    HISTOGRAM: Mapped[bytes | None] = mapped_column(LargeBinary)
    AVG_COL_LEN: Mapped[float | None] = mapped_column(Float(53))
    MAX_COL_LEN: Mapped[int | None] = mapped_column(BigInteger)
    NUM_TRUES: Mapped[int | None] = mapped_column(BigInteger)
    NUM_FALSES: Mapped[int | None] = mapped_column(BigInteger)
    LAST_ANALYZED: Mapped[int] = mapped_column(BigInteger)


class TableColumnStats(ColumnStatsMixin, Base):
    __tablename__ = "TAB_COL_STATS"
    __table_args__ = (UniqueConstraint("TBL_ID", "COLUMN_NAME", "ENGINE"),)

    TBL_ID: Mapped[int] = _owner("TBLS.TBL_ID")


class PartitionColumnStats(ColumnStatsMixin, Base):
    __tablename__ = "PART_COL_STATS"
    __table_args__ = (UniqueConstraint("PART_ID", "COLUMN_NAME", "ENGINE"),)

    PART_ID: Mapped[int] = _owner("PARTITIONS.PART_ID")
    PARTITION_NAME: Mapped[str] = mapped_column(String(767))


class HiveLock(Base):
    """One component of an HMS lock (metastore.store.locks), as HMS's own HIVE_LOCKS keeps
    it, so that HMS's operators find their way around and a database HMS shares holds one
    set of locks: HL_LOCK_EXT_ID is the lock id clients hold, HL_LOCK_INT_ID numbers its
    components from 1. States 'a' (acquired) and 'w' (waiting); types 'e' (exclusive), 'r'
    (shared read), 'w' (shared write), 'x' (exclusive write). Times are milliseconds since
    the epoch by the database's clock. No foreign keys: a lock may name a table that does
    not exist yet (Iceberg locks a table before it creates it)."""

    __tablename__ = "HIVE_LOCKS"

    HL_LOCK_EXT_ID: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    HL_LOCK_INT_ID: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    HL_TXNID: Mapped[int] = mapped_column(BigInteger)
    HL_DB: Mapped[str] = mapped_column(String(128))
    HL_TABLE: Mapped[str | None] = mapped_column(String(256))
    HL_PARTITION: Mapped[str | None] = mapped_column(String(767))
    HL_LOCK_STATE: Mapped[str] = mapped_column(String(1))
    HL_LOCK_TYPE: Mapped[str] = mapped_column(String(1))
    HL_LAST_HEARTBEAT: Mapped[int] = mapped_column(BigInteger)
    HL_ACQUIRED_AT: Mapped[int | None] = mapped_column(BigInteger)
    HL_USER: Mapped[str] = mapped_column(String(128))
    HL_HOST: Mapped[str] = mapped_column(String(128))
    HL_HEARTBEAT_COUNT: Mapped[int | None] = mapped_column(Integer)
    HL_AGENT_INFO: Mapped[str | None] = mapped_column(String(128))
    HL_BLOCKEDBY_EXT_ID: Mapped[int | None] = mapped_column(BigInteger)
    HL_BLOCKEDBY_INT_ID: Mapped[int | None] = mapped_column(BigInteger)


NEXT_LOCK_ID = SaTable(
    "NEXT_LOCK_ID",
    Base.metadata,
    SaColumn("NL_NEXT", BigInteger, nullable=False),
)
"""The next lock id: one row, as in HMS. Each `lock` takes it and moves it on in its own
transaction, so lock ids increase, are never reused, and are taken one at a time."""
