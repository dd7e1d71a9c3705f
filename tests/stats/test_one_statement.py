"""A per-call statistics write on PostgreSQL is one statement, a transaction of its own (the
function of schema 0010, metastore.stats.one_statement), and writes what the general path
writes: the same rows, COLUMN_STATS_ACCURATE and versions as a server on SQLite (which takes
the general path), the same errors for the same requests, also after the columns changed and
for an owner without a storage descriptor, and concurrent writers of one key leave one row
with every write's version moved."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pytest
import sqlalchemy as sa
import stats_builders as sb
from at_once import at_once
from core_builders import statement_count
from driver_trace import DriverStatements
from metadata_builders import Client, make_partitioned, table
from two_backends import Servers, on_both, two_servers

from hive_metastore_thrift import ttypes as t
from metastore.stats import accurate

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    """A server on SQLite and one on PostgreSQL (two_backends)."""
    yield from two_servers(tmp_path_factory.mktemp)


def _rows(engine: sa.Engine, db: str) -> dict[str, list[tuple[Any, ...]]]:
    """The statistics rows of database DB but their ids, and COLUMN_STATS_ACCURATE of its
    tables and partitions, in one order."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with engine.connect() as conn:
        for name in ("TAB_COL_STATS", "PART_COL_STATS"):
            rows = conn.execute(
                sa.text(f'SELECT * FROM "{name}" WHERE "DB_NAME" = :db'), {"db": db}
            )
            out[name] = sorted(
                tuple(
                    bytes(v) if isinstance(v, memoryview) else v
                    for k, v in row._mapping.items()
                    if k not in ("CS_ID", "TBL_ID", "PART_ID")
                )
                for row in rows
            )
        params = conn.execute(
            sa.text(
                'SELECT t."TBL_NAME", \'\', p."PARAM_VALUE" FROM "TABLE_PARAMS" p '
                'JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" = :db AND p."PARAM_KEY" = :key '
                'UNION ALL SELECT t."TBL_NAME", x."PART_NAME", p."PARAM_VALUE" '
                'FROM "PARTITION_PARAMS" p JOIN "PARTITIONS" x ON x."PART_ID" = p."PART_ID" '
                'JOIN "TBLS" t ON t."TBL_ID" = x."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" = :db AND p."PARAM_KEY" = :key'
            ),
            {"db": db, "key": accurate.KEY},
        )
        out["accurate"] = sorted(tuple(row) for row in params)
    return out


class Versions(NamedTuple):
    version: int
    parts_version: int | None
    seen_version: int | None
    partitions: dict[str, int]


def _versions(engine: sa.Engine, db: str, table_name: str = "t") -> Versions:
    with engine.connect() as conn:
        version, parts, seen = conn.execute(
            sa.text(
                'SELECT v."VERSION", v."PARTS_VERSION", v."SEEN_VERSION" FROM "TBL_VERSIONS" v '
                'JOIN "TBLS" t ON t."TBL_ID" = v."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" = :db AND t."TBL_NAME" = :table'
            ),
            {"db": db, "table": table_name},
        ).one()
        partitions = conn.execute(
            sa.text(
                'SELECT x."PART_NAME", v."VERSION" FROM "PART_VERSIONS" v '
                'JOIN "PARTITIONS" x ON x."PART_ID" = v."PART_ID" '
                'JOIN "TBLS" t ON t."TBL_ID" = x."TBL_ID" JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                'WHERE d."NAME" = :db AND t."TBL_NAME" = :table'
            ),
            {"db": db, "table": table_name},
        )
        return Versions(version, parts, seen, {name: v for name, v in partitions})


def _new_db(servers: Servers) -> str:
    """A new database with sb.make_table's table on both servers."""
    db = f"w{uuid.uuid4().hex[:8]}"
    for _, client in servers.values():
        sb.make_table(client, db)
    return db


WRITES: dict[str, Callable[[Client, t.ColumnStatistics], Any]] = {
    "update_table_column_statistics": lambda c, st: c.update_table_column_statistics(st),
    "update_partition_column_statistics": lambda c, st: c.update_partition_column_statistics(st),
    "set_aggr_stats_for": lambda c, st: c.set_aggr_stats_for(
        t.SetPartitionsStatsRequest(colStats=[st], needMerge=False)
    ),
}


def _stats(db: str, kind: str, objs: list[t.ColumnStatisticsObj]) -> t.ColumnStatistics:
    part = None if kind == "update_table_column_statistics" else sb.PART
    stats: t.ColumnStatistics = sb.column_stats(db, objs, part, last_analyzed=1_700_000_000)
    return stats


