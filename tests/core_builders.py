"""Rows written straight into the schema, and sessions on them, for the tests that call the
core's modules (metastore.stats, metastore.store) directly, without a door in front.

The rows are written with SQLAlchemy Core, not with the store's own functions, so that a
test of a store module does not depend on the module it tests. A module's tests share one
migrated database (conftest's `migrated_url`); each test works in a transaction that is
rolled back at its end (`rolled_back`), so that tests neither see nor disturb each other's
rows.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
import sqlalchemy as sa
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore import names
from metastore.stats.rows import StatsRow, empty_row
from metastore.store import models as m
from metastore.store import transactions, versions

COLUMNS = {"id": "bigint", "name": "string"}


@contextlib.contextmanager
def rolled_back(engine: sa.Engine, *, write: bool = True) -> Iterator[Session]:
    """A session in a transaction as metastore.store.transactions opens one for a call (a
    change when WRITE: lookups mark the tables they find), rolled back at the end."""
    with Session(bind=engine, autoflush=False, expire_on_commit=False) as s:
        s.begin()
        versions.begin(s, write=write)
        try:
            yield s
        finally:
            s.rollback()


@contextlib.contextmanager
def committed(engine: sa.Engine) -> Iterator[Session]:
    """A session in a changing transaction that commits at the end (for the tests that need
    rows other connections see; they remove them themselves)."""
    with Session(bind=engine, autoflush=False, expire_on_commit=False) as s, s.begin():
        versions.begin(s, write=True)
        yield s


def store_engine(url: str) -> sa.Engine:
    """An engine as the server makes one (metastore.store.transactions.create_engine)."""
    return transactions.create_engine(url, pool_size=2)


def _insert(s: Session, table: sa.Table, **values: Any) -> int:
    (key,) = table.primary_key.columns
    new_id: int = s.execute(sa.insert(table).values(**values).returning(key)).scalar_one()
    return new_id


def add_database(s: Session, name: str = "db", *, catalog: str = "hive") -> int:
    """Database NAME of CATALOG; its DB_ID."""
    return _insert(
        s, m.Database.__table__, NAME=name, CTLG_NAME=catalog, DB_LOCATION_URI=f"file:/w/{name}"
    )


def add_column_list(s: Session, columns: Mapping[str, str | None]) -> int:
    """A column list of COLUMNS (name -> Hive type), in their order; its CD_ID."""
    cd_id = _insert(s, m.ColumnDescriptor.__table__)
    if columns:
        s.execute(
            sa.insert(m.Column.__table__),
            [
                {"CD_ID": cd_id, "COLUMN_NAME": name, "TYPE_NAME": type_, "INTEGER_IDX": i}
                for i, (name, type_) in enumerate(columns.items())
            ],
        )
    return cd_id


def add_storage(s: Session, cd_id: int | None, location: str | None, *, serde: bool = True) -> int:
    """A storage descriptor of column list CD_ID at LOCATION (with a serde of its own when
    SERDE); its SD_ID."""
    serde_id = _insert(s, m.SerDe.__table__, NAME="s", SLIB="lib") if serde else None
    return _insert(
        s,
        m.StorageDescriptor.__table__,
        CD_ID=cd_id,
        SERDE_ID=serde_id,
        LOCATION=location,
        INPUT_FORMAT="in",
        OUTPUT_FORMAT="out",
        IS_COMPRESSED=False,
        NUM_BUCKETS=-1,
        IS_STOREDASSUBDIRECTORIES=False,
    )


@dataclasses.dataclass(frozen=True)
class BuiltTable:
    """A table `add_table` wrote."""

    db_id: int
    db: str
    tbl_id: int
    name: str
    sd_id: int | None
    cd_id: int | None
    keys: tuple[str, ...]


def add_table(
    s: Session,
    db_id: int,
    name: str = "t",
    *,
    columns: Mapping[str, str | None] | None = None,
    keys: Sequence[tuple[str, str]] = (),
    params: Mapping[str, str | None] | None = None,
    storage: bool = True,
    table_type: str = "MANAGED_TABLE",
) -> BuiltTable:
    """Table NAME of database DB_ID with COLUMNS (COLUMNS by default), partition KEYS
    ((name, type) pairs) and parameters PARAMS; without a storage descriptor unless
    STORAGE."""
    db = s.execute(sa.select(m.Database.NAME).where(m.Database.DB_ID == db_id)).scalar_one()
    cd_id = sd_id = None
    if storage:
        cd_id = add_column_list(s, COLUMNS if columns is None else columns)
        sd_id = add_storage(s, cd_id, f"file:/w/{db}/{name}")
    tbl_id = _insert(
        s,
        m.Table.__table__,
        DB_ID=db_id,
        TBL_NAME=name,
        TBL_TYPE=table_type,
        OWNER="hive",
        CREATE_TIME=1,
        LAST_ACCESS_TIME=0,
        RETENTION=0,
        SD_ID=sd_id,
    )
    if keys:
        s.execute(
            sa.insert(m.PartitionKey.__table__),
            [
                {"TBL_ID": tbl_id, "PKEY_NAME": k, "PKEY_TYPE": t, "INTEGER_IDX": i}
                for i, (k, t) in enumerate(keys)
            ],
        )
    set_params(s, m.TableParam, tbl_id, params)
    return BuiltTable(db_id, db, tbl_id, name, sd_id, cd_id, tuple(k for k, _ in keys))


def set_params(
    s: Session, model: type[Any], owner_id: int, params: Mapping[str, str | None] | None
) -> None:
    """Rows of MODEL (a *_PARAMS table) for owner OWNER_ID."""
    if not params:
        return
    owner = next(c.name for c in model.__table__.primary_key if c.name != "PARAM_KEY")
    s.execute(
        sa.insert(model.__table__),
        [{owner: owner_id, "PARAM_KEY": k, "PARAM_VALUE": v} for k, v in params.items()],
    )


@dataclasses.dataclass(frozen=True)
class BuiltPartition:
    """A partition `add_partition` wrote."""

    part_id: int
    name: str
    sd_id: int | None


def add_partition(
    s: Session,
    table: BuiltTable,
    values: Sequence[str | None],
    *,
    cd_id: int | str | None = "table",
    params: Mapping[str, str | None] | None = None,
    storage: bool = True,
) -> BuiltPartition:
    """A partition of TABLE with key VALUES (its name made as Hive makes it), sharing the
    table's column list unless CD_ID names another (None: none); without a storage
    descriptor unless STORAGE."""
    name = names.make_partition_name(list(table.keys), list(values))
    sd_id = None
    if storage:
        list_id = table.cd_id if cd_id == "table" else cd_id
        assert not isinstance(list_id, str)
        sd_id = add_storage(s, list_id, f"file:/w/{table.db}/{table.name}/{name}")
    part_id = _insert(
        s,
        m.Partition.__table__,
        TBL_ID=table.tbl_id,
        PART_NAME=name,
        CREATE_TIME=2,
        LAST_ACCESS_TIME=0,
        SD_ID=sd_id,
    )
    s.execute(
        sa.insert(m.PartitionKeyValue.__table__),
        [{"PART_ID": part_id, "INTEGER_IDX": i, "PART_KEY_VAL": v} for i, v in enumerate(values)],
    )
    set_params(s, m.PartitionParam, part_id, params)
    return BuiltPartition(part_id, name, sd_id)


def stats_row(
    column: str,
    kind: str = "long",
    column_type: str = "bigint",
    *,
    engine: str = "hive",
    **fields: Any,
) -> StatsRow:
    """A StatsRow of KIND for COLUMN: NUM_NULLS 0 and LAST_ANALYZED 1 unless FIELDS say
    otherwise, the other statistics unknown."""
    row = empty_row(column, column_type, kind, engine)
    row["NUM_NULLS"] = 0
    row["LAST_ANALYZED"] = 1
    row.update(fields)  # type: ignore[typeddict-item]
    return row


def count_rows(s: Session, model: type[Any], **where: Any) -> int:
    """The rows of MODEL whose columns have the values WHERE gives."""
    table = model.__table__
    query = sa.select(sa.func.count()).select_from(table)
    for column, value in where.items():
        query = query.where(table.c[column] == value)
    count: int = s.execute(query).scalar_one()
    return count


# Literal values in the statements SQLite's trace shows (it expands the parameters).
_LITERAL = re.compile(
    r"X'[0-9A-Fa-f]*'|'(?:[^']|'')*'|(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b|\bNULL\b"
)
_CONTROL = ("BEGIN", "COMMIT", "ROLLBACK")


def statement_count(trace: DriverStatements) -> int:
    """The statements sent so far on TRACE's engine besides BEGIN, COMMIT and ROLLBACK, an
    executemany counting once (one statement run over many rows): on PostgreSQL through
    psycopg 3 the round trips (each simple query, and each Sync of the extended protocol,
    which ends an execution or the executions of an executemany); on SQLite, whose trace
    shows each row of an executemany as a statement of its own, each run of a statement
    (consecutive runs of one statement with other values count once)."""
    engine = trace.engine
    if engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg":
        lines = [
            line
            for path in trace._traces  # the libpq traces DriverStatements keeps
            for line in path.read_text().splitlines()
            if line.startswith("F")
        ]
        return sum(
            1
            for line in lines
            if line.endswith("\tSync")
            or ("\tQuery\t" in line and not any(f'"{word}' in line for word in _CONTROL))
        )
    if engine.dialect.name != "sqlite":
        return trace.selects()
    shapes = [
        _LITERAL.sub("?", sql)
        for sql in trace.sent()
        if not sql.lstrip().upper().startswith(_CONTROL)
    ]
    return sum(1 for i, shape in enumerate(shapes) if i == 0 or shapes[i - 1] != shape)


def raises(error: type[BaseException], message: str) -> Any:
    """pytest.raises of ERROR whose message is exactly MESSAGE."""
    return pytest.raises(error, match=f"^{re.escape(message)}$")


# Partition names whose byte order (HMS's, Java's String order for these) differs from a
# language's collation: upper case before lower case, ASCII before accented letters.
NAMES_IN_BYTE_ORDER = ["B", "Z", "_x", "a", "b", "z", "é"]


def collate_partition_names_as_a_language(s: Session) -> None:
    """On PostgreSQL, make PARTITIONS.PART_NAME compare in English's collation (ICU's) for
    the rest of the transaction of S, as in a database created with such a default: a sort
    in byte order must then ask for it. Nothing on SQLite, which compares bytes."""
    if s.get_bind().dialect.name == "postgresql":
        s.execute(
            sa.text(
                'ALTER TABLE "PARTITIONS" ALTER COLUMN "PART_NAME" '
                'TYPE VARCHAR(767) COLLATE "en-US-x-icu"'
            )
        )
        ordered = s.execute(
            sa.text(
                'SELECT v FROM unnest(CAST(:names AS TEXT[])) v ORDER BY v COLLATE "en-US-x-icu"'
            ),
            {"names": "{" + ",".join(f'"{n}"' for n in NAMES_IN_BYTE_ORDER) + "}"},
        ).scalars()
        assert list(ordered) != NAMES_IN_BYTE_ORDER  # the collation does differ
