"""Reading the data of the job and planning what to analyze: columns and partition keys."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from metastore import names, spark_properties
from metastore.columns import Column
from metastore.job.errors import OptionsError

if TYPE_CHECKING:
    from pyspark.sql import Column as SparkColumn
    from pyspark.sql import DataFrame, SparkSession

    from hive_metastore_thrift import ttypes as t

log = logging.getLogger(__name__)


@dataclass
class Plan:
    """What to analyze: the table's layout and the chosen columns and partitions."""

    db: str
    table: str
    partition_keys: list[Column]
    columns: list[Column]
    """The columns to analyze; each has a kind."""
    all_columns: list[Column]


def spark_hive_type(field: Any) -> str:
    """The Hive type text of a Spark StructField (CHAR/VARCHAR kept from the catalog
    metadata), by the one converter of metastore.spark_properties."""
    return spark_properties.hive_type_of_field(field.jsonValue())


def read_spark_table(spark: SparkSession, name: str) -> tuple[DataFrame, list[str]]:
    """A table of the Spark catalog and its partition key names (in the table's order)."""
    df = spark.table(name)
    keys = [c.name for c in spark.catalog.listColumns(name) if c.isPartition]
    return df, keys


def columns_of_dataframe(df: DataFrame, keys: Sequence[str]) -> tuple[list[Column], list[Column]]:
    """The data columns and the partition key columns of DF."""
    fields = {f.name: f for f in df.schema.fields}
    key_set = {k.lower() for k in keys}
    data = [
        Column(field.name, spark_hive_type(field))
        for field in df.schema.fields
        if field.name.lower() not in key_set
    ]
    return data, [Column(k, spark_hive_type(fields[k])) for k in keys]


def make_plan(
    all_columns: list[Column],
    partition_keys: list[Column],
    db: str,
    table: str,
    wanted: Sequence[str] | None,
) -> Plan:
    by_name = {c.name.lower(): c for c in all_columns}
    if wanted:
        missing = [w for w in wanted if w.lower() not in by_name]
        if missing:
            raise OptionsError(
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
    return Plan(db, table, partition_keys, columns, all_columns)


def check_spec_keys(spec: Mapping[str, str], keys: Sequence[str]) -> None:
    """An OptionsError when a --partition SPEC names a key the table does not have (KEYS,
    as the table names them; SPEC's keys are lower-cased)."""
    unknown = sorted(set(spec) - {k.lower() for k in keys})
    if unknown:
        raise OptionsError(
            f"partition spec names unknown key(s) {', '.join(unknown)}; the "
            f"keys are {', '.join(keys) or 'none'}"
        )


def filter_partitions(df: DataFrame, plan: Plan, specs: Sequence[dict[str, str]]) -> DataFrame:
    from pyspark.sql import functions as F

    keys = {k.name.lower(): k.name for k in plan.partition_keys}
    condition: SparkColumn | None = None
    for spec in specs:
        check_spec_keys(spec, list(keys.values()))
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


@dataclass
class CatalogStorage:
    """Where and how a table of the Spark catalog keeps its files: the storage descriptor
    to register it with (None when Spark's catalog has no such table) and its partitions'
    folders by partition name."""

    storage: t.StorageDescriptor | None = None
    locations: dict[str, str] = field(default_factory=dict)


def spark_catalog_storage(spark: SparkSession, name: str) -> CatalogStorage:
    """The storage of the Spark catalog's table NAME, read from Spark's session catalog, so
    that the job registers the same files (and never a partition folder that does not
    exist). Tables Spark has no catalog entry for (views of other catalogs) get none."""
    jvm_session: Any = spark._jsparkSession
    state = jvm_session.sessionState()
    try:
        identifier = state.sqlParser().parseTableIdentifier(name)
        catalog = state.catalog()
        table = catalog.getTableMetadata(identifier)
    except Exception as e:  # not a table of the session catalog (a temporary view, ...)
        log.info("%s has no storage in Spark's session catalog (%s)", name, str(e)[:200])
        return CatalogStorage()
    found = CatalogStorage(_storage(table.storage()))
    if table.partitionColumnNames().isEmpty():
        return found
    keys = [str(k) for k in _scala_list(table.partitionColumnNames())]
    empty = spark._jvm.scala.Option.empty()  # type: ignore[union-attr]
    for part in _scala_list(catalog.listPartitions(identifier, empty)):
        spec = part.spec()
        values = [_option(spec.get(k)) for k in keys]
        location = _option(part.storage().locationUri())
        if location is not None:
            part_name = names.make_partition_name(
                [k.lower() for k in keys],
                [None if v in (None, names.DEFAULT_PARTITION_VALUE) else v for v in values],
            )
            found.locations[part_name] = str(location)
    return found


def _storage(storage: Any) -> t.StorageDescriptor:
    # Imported here: the Flight door's scans use this module's Column, without the IDL.
    from hive_metastore_thrift import ttypes as t

    properties = {str(k): str(v) for k, v in _scala_map(storage.properties())}
    return t.StorageDescriptor(
        location=_text(_option(storage.locationUri())),
        inputFormat=_text(_option(storage.inputFormat())),
        outputFormat=_text(_option(storage.outputFormat())),
        compressed=bool(storage.compressed()),
        numBuckets=-1,
        serdeInfo=t.SerDeInfo(
            name=None, serializationLib=_text(_option(storage.serde())), parameters=properties
        ),
        bucketCols=[],
        sortCols=[],
        parameters={},
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _option(value: Any) -> Any:
    """The value of a Scala Option (None for None)."""
    return value.get() if value.isDefined() else None


def _scala_list(seq: Any) -> list[Any]:
    out = []
    iterator = seq.iterator()
    while iterator.hasNext():
        out.append(iterator.next())
    return out


def _scala_map(mapping: Any) -> list[tuple[Any, Any]]:
    return [(pair._1(), pair._2()) for pair in _scala_list(mapping)]
