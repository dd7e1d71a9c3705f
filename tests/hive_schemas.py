"""The PostgreSQL schemas of Hive Metastore 3.1 and 4.0, as Hive's schema scripts for them
make them (`hive-schema-3.1.0.postgres.sql` and `hive-schema-4.0.0.postgres.sql`), for the
tests of adopting such a database where no HMS of that version can run.

Described here in our own terms: every table colstats's models have, the tables a drop must
take along (the privilege tables, IDXS and INDEX_PARAMS, KEY_CONSTRAINTS, MV_TABLES_USED with
MV_CREATION_METADATA), the tables of ids and catalogs (SEQUENCE_TABLE, NUCLEUS_TABLES, CTLGS),
VERSION, and the lock tables, each with its columns (type, nullability, default), primary
key, unique keys, foreign keys and indexes, and the rows the scripts insert. The rest of the
scripts' tables (notifications, transactions, compactions, workload management, schema
registry, scheduled queries, ...) colstats neither reads nor writes, and no delete of colstats
meets them.

What differs between the two:
* 3.1's script makes the lock tables without quoting their names, so PostgreSQL keeps them in
  lower case (hive_locks, next_lock_id, with lower-case columns), as 2.3's does; 4.0's quotes
  them (HIVE_LOCKS), and widens HL_TABLE to 256;
* 4.0 adds DBS.CREATE_TIME, DB_MANAGED_LOCATION_URI, TYPE, DATACONNECTOR_NAME and
  REMOTE_DBNAME (and makes CTLG_NAME NOT NULL), TBLS.WRITE_ID and PARTITIONS.WRITE_ID, the
  statistics' ENGINE (NOT NULL, no default) and HISTOGRAM, CTLGS.CREATE_TIME, an index of SDS
  on CD_ID, and the counts and primary key of MV_TABLES_USED; it widens PARTITION_PARAMS's
  PARAM_VALUE to text, puts PARENT_TBL_ID first in KEY_CONSTRAINTS's primary key, and CAT_NAME
  last in the statistics' name indexes;
* both have DBS.CTLG_NAME (a key to CTLGS, whose row `hive` the scripts insert), OWNER_TYPE,
  the SERDES columns of 3.0, and the statistics' CAT_NAME and BIT_VECTOR; neither has
  STATS_KIND.

Columns are written `NAME type`, where type is one of `id` (bigint), `int`, `small`
(smallint), `bool`, `float` (double precision), `bytes` (bytea), `text`, `s<N>`
(varchar(N)) and `c<N>` (char(N)); a `!` after the type makes the column NOT NULL, and
`=VALUE` after that gives its default (an SQL literal).
"""

from __future__ import annotations

import dataclasses
import re

import sqlalchemy as sa

VERSIONS = ("3.1.0", "4.0.0")

_TYPES = {
    "id": "bigint",
    "int": "integer",
    "small": "smallint",
    "bool": "boolean",
    "float": "double precision",
    "bytes": "bytea",
    "text": "text",
}
_COLUMN = re.compile(r"(?P<name>\w+) (?P<type>[a-z]+\d*)(?P<required>!)?(?:=(?P<default>.+))?")