@pytest.mark.parametrize("call", list(WRITES))
def test_a_write_is_one_statement_on_postgresql(servers: Servers, call: str) -> None:
    """On PostgreSQL one statement, a transaction of its own (no BEGIN, no COMMIT), once the
    server knows the owner's columns: the first write of a table reads them first, in a
    statement of its own too. On SQLite one transaction."""
    objs = sb.all_examples()
    for backend, (running, client) in servers.items():
        db = _new_db(servers)
        with DriverStatements(running.engine) as trace:
            WRITES[call](client, _stats(db, call, objs))  # the first write of the table
            first = statement_count(trace)
        with DriverStatements(running.engine) as trace:
            WRITES[call](client, _stats(db, call, objs))
            count = statement_count(trace)
            sent = [line.upper() for line in trace.sent()]
        control = [line for line in sent if "BEGIN" in line or "COMMIT" in line]
        if backend == "postgresql":
            assert (first, count, control) == (2, 1, []), sent
        else:
            assert len(control) == 2, sent  # one transaction


def test_a_write_after_the_columns_changed_is_checked_against_them(servers: Servers) -> None:
    """A column's type changed since the server last wrote the table: statistics that no
    longer fit it are refused as on SQLite, with nothing written, and those that fit it are
    written (on PostgreSQL the function tells the columns changed, and writes nothing
    until the rows are checked against the new ones)."""
    db = _new_db(servers)
    call = "update_table_column_statistics"
    as_long = _stats(db, call, [_long("c_long")])
    string_data = sb.stats_data("stringStats", maxColLen=3, avgColLen=1.5, numNulls=0, numDVs=2)
    as_string = _stats(db, call, [t.ColumnStatisticsObj("c_long", "string", string_data)])
    for _, client in servers.values():
        assert client.update_table_column_statistics(as_long)
        altered = client.get_table(db, "t")
        for column in altered.sd.cols:
            if column.name == "c_long":
                column.type = "string"
        client.alter_table(db, "t", altered)
    before = {b: _rows(r.engine, db) for b, (r, _) in servers.items()}
    refused = on_both(servers, lambda client: client.update_table_column_statistics(as_long))
    assert refused["postgresql"] == refused["sqlite"]
    assert refused["sqlite"][0] == "InvalidInputException", refused
    assert {b: _rows(r.engine, db) for b, (r, _) in servers.items()} == before
    written = on_both(servers, lambda client: client.update_table_column_statistics(as_string))
    assert written == {"sqlite": ("answer", True), "postgresql": ("answer", True)}
    sqlite, postgres = (_rows(running.engine, db) for running, _ in servers.values())
    assert postgres == sqlite
    (row,) = postgres["TAB_COL_STATS"]
    assert "string" in row and "long" not in row


@pytest.mark.parametrize("call", list(WRITES))
def test_the_rows_and_versions_are_those_of_the_general_path(servers: Servers, call: str) -> None:
    """Every kind of statistics, written, then written again in part (the fields a write
    leaves unset keep their values, a kind that changes replaces the row), on SQLite (the
    general path) and PostgreSQL: the same rows and COLUMN_STATS_ACCURATE; the table's
    version moves with each write, a partition's takes it, PARTS_VERSION stays."""
    db = _new_db(servers)
    objs = sb.all_examples()
    again = [
        sb.obj("c_long", sb.stats_data("longStats", numNulls=3, numDVs=4)),
        sb.obj(
            "c_str", sb.stats_data("stringStats", maxColLen=9, avgColLen=2.5, numNulls=0, numDVs=1)
        ),
        sb.obj("C_Double", sb.stats_data("doubleStats", lowValue=-1.5, numNulls=1, numDVs=2)),
    ]
    for _, client in servers.values():
        assert client.update_table_column_statistics(
            _stats(db, "update_table_column_statistics", [])
        )
    for running, client in servers.values():
        before = _versions(running.engine, db)
        for round_ in (objs, again):
            WRITES[call](client, _stats(db, call, round_))
            after = _versions(running.engine, db)
            assert after.version > before.version
            assert after.seen_version == after.version
            assert after.parts_version == before.parts_version
            if call != "update_table_column_statistics":
                assert after.partitions[sb.PART] == after.version
            before = after
    sqlite, postgres = (_rows(running.engine, db) for running, _ in servers.values())
    assert postgres == sqlite
    written = "TAB_COL_STATS" if call == "update_table_column_statistics" else "PART_COL_STATS"
    assert len(postgres[written]) == len(objs)


