"""The job's options: partition specs, and the combinations AnalyzeOptions refuses."""

from __future__ import annotations

import pytest

from metastore.job.errors import JobError
from metastore.job.options import AnalyzeOptions, parse_partition_spec
from metastore.job.source import check_spec_keys


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ds=2024-01-01", {"ds": "2024-01-01"}),
        ("DS=2024-01-01/hr=1", {"ds": "2024-01-01", "hr": "1"}),
        ("ds='2024-01-01',hr=1", {"ds": "2024-01-01", "hr": "1"}),
        ("ds=a b%2Fc%3Dd e", {"ds": "a b/c=d e"}),
        ("ds=a,b", {"ds": "a,b"}),
        ("ds=__HIVE_DEFAULT_PARTITION__", {"ds": "__HIVE_DEFAULT_PARTITION__"}),
    ],
)
def test_partition_specs_are_parsed_like_partition_names(
    spec: str, expected: dict[str, str]
) -> None:
    assert parse_partition_spec(spec) == expected


@pytest.mark.parametrize("spec", ["ds", "=1", " =1", "hr/ds=1"])
def test_bad_partition_specs_are_refused(spec: str) -> None:
    with pytest.raises(JobError, match="is not key=value"):
        parse_partition_spec(spec)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"table": "t"}, "must be given as DB.TABLE"),
        ({"table": "a.b.c"}, "must be given as DB.TABLE"),
        ({"spark_table": "s.t"}, "at most one source"),
        ({"skew": 1.5}, "between 0 and 1"),
        ({"format": "avro"}, "unknown format 'avro'"),
        ({"format": "csv"}, "format csv needs a schema"),
        ({"batch_size": 0}, "at least 1"),
        ({"partitions": ("ds",)}, "is not key=value"),
    ],
)
def test_invalid_options_are_refused_with_what_to_change(
    options: dict[str, object], message: str
) -> None:
    given: dict[str, object] = {"table": "db.t", "uri": "thrift://h:9083", "path": "/data"}
    with pytest.raises(JobError, match=message):
        AnalyzeOptions(**{**given, **options})  # type: ignore[arg-type]


def test_valid_options_name_the_table_in_lower_case() -> None:
    options = AnalyzeOptions(
        table="Sales.Orders",
        uri="thrift://h:9083",
        path="/data",
        format="csv",
        schema="a INT",
        partitions=("ds=1/hr=2",),
    )
    assert (options.db_name, options.table_name) == ("sales", "orders")
    assert options.partition_specs() == [{"ds": "1", "hr": "2"}]


def test_a_partition_spec_with_a_key_the_table_lacks_is_refused() -> None:
    check_spec_keys({"ds": "2024-01-01"}, ["DS", "hr"])  # keys compare lower-cased
    with pytest.raises(JobError, match=r"unknown key\(s\) day, x; the keys are DS, hr"):
        check_spec_keys({"day": "1", "x": "2", "ds": "3"}, ["DS", "hr"])
    with pytest.raises(JobError, match="the keys are none"):
        check_spec_keys({"ds": "1"}, [])
