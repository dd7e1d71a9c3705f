"""Reading the data of the job and planning what to analyze: columns and partition keys."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from metastore import names
from metastore.job.errors import JobError
from metastore.job.options import AnalyzeOptions
from metastore.vocabulary import Kind, kind_of_type

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Column:
    """A column of the table: its name as the data spells it, its Hive type, and the kind of
    statistics HMS keeps for it (None for arrays, maps and structs)."""

    name: str
    hive_type: str
    kind: Kind | None

    @property
    def stats_kind(self) -> Kind:
        """The kind, for a column that is analyzed (see Plan.columns)."""
        if self.kind is None:
            raise ValueError(f"HMS keeps no statistics for {self.name} of type {self.hive_type}")
        return self.kind


@dataclass
class Plan:
    """What to analyze: the table's layout and the chosen columns and partitions."""

    db: str
    table: str
    partition_keys: list[Column]
    columns: list[Column]
    """The columns to analyze; each has a kind."""
    all_columns: list[Column]


def hive_type(spark_type: str) -> str:
    """Hive's name for a Spark simpleString type ('timestamp_ntz' is a Hive timestamp)."""
    return "timestamp" if spark_type == "timestamp_ntz" else spark_type


def spark_hive_type(field: Any) -> str:
    """The Hive type text of a Spark field (CHAR/VARCHAR kept from the catalog metadata)."""
    char_varchar = field.metadata.get("__CHAR_VARCHAR_TYPE_STRING") if field.metadata else None
    return hive_type(char_varchar or field.dataType.simpleString())


def read_source(spark: SparkSession, options: AnalyzeOptions) -> tuple[DataFrame, list[str]]:
    """The data and its partition key names (in the table's order)."""
    if options.spark_table:
        df = spark.table(options.spark_table)
        keys = [c.name for c in spark.catalog.listColumns(options.spark_table) if c.isPartition]
        return df, keys
    assert options.path is not None
    # Partition values are kept as the text of the folder names, as Hive does.
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    reader = spark.read.format(options.format).option("basePath", options.path)
    if options.schema:
        reader = reader.schema(options.schema)
    if options.format == "csv":
        reader = reader.option("header", "true")
    df = reader.load(options.path)
    return df, _partition_keys_of_path(df, options.path)


def _partition_keys_of_path(df: DataFrame, base: str) -> list[str]:
    """The partition keys: the 'key=value' folders between BASE and the first data file."""
    files = df.inputFiles()
    if not files:
        return []
    base_parts = _path_parts(base)
    file_parts = _path_parts(files[0])
    if file_parts[: len(base_parts)] == base_parts:
        folders = file_parts[len(base_parts) : -1]
    else:  # BASE reached through a link: take the trailing key=value folders
        folders = []
        for part in reversed(file_parts[:-1]):
            if "=" not in part:
                break
            folders.insert(0, part)
    keys = [names.unescape_path_name(p.split("=", 1)[0]) for p in folders if "=" in p]
    # Spark makes a column of each key=value folder under the base path only: a folder above
    # it that looks like one (reached by the fallback) is not a partition key.
    lowered = {c.lower(): c for c in df.columns}
    return [lowered[k.lower()] for k in keys if k.lower() in lowered]


def _path_parts(path: str) -> list[str]:
    """The folders of a local path or a URI (file:, hdfs://host/, s3a://bucket/...)."""
    parsed = urlparse(path)
    if parsed.scheme and len(parsed.scheme) > 1:  # not a Windows drive letter
        location = parsed.netloc + "/" + parsed.path
    else:
        location = os.path.abspath(path)
    return [p for p in location.split("/") if p]


def make_plan(
    df: DataFrame, keys: Sequence[str], db: str, table: str, wanted: Sequence[str] | None
) -> Plan:
    fields = {f.name: f for f in df.schema.fields}
    key_set = {k.lower() for k in keys}
    all_columns: list[Column] = []
    for field in df.schema.fields:
        if field.name.lower() in key_set:
            continue
        hive = spark_hive_type(field)
        all_columns.append(Column(field.name, hive, kind_of_type(hive)))
    by_name = {c.name.lower(): c for c in all_columns}
    if wanted:
        missing = [w for w in wanted if w.lower() not in by_name]
        if missing:
            raise JobError(
                f"no such column(s): {', '.join(missing)}; the data has "
                f"{', '.join(c.name for c in all_columns)}"
            )
        chosen = [by_name[w.lower()] for w in wanted]
    else:
        chosen = all_columns
    columns = []
    for column in chosen:
        if column.kind:
            columns.append(column)
        else:
            log.info(
                "skipping column %s: HMS keeps no statistics for type %s",
                column.name,
                column.hive_type,
            )
    partition_keys = [Column(k, spark_hive_type(fields[k]), None) for k in keys]
    return Plan(db, table, partition_keys, columns, all_columns)


def filter_partitions(df: DataFrame, plan: Plan, specs: Sequence[dict[str, str]]) -> DataFrame:
    from pyspark.sql import functions as F

    keys = {k.name.lower(): k.name for k in plan.partition_keys}
    condition: SparkColumn | None = None
    for spec in specs:
        unknown = sorted(set(spec) - set(keys))
        if unknown:
            raise JobError(
                f"partition spec names unknown key(s) {', '.join(unknown)}; the "
                f"keys are {', '.join(keys.values()) or 'none'}"
            )
        clause: SparkColumn | None = None
        for key, value in spec.items():
            if value in ("", names.DEFAULT_PARTITION_VALUE):  # Spark reads that folder as NULL
                term = F.col(keys[key]).isNull()
            else:
                term = F.col(keys[key]).cast("string") == F.lit(value)
            clause = term if clause is None else clause & term
        if clause is not None:
            condition = clause if condition is None else condition | clause
    return df if condition is None else df.where(condition)


def skip_partitions(df: DataFrame, plan: Plan, skip: set[str]) -> DataFrame:
    if not skip:
        return df
    from pyspark.sql import functions as F

    keys = [k.name for k in plan.partition_keys]
    parts = [
        F.concat(
            F.lit(f"{names.escape_path_name(k.lower())}="),
            F.coalesce(F.col(k).cast("string"), F.lit(names.DEFAULT_PARTITION_VALUE)),
        )
        for k in keys
    ]
    # The stored name escapes values; compare with the escaped names of the stored ones.
    unescaped = {"/".join(f"{k}={v}" for k, v in names.parse_partition_name(name)) for name in skip}
    return df.where(~F.concat_ws("/", *parts).isin(sorted(unescaped)))