def test_a_column_added_since_the_last_write_is_written_alone(servers: Servers) -> None:
    """Statistics of a column added since the server last wrote the table: on PostgreSQL
    the rows do not fit the columns last seen, so the server asks the function for the
    columns as they are and writes alone (two statements, no transaction), as SQLite
    writes them; the write after it is one statement again."""
    db = _new_db(servers)
    call = "update_table_column_statistics"
    for _, client in servers.values():
        assert client.update_table_column_statistics(_stats(db, call, [_long("c_long")]))
        altered = client.get_table(db, "t")
        altered.sd.cols.append(t.FieldSchema("c_added", "bigint", None))
        client.alter_table(db, "t", altered)
    added = _stats(db, call, [_long("c_added")])
    counts = {}
    for backend, (running, client) in servers.items():
        with DriverStatements(running.engine) as trace:
            assert client.update_table_column_statistics(added)
            sent = [line.upper() for line in trace.sent()]
            counts[backend] = statement_count(trace)
        with DriverStatements(running.engine) as trace:
            assert client.update_table_column_statistics(added)
            again = statement_count(trace)
        if backend == "postgresql":
            assert (counts[backend], again) == (2, 1), sent
            assert not [line for line in sent if "BEGIN" in line or "COMMIT" in line], sent
    sqlite, postgres = (_rows(running.engine, db) for running, _ in servers.values())
    assert postgres == sqlite
    assert len(postgres["TAB_COL_STATS"]) == 2


def _long(
    column: str, low: int = 1, high: int = 5, col_type: str = "bigint"
) -> t.ColumnStatisticsObj:
    data = sb.stats_data("longStats", lowValue=low, highValue=high, numNulls=0, numDVs=2)
    return t.ColumnStatisticsObj(column, col_type, data)


# Requests the function refuses or whose rows the checks refuse, and two it writes under
# another spelling of their names: (database, table, partition, objects).
REQUESTS: dict[str, tuple[str | None, str, str | None, list[t.ColumnStatisticsObj]]] = {
    "no database": ("nodb", "t", sb.PART, [_long("c_long")]),
    "no table": (None, "nosuch", sb.PART, [_long("c_long")]),
    "no table, the table's own": (None, "nosuch", None, [_long("c_long")]),
    "no partition": (None, "t", "ds=2024-01-02/region=x", [_long("c_long")]),
    "a malformed partition name": (None, "t", "ds=2024-01-01", [_long("c_long")]),
    "a partition of an unpartitioned table": (None, "flat", "ds=1", [_long("id")]),
    "no such column": (None, "t", sb.PART, [_long("c_long"), _long("nope")]),
    "a column twice": (None, "t", sb.PART, [_long("c_long"), _long("C_LONG")]),
    "a kind that does not fit": (None, "t", sb.PART, [_long("c_long"), _long("c_str")]),
    "low above high": (None, "t", None, [_long("c_long", 9, 1)]),
    "a column type too long": (None, "t", sb.PART, [_long("c_long", col_type="b" * 129)]),
    "a decimal too long": (
        None,
        "t",
        sb.PART,
        [
            t.ColumnStatisticsObj(
                "c_dec",
                "decimal(38,10)",
                sb.stats_data(
                    "decimalStats",
                    lowValue=sb.dec(1, 0),
                    highValue=sb.dec(10**4001, 0),
                    numNulls=0,
                    numDVs=1,
                ),
            )
        ],
    ),
    "names in capitals": (None, "T", "DS=2024-01-01/REGION=a%2Fb", [_long("C_Long")]),
    "the database with its catalog": (None, "t", sb.PART, [_long("c_long")]),
}


@pytest.mark.parametrize("case", list(REQUESTS))
@pytest.mark.parametrize("call", list(WRITES))
def test_the_errors_are_those_of_the_general_path(servers: Servers, case: str, call: str) -> None:
    """The same answer or declared exception, with the same message, on both servers; a
    refused write leaves nothing written and no version moved."""
    db = _new_db(servers)
    for _, client in servers.values():
        client.create_table(table(db, "flat"))
    db_arg, table_name, part, objs = REQUESTS[case]
    if case == "the database with its catalog":
        db_arg = f"@hive#{db}"
    if call == "update_table_column_statistics":
        part = None
    desc = t.ColumnStatisticsDesc(
        isTblLevel=part is None,
        dbName=db_arg or db,
        tableName=table_name,
        partName=part,
        lastAnalyzed=1_700_000_000,  # not the time of each server's write
    )
    stats = t.ColumnStatistics(statsDesc=desc, statsObj=objs)
    before = {b: (_rows(r.engine, db), _versions(r.engine, db)) for b, (r, _) in servers.items()}
    answers = on_both(servers, lambda client: WRITES[call](client, stats))
    assert answers["postgresql"] == answers["sqlite"]
    for backend, (running, _) in servers.items():
        if answers[backend][0] != "answer":
            assert (_rows(running.engine, db), _versions(running.engine, db)) == before[backend]
    sqlite, postgres = (_rows(running.engine, db) for running, _ in servers.values())
    assert postgres == sqlite


