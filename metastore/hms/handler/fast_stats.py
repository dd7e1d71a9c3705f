"""HMS's fast statistics: numFiles and totalSize of a table or partition, counted from its
folder when it is created or altered, as HMS 2.x-4.x does (MetaStoreUtils.requireCalStats,
updateTableStatsFast, updatePartitionStatsFast). Engines show them (Spark's "Statistics 940
bytes") and plan with them when nothing better is known.

Counted only on local folders (see metastore.warehouse); the client turns them off with
DO_NOT_UPDATE_STATS=true in the environment context (Trino always does). Counting from files
makes the basic statistics not accurate (BASIC_STATS leaves COLUMN_STATS_ACCURATE), unless
the context says STATS_GENERATED=TASK (a statistics task, such as Hive's or colstats' job,
wrote them). HMS 2.3 then drops the whole COLUMN_STATS_ACCURATE; colstats keeps the columns'
flags, which the file count does not touch.
"""

from __future__ import annotations

from collections.abc import Mapping

from metastore import warehouse
from metastore.stats import accurate

FAST_STATS = ("numFiles", "totalSize")
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"
STATS_GENERATED = "STATS_GENERATED"
TASK = "TASK"
USER = "USER"


def skipped(params: dict[str, str], context: Mapping[str, str]) -> bool:
    """DO_NOT_UPDATE_STATS=true in the context, or in PARAMS as older clients set it (HMS
    honours it there too and never stores it: it is removed from PARAMS)."""
    in_params = params.pop(DO_NOT_UPDATE_STATS, "").lower() == "true"
    return in_params or context.get(DO_NOT_UPDATE_STATS, "").lower() == "true"


def by_task(context: Mapping[str, str]) -> bool:
    return context.get(STATS_GENERATED) == TASK


def mark_basic(params: dict[str, str], context: Mapping[str, str]) -> None:
    """HMS's updateBasicState: basic statistics accurate after a statistics task only."""
    if by_task(context):
        params[accurate.KEY] = accurate.with_basic(params.get(accurate.KEY))
        return
    value = accurate.without_basic(params.get(accurate.KEY))
    if value is None:
        params.pop(accurate.KEY, None)
    else:
        params[accurate.KEY] = value


def count(params: dict[str, str], location: str | None, context: Mapping[str, str]) -> None:
    """Set numFiles and totalSize of PARAMS from the folder LOCATION (when local)."""
    found = warehouse.quick_stats(location)
    if found is None:
        return
    params["numFiles"], params["totalSize"] = str(found[0]), str(found[1])
    mark_basic(params, context)


def on_create(
    params: dict[str, str], location: str | None, made_folder: bool, context: Mapping[str, str]
) -> None:
    """A new table (unpartitioned) or partition: counted when its folder existed already
    and the client gave no fast statistics (a new, empty folder is not counted)."""
    if skipped(params, context) or made_folder or all(key in params for key in FAST_STATS):
        return
    count(params, location, context)


def on_alter(
    params: dict[str, str],
    old: Mapping[str, str] | None,
    location: str | None,
    context: Mapping[str, str],
) -> None:
    """An altered partition (OLD: its parameters before) or unpartitioned table (OLD None:
    counted again, as HMS does on every alter but a rename)."""
    if skipped(params, context):
        return
    if old is None:
        count(params, location, context)
        return
    given = all(key in params for key in FAST_STATS)
    generated = context.get(STATS_GENERATED) in (TASK, USER)
    same = all(params.get(key) == old.get(key) for key in FAST_STATS)
    if given and not generated and same:
        return
    if given and same:
        mark_basic(params, context)
    else:
        count(params, location, context)
