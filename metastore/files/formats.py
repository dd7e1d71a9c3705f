"""How a table's files are read, from what the metastore says of the table: its input
format, serde and their parameters, or Spark's provider for a table Spark created as a data
source. Plain values in, a ReadSpec out (metastore.files.layout reads them from a table).

Formats read: Parquet, ORC, delimited text (LazySimpleSerDe, with its field.delim /
serialization.format, escape.delim, serialization.null.format and the table's
skip.header.line.count), CSV (OpenCSVSerde) and JSON (a JSON serde); anything else is
NotReadHere, which says what the table is stored as.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from metastore.files.errors import NotReadHere

BATCH_ROWS = 131_072
"""Rows per record batch read: the memory of a reader is bounded by this, not by files."""


@dataclasses.dataclass(frozen=True)
class ReadSpec:
    """How to read the files: the format and, for text, how a line splits into columns."""

    format: str
    """parquet, orc, csv (delimited text) or json (a JSON object per line)."""
    delimiter: str = ","
    quote: str | None = '"'
    escape: str | None = None
    header: bool = False
    null_text: tuple[str, ...] = ("",)
    """Texts read as NULL in every column."""
    empty_is_null: bool = True
    """An empty text is NULL in a column that is not a string (as Hive's text reader)."""
    names: tuple[str, ...] = ()
    """For csv: every column of the files, in order (a header line is skipped, not read)."""
    field_ids: tuple[int, ...] = ()
    """For an Iceberg table's Parquet files: the field id of each column of NAMES. Columns
    are then found by the id the file's schema carries (PARQUET:field_id), not by name:
    a column renamed since the file was written keeps its id, and a column added since is
    not in the file (NULL)."""


LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
OPEN_CSV = "org.apache.hadoop.hive.serde2.OpenCSVSerde"
JSON_SERDES = (
    "org.apache.hive.hcatalog.data.JsonSerDe",
    "org.apache.hadoop.hive.serde2.JsonSerDe",
    "org.openx.data.jsonserde.JsonSerDe",
)
TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
SPARK_FORMATS = ("parquet", "orc", "csv", "json")
"""The Spark data source providers whose files the readers read."""


def provider_spec(
    where: str, provider: str, serde: Mapping[str, str], column_names: Sequence[str]
) -> ReadSpec:
    """The ReadSpec of a table Spark created with `USING PROVIDER` (its data columns
    COLUMN_NAMES, in order; SERDE its serde parameters, where Spark keeps its options)."""
    fmt = provider.lower().rsplit(".", 1)[-1]
    if fmt not in SPARK_FORMATS:
        raise NotReadHere(
            f"{where} is a Spark {provider} table; the job reads parquet, orc, csv and "
            "json tables (use --spark-table for others)"
        )
    return ReadSpec(
        fmt,
        delimiter=serde.get("sep", serde.get("delimiter", ",")),
        header=serde.get("header", "false").lower() == "true",
        names=tuple(column_names),
    )


def hive_spec(
    where: str,
    input_format: str,
    lib: str,
    serde: Mapping[str, str],
    params: Mapping[str, str],
    column_names: Sequence[str],
) -> ReadSpec:
    """The ReadSpec of a Hive table: its INPUT_FORMAT, serde LIB and SERDE parameters, the
    table's PARAMS and its data columns COLUMN_NAMES, in order."""
    header = int(params.get("skip.header.line.count", "0") or 0) > 0
    names_ = tuple(column_names)
    if "parquet" in lib.lower() or "parquet" in input_format.lower():
        return ReadSpec("parquet")
    if "orc" in lib.lower() or "orc" in input_format.lower():
        return ReadSpec("orc")
    if lib in JSON_SERDES:
        return ReadSpec("json")
    if lib == OPEN_CSV:
        return ReadSpec(
            "csv",
            delimiter=serde.get("separatorChar", ","),
            quote=serde.get("quoteChar", '"'),
            escape=serde.get("escapeChar", "\\"),
            header=header,
            null_text=(),
            names=names_,
        )
    if lib in (LAZY_SIMPLE, "") and input_format in (TEXT_INPUT, ""):
        delimiter = hive_byte(serde.get("field.delim", serde.get("serialization.format")))
        return ReadSpec(
            "csv",
            delimiter=delimiter,
            quote=None,
            escape=serde.get("escape.delim") or None,
            header=header,
            null_text=(serde.get("serialization.null.format", "\\N"),),
            names=names_,
        )
    raise NotReadHere(
        f"{where} is stored as {input_format or 'no input format'} with serde "
        f"{lib or 'none'}; the job reads Parquet, ORC, delimited text, CSV and JSON tables"
    )


def hive_byte(text: str | None) -> str:
    """A delimiter as LazySimpleSerDe reads it: a number is a byte value ('1' is \\x01,
    '44' is ','), anything else its first character; \\x01 when absent."""
    if not text:
        return "\x01"
    try:
        return chr(int(text) & 0xFF)
    except ValueError:
        return text[0]
