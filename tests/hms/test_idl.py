"""The IDL stays wire-identical to HMS 4.x: the field ids and types of the generated structs and
call arguments/results match a table copied from HMS 4.x's hive_metastore.thrift. Enums travel
as i32; field names are those of the generated Python code."""

from __future__ import annotations

from typing import Any

import pytest
from thrift.Thrift import TType

from hive_metastore_thrift import ThriftHiveMetastore as service
from hive_metastore_thrift import ttypes

_BASIC = {
    TType.BOOL: "bool",
    TType.BYTE: "i8",
    TType.I16: "i16",
    TType.I32: "i32",
    TType.I64: "i64",
    TType.DOUBLE: "double",
}


def _type(ttype: int, args: Any) -> str:
    if ttype == TType.STRING:
        return "binary" if args == "BINARY" else "string"
    if ttype == TType.STRUCT:
        return str(args[0].__name__)
    if ttype == TType.LIST:
        return f"list<{_type(args[0], args[1])}>"
    if ttype == TType.MAP:
        return f"map<{_type(args[0], args[1])},{_type(args[2], args[3])}>"
    return _BASIC[ttype]


def spec(cls: Any) -> dict[int, str]:
    """{field id: "type name"} from a generated class's thrift_spec."""
    fields = [f for f in cls.thrift_spec if f is not None]
    return {fid: f"{_type(ttype, args)} {name}" for fid, ttype, name, args, _ in fields}