WRITERS = 32


def _write_one(db: str, n: int, writer: Client) -> bool:
    """Writer N's statistics of column id of partition ds=1."""
    desc = t.ColumnStatisticsDesc(False, db, "t", partName="ds=1")
    stats = t.ColumnStatistics(desc, [_long("id", n, n + 10)])
    return bool(writer.update_partition_column_statistics(stats))


def test_concurrent_writers_of_one_key_leave_one_row_and_move_the_versions(
    servers: Servers,
) -> None:
    """WRITERS clients write the statistics of one column of one partition at once, each its
    own values: one row is left, of one of them, the column marked accurate, and the table's
    version moved by each write (every write draws a new one), the partition's with it."""
    db = f"c{uuid.uuid4().hex[:8]}"
    for backend, (running, client) in servers.items():
        make_partitioned(client, db, "t", ["1"])
        before = _versions(running.engine, db)
        outcomes = at_once(running.port, WRITERS, lambda n, writer: _write_one(db, n, writer))
        errors = [o for o in outcomes if o is not True]
        assert errors == [], (backend, errors)
        with running.engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    'SELECT "LONG_LOW_VALUE", "LONG_HIGH_VALUE" FROM "PART_COL_STATS" '
                    'WHERE "DB_NAME" = :db AND "COLUMN_NAME" = :column'
                ),
                {"db": db, "column": "id"},
            ).all()
        assert len(rows) == 1, (backend, rows)
        low, high = rows[0]
        assert 0 <= low < WRITERS and high == low + 10
        after = _versions(running.engine, db)
        assert after.version >= before.version + WRITERS, (backend, before, after)
        assert after.partitions["ds=1"] == after.version
        parameters = client.get_partition_by_name(db, "t", "ds=1").parameters
        assert accurate.accurate_columns(parameters[accurate.KEY]) == {"id"}


STORED = [
    None,
    "",
    "true",
    " TRUE ",
    "not json",
    "[1, 2]",
    "null",
    '{"BASIC_STATS":"true"}',
    '{"BASIC_STATS":true,"COLUMN_STATS":{"b":"TRUE","a":"false","c":true,"d":1}}',
    '{"COLUMN_STATS":"all"}',
    r'{ "BASIC_STATS" : "True", "COLUMN_STATS" : { "z\u00e9" : "true" } }',
    r'{"COLUMN_STATS":{"\ud83d\ude00":"true","tab\there":"true","q\"uote":"true"}}',
]
NAMES = ["a", "b", "zé", "😀", "日本", 'q"uote', "back\\slash", "del\x7f"]


@pytest.mark.parametrize("stored", STORED)
def test_column_stats_accurate_is_rendered_as_the_general_path_renders_it(
    servers: Servers, stored: str | None
) -> None:
    """COLUMN_STATS_ACCURATE after a write, from each kind of stored value (none, legacy,
    malformed, not an object, columns not true, names outside ASCII, in capitals or that
    JSON escapes): on PostgreSQL the function's, as metastore.stats.accurate renders it."""
    written = NAMES[2:]
    assert _accurate_after(servers, NAMES, stored, written) == accurate.with_columns(
        stored, written
    )


ASCII_NAMES = ["a", "b", 'q"uote', "back\\slash", "c"]
ASCII_WRITTEN = ASCII_NAMES[:4]
ASCII_STORED = [
    accurate.with_columns(None, ASCII_WRITTEN),
    accurate.with_basic(accurate.with_columns(None, ASCII_WRITTEN)),
    accurate.with_columns(None, ["a"]),
    accurate.with_basic(accurate.with_columns(None, ASCII_NAMES)),
    '{"COLUMN_STATS":{"b":"true","a":"true","q\\"uote":"true","back\\\\slash":"true"}}',
    '{"BASIC_STATS":"false","COLUMN_STATS":{"a":"true","b":"true"}}',
    '{"COLUMN_STATS":{"a":"true","b":"true","back\\\\slash":"true","q\\"uote":"true"}} ',
]