@dataclasses.dataclass(frozen=True)
class Table:
    """One table of a Hive schema."""

    name: str
    columns: str
    """Comma-separated columns, in the script's order (see the module docstring)."""
    key: str = ""
    """The primary key's columns, comma-separated (as are the columns of the keys and
    indexes below)."""
    uniques: dict[str, str] = dataclasses.field(default_factory=dict)
    """Unique constraints by name."""
    unique_indexes: dict[str, str] = dataclasses.field(default_factory=dict)
    """Unique indexes (not constraints) by name."""
    references: dict[str, str] = dataclasses.field(default_factory=dict)
    """Foreign keys: a column and the TABLE.COLUMN it refers to."""
    indexes: dict[str, str] = dataclasses.field(default_factory=dict)
    """Plain indexes by name (b-tree; the lock tables' index on HL_TXNID, a hash index in
    the scripts, is one too here, which nothing colstats does can tell)."""
    quoted: bool = True
    """Whether the script quotes the names; PostgreSQL folds the others to lower case."""
    deferrable: bool = True
    """Whether its foreign keys are DEFERRABLE, as all but DBS's are."""
    rows: tuple[str, ...] = ()
    """The rows the script inserts, as SQL value lists."""

    def identifier(self, name: str) -> str:
        """NAME (of this table or of one of its columns) as SQL names it."""
        return f'"{name}"' if self.quoted else name

    def _list(self, names: str) -> str:
        return ", ".join(self.identifier(n.strip()) for n in names.split(","))

    def statements(self) -> list[str]:
        """CREATE TABLE with the primary key and unique constraints, then the indexes."""
        parts = []
        for spec in self.columns.split(","):
            name, definition = _column(spec.strip())
            parts.append(f"{self.identifier(name)} {definition}")
        if self.key:
            parts.append(f"PRIMARY KEY ({self._list(self.key)})")
        for name, columns in self.uniques.items():
            parts.append(f'CONSTRAINT "{name}" UNIQUE ({self._list(columns)})')
        table = self.identifier(self.name)
        made = [f"CREATE TABLE {table} ({', '.join(parts)})"]
        for name, columns in self.indexes.items():
            made.append(f'CREATE INDEX "{name}" ON {table} ({self._list(columns)})')
        for name, columns in self.unique_indexes.items():
            made.append(f'CREATE UNIQUE INDEX "{name}" ON {table} ({self._list(columns)})')
        return made

    def key_statements(self) -> list[str]:
        """The foreign keys, added once every table exists (as the scripts do)."""
        made = []
        for column, target in self.references.items():
            table, target_column = target.split(".")
            refers = f'REFERENCES "{table}" ("{target_column}")'
            deferrable = " DEFERRABLE" if self.deferrable else ""
            made.append(
                f"ALTER TABLE {self.identifier(self.name)} "
                f"ADD FOREIGN KEY ({self.identifier(column)}) {refers}{deferrable}"
            )
        return made

    def insert_statements(self) -> list[str]:
        return [f"INSERT INTO {self.identifier(self.name)} VALUES ({row})" for row in self.rows]


def _column(spec: str) -> tuple[str, str]:
    """The name of the column SPEC describes (see the module docstring), and the rest of its
    SQL definition."""
    found = _COLUMN.fullmatch(spec)
    if found is None:
        raise ValueError(f"not a column: {spec!r}")
    name, type_, required, default = found.group("name", "type", "required", "default")
    if type_ in _TYPES:
        definition = _TYPES[type_]
    elif type_[0] in "sc" and type_[1:].isdigit():
        definition = f"{'varchar' if type_[0] == 's' else 'char'}({type_[1:]})"
    else:
        raise ValueError(f"unknown type in {spec!r}")
    if default is not None:
        definition += f" DEFAULT {default}"
    if required:
        definition += " NOT NULL"
    return name, definition


_GRANT = "GRANT_OPTION small!, GRANTOR s128, GRANTOR_TYPE s128, PRINCIPAL_NAME s128, "
_GRANT += "PRINCIPAL_TYPE s128"


def _grant_key(privilege: str, *owner: str) -> str:
    """The columns of a privilege table's unique key or index: what is granted on which
    OWNER columns, to whom, by whom."""
    fixed = ("PRINCIPAL_NAME", "PRINCIPAL_TYPE", privilege, "GRANTOR", "GRANTOR_TYPE")
    return ", ".join(("AUTHORIZER", *owner, *fixed))


_STATS_VALUES = (
    "LONG_LOW_VALUE id, LONG_HIGH_VALUE id, DOUBLE_LOW_VALUE float, DOUBLE_HIGH_VALUE float, "
    "BIG_DECIMAL_LOW_VALUE s4000, BIG_DECIMAL_HIGH_VALUE s4000, NUM_NULLS id!, "
    "NUM_DISTINCTS id, BIT_VECTOR bytes, AVG_COL_LEN float, MAX_COL_LEN id, NUM_TRUES id, "
    "NUM_FALSES id, LAST_ANALYZED id!"
)
_MODEL = "org.apache.hadoop.hive.metastore.model."


