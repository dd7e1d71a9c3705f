"""metastore.stats.rows: a StatsRow names every statistics column of TAB_COL_STATS and
PART_COL_STATS, result rows hold them in the order of STATS_COLUMNS (read by the positions
the module names), and an update leaves NUM_NULLS and LAST_ANALYZED out of what an unset
field keeps."""

from __future__ import annotations

import pytest

from metastore.stats import rows
from metastore.stats.rows import KEPT_WHEN_UNSET, STATS_COLUMNS, StatsRow
from metastore.store import models as m

# The columns of the statistics tables that are not statistics: the row's id, and the owner
# (its id and the names HMS finds it by).
OWNER_COLUMNS = {"CS_ID", "CAT_NAME", "DB_NAME", "TABLE_NAME"}


@pytest.mark.parametrize(
    ("model", "owner"),
    [(m.TableColumnStats, {"TBL_ID"}), (m.PartitionColumnStats, {"PART_ID", "PARTITION_NAME"})],
)
def test_the_statistics_columns_are_the_tables_columns_but_the_owners(
    model: type[m.TableColumnStats] | type[m.PartitionColumnStats], owner: set[str]
) -> None:
    columns = set(model.__table__.c.keys())
    assert set(STATS_COLUMNS) == columns - OWNER_COLUMNS - owner
    assert len(STATS_COLUMNS) == len(set(STATS_COLUMNS))


def test_every_position_names_its_column() -> None:
    for index, name in enumerate(STATS_COLUMNS):
        assert getattr(rows, name) == index
    # The first four say what the row is, the last two are set by every write.
    assert STATS_COLUMNS[:4] == ("COLUMN_NAME", "COLUMN_TYPE", "STATS_KIND", "ENGINE")
    assert STATS_COLUMNS[-2:] == ("NUM_NULLS", "LAST_ANALYZED")


def test_a_write_always_sets_the_null_count_and_the_time() -> None:
    """A NULL NUM_NULLS or LAST_ANALYZED replaces the stored one; every other statistic but
    the row's identity may be left unset."""
    assert "NUM_NULLS" not in KEPT_WHEN_UNSET
    assert "LAST_ANALYZED" not in KEPT_WHEN_UNSET
    assert set(KEPT_WHEN_UNSET) == set(STATS_COLUMNS) - set(STATS_COLUMNS[:4]) - {
        "NUM_NULLS",
        "LAST_ANALYZED",
    }


def test_an_empty_row_knows_nothing_but_what_it_is() -> None:
    row = rows.empty_row("c", "decimal(10,2)", "decimal", "spark")
    assert (row["COLUMN_NAME"], row["COLUMN_TYPE"], row["STATS_KIND"], row["ENGINE"]) == (
        "c",
        "decimal(10,2)",
        "decimal",
        "spark",
    )
    assert set(row) == set(STATS_COLUMNS)
    assert all(row[name] is None for name in STATS_COLUMNS[4:])  # type: ignore[literal-required]


def test_a_row_and_its_result_row_shape_go_back_and_forth() -> None:
    row: StatsRow = rows.empty_row("Ü col", "bigint", "long", "hive")
    row["LONG_LOW_VALUE"], row["BIT_VECTOR"] = -(2**63), b"\x00\xff"
    row["NUM_NULLS"], row["LAST_ANALYZED"] = 0, 7
    shaped = rows.as_row(row)
    assert len(shaped) == len(STATS_COLUMNS)
    assert shaped[rows.LONG_LOW_VALUE] == -(2**63)
    assert shaped[rows.BIT_VECTOR] == b"\x00\xff"
    assert shaped[rows.COLUMN_NAME] == "Ü col"
    assert rows.as_stats_row(shaped) == row
    # A mapping with more keys gives the same shape: only the statistics columns are read.
    assert rows.as_row({**row, "PART_NAME": "ds=1"}) == shaped


def test_a_result_row_of_another_length_is_refused() -> None:
    shaped = rows.as_row(rows.empty_row("c", "int", "long", "hive"))
    with pytest.raises(ValueError):
        rows.as_stats_row(shaped[:-1])
    with pytest.raises(ValueError):
        rows.as_stats_row((*shaped, "extra"))
    with pytest.raises(KeyError):
        rows.as_row({"COLUMN_NAME": "c"})
