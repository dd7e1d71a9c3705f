"""What an Iceberg table's HMS parameters say, and what colstats adds to them; no import
beyond the standard library, for the Thrift door (which loads no PyArrow)."""

from __future__ import annotations

from collections.abc import Mapping

TABLE_TYPE = "table_type"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
ICEBERG = "ICEBERG"
STATISTICS_SNAPSHOT = "colstats.statistics.snapshot-id"
"""The table parameter that says which snapshot the HMS column statistics of an Iceberg
table describe (set by the commit that registers their Puffin file)."""
STATISTICS_COMMIT = "colstats.statistics-commit"
"""The environment context property of the statistics job's commit. Any other swap of an
Iceberg table's metadata (an append, a schema change) leaves its HMS statistics describing
an older snapshot: a colstats server then drops COLUMN_STATS_ACCURATE."""


def is_iceberg(parameters: Mapping[str, str]) -> bool:
    return parameters.get(TABLE_TYPE, "").upper() == ICEBERG


def swapped_without_statistics(
    old: Mapping[str, str], new: Mapping[str, str], context: Mapping[str, str]
) -> bool:
    """Whether an alter from OLD to NEW parameters swaps an Iceberg table's metadata other
    than by the statistics job's commit (CONTEXT: the alter's environment context)."""
    return (
        is_iceberg(new)
        and new.get(METADATA_LOCATION) != old.get(METADATA_LOCATION)
        and context.get(STATISTICS_COMMIT) != "true"
    )