def tables(version: str) -> list[Table]:
    """The tables of Hive's schema VERSION ("3.1.0" or "4.0.0") described here."""
    if version not in VERSIONS:
        raise ValueError(f"no Hive schema {version} here; there are {', '.join(VERSIONS)}")
    four = version == "4.0.0"
    stats_tail = ", ENGINE s128!, HISTOGRAM bytes" if four else ""
    write_id = ", WRITE_ID id=0" if four else ""
    sequences = [f"'{_MODEL}MNotificationLog', 1"]
    if four:
        sequences.append(f"'{_MODEL}MTxnWriteNotificationLog', 1")
    return [
        Table(
            "CTLGS",
            "CTLG_ID id, NAME s256, DESC s4000, LOCATION_URI s4000!"
            + (", CREATE_TIME id" if four else ""),
            key="CTLG_ID",
            uniques={"CTLGS_NAME_key": "NAME"},
            rows=("1, 'hive', 'Default catalog for Hive', 'TBD'" + (", NULL" if four else ""),),
        ),
        Table(
            "DBS",
            "DB_ID id!, DESC s4000, DB_LOCATION_URI s4000!, NAME s128, OWNER_NAME s128, "
            "OWNER_TYPE s10, "
            + (
                "CTLG_NAME s256!='hive', CREATE_TIME id, DB_MANAGED_LOCATION_URI s4000, "
                "TYPE s32!='NATIVE', DATACONNECTOR_NAME s128, REMOTE_DBNAME s128"
                if four
                else "CTLG_NAME s256='hive'"
            ),
            key="DB_ID",
            uniques={"UNIQUE_DATABASE": "NAME, CTLG_NAME"},
            references={"CTLG_NAME": "CTLGS.NAME"},
            deferrable=False,
        ),
        Table(
            "DATABASE_PARAMS",
            "DB_ID id!, PARAM_KEY s180!, PARAM_VALUE s4000",
            key="DB_ID, PARAM_KEY",
            references={"DB_ID": "DBS.DB_ID"},
            indexes={"DATABASE_PARAMS_N49": "DB_ID"},
        ),
        Table(
            "DB_PRIVS",
            f"DB_GRANT_ID id!, CREATE_TIME id!, DB_ID id, {_GRANT}, DB_PRIV s128, AUTHORIZER s128",
            key="DB_GRANT_ID",
            uniques={"DBPRIVILEGEINDEX": _grant_key("DB_PRIV", "DB_ID")},
            references={"DB_ID": "DBS.DB_ID"},
            indexes={"DB_PRIVS_N49": "DB_ID"},
        ),
        Table(
            "GLOBAL_PRIVS",
            f"USER_GRANT_ID id!, CREATE_TIME id!, {_GRANT}, USER_PRIV s128, AUTHORIZER s128",
            key="USER_GRANT_ID",
            uniques={"GLOBALPRIVILEGEINDEX": _grant_key("USER_PRIV")},
        ),
        Table(
            "ROLES",
            "ROLE_ID id!, CREATE_TIME id!, OWNER_NAME s128, ROLE_NAME s128",
            key="ROLE_ID",
            uniques={"ROLEENTITYINDEX": "ROLE_NAME"},
        ),
        Table(
            "ROLE_MAP",
            f"ROLE_GRANT_ID id!, ADD_TIME id!, {_GRANT}, ROLE_ID id",
            key="ROLE_GRANT_ID",
            uniques={"USERROLEMAPINDEX": "PRINCIPAL_NAME, ROLE_ID, GRANTOR, GRANTOR_TYPE"},
            references={"ROLE_ID": "ROLES.ROLE_ID"},
            indexes={"ROLE_MAP_N49": "ROLE_ID"},
        ),
        Table(
            "SERDES",
            "SERDE_ID id!, NAME s128, SLIB s4000, DESCRIPTION s4000, SERIALIZER_CLASS s4000, "
            "DESERIALIZER_CLASS s4000, SERDE_TYPE int",
            key="SERDE_ID",
        ),
        Table(
            "SERDE_PARAMS",
            "SERDE_ID id!, PARAM_KEY s256!, PARAM_VALUE text",
            key="SERDE_ID, PARAM_KEY",
            references={"SERDE_ID": "SERDES.SERDE_ID"},
            indexes={"SERDE_PARAMS_N49": "SERDE_ID"},
        ),
        Table("CDS", "CD_ID id!", key="CD_ID"),
        Table(
            "COLUMNS_V2",
            "CD_ID id!, COMMENT s4000, COLUMN_NAME s767!, TYPE_NAME text, INTEGER_IDX int!",
            key="CD_ID, COLUMN_NAME",
            references={"CD_ID": "CDS.CD_ID"},
        ),
        Table(
            "SDS",
            "SD_ID id!, INPUT_FORMAT s4000, IS_COMPRESSED bool!, LOCATION s4000, "
            "NUM_BUCKETS id!, OUTPUT_FORMAT s4000, SERDE_ID id, CD_ID id, "
            "IS_STOREDASSUBDIRECTORIES bool!",
            key="SD_ID",
            references={"CD_ID": "CDS.CD_ID", "SERDE_ID": "SERDES.SERDE_ID"},
            indexes={"SDS_N49": "SERDE_ID", **({"SDS_N50": "CD_ID"} if four else {})},
        ),
        Table(
            "SD_PARAMS",
            "SD_ID id!, PARAM_KEY s256!, PARAM_VALUE text",
            key="SD_ID, PARAM_KEY",
            references={"SD_ID": "SDS.SD_ID"},
            indexes={"SD_PARAMS_N49": "SD_ID"},
        ),
        Table(
            "BUCKETING_COLS",
            "SD_ID id!, BUCKET_COL_NAME s256, INTEGER_IDX id!",
            key="SD_ID, INTEGER_IDX",
            references={"SD_ID": "SDS.SD_ID"},
            indexes={"BUCKETING_COLS_N49": "SD_ID"},
        ),
        Table(
            "SORT_COLS",
            "SD_ID id!, COLUMN_NAME s767, ORDER id!, INTEGER_IDX id!",
            key="SD_ID, INTEGER_IDX",
            references={"SD_ID": "SDS.SD_ID"},
            indexes={"SORT_COLS_N49": "SD_ID"},
        ),
        Table("SKEWED_STRING_LIST", "STRING_LIST_ID id!", key="STRING_LIST_ID"),
        Table(
            "SKEWED_STRING_LIST_VALUES",
            "STRING_LIST_ID id!, STRING_LIST_VALUE s256, INTEGER_IDX id!",
            key="STRING_LIST_ID, INTEGER_IDX",
            references={"STRING_LIST_ID": "SKEWED_STRING_LIST.STRING_LIST_ID"},
        ),
        Table(
            "SKEWED_COL_NAMES",
            "SD_ID id!, SKEWED_COL_NAME s256, INTEGER_IDX id!",
            key="SD_ID, INTEGER_IDX",
            references={"SD_ID": "SDS.SD_ID"},
        ),
        Table(
            "SKEWED_COL_VALUE_LOC_MAP",
            "SD_ID id!, STRING_LIST_ID_KID id!, LOCATION s4000",
            key="SD_ID, STRING_LIST_ID_KID",
            references={
                "SD_ID": "SDS.SD_ID",
                "STRING_LIST_ID_KID": "SKEWED_STRING_LIST.STRING_LIST_ID",
            },
        ),
        Table(
            "SKEWED_VALUES",
            "SD_ID_OID id!, STRING_LIST_ID_EID id!, INTEGER_IDX id!",
            key="SD_ID_OID, INTEGER_IDX",
            references={
                "STRING_LIST_ID_EID": "SKEWED_STRING_LIST.STRING_LIST_ID",
                "SD_ID_OID": "SDS.SD_ID",
            },
        ),
        Table(
            "TBLS",
            "TBL_ID id!, CREATE_TIME id!, DB_ID id, LAST_ACCESS_TIME id!, OWNER s767, "
            "OWNER_TYPE s10, RETENTION id!, SD_ID id, TBL_NAME s256, TBL_TYPE s128, "
            "VIEW_EXPANDED_TEXT text, VIEW_ORIGINAL_TEXT text, IS_REWRITE_ENABLED bool!=false"
            + write_id,
            key="TBL_ID",
            uniques={"UNIQUETABLE": "TBL_NAME, DB_ID"},
            references={"DB_ID": "DBS.DB_ID", "SD_ID": "SDS.SD_ID"},
            indexes={"TBLS_N49": "DB_ID", "TBLS_N50": "SD_ID"},
        ),
        Table(
            "TABLE_PARAMS",
            "TBL_ID id!, PARAM_KEY s256!, PARAM_VALUE text",
            key="TBL_ID, PARAM_KEY",
            references={"TBL_ID": "TBLS.TBL_ID"},
            indexes={"TABLE_PARAMS_N49": "TBL_ID"},
        ),
        Table(
            "TBL_PRIVS",
            f"TBL_GRANT_ID id!, CREATE_TIME id!, {_GRANT}, TBL_PRIV s128, TBL_ID id, "
            "AUTHORIZER s128",
            key="TBL_GRANT_ID",
            references={"TBL_ID": "TBLS.TBL_ID"},
            indexes={
                "TABLEPRIVILEGEINDEX": _grant_key("TBL_PRIV", "TBL_ID"),
                "TBL_PRIVS_N49": "TBL_ID",
            },
        ),
        Table(
            "TBL_COL_PRIVS",
            f"TBL_COLUMN_GRANT_ID id!, COLUMN_NAME s767, CREATE_TIME id!, {_GRANT}, "
            "TBL_COL_PRIV s128, TBL_ID id, AUTHORIZER s128",
            key="TBL_COLUMN_GRANT_ID",
            references={"TBL_ID": "TBLS.TBL_ID"},
            indexes={
                "TABLECOLUMNPRIVILEGEINDEX": _grant_key("TBL_COL_PRIV", "TBL_ID", "COLUMN_NAME"),
                "TBL_COL_PRIVS_N49": "TBL_ID",
            },
        ),
        Table(
            "PARTITION_KEYS",
            "TBL_ID id!, PKEY_COMMENT s4000, PKEY_NAME s128!, PKEY_TYPE s767!, INTEGER_IDX id!",
            key="TBL_ID, PKEY_NAME",
            references={"TBL_ID": "TBLS.TBL_ID"},
            indexes={"PARTITION_KEYS_N49": "TBL_ID"},
        ),
        Table(
            "PARTITIONS",
            "PART_ID id!, CREATE_TIME id!, LAST_ACCESS_TIME id!, PART_NAME s767, SD_ID id, "
            "TBL_ID id" + write_id,
            key="PART_ID",
            uniques={"UNIQUEPARTITION": "PART_NAME, TBL_ID"},
            references={"SD_ID": "SDS.SD_ID", "TBL_ID": "TBLS.TBL_ID"},
            indexes={"PARTITIONS_N49": "TBL_ID", "PARTITIONS_N50": "SD_ID"},
        ),
        Table(
            "PARTITION_KEY_VALS",
            "PART_ID id!, PART_KEY_VAL s256, INTEGER_IDX id!",
            key="PART_ID, INTEGER_IDX",
            references={"PART_ID": "PARTITIONS.PART_ID"},
            indexes={"PARTITION_KEY_VALS_N49": "PART_ID"},
        ),
        Table(
            "PARTITION_PARAMS",
            f"PART_ID id!, PARAM_KEY s256!, PARAM_VALUE {'text' if four else 's4000'}",
            key="PART_ID, PARAM_KEY",
            references={"PART_ID": "PARTITIONS.PART_ID"},
            indexes={"PARTITION_PARAMS_N49": "PART_ID"},
        ),
        Table(
            "PART_PRIVS",
            "PART_GRANT_ID id!, CREATE_TIME id!, GRANT_OPTION small!, GRANTOR s128, "
            "GRANTOR_TYPE s128, PART_ID id, PRINCIPAL_NAME s128, PRINCIPAL_TYPE s128, "
            "PART_PRIV s128, AUTHORIZER s128",
            key="PART_GRANT_ID",
            references={"PART_ID": "PARTITIONS.PART_ID"},
            indexes={
                "PARTPRIVILEGEINDEX": _grant_key("PART_PRIV", "PART_ID"),
                "PART_PRIVS_N49": "PART_ID",
            },
        ),
        Table(
            "PART_COL_PRIVS",
            "PART_COLUMN_GRANT_ID id!, COLUMN_NAME s767, CREATE_TIME id!, GRANT_OPTION small!, "
            "GRANTOR s128, GRANTOR_TYPE s128, PART_ID id, PRINCIPAL_NAME s128, "
            "PRINCIPAL_TYPE s128, PART_COL_PRIV s128, AUTHORIZER s128",
            key="PART_COLUMN_GRANT_ID",
            references={"PART_ID": "PARTITIONS.PART_ID"},
            indexes={
                "PARTITIONCOLUMNPRIVILEGEINDEX": _grant_key(
                    "PART_COL_PRIV", "PART_ID", "COLUMN_NAME"
                ),
                "PART_COL_PRIVS_N49": "PART_ID",
            },
        ),
        Table(
            "TAB_COL_STATS",
            "CS_ID id!, CAT_NAME s256, DB_NAME s128, TABLE_NAME s256, COLUMN_NAME s767, "
            f"COLUMN_TYPE s128, TBL_ID id!, {_STATS_VALUES}{stats_tail}",
            key="CS_ID",
            references={"TBL_ID": "TBLS.TBL_ID"},
            indexes={
                "TAB_COL_STATS_IDX": (
                    "DB_NAME, TABLE_NAME, COLUMN_NAME, CAT_NAME"
                    if four
                    else "CAT_NAME, DB_NAME, TABLE_NAME, COLUMN_NAME"
                ),
                "TAB_COL_STATS_N49": "TBL_ID",
            },
        ),
        Table(
            "PART_COL_STATS",
            "CS_ID id!, CAT_NAME s256, DB_NAME s128, TABLE_NAME s256, PARTITION_NAME s767, "
            f"COLUMN_NAME s767, COLUMN_TYPE s128, PART_ID id!, {_STATS_VALUES}{stats_tail}",
            key="CS_ID",
            references={"PART_ID": "PARTITIONS.PART_ID"},
            indexes={
                "PCS_STATS_IDX": (
                    "DB_NAME, TABLE_NAME, COLUMN_NAME, PARTITION_NAME, CAT_NAME"
                    if four
                    else "CAT_NAME, DB_NAME, TABLE_NAME, COLUMN_NAME, PARTITION_NAME"
                ),
                "PART_COL_STATS_N49": "PART_ID",
            },
        ),
        Table(
            "IDXS",
            "INDEX_ID id!, CREATE_TIME id!, DEFERRED_REBUILD bool!, INDEX_HANDLER_CLASS s4000, "
            "INDEX_NAME s128, INDEX_TBL_ID id, LAST_ACCESS_TIME id!, ORIG_TBL_ID id, SD_ID id",
            key="INDEX_ID",
            uniques={"UNIQUEINDEX": "INDEX_NAME, ORIG_TBL_ID"},
            references={
                "INDEX_TBL_ID": "TBLS.TBL_ID",
                "ORIG_TBL_ID": "TBLS.TBL_ID",
                "SD_ID": "SDS.SD_ID",
            },
            indexes={
                "IDXS_N49": "ORIG_TBL_ID",
                "IDXS_N50": "INDEX_TBL_ID",
                "IDXS_N51": "SD_ID",
            },
        ),
        Table(
            "INDEX_PARAMS",
            "INDEX_ID id!, PARAM_KEY s256!, PARAM_VALUE s4000",
            key="INDEX_ID, PARAM_KEY",
            references={"INDEX_ID": "IDXS.INDEX_ID"},
            indexes={"INDEX_PARAMS_N49": "INDEX_ID"},
        ),
        Table(
            "KEY_CONSTRAINTS",
            "CHILD_CD_ID id, CHILD_INTEGER_IDX id, CHILD_TBL_ID id, PARENT_CD_ID id, "
            "PARENT_INTEGER_IDX id!, PARENT_TBL_ID id!, POSITION id!, CONSTRAINT_NAME s400!, "
            "CONSTRAINT_TYPE small!, UPDATE_RULE small, DELETE_RULE small, "
            "ENABLE_VALIDATE_RELY small!, DEFAULT_VALUE s400",
            key=(
                "PARENT_TBL_ID, CONSTRAINT_NAME, POSITION" if four else "CONSTRAINT_NAME, POSITION"
            ),
            indexes={
                "CONSTRAINTS_PARENT_TBLID_INDEX": "PARENT_TBL_ID",
                "CONSTRAINTS_CONSTRAINT_TYPE_INDEX": "CONSTRAINT_TYPE",
            },
        ),
        Table(
            "MV_CREATION_METADATA",
            "MV_CREATION_METADATA_ID id!, CAT_NAME s256!, DB_NAME s128!, TBL_NAME s256!, "
            "TXN_LIST text, MATERIALIZATION_TIME id!",
            key="MV_CREATION_METADATA_ID",
            indexes={"MV_UNIQUE_TABLE": "TBL_NAME, DB_NAME"},
        ),
        Table(
            "MV_TABLES_USED",
            "MV_CREATION_METADATA_ID id!, TBL_ID id!"
            + (", INSERTED_COUNT id!=0, UPDATED_COUNT id!=0, DELETED_COUNT id!=0" if four else ""),
            key="TBL_ID, MV_CREATION_METADATA_ID" if four else "",
            references={
                "MV_CREATION_METADATA_ID": "MV_CREATION_METADATA.MV_CREATION_METADATA_ID",
                "TBL_ID": "TBLS.TBL_ID",
            },
        ),
        Table(
            "FUNCS",
            "FUNC_ID id!, CLASS_NAME s4000, CREATE_TIME int!, DB_ID id, FUNC_NAME s128, "
            "FUNC_TYPE int!, OWNER_NAME s128, OWNER_TYPE s10",
            key="FUNC_ID",
            unique_indexes={"UNIQUEFUNCTION": "FUNC_NAME, DB_ID"},
            references={"DB_ID": "DBS.DB_ID"},
            indexes={"FUNCS_N49": "DB_ID"},
        ),
        Table(
            "FUNC_RU",
            "FUNC_ID id!, RESOURCE_TYPE int!, RESOURCE_URI s4000, INTEGER_IDX int!",
            key="FUNC_ID, INTEGER_IDX",
            references={"FUNC_ID": "FUNCS.FUNC_ID"},
            indexes={"FUNC_RU_N49": "FUNC_ID"},
        ),
        Table(
            "SEQUENCE_TABLE",
            "SEQUENCE_NAME s255!, NEXT_VAL id!",
            key="SEQUENCE_NAME",
            rows=tuple(sequences),
        ),
        Table(
            "NUCLEUS_TABLES",
            "CLASS_NAME s128!, TABLE_NAME s128!, TYPE s4!, OWNER s2!, VERSION s20!, "
            "INTERFACE_NAME s255",
            key="CLASS_NAME",
        ),
        Table(
            "HIVE_LOCKS",
            "HL_LOCK_EXT_ID id!, HL_LOCK_INT_ID id!, HL_TXNID id!, HL_DB s128!, "
            f"HL_TABLE s{256 if four else 128}, HL_PARTITION s767, HL_LOCK_STATE c1!, "
            "HL_LOCK_TYPE c1!, HL_LAST_HEARTBEAT id!, HL_ACQUIRED_AT id, HL_USER s128!, "
            "HL_HOST s128!, HL_HEARTBEAT_COUNT int, HL_AGENT_INFO s128, "
            "HL_BLOCKEDBY_EXT_ID id, HL_BLOCKEDBY_INT_ID id",
            key="HL_LOCK_EXT_ID, HL_LOCK_INT_ID",
            indexes={"hl_txnid_index": "HL_TXNID"},
            quoted=four,
        ),
        Table("NEXT_LOCK_ID", "NL_NEXT id!", quoted=four, rows=("1",)),
        Table(
            "VERSION",
            "VER_ID id, SCHEMA_VERSION s127!, VERSION_COMMENT s255!",
            key="VER_ID",
            rows=(f"1, '{version}', 'Hive release version {version}'",),
        ),
    ]


def build(url: str, version: str) -> None:
    """Make Hive's schema VERSION, with its rows, in the empty PostgreSQL database at URL."""
    made = tables(version)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            for step in (Table.statements, Table.key_statements, Table.insert_statements):
                for table in made:
                    for statement in step(table):
                        conn.exec_driver_sql(statement)
    finally:
        engine.dispose()
