"""How the job packs file splits into Spark tasks (metastore.job.scan.task_groups)."""

from __future__ import annotations

from metastore.files.listing import Split
from metastore.job.scan import TASK_BYTES, task_groups


def splits(*sizes: int) -> list[Split]:
    return [Split(f"/data/ds={i}/part.parquet", size, f"ds={i}") for i, size in enumerate(sizes)]


def test_a_small_table_takes_a_task_per_core_of_about_equal_bytes() -> None:
    groups = task_groups(splits(*([8 << 20] * 10)), cores=2)
    assert [len(g) for g in groups] == [5, 5]
    uneven = task_groups(splits(90, 10, 40, 30, 20, 50), cores=2)
    assert sorted(sum(s.size for s in g) for g in uneven) == [120, 120]


def test_every_split_is_in_one_group() -> None:
    given = splits(*range(1, 200))
    groups = task_groups(given, cores=4)
    assert sorted(s.path for g in groups for s in g) == sorted(s.path for s in given)


def test_larger_inputs_take_more_tasks_up_to_eight_per_core() -> None:
    assert len(task_groups(splits(*([TASK_BYTES] * 5)), cores=2)) == 5
    assert len(task_groups(splits(*([TASK_BYTES] * 40)), cores=2)) == 16


def test_many_splits_take_64_a_task_and_no_group_is_empty() -> None:
    groups = task_groups(splits(*([100] * 10_000)), cores=2)
    assert len(groups) == 157 and all(groups)
    assert len(task_groups(splits(5), cores=8)) == 1
    assert task_groups([], cores=2) == []


def test_empty_files_are_spread_too() -> None:
    groups = task_groups(splits(0, 0, 0, 0), cores=2)
    assert [len(g) for g in groups] == [2, 2]
