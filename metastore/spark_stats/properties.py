"""The ``spark.sql.statistics.*`` parameters: names, long values, and the digest that
recognises Spark's echo of what colstats derived.

Keys (apache/spark ``sql/hive/.../HiveExternalCatalog.scala``, ``statsToProperties`` /
``statsFromProperties``; ``sql/catalyst/.../catalog/interface.scala``, ``CatalogColumnStat``):
``spark.sql.statistics.totalSize``, ``.numRows`` and ``.colStats.<column>.<stat>``; Spark
finds the columns by their ``.version`` key. A value over 4,000 characters (in practice only
a histogram) is written as ``<key>.numParts`` and ``<key>.part.<i>`` of 4,000 characters
(``CatalogTable.splitLargeTableProp``; the length is ``spark.sql.hive.tablePropertyLengthThreshold``
when set), and read back by ``CatalogTable.readLargeTableProp``: the key itself when present,
otherwise the parts, all of which must be there.

The echo: Spark reads the parameters into its statistics objects and, on its next
``alter_table`` / ``alter_partitions``, writes them back re-serialised (``toMap``): the same
text for numbers and min/max, the histogram compressed again by lz4-java (usually, but not
always, the same bytes) and split at Spark's threshold. The digest therefore hashes a
canonical form (split values joined, histograms decoded), one hash per group of keys: the
table's own keys (totalSize, numRows) and each column's keys. A group whose hash matches was
sent back as colstats derived it; Spark keeps the statistics of columns it does not
re-analyze (``AnalyzeColumnCommand`` merges new column statistics into the old ones), so a
new ``ANALYZE ... FOR COLUMNS a`` changes only the groups of the table and of ``a``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from metastore.spark_properties import read_large
from metastore.spark_stats.histogram import HistogramFormatError, decode_histogram
from metastore.spark_stats.histogram import histogram_payload as _payload

PREFIX = "spark.sql.statistics."
TOTAL_SIZE = PREFIX + "totalSize"
NUM_ROWS = PREFIX + "numRows"
COLUMN_PREFIX = PREFIX + "colStats."
VERSION = "2"
"""CatalogColumnStat.VERSION."""

DIGEST_KEY = PREFIX + "colstats.digest"
"""The parameter colstats adds next to the keys it derives, for recognising their echo. Under
Spark's prefix, so that Spark hides it from users (DESCRIBE, SHOW TBLPROPERTIES) and keeps or
drops it together with its statistics; Spark's reader ignores keys it does not know."""

TABLE_GROUP = ""
"""The digest group of the table's (or partition's) own keys."""


def is_spark_key(key: str) -> bool:
    """A key of Spark's statistics (not colstats' digest beside them)."""
    return key.startswith(PREFIX) and key != DIGEST_KEY


def spark_keys(parameters: Mapping[str, str]) -> dict[str, str]:
    """The spark.sql.statistics.* entries of PARAMETERS."""
    return {k: v for k, v in parameters.items() if is_spark_key(k)}


def column_names(parameters: Mapping[str, str]) -> list[str]:
    """The columns with statistics, found as Spark finds them: by their .version key."""
    suffix = ".version"
    return sorted(
        k[len(COLUMN_PREFIX) : -len(suffix)]
        for k in parameters
        if k.startswith(COLUMN_PREFIX) and k.endswith(suffix)
    )


def column_values(parameters: Mapping[str, str], column: str) -> dict[str, str]:
    """COLUMN's statistics, stat name -> text, with a split histogram joined (ValueError
    when its parts are incomplete)."""
    prefix = f"{COLUMN_PREFIX}{column}."
    values = {
        k[len(prefix) :]: v
        for k, v in parameters.items()
        if k.startswith(prefix) and not k.startswith(prefix + "histogram.")
    }
    histogram = read_large(parameters, prefix + "histogram")
    if histogram is not None:
        values["histogram"] = histogram
    return values


# ------------------------------------------------------------------------------------------
# Digest


def _joined(parameters: Mapping[str, str]) -> dict[str, str]:
    """PARAMETERS with split values joined (parts that do not add up are kept as they are)."""
    out = dict(parameters)
    for count_key in [k for k in parameters if k.endswith(".numParts")]:
        base = count_key.removesuffix(".numParts")
        try:
            value = read_large(parameters, base)
        except ValueError:
            continue
        assert value is not None
        out.pop(count_key)
        for i in range(int(parameters[count_key])):
            out.pop(f"{base}.part.{i}", None)
        out[base] = value
    return out


def _canonical(key: str, value: str) -> str:
    if key.endswith(".histogram"):
        try:
            return "histogram:" + _payload(decode_histogram(value)).hex()
        except HistogramFormatError:
            pass
    return value


def _groups(spark: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """The keys of each digest group: TABLE_GROUP, and each column (longest name first, so
    that a column 'a.b' is not taken for stats of 'a')."""
    columns = sorted(column_names(spark), key=len, reverse=True)
    groups: dict[str, dict[str, str]] = {}
    for key, value in spark.items():
        group = next(
            (c for c in columns if key.startswith(f"{COLUMN_PREFIX}{c}.")),
            TABLE_GROUP,
        )
        groups.setdefault(group, {})[key] = value
    return groups


def _hash(keys: Mapping[str, str]) -> str:
    text = "\n".join(f"{k}={_canonical(k, v)}" for k, v in sorted(keys.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def group_hashes(parameters: Mapping[str, str]) -> dict[str, str]:
    """Group -> hash of its spark.sql.statistics.* keys in canonical form."""
    return {g: _hash(keys) for g, keys in _groups(_joined(spark_keys(parameters))).items()}


def statistics_digest(parameters: Mapping[str, str]) -> str | None:
    """The value of DIGEST_KEY for the spark.sql.statistics.* keys of PARAMETERS: compact
    JSON of group -> 16 hex digits of SHA-256; None when there are no such keys."""
    hashes = group_hashes(parameters)
    return json.dumps(hashes, sort_keys=True, separators=(",", ":")) if hashes else None


def echoed_groups(parameters: Mapping[str, str]) -> set[str]:
    """The groups of PARAMETERS' spark.sql.statistics.* keys that are exactly what colstats
    derived, per the DIGEST_KEY parameter sent with them (none when it is absent or not
    colstats' JSON)."""
    try:
        recorded = json.loads(parameters.get(DIGEST_KEY) or "{}")
    except ValueError:
        return set()
    if not isinstance(recorded, dict):
        return set()
    return {g for g, h in group_hashes(parameters).items() if recorded.get(g) == h}
