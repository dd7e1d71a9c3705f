"""How the job registers a table's storage, so that engines read the files it analyzed.

A table (and each partition) the job registers carries the storage descriptor Hive writes
for the same files: the input and output formats and the SerDe with its parameters.

* Parquet and ORC as Hive's `STORED AS PARQUET` / `STORED AS ORC` (Spark reads these with
  its own readers, Hive and Trino with theirs).
* csv and json as Spark registers its data source tables (`spark.sql.sources.provider`,
  the schema, the partition columns, the options `header` and `path` as serde parameters),
  which Spark reads with its csv and json readers, as the job does, and with a storage
  descriptor for Hive and Trino instead of Spark's placeholder: delimited text
  (LazySimpleSerDe, `field.delim` ',', an empty field NULL, `skip.header.line.count` 1)
  for csv, HCatalog's JsonSerDe (Hive, Trino; in Spark's Hive reader only with the
  hive-hcatalog-core jar, which the provider makes unneeded) for json.

A table registered without input format and SerDe (by older versions of the job) is given
its format's descriptor the next time the job sees it (see writer.repair_storage).
"""

from __future__ import annotations

import json

from hive_metastore_thrift import ttypes as t
from metastore.columns import Column
from metastore.job.ddl import spark_field, spark_type

TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
HCATALOG_JSON = "org.apache.hive.hcatalog.data.JsonSerDe"
SCHEMA_PART = 4000

# format: (input format, output format, SerDe, its parameters)
HIVE_STORAGE: dict[str, tuple[str, str, str, dict[str, str]]] = {
    "parquet": (
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
        "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
        {"serialization.format": "1"},
    ),
    "orc": (
        "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
        "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
        {"serialization.format": "1"},
    ),
    "csv": (
        TEXT_INPUT,
        TEXT_OUTPUT,
        LAZY_SIMPLE,
        {"field.delim": ",", "serialization.format": ",", "serialization.null.format": ""},
    ),
    "json": (TEXT_INPUT, TEXT_OUTPUT, HCATALOG_JSON, {"serialization.format": "1"}),
}


def has_storage(sd: t.StorageDescriptor | None) -> bool:
    """Whether SD says how its files are stored (an input format or a SerDe)."""
    if sd is None:
        return False
    lib = sd.serdeInfo.serializationLib if sd.serdeInfo is not None else None
    return bool(sd.inputFormat or lib)


def storage_descriptor(
    fmt: str, columns: list[Column], location: str | None, table_location: str | None
) -> t.StorageDescriptor:
    """The descriptor of files in FMT at LOCATION; TABLE_LOCATION is the `path` Spark's
    reader of a csv or json table takes."""
    input_format, output_format, serde, params = HIVE_STORAGE[fmt]
    serde_params = dict(params)
    if fmt in ("csv", "json") and table_location is not None:
        serde_params["path"] = table_location
        if fmt == "csv":
            serde_params["header"] = "true"
    return t.StorageDescriptor(
        cols=[t.FieldSchema(c.name.lower(), c.hive_type, None) for c in columns],
        location=location,
        inputFormat=input_format,
        outputFormat=output_format,
        compressed=False,
        numBuckets=-1,
        serdeInfo=t.SerDeInfo(name=None, serializationLib=serde, parameters=serde_params),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def table_parameters(fmt: str, columns: list[Column], keys: list[Column]) -> dict[str, str]:
    """The table parameters of FMT: csv's header line for Hive's reader, and for csv and
    json the Spark data source properties (schema with the partition columns last)."""
    if fmt not in ("csv", "json"):
        return {}
    fields = [spark_field(c.name.lower(), spark_type(c.hive_type)) for c in [*columns, *keys]]
    schema = json.dumps({"type": "struct", "fields": fields})
    params = {"spark.sql.sources.provider": fmt}
    if len(schema) <= SCHEMA_PART:
        params["spark.sql.sources.schema"] = schema
    else:  # as Spark splits it: metastores keep parameter values of 4,000 characters
        parts = [schema[i : i + SCHEMA_PART] for i in range(0, len(schema), SCHEMA_PART)]
        params["spark.sql.sources.schema.numParts"] = str(len(parts))
        params.update({f"spark.sql.sources.schema.part.{i}": p for i, p in enumerate(parts)})
    if keys:
        params["spark.sql.partitionProvider"] = "catalog"
        params["spark.sql.sources.schema.numPartCols"] = str(len(keys))
        for i, key in enumerate(keys):
            params[f"spark.sql.sources.schema.partCol.{i}"] = key.name.lower()
    if fmt == "csv":
        params["skip.header.line.count"] = "1"
    return params
