"""Hive's column types as Arrow types and back: the one mapping of the Flight door (what
DuckDB reads), of the readers of text files, and of the job (the Hive types of the columns
Parquet and ORC files hold). Decimals keep their precision and scale (Hive's bare
decimal is decimal(10,0)); char and varchar are strings; timestamps are microseconds (Hive's
nanoseconds have no place in DuckDB's TIMESTAMP); arrays, maps, structs and unions are
Arrow's nested types of their parts."""

from __future__ import annotations

import pyarrow as pa

from metastore.vocabulary import TypeTree, parse_type

_PRIMITIVES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "tinyint": pa.int8(),
    "smallint": pa.int16(),
    "int": pa.int32(),
    "bigint": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "varchar": pa.string(),
    "char": pa.string(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamp with local time zone": pa.timestamp("us", tz="UTC"),
    "interval_year_month": pa.month_day_nano_interval(),
    "interval_day_time": pa.month_day_nano_interval(),
    "void": pa.null(),
}


def arrow_type(hive_type: str) -> pa.DataType:
    """The Arrow type of a column of HIVE_TYPE; vocabulary.HiveTypeError for text that is
    not a Hive type."""
    return _of_tree(parse_type(hive_type))


def _of_tree(tree: TypeTree) -> pa.DataType:
    if tree.name == "decimal":
        precision = tree.parameters[0] if tree.parameters else 10
        scale = tree.parameters[1] if len(tree.parameters) > 1 else 0
        return pa.decimal128(precision, scale)
    if tree.name == "array":
        return pa.list_(_of_tree(tree.children[0][1]))
    if tree.name == "map":
        return pa.map_(_of_tree(tree.children[0][1]), _of_tree(tree.children[1][1]))
    if tree.name == "struct":
        return pa.struct([pa.field(name, _of_tree(child)) for name, child in tree.children])
    if tree.name == "uniontype":
        fields = [
            pa.field(f"tag{i}", _of_tree(child)) for i, (_, child) in enumerate(tree.children)
        ]
        return pa.sparse_union(fields)
    return _PRIMITIVES[tree.name]


def hive_type(arrow: pa.DataType) -> str:
    """The Hive type of a column files hold as ARROW (as Spark names it); ValueError for an
    Arrow type that has none."""
    if pa.types.is_dictionary(arrow):
        return hive_type(arrow.value_type)
    simple = {
        pa.bool_(): "boolean",
        pa.int8(): "tinyint",
        pa.int16(): "smallint",
        pa.int32(): "int",
        pa.int64(): "bigint",
        pa.uint8(): "smallint",
        pa.uint16(): "int",
        pa.uint32(): "bigint",
        pa.uint64(): "decimal(20,0)",
        pa.float16(): "float",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.date32(): "date",
        pa.date64(): "date",
        pa.null(): "void",
    }
    if arrow in simple:
        return simple[arrow]
    if pa.types.is_string(arrow) or pa.types.is_large_string(arrow):
        return "string"
    if pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow):
        return "binary"
    if pa.types.is_fixed_size_binary(arrow):
        return "binary"
    if pa.types.is_timestamp(arrow):
        return "timestamp"
    if pa.types.is_decimal(arrow):
        return f"decimal({arrow.precision},{arrow.scale})"
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return f"array<{hive_type(arrow.value_type)}>"
    if pa.types.is_map(arrow):
        return f"map<{hive_type(arrow.key_type)},{hive_type(arrow.item_type)}>"
    if pa.types.is_struct(arrow):
        fields = ",".join(f"{f.name}:{hive_type(f.type)}" for f in arrow)
        return f"struct<{fields}>"
    raise ValueError(f"no Hive type for Arrow type {arrow}")
