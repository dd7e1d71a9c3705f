"""metastore.store.params, called directly on SQLite and PostgreSQL: the parameter maps of
databases, tables, partitions, serdes and storage descriptors read, written and replaced
(a NULL value reads as "" in a map, as None in `param_values`), and `set_param_values`
setting or removing one key of many owners in at most two statements, none when nothing
changes."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from core_builders import (
    add_database,
    add_partition,
    add_table,
    rolled_back,
    set_params,
    statement_count,
)
from driver_trace import DriverStatements
from sqlalchemy.orm import Session

from metastore.store import models as m
from metastore.store import params

AWKWARD = ['a"b', "back\\slash", "{x,y}", "NULL", " spaced ", "é€😀", "", "it's", "x" * 5000]


def test_each_table_of_parameters_has_its_owner_column() -> None:
    owners: dict[params.ParamModel, str] = {
        m.DatabaseParam: "DB_ID",
        m.TableParam: "TBL_ID",
        m.PartitionParam: "PART_ID",
        m.SerDeParam: "SERDE_ID",
        m.StorageDescriptorParam: "SD_ID",
    }
    for model, owner in owners.items():
        assert params.param_owner(model) is model.__table__.c[owner]


def _owners(s: Session) -> dict[Any, list[int]]:
    """Three owners of each kind, by their *_PARAMS model."""
    db_id = add_database(s)
    table = add_table(s, db_id, "t", keys=[("ds", "string")])
    tables = [table, add_table(s, db_id, "u"), add_table(s, db_id, "v")]
    parts = [add_partition(s, table, [str(i)]) for i in range(3)]
    sds = [t.sd_id for t in tables]
    serdes = s.execute(
        sa.select(m.StorageDescriptor.SERDE_ID).where(m.StorageDescriptor.SD_ID.in_(sds))
    ).scalars()
    return {
        m.DatabaseParam: [db_id, add_database(s, "d2"), add_database(s, "d3")],
        m.TableParam: [t.tbl_id for t in tables],
        m.PartitionParam: [p.part_id for p in parts],
        m.StorageDescriptorParam: [sd for sd in sds if sd is not None],
        m.SerDeParam: [serde for serde in serdes if serde is not None],
    }


MODELS = [m.DatabaseParam, m.TableParam, m.PartitionParam, m.SerDeParam, m.StorageDescriptorParam]


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__tablename__)
def test_maps_are_read_written_and_replaced(store: sa.Engine, model: Any) -> None:
    with rolled_back(store) as s:
        first, second, third = _owners(s)[model]
        values = {f"k{i}": v for i, v in enumerate(AWKWARD)}
        params.insert_params(s, model, first, values)
        params.insert_params(s, model, second, None)
        params.insert_params(s, model, second, {})
        set_params(s, model, second, {"null": None, "Key": "v"})
        assert params.params(s, model, first) == values
        # A NULL value reads as an empty one; keys are as stored.
        assert params.params(s, model, second) == {"null": "", "Key": "v"}
        assert params.params(s, model, third) == {}
        assert params.grouped_params(s, model, [first, second, third, 10**9]) == {
            first: values,
            second: {"null": "", "Key": "v"},
        }
        assert params.grouped_params(s, model, []) == {}
        params.replace_params(s, model, first, {"k0": "new", "other": "x"})
        assert params.params(s, model, first) == {"k0": "new", "other": "x"}
        params.replace_params(s, model, second, {})
        assert params.params(s, model, second) == {}


def test_table_params_are_the_tables_maps(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db_id = add_database(s)
        one = add_table(s, db_id, "one", params={"a": "1"})
        two = add_table(s, db_id, "two")
        assert params.table_params(s, [one.tbl_id, two.tbl_id]) == {one.tbl_id: {"a": "1"}}


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__tablename__)
def test_one_key_of_many_owners(store: sa.Engine, model: Any) -> None:
    with rolled_back(store) as s:
        first, second, third = _owners(s)[model]
        set_params(s, model, first, {"k": "old", "other": "kept"})
        set_params(s, model, second, {"k": None})
        params.set_param_values(s, model, {first: "new", second: "x", third: AWKWARD[0]}, "k")
        assert params.param_values(s, model, [first, second, third, 10**9], "k") == {
            first: "new",
            second: "x",
            third: AWKWARD[0],
        }
        assert params.params(s, model, first) == {"k": "new", "other": "kept"}
        # None removes the key; owners without it are absent.
        params.set_param_values(s, model, {first: None, 10**9: None}, "k")
        assert params.param_values(s, model, [first, second], "k") == {second: "x"}
        assert params.params(s, model, first) == {"other": "kept"}
        assert params.param_values(s, model, [], "k") == {}
        # A NULL stored value is None here (not "").
        set_params(s, model, first, {"n": None})
        assert params.param_values(s, model, [first], "n") == {first: None}


def test_awkward_values_are_stored_as_given(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        ids = [add_database(s, f"d{i}") for i in range(len(AWKWARD))]
        params.set_param_values(s, m.DatabaseParam, dict(zip(ids, AWKWARD, strict=True)), 'k"{,}')
        assert params.param_values(s, m.DatabaseParam, ids, 'k"{,}') == dict(
            zip(ids, AWKWARD, strict=True)
        )


def test_at_most_two_statements_and_none_for_no_change(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        ids = [add_database(s, f"d{i}") for i in range(12)]
        for owner in ids[:6]:
            set_params(s, m.DatabaseParam, owner, {"k": "old"})
        values: dict[int, str | None] = {i: ("new" if n % 2 else None) for n, i in enumerate(ids)}
        stored: dict[int, str | None] = dict.fromkeys(ids[:6], "old")

        before = statement_count(trace)
        params.set_param_values(s, m.DatabaseParam, values, "k", stored=stored)
        assert statement_count(trace) - before == 2  # a delete and an upsert
        assert params.param_values(s, m.DatabaseParam, ids, "k") == {
            i: "new" for n, i in enumerate(ids) if n % 2
        }

        # Given what is stored, nothing changes: nothing is sent.
        now = params.param_values(s, m.DatabaseParam, ids, "k")
        before = statement_count(trace)
        params.set_param_values(s, m.DatabaseParam, values, "k", stored=now)
        params.set_param_values(s, m.DatabaseParam, {}, "k")
        assert statement_count(trace) == before

        # Only values set: one statement; only values removed: one.
        before = statement_count(trace)
        params.set_param_values(s, m.DatabaseParam, dict.fromkeys(ids, "v"), "k")
        assert statement_count(trace) - before == 1
        _ = params.param_values(s, m.DatabaseParam, ids, "k")  # another statement between
        before = statement_count(trace)
        params.set_param_values(s, m.DatabaseParam, dict.fromkeys(ids), "k")
        assert statement_count(trace) - before == 1
        assert params.param_values(s, m.DatabaseParam, ids, "k") == {}
