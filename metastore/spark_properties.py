"""What Spark keeps in a table's parameters besides its statistics (metastore.spark_stats):
values too long for one parameter, split in parts, and the schema and provider of a table
Spark created as a data source (`CREATE TABLE ... USING parquet`); and Spark's type names in
Hive's spelling. Read here one way, as Spark reads them, for every part of colstats (the
answers of the Thrift door, the Flight door's tables, the job's and the files' layout).

Spark's rules (apache/spark `HiveExternalCatalog`, `CatalogTable.readLargeTableProp`): a
value over 4,000 characters is written as `<key>.numParts` and `<key>.part.<i>`; a reader
takes the key itself when present, otherwise the parts, all of which must be there. The
schema is `spark.sql.sources.schema`, a StructType's JSON; the provider is
`spark.sql.sources.provider`; the options of the data source (its `path` among them) are the
serde's parameters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from metastore.columns import Column

PROVIDER = "spark.sql.sources.provider"
SCHEMA = "spark.sql.sources.schema"
PATH_OPTION = "path"
"""The serde parameter of a data source table that holds the folder of its files."""
MAX_VALUE_LENGTH = 4000
"""The length over which Spark splits a value (splitLargeTableProp's default threshold)."""


def split_value(key: str, value: str, limit: int = MAX_VALUE_LENGTH) -> dict[str, str]:
    """KEY=VALUE as Spark writes it: one entry, or numParts and parts of LIMIT characters."""
    if len(value) <= limit:
        return {key: value}
    parts = [value[i : i + limit] for i in range(0, len(value), limit)]
    out = {f"{key}.numParts": str(len(parts))}
    out.update({f"{key}.part.{i}": part for i, part in enumerate(parts)})
    return out


def read_large(parameters: Mapping[str, str], key: str) -> str | None:
    """readLargeTableProp: the value of KEY, joined from its parts when split; None when
    absent; ValueError when the parts are incomplete (Spark throws, and drops the column)."""
    if key in parameters:
        return parameters[key]
    count = parameters.get(f"{key}.numParts")
    if count is None:
        if any(k.startswith(key) for k in parameters):
            raise ValueError(f"{key} has parts but no {key}.numParts")
        return None
    try:
        return "".join(parameters[f"{key}.part.{i}"] for i in range(int(count)))
    except (KeyError, ValueError):
        raise ValueError(f"{key} is split into {count!r} parts that are not all there") from None


def schema_fields(parameters: Mapping[str, str]) -> list[dict[str, Any]] | None:
    """The fields (JSON objects: name, type, nullable, metadata) of the schema Spark keeps in
    a data source table's PARAMETERS, data columns and partition keys alike; None when there
    is none, or none that reads."""
    try:
        text = read_large(parameters, SCHEMA)
        schema = json.loads(text) if text else None
        fields = schema["fields"] if isinstance(schema, dict) else None
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(fields, list) or not all(isinstance(f, dict) and "name" in f for f in fields):
        return None
    return fields


def schema_columns(parameters: Mapping[str, str]) -> list[Column] | None:
    """The columns of Spark's schema in PARAMETERS (see schema_fields), their types in Hive's
    spelling; None when there is none that reads."""
    fields = schema_fields(parameters)
    if fields is None:
        return None
    try:
        return [
            Column(str(f["name"]), hive_type_of_field(f), (f.get("metadata") or {}).get("comment"))
            for f in fields
        ]
    except (KeyError, ValueError, TypeError):
        return None


# -- Spark's types in Hive's spelling ----------------------------------------------------------

_HIVE_NAMES = {
    "integer": "int",
    "long": "bigint",
    "short": "smallint",
    "byte": "tinyint",
    "real": "float",
    "dec": "decimal",
    "numeric": "decimal",
    "timestamp_ntz": "timestamp",
    "timestamp_ltz": "timestamp",
    "null": "void",
}
"""Spark's names of primitive types (in its JSON, its simpleString and its DDL) that Hive
spells otherwise; the others are Hive's names too."""


def hive_name(spark_name: str) -> str:
    """Hive's name of the primitive Spark type SPARK_NAME ('integer' is 'int',
    'timestamp_ntz' a Hive timestamp), lower case."""
    lowered = spark_name.lower()
    return _HIVE_NAMES.get(lowered, lowered)


def hive_type_of_field(field: Mapping[str, Any]) -> str:
    """The Hive type of a Spark field as its JSON gives it: the CHAR or VARCHAR the catalog
    declared (kept in the field's metadata), else its type's."""
    declared = (field.get("metadata") or {}).get("__CHAR_VARCHAR_TYPE_STRING")
    return str(declared) if declared else hive_type(field["type"])


def hive_type(spark: Any) -> str:
    """The Hive type text of a Spark type as its JSON gives it (a name, or an object for
    arrays, maps, structs and user-defined types); ValueError for one Spark does not write."""
    if isinstance(spark, str):
        return hive_name(spark)
    kind = spark["type"]
    if kind == "array":
        return f"array<{hive_type(spark['elementType'])}>"
    if kind == "map":
        return f"map<{hive_type(spark['keyType'])},{hive_type(spark['valueType'])}>"
    if kind == "struct":
        fields = ",".join(f"{f['name']}:{hive_type_of_field(f)}" for f in spark["fields"])
        return f"struct<{fields}>"
    if kind == "udt":
        return hive_type(spark["sqlType"])
    raise ValueError(f"unknown Spark type {kind}")
