"""A table's layout read from what the metastore keeps (metastore.files.layout), without
Spark or a database: Hive's formats and serdes, Spark's data source properties (the provider,
the `path` option, the schema, split in parts), formats the readers do not read; and where
files are (metastore.files.locations, metastore.files.listing) on local folders."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metastore.columns import Column
from metastore.files.errors import NotAFolder, NotFound, NotReadHere
from metastore.files.formats import ReadSpec
from metastore.files.layout import Storage, data_columns, layout_of, plain_layout
from metastore.files.listing import list_files, list_partition_folders, splits_of
from metastore.files.locations import location_of, uri_prefix
from metastore.spark_properties import split_value
from metastore.vocabulary import Kind

LAZY = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
TEXT = "org.apache.hadoop.mapred.TextInputFormat"
PARQUET = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
COLUMNS = (Column("id", "bigint"), Column("name", "varchar(10)", "who"))
KEYS = (Column("ds", "string"),)


def storage(**given: object) -> Storage:
    values: dict[str, object] = {
        "where": "db.t",
        "location": "file:/data/t",
        "input_format": "",
        "serde_lib": "",
        "serde_parameters": {},
        "table_parameters": {},
        "columns": COLUMNS,
        "keys": KEYS,
    }
    values.update(given)
    return Storage(**values)  # type: ignore[arg-type]


def spark_schema(*fields: tuple[str, object, dict[str, str]]) -> str:
    return json.dumps(
        {
            "type": "struct",
            "fields": [
                {"name": n, "type": t, "nullable": True, "metadata": m} for n, t, m in fields
            ],
        }
    )


def test_the_column_knows_its_kind_and_arrow_type() -> None:
    assert Column("n", "decimal(12,2)").kind is Kind.DECIMAL
    assert Column("n", "decimal(12,2)").arrow == pa.decimal128(12, 2)
    assert Column("a", "array<int>").kind is None
    with pytest.raises(ValueError, match="HMS keeps no statistics for a of type array<int>"):
        _ = Column("a", "array<int>").stats_kind
    assert Column("x", "not a type").arrow == pa.null()


def test_hive_text_parquet_and_a_format_not_read() -> None:
    text = layout_of(
        storage(
            input_format=TEXT,
            serde_lib=LAZY,
            serde_parameters={"field.delim": "9", "serialization.null.format": "NULL"},
            table_parameters={"skip.header.line.count": "1"},
        )
    )
    assert text.spec == ReadSpec(
        "csv",
        delimiter="\t",
        quote=None,
        header=True,
        null_text=("NULL",),
        names=("id", "name"),
    )
    assert (text.location, text.columns, text.keys) == ("file:/data/t", list(COLUMNS), list(KEYS))
    assert layout_of(storage(serde_lib=PARQUET)).spec == ReadSpec("parquet")
    with pytest.raises(NotReadHere, match=r"db\.t is stored as org\.example\.Avro with serde none"):
        layout_of(storage(input_format="org.example.Avro"))


def test_a_spark_data_source_table_reads_its_path_and_its_schema() -> None:
    schema = spark_schema(
        ("Id", "long", {}),
        ("Name", "string", {"__CHAR_VARCHAR_TYPE_STRING": "varchar(10)", "comment": "who"}),
        ("at", "timestamp_ntz", {}),
        ("ds", "string", {}),
    )
    params = {
        "spark.sql.sources.provider": "CSV",
        **split_value("spark.sql.sources.schema", schema, 50),
    }
    found = layout_of(
        storage(
            columns=(Column("col", "array<string>"),),  # Spark's placeholder column
            serde_parameters={"path": "file:/lake/t", "sep": ";", "header": "true"},
            table_parameters=params,
        )
    )
    assert found.location == "file:/lake/t"
    assert found.columns == [
        Column("Id", "bigint"),
        Column("Name", "varchar(10)", "who"),
        Column("at", "timestamp"),
    ]
    assert found.spec == ReadSpec("csv", delimiter=";", header=True, names=("Id", "Name", "at"))


def test_a_spark_schema_that_does_not_read_leaves_the_stored_columns() -> None:
    for params in (
        {"spark.sql.sources.provider": "parquet", "spark.sql.sources.schema": "{not json"},
        {"spark.sql.sources.provider": "parquet", "spark.sql.sources.schema.numParts": "2"},
        {"spark.sql.sources.schema": spark_schema(("x", "int", {}))},  # no provider: Hive's
    ):
        assert data_columns(COLUMNS, KEYS, params) == list(COLUMNS)
    with pytest.raises(NotReadHere, match=r"db\.t is a Spark delta table"):
        layout_of(storage(table_parameters={"spark.sql.sources.provider": "delta"}))


def test_a_table_registered_without_a_format_is_read_as_given() -> None:
    plain = plain_layout(storage(), "csv")
    assert plain.spec == ReadSpec("csv", header=True, names=("id", "name"))
    assert not storage().has_format and storage(serde_lib=PARQUET).has_format


def test_local_listing_partition_folders_and_pieces(tmp_path: Path) -> None:
    for day, rows in (("2024-01-01", 3), ("__HIVE_DEFAULT_PARTITION__", 2)):
        folder = tmp_path / f"ds={day}"
        folder.mkdir()
        pq.write_table(pa.table({"id": list(range(rows))}), folder / "part-0.parquet")
        (folder / "_SUCCESS").write_text("")
        (folder / ".part-0.crc").write_text("")
    listing = list_files(str(tmp_path))
    assert listing.keys == ["ds"]
    assert sorted(listing.values.items()) == [
        ("ds=2024-01-01", ["2024-01-01"]),
        ("ds=__HIVE_DEFAULT_PARTITION__", [None]),
    ]
    assert [Path(p).name for p, _ in listing.files["ds=2024-01-01"]] == ["part-0.parquet"]
    found = list_partition_folders(location_of(str(tmp_path)), ["ds"])
    assert sorted(found.files) == sorted(listing.files)
    pieces = list(splits_of("ds=2024-01-01", listing.files["ds=2024-01-01"], ReadSpec("parquet")))
    assert len(pieces) == 1 and pieces[0].counts_file
    with pytest.raises(NotFound):
        list_files(str(tmp_path / "missing"))
    with pytest.raises(NotAFolder):
        list_files(str(tmp_path / "ds=2024-01-01" / "part-0.parquet"))


def test_locations_as_the_metastore_keeps_them() -> None:
    assert location_of("/data/t/ds=a b") == "file:/data/t/ds=a b"
    assert location_of("s3a://lake/t") == "s3a://lake/t"
    assert uri_prefix("file:/data/t") == "" and uri_prefix("/data/t") == ""
    assert uri_prefix("s3a://lake/t") == "s3a://"
