"""What the statistics job is asked to do: :class:`AnalyzeOptions`, checked when made."""

from __future__ import annotations

import dataclasses
import re

from metastore import names
from metastore.job.connection import Connection, Kerberos, Tls, parse_uris
from metastore.job.errors import OptionsError
from metastore.vocabulary import DEFAULT_ENGINE

FORMATS = ("parquet", "orc", "csv", "json")
DEFAULT_BATCH = 100
"""Partitions per metastore call."""
DEFAULT_SHARE = 0.05
"""--skew without a share: values holding more than 5% of the rows."""


@dataclasses.dataclass(frozen=True)
class AnalyzeOptions:
    """The options of one run of the job; invalid combinations raise OptionsError.

    At most one source: PATH (a folder of FORMAT files with Hive-style partition folders) or
    SPARK_TABLE (a table of the Spark catalog); with neither, the table's own files, found
    through the metastore (its location, format and partitions).
    """

    table: str
    """DB.TABLE in the metastore (created when missing)."""
    uri: str
    """The metastore, thrift://HOST:PORT, or several, comma-separated (see connection)."""
    path: str | None = None
    spark_table: str | None = None
    format: str | None = None
    """The files' format: with PATH (default parquet), or for a table registered without a
    storage format (by older runs of the job), to set it."""
    schema: str | None = None
    """A DDL schema for csv and json, e.g. 'a INT, b STRING'."""
    partitions: tuple[str, ...] = ()
    """Partition specs to analyze (all partitions when empty), see parse_partition_spec."""
    columns: tuple[str, ...] = ()
    """Columns to analyze (all when empty)."""
    engine: str = DEFAULT_ENGINE
    incremental: bool = False
    """Scan only partitions without statistics (and those named in PARTITIONS)."""
    batch_size: int = DEFAULT_BATCH
    skew: float | None = None
    """Find the values holding more than this share of a column's rows (None: do not)."""
    record_skew: tuple[str, ...] = ()
    """Columns whose skewed values become the table's SkewedInfo."""
    strict: bool = False
    """csv and json: fail on the first value that does not parse as its column's type,
    instead of reading it as NULL and counting it."""
    spark_conf: tuple[tuple[str, str], ...] = ()
    """Spark settings for the run's session (--conf KEY=VALUE), among them the S3A settings
    the job reads object storage with (spark.hadoop.fs.s3a.*)."""
    random_order: bool = False
    """Try the URIs in a random order (shuffled once per client), not in the given one."""
    kerberos: Kerberos | None = None
    tls: Tls | None = None

    def __post_init__(self) -> None:
        self.connection  # noqa: B018 (checks the URIs and the security)
        db, _, table = self.table.partition(".")
        if not db or not table or "." in table:
            raise OptionsError(f"table {self.table!r} must be given as DB.TABLE")
        if self.path is not None and self.spark_table is not None:
            raise OptionsError(
                "give at most one source: a path or a Spark table (neither: the table's files, "
                "found through the metastore)"
            )
        if self.format is not None and self.format not in FORMATS:
            raise OptionsError(f"unknown format {self.format!r}; use one of {', '.join(FORMATS)}")
        if self.spark_table is not None and self.format is not None:
            raise OptionsError("--format applies to files (--path, or the table's own files)")
        if self.path is not None and self.file_format in ("csv", "json") and not self.schema:
            raise OptionsError(
                f"format {self.file_format} needs a schema, e.g. --schema 'a INT, b STRING'"
            )
        if self.schema is not None and self.path is None:
            raise OptionsError("--schema applies to files under --path")
        if self.batch_size < 1:
            raise OptionsError(f"the batch size must be at least 1, not {self.batch_size}")
        if self.skew is not None and not 0 < self.skew < 1:
            raise OptionsError(f"the skew share must be between 0 and 1, not {self.skew}")
        for spec in self.partitions:
            parse_partition_spec(spec)
        for key, _ in self.spark_conf:
            if not key.startswith("spark."):
                raise OptionsError(f"--conf {key}: Spark's settings start with 'spark.'")

    @property
    def connection(self) -> Connection:
        """How the job reaches the metastore (metastore.job.client)."""
        return Connection(parse_uris(self.uri), self.random_order, self.kerberos, self.tls)

    @property
    def file_format(self) -> str:
        """The format of the files under PATH (parquet unless given)."""
        return self.format or "parquet"

    @property
    def db_name(self) -> str:
        return names.identifier(self.table.partition(".")[0])

    @property
    def table_name(self) -> str:
        return names.identifier(self.table.partition(".")[2])

    def partition_specs(self) -> list[dict[str, str]]:
        return [parse_partition_spec(spec) for spec in self.partitions]


def parse_partition_spec(spec: str) -> dict[str, str]:
    """'ds=2024-01-01' or 'ds=2024-01-01/hr=1' or 'ds=2024-01-01,hr=1' -> {key: value}.

    Keys and values are unescaped as in partition names: a value with '/' or '=' is given
    escaped (%2F, %3D), exactly as `get_partition_names` lists it.
    """
    out = {}
    for part in re.split(r"[/,](?=[^/,=]+=)", spec):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise OptionsError(f"partition spec {spec!r}: {part!r} is not key=value")
        value = value.strip().strip("'\"")
        out[names.unescape_path_name(key.strip()).lower()] = names.unescape_path_name(value)
    return out
