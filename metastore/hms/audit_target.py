"""The objects a Thrift call names, for its audit line (metastore.audit): `db=... tbl=...
part=...` from the call's arguments (its parameter names and the IDL's structs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hive_metastore_thrift import ttypes as t
from metastore.audit import quote


class _Target:
    def __init__(self) -> None:
        self.fields: dict[str, str] = {}

    def set(self, key: str, value: object) -> None:
        if value is not None and key not in self.fields:
            self.fields[key] = str(value)

    def add(self, value: Any) -> None:
        if isinstance(value, t.Database):
            self.set("db", value.name)
        elif isinstance(value, t.Table):
            self.set("db", value.dbName)
            self.set("tbl", value.tableName)
        elif isinstance(value, t.Partition):
            self.set("db", value.dbName)
            self.set("tbl", value.tableName)
            if value.values is not None:
                self.set("part", "/".join(map(str, value.values)))
        elif isinstance(value, t.ColumnStatistics):
            self.add(value.statsDesc)
            if value.statsObj:
                self.set("cols", ",".join(str(o.colName) for o in value.statsObj))
        elif isinstance(value, t.ColumnStatisticsDesc):
            self.set("db", value.dbName)
            self.set("tbl", value.tableName)
            self.set("part", value.partName)
        elif isinstance(value, t.SetPartitionsStatsRequest):
            entries = value.colStats or []
            if entries:
                self.add(entries[0])
                if len(entries) > 1:
                    self.fields.pop("part", None)
                    self.set("entries", len(entries))
        elif isinstance(value, t.AlterTableRequest):
            self.set("db", value.dbName)
            self.set("tbl", value.tableName)
        elif isinstance(value, t.AddPartitionsRequest):
            self.set("db", value.dbName)
            self.set("tbl", value.tblName)
            self.set("partitions", len(value.parts or []))
        elif isinstance(value, t.LockRequest):
            parts = value.component or []
            if parts:
                self.set("db", parts[0].dbname)
                if len(parts) == 1:
                    self.set("tbl", parts[0].tablename)
                    self.set("part", parts[0].partitionname)
                    self.set("type", t.LockType._VALUES_TO_NAMES.get(parts[0].type))
                else:
                    self.set("components", len(parts))
            self.set("agent", value.agentInfo)
        elif isinstance(value, t.CheckLockRequest | t.UnlockRequest | t.HeartbeatRequest):
            self.set("lockid", value.lockid)
        elif isinstance(value, list) and value and isinstance(value[0], t.Partition):
            if len(value) == 1:
                self.add(value[0])
            else:
                self.set("db", value[0].dbName)
                self.set("tbl", value[0].tableName)
                self.set("partitions", len(value))


# Argument names of the IDL that hold a name, and which name.
_NAMED = {
    "dbname": "db",
    "db_name": "db",
    "dbName": "db",
    "tbl_name": "tbl",
    "tblName": "tbl",
    "part_name": "part",
    "col_name": "col",
}


def target(arguments: Mapping[str, Any]) -> str:
    """`db=... tbl=... part=...` for a call's ARGUMENTS (its parameter names and values)."""
    found = _Target()
    for name, value in arguments.items():
        if name in _NAMED and isinstance(value, str):
            found.set(_NAMED[name], value)
        elif name == "name" and isinstance(value, str):
            # drop_database(name) names a database; drop_table(dbname, name) a table.
            found.set("tbl" if "db" in found.fields else "db", value)
        elif name == "part_vals" and isinstance(value, list):
            found.set("part", "/".join(map(str, value)))
        else:
            found.add(value)
    return " ".join(f"{key}={quote(value)}" for key, value in found.fields.items())
