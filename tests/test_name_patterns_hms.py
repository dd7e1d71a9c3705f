"""colstats reads name patterns as a real Hive Metastore 2.3.10 does (pyspark's jars, Derby).

Both metastores get the same databases, tables (managed, external, views) and functions, with
names chosen so that each reading of a pattern gives another answer; then every pattern goes
to get_databases, get_tables, get_tables_by_type (each table type), get_table_meta (database
and table patterns) and get_functions on both, and the answers must be equal. HMS is the
session's oracle (tests/hms_oracle.py). Where colstats answers otherwise on purpose, a
test says why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import metadata_builders as mb
import pytest
from conftest import RunningServer, connect
from hms_process import HiveMetastoreProcess
from thrift.transport import TTransport

from hive_metastore_thrift import ThriftHiveMetastore
from hive_metastore_thrift import ttypes as t
from metastore.config import Settings
from metastore.store import migrate

pytestmark = pytest.mark.hms

Client = ThriftHiveMetastore.Client

# Databases, and in `ab` and `xy` tables, views and functions whose names tell the readings
# apart: '.' as one character ('a.c' finds abc, axc and a_c), '_' as itself ('*_*'),
# '.*' needing a character ('a.*' misses a), regex syntax as literal text ('ab?', '[ab]*').
DATABASES = ["a", "a_c", "aa", "ab", "abc", "axc", "b1", "ba", "xay", "xy"]
TABLES = {
    "ab": {
        "MANAGED_TABLE": ["a", "a_c", "aa", "ab", "abc", "abd", "axc", "b1", "ba", "x_y_z", "xay"],
        "EXTERNAL_TABLE": ["bx", "ext_a"],
        "VIRTUAL_VIEW": ["av", "v_a", "view_b"],
    },
    "xy": {"MANAGED_TABLE": ["a", "xa"], "EXTERNAL_TABLE": ["ext_b"], "VIRTUAL_VIEW": ["va"]},
}
FUNCTIONS = ["f_b", "fa", "fab", "gx"]

PATTERNS = [
    # what clients send: Spark "*", Trino ".*", Hive 'SHOW TABLES LIKE' with '*' and '|'
    *("*", ".*", "a*", "A*|b*", "x*y", "*a*", "*_*", "AB", "a|b*|v*"),
    # '.' is one character, '_' is itself
    *("a.c", "a..", ".", "..", "a.*", "a_c"),
    # regex syntax is literal text: no error, no match
    *("ab?", "[ab]*", "^a", "a$", "(a|b).*", "(", "a+", "a{2}", "\\w*"),
    # LIKE's own characters and backslashes are literal too
    *("a%", "x%", "a\\.c", "a\\_c", "a\\*", "a\\"),
    # trimming, empty and trailing alternatives, the empty pattern
    *(" a* ", "a* | b*", "a|", "|a", "", "   "),
]


@dataclasses.dataclass(frozen=True)
class Metastores:
    hms: Client
    colstats: Client


def _fill(client: Client, warehouse: Path) -> None:
    for name in DATABASES:
        client.create_database(mb.database(name, locationUri=f"file:{warehouse}/{name}.db"))
    for db_name, by_type in TABLES.items():
        for table_type, table_names in by_type.items():
            for name in table_names:
                location = f"file:{warehouse}/{db_name}.db/{name}"
                table = mb.table(db_name, name, sd=mb.storage(location=location))
                table.tableType = table_type
                if table_type == "EXTERNAL_TABLE":
                    table.parameters = {"EXTERNAL": "TRUE"}
                if table_type == "VIRTUAL_VIEW":
                    table.sd.location = None
                    table.viewOriginalText = table.viewExpandedText = "SELECT 1"
                client.create_table(table)
    for name in FUNCTIONS:
        client.create_function(
            t.Function(
                functionName=name,
                dbName="ab",
                className="com.example.Udf",
                ownerName="hive",
                ownerType=t.PrincipalType.USER,
                createTime=0,
                functionType=t.FunctionType.JAVA,
                resourceUris=[],
            )
        )


@pytest.fixture(scope="module")
def metastores(
    hms_oracle: HiveMetastoreProcess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Metastores]:
    """HMS 2.3.10 (the session's oracle) and colstats (SQLite), each with the objects above."""
    home = tmp_path_factory.mktemp("patterns")
    url = f"sqlite:///{home / 'metastore.db'}"
    migrate.upgrade(url)
    server = RunningServer(url, Settings())
    transports: list[TTransport.TTransportBase] = []
    try:
        colstats, transport = connect(server.port)
        transports.append(transport)
        _fill(colstats, home / "colstats")
        hive, transport = connect(hms_oracle.port)
        transports.append(transport)
        _fill(hive, home / "hms")
        yield Metastores(hms=hive, colstats=colstats)
    finally:
        for transport in transports:
            transport.close()
        server.stop()


Answer = list[str] | list[tuple[str, str, str, str | None]] | str


def _answer(call: Callable[[], list[str] | list[t.TableMeta]]) -> Answer:
    """A call's answer: names in order; table metas sorted (HMS gives no order) without
    catName (HMS 2.3 has none); an exception's type."""
    try:
        result = call()
    except (t.MetaException, t.NoSuchObjectException) as e:
        return type(e).__name__
    if result and isinstance(result[0], t.TableMeta):
        metas = [m for m in result if isinstance(m, t.TableMeta)]
        return sorted((m.dbName, m.tableName, m.tableType, m.comments) for m in metas)
    return [name for name in result if isinstance(name, str)]


def _answers(client: Client, pattern: str | None) -> dict[str, Answer]:
    """What CLIENT answers to PATTERN in every call that takes one."""
    calls: dict[str, Callable[[], list[str] | list[t.TableMeta]]] = {
        "get_databases": lambda: client.get_databases(pattern),
        "get_tables": lambda: client.get_tables("ab", pattern),
        "get_functions": lambda: client.get_functions("ab", pattern),
        "get_table_meta(db pattern)": lambda: client.get_table_meta(pattern, "a*", None),
        "get_table_meta(table pattern)": lambda: client.get_table_meta("ab|xy", pattern, []),
        "get_table_meta(table pattern, views)": lambda: client.get_table_meta(
            "*", pattern, ["VIRTUAL_VIEW"]
        ),
        "get_tables_by_type(MANAGED_TABLE)": lambda: client.get_tables_by_type(
            "ab", pattern, "MANAGED_TABLE"
        ),
        "get_tables_by_type(EXTERNAL_TABLE)": lambda: client.get_tables_by_type(
            "ab", pattern, "EXTERNAL_TABLE"
        ),
        "get_tables_by_type(VIRTUAL_VIEW)": lambda: client.get_tables_by_type(
            "ab", pattern, "VIRTUAL_VIEW"
        ),
    }
    return {name: _answer(call) for name, call in calls.items()}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_call_answers_a_pattern_as_hms_does(metastores: Metastores, pattern: str) -> None:
    hms = _answers(metastores.hms, pattern)
    ours = _answers(metastores.colstats, pattern)
    differing = {call: {"hms": hms[call], "colstats": ours[call]} for call in hms}
    differing = {call: pair for call, pair in differing.items() if pair["hms"] != pair["colstats"]}
    assert differing == {}


def test_no_pattern_is_every_name(metastores: Metastores) -> None:
    assert _answers(metastores.colstats, None) == _answers(metastores.hms, None)
    assert _answers(metastores.colstats, None)["get_tables"] == sorted(
        name for names in TABLES["ab"].values() for name in names
    )


def test_trino_finds_views_with_dot_star(metastores: Metastores) -> None:
    """Trino lists views with get_tables_by_type(db, ".*", "VIRTUAL_VIEW")."""
    for client in (metastores.hms, metastores.colstats):
        assert client.get_tables_by_type("ab", ".*", "VIRTUAL_VIEW") == ["av", "v_a", "view_b"]


@pytest.mark.parametrize("pattern", ["|", "||", " | "])
def test_a_pattern_of_bars_only_is_a_meta_exception_with_a_clear_message(
    metastores: Metastores, pattern: str
) -> None:
    """HMS fails on the empty JDOQL filter such a pattern leaves ("Method/Identifier
    expected at character ..."); colstats says what is wrong and what to send."""
    assert set(_answers(metastores.hms, pattern).values()) == {"MetaException"}
    assert set(_answers(metastores.colstats, pattern).values()) == {"MetaException"}
    with pytest.raises(t.MetaException, match=r"has no alternatives .*use '\*' for every name"):
        metastores.colstats.get_tables("ab", pattern)


def test_a_catalog_prefix_is_taken_off_a_database_pattern(metastores: Metastores) -> None:
    """Deliberately not as HMS 2.3, which has no catalogs and matches "@hive#a*" as text
    (finding nothing): colstats speaks HMS 4's IDL, where a database argument may carry
    Hive 3+'s '@catalog#' prefix."""
    assert metastores.hms.get_databases("@hive#a*") == []
    assert metastores.colstats.get_databases("@hive#a*") == metastores.hms.get_databases("a*")
    ours = _answer(lambda: metastores.colstats.get_table_meta("@hive#ab|xy", "a*", None))
    assert ours == _answer(lambda: metastores.hms.get_table_meta("ab|xy", "a*", None))