@pytest.mark.parametrize("stored", ASCII_STORED)
def test_column_stats_accurate_left_as_it_is_is_told_first(servers: Servers, stored: str) -> None:
    """The function tells first (schema 0011) a stored value that is already the rendering
    of exactly the rows' columns (the first two), and leaves it as it is; any other (other
    columns, another order, BASIC_STATS false, a space after it) takes the way that parses
    it: the value is the one metastore.stats.accurate renders either way."""
    assert _accurate_after(servers, ASCII_NAMES, stored, ASCII_WRITTEN) == (
        accurate.with_columns(stored, ASCII_WRITTEN)
    )


def _accurate_after(
    servers: Servers, names: list[str], stored: str | None, written: list[str]
) -> str | None:
    """COLUMN_STATS_ACCURATE of a partition of a new table of bigint columns NAMES on
    PostgreSQL, STORED before, after a write of the statistics of its columns WRITTEN."""
    running, client = servers["postgresql"]
    db = f"a{uuid.uuid4().hex[:8]}"
    client.create_database(t.Database(name=db, parameters={}))
    cols = [t.FieldSchema(name, "bigint", None) for name in names]
    client.create_table(table(db, "t", cols=cols, keys=[t.FieldSchema("ds", "string", None)]))
    client.add_partition(t.Partition(values=["1"], dbName=db, tableName="t", parameters={}))
    if stored is not None:
        with running.engine.begin() as conn:
            conn.execute(
                sa.text(
                    'INSERT INTO "PARTITION_PARAMS" SELECT p."PART_ID", :key, :value '
                    'FROM "PARTITIONS" p JOIN "TBLS" t ON t."TBL_ID" = p."TBL_ID" '
                    'JOIN "DBS" d ON d."DB_ID" = t."DB_ID" WHERE d."NAME" = :db'
                ),
                {"key": accurate.KEY, "value": stored, "db": db},
            )
    desc = t.ColumnStatisticsDesc(False, db, "t", partName="ds=1")
    with DriverStatements(running.engine) as trace:
        client.update_partition_column_statistics(
            t.ColumnStatistics(desc, [_long(name) for name in written])
        )
        assert statement_count(trace) == 2  # the new table's columns, then the write
    value: str | None = client.get_partition_by_name(db, "t", "ds=1").parameters.get(accurate.KEY)
    return value


@pytest.mark.parametrize("call", list(WRITES))
def test_an_owner_without_a_storage_descriptor_is_answered_as_the_general_path(
    servers: Servers, call: str
) -> None:
    """A table or partition without a storage descriptor (SD_ID NULL, as an adopted HMS
    database may hold) has no columns: a write of its statistics, after one that the server
    made while it had them, gets the general path's answer on PostgreSQL, with nothing
    written and no version moved (the function, run first, finds none of the columns the
    server last saw, and the server checks the rows against the owner as it is)."""
    db = _new_db(servers)
    objs = [_long("c_long")]
    written = on_both(servers, lambda client: WRITES[call](client, _stats(db, call, objs)))
    assert written == {"sqlite": ("answer", True), "postgresql": ("answer", True)}, written
    owner = "TBLS" if call == "update_table_column_statistics" else "PARTITIONS"
    for running, _ in servers.values():
        with running.engine.begin() as conn:
            conn.execute(
                sa.text(
                    f'UPDATE "{owner}" SET "SD_ID" = NULL WHERE "TBL_ID" = (SELECT t."TBL_ID" '
                    'FROM "TBLS" t JOIN "DBS" d ON d."DB_ID" = t."DB_ID" '
                    'WHERE d."NAME" = :db AND t."TBL_NAME" = \'t\')'
                ),
                {"db": db},
            )
    before = {b: (_rows(r.engine, db), _versions(r.engine, db)) for b, (r, _) in servers.items()}
    again = [_long("c_long", 2, 9)]
    running, _ = servers["postgresql"]
    with DriverStatements(running.engine) as trace:
        answers = on_both(servers, lambda client: WRITES[call](client, _stats(db, call, again)))
        sent = [line.upper() for line in trace.sent()]
    assert answers["postgresql"] == answers["sqlite"], answers
    assert answers["sqlite"][0] == "InvalidObjectException", answers
    # The function first, alone; then the rows checked in a transaction, which is undone.
    assert "BEGIN" not in sent[0] and "BEGIN" in sent[1] and "ROLLBACK" in sent[-1], sent
    for backend, (running, _) in servers.items():
        assert (_rows(running.engine, db), _versions(running.engine, db)) == before[backend]