GOLDEN: dict[str, dict[int, str]] = {
    # Structs.
    "ResourceUri": {1: "i32 resourceType", 2: "string uri"},
    "Function": {
        1: "string functionName", 2: "string dbName", 3: "string className",
        4: "string ownerName", 5: "i32 ownerType", 6: "i32 createTime", 7: "i32 functionType",
        8: "list<ResourceUri> resourceUris", 9: "string catName",
    },
    "GetAllFunctionsResponse": {1: "list<Function> functions"},
    "TableMeta": {
        1: "string dbName", 2: "string tableName", 3: "string tableType", 4: "string comments",
        5: "string catName", 6: "string ownerName", 7: "i32 ownerType",
    },
    "ClientCapabilities": {1: "list<i32> values"},
    "GetTableRequest": {
        1: "string dbName", 2: "string tblName", 3: "ClientCapabilities capabilities",
        4: "string catName", 6: "string validWriteIdList", 7: "bool getColumnStats",
        8: "list<string> processorCapabilities", 9: "string processorIdentifier",
        10: "string engine", 11: "i64 id",
    },
    "GetTableResult": {1: "Table table", 2: "bool isStatsCompliant"},
    "GetTablesRequest": {  # 7: projectionSpec is not declared
        1: "string dbName", 2: "list<string> tblNames", 3: "ClientCapabilities capabilities",
        4: "string catName", 5: "list<string> processorCapabilities",
        6: "string processorIdentifier", 8: "string tablesPattern",
    },
    "GetTablesResult": {1: "list<Table> tables"},
    "DropPartitionsExpr": {1: "binary expr", 2: "i32 partArchiveLevel"},
    "RequestPartsSpec": {1: "list<string> names", 2: "list<DropPartitionsExpr> exprs"},
    "DropPartitionsRequest": {
        1: "string dbName", 2: "string tblName", 3: "RequestPartsSpec parts",
        4: "bool deleteData", 5: "bool ifExists", 6: "bool ignoreProtection",
        7: "EnvironmentContext environmentContext", 8: "bool needResult", 9: "string catName",
    },
    "DropPartitionsResult": {1: "list<Partition> partitions"},
    "AlterPartitionsRequest": {
        1: "string catName", 2: "string dbName", 3: "string tableName",
        4: "list<Partition> partitions", 5: "EnvironmentContext environmentContext",
        6: "i64 writeId", 7: "string validWriteIdList", 8: "bool skipColumnSchemaForPartition",
        9: "list<FieldSchema> partitionColSchema",
    },
    "AlterPartitionsResponse": {},
    "AddPartitionsRequest": {
        1: "string dbName", 2: "string tblName", 3: "list<Partition> parts",
        4: "bool ifNotExists", 5: "bool needResult", 6: "string catName",
        7: "string validWriteIdList", 8: "bool skipColumnSchemaForPartition",
        9: "list<FieldSchema> partitionColSchema", 10: "EnvironmentContext environmentContext",
    },
    "AddPartitionsResult": {
        1: "list<Partition> partitions", 2: "bool isStatsCompliant",
        3: "list<FieldSchema> partitionColSchema",
    },
    # Calls: arguments, then the result (0 is the return value, then the declared exceptions).
    "get_partitions_by_filter_args": {
        1: "string db_name", 2: "string tbl_name", 3: "string filter", 4: "i16 max_parts",
    },
    "get_partitions_by_filter_result": {
        0: "list<Partition> success", 1: "MetaException o1", 2: "NoSuchObjectException o2",
    },
    "get_partitions_ps_with_auth_args": {
        1: "string db_name", 2: "string tbl_name", 3: "list<string> part_vals",
        4: "i16 max_parts", 5: "string user_name", 6: "list<string> group_names",
    },
    "get_partitions_ps_with_auth_result": {
        0: "list<Partition> success", 1: "NoSuchObjectException o1", 2: "MetaException o2",
    },
    "rename_partition_args": {
        1: "string db_name", 2: "string tbl_name", 3: "list<string> part_vals",
        4: "Partition new_part",
    },
    "rename_partition_result": {1: "InvalidOperationException o1", 2: "MetaException o2"},
    "drop_partitions_req_args": {1: "DropPartitionsRequest req"},
    "drop_partitions_req_result": {
        0: "DropPartitionsResult success", 1: "NoSuchObjectException o1", 2: "MetaException o2",
    },
    "alter_partitions_req_args": {1: "AlterPartitionsRequest req"},
    "alter_partitions_req_result": {
        0: "AlterPartitionsResponse success", 1: "InvalidOperationException o1",
        2: "MetaException o2",
    },
    "create_function_args": {1: "Function func"},
    "create_function_result": {
        1: "AlreadyExistsException o1", 2: "InvalidObjectException o2", 3: "MetaException o3",
        4: "NoSuchObjectException o4",
    },
    "get_function_args": {1: "string dbName", 2: "string funcName"},
    "get_function_result": {
        0: "Function success", 1: "MetaException o1", 2: "NoSuchObjectException o2",
    },
    "drop_function_result": {1: "NoSuchObjectException o1", 2: "MetaException o3"},
    "get_all_functions_result": {0: "GetAllFunctionsResponse success", 1: "MetaException o1"},
    "get_table_req_result": {
        0: "GetTableResult success", 1: "MetaException o1", 2: "NoSuchObjectException o2",
    },
    "get_table_objects_by_name_req_result": {
        0: "GetTablesResult success", 1: "MetaException o1",
        2: "InvalidOperationException o2", 3: "UnknownDBException o3",
    },
    # 3.x/4.0 declare no exceptions here; these are the Hive 2.3 client's (see the IDL).
    "get_table_objects_by_name_result": {
        0: "list<Table> success", 1: "MetaException o1",
        2: "InvalidOperationException o2", 3: "UnknownDBException o3",
    },
    "set_ugi_args": {1: "string user_name", 2: "list<string> group_names"},
    "set_ugi_result": {0: "list<string> success", 1: "MetaException o1"},
    "alter_database_args": {1: "string dbname", 2: "Database db"},
    "alter_database_result": {1: "MetaException o1", 2: "NoSuchObjectException o2"},
    "shutdown_args": {},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_field_ids_and_types_match_hms(name: str) -> None:
    cls = getattr(ttypes, name, None) or getattr(service, name)
    assert spec(cls) == GOLDEN[name]


def test_shutdown_is_oneway() -> None:
    # fb303's `oneway void shutdown()`: no result, so the processor writes no reply.
    assert hasattr(service.Processor, "process_shutdown")
    assert not hasattr(service, "shutdown_result")
    assert not hasattr(service.Client, "recv_shutdown")
