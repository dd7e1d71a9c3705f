"""Basic statistics as the job sets them on a partition's or table's parameters."""

from __future__ import annotations

from metastore.job.writer import BASIC_CONTEXT, with_basic
from metastore.stats import accurate

MEASURED = {"numFiles": "2", "totalSize": "2048", "rawDataSize": "4096", "numRows": "100"}


def test_the_metastore_is_told_not_to_count_and_that_a_task_measured() -> None:
    assert BASIC_CONTEXT.properties == {"DO_NOT_UPDATE_STATS": "true", "STATS_GENERATED": "TASK"}


def test_new_basic_statistics_are_accurate() -> None:
    params = with_basic({"EXTERNAL": "TRUE"}, MEASURED)
    assert params == {
        "EXTERNAL": "TRUE",
        **MEASURED,
        accurate.KEY: '{"BASIC_STATS":"true"}',
    }


def test_unchanged_statistics_change_nothing() -> None:
    stored = with_basic({}, MEASURED)
    assert stored is not None
    stored[accurate.KEY] = accurate.with_columns(stored[accurate.KEY], ["a", "b"]) or ""
    assert with_basic(stored, MEASURED) is None


def test_changed_data_leaves_no_column_accurate() -> None:
    stored = {**MEASURED, accurate.KEY: '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}'}
    params = with_basic(stored, {**MEASURED, "numRows": "101"})
    assert params is not None
    assert params["numRows"] == "101"
    assert params[accurate.KEY] == '{"BASIC_STATS":"true"}'


def test_a_row_count_alone_is_not_accurate_basic_statistics() -> None:
    """A Spark catalog table: the job counts rows but does not see the files."""
    stored = {accurate.KEY: '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}', "numRows": "5"}
    params = with_basic(stored, {"numRows": "5"})
    assert params == {"numRows": "5", accurate.KEY: '{"COLUMN_STATS":{"a":"true"}}'}
    assert with_basic({}, {"numRows": "0"}) == {"numRows": "0"}
