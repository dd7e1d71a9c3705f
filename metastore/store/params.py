"""Queries on the parameter tables (DATABASE_PARAMS, TABLE_PARAMS, PARTITION_PARAMS,
SERDE_PARAMS, SD_PARAMS): rows of (owner id, PARAM_KEY, PARAM_VALUE). Every function runs
inside the caller's transaction."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import ARRAY, BigInteger, Delete, Text, bindparam, cast, delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import KeyedColumnElement

from metastore.store import lists
from metastore.store import models as m
from metastore.store.driver import driver_execute

# The tables of (owner id, PARAM_KEY, PARAM_VALUE) rows.
ParamModel = (
    type[m.DatabaseParam]
    | type[m.TableParam]
    | type[m.PartitionParam]
    | type[m.SerDeParam]
    | type[m.StorageDescriptorParam]
)


def param_owner(model: ParamModel) -> KeyedColumnElement[int]:
    """The owner id column of a *_PARAMS table: its key column other than PARAM_KEY."""
    (owner,) = (c for c in model.__table__.primary_key if c.name != "PARAM_KEY")
    return owner


def params(s: Session, model: ParamModel, owner_id: int) -> dict[str, str]:
    """The PARAM_KEY -> PARAM_VALUE map of one owner in a *_PARAMS table."""
    rows = s.execute(
        select(model.PARAM_KEY, model.PARAM_VALUE).where(param_owner(model) == owner_id)
    )
    return {k: v if v is not None else "" for k, v in rows}


def insert_params(
    s: Session, model: ParamModel, owner_id: int, values: Mapping[str, str] | None
) -> None:
    if values:
        s.execute(
            model.__table__.insert(),
            [
                {param_owner(model).name: owner_id, "PARAM_KEY": k, "PARAM_VALUE": v}
                for k, v in values.items()
            ],
        )


def replace_params(s: Session, model: ParamModel, owner_id: int, values: Mapping[str, str]) -> None:
    """Make VALUES the whole parameter map of one owner."""
    s.execute(delete(model).where(param_owner(model) == owner_id))
    insert_params(s, model, owner_id, values)


def grouped_params(
    s: Session, model: ParamModel, owner_ids: Iterable[int]
) -> dict[int, dict[str, str]]:
    owner = param_owner(model)
    out: dict[int, dict[str, str]] = {}
    ids = list(owner_ids)
    if not ids:
        return out
    for owner_id, key, value in s.execute(
        select(owner, model.PARAM_KEY, model.PARAM_VALUE).where(owner.in_(ids))
    ):
        out.setdefault(owner_id, {})[key] = value if value is not None else ""
    return out


def table_params(s: Session, tbl_ids: Sequence[int]) -> dict[int, dict[str, str]]:
    return grouped_params(s, m.TableParam, tbl_ids)


def param_values(
    s: Session, model: ParamModel, owner_ids: Sequence[int], key: str
) -> dict[int, str | None]:
    """Owner id -> value of one parameter KEY (missing owners are absent)."""
    if not owner_ids:
        return {}
    owner = param_owner(model)
    rows = s.connection().execute(
        select(owner, model.PARAM_VALUE).where(owner.in_(owner_ids), model.PARAM_KEY == key)
    )
    return {owner_id: value for owner_id, value in rows}


def set_param_values(
    s: Session,
    model: ParamModel,
    values: Mapping[int, str | None],
    key: str,
    stored: Mapping[int, str | None] | None = None,
) -> None:
    """Set parameter KEY of many owners at once; None removes it. At most two statements
    whatever the number of owners (an upsert of the values set, a delete of those removed),
    run on the driver (metastore.store.driver): statistics writes set COLUMN_STATS_ACCURATE
    this way in every call.

    STORED, when given, is the stored value of these owners (absent: none): owners whose
    value does not change are not written.
    """
    if stored is not None:
        values = {i: v for i, v in values.items() if stored.get(i) != v}
    if not values:
        return
    dialect = s.get_bind().dialect.name
    ids = sorted(values)  # one lock order for every writer
    removed = [i for i in ids if values[i] is None]
    if removed:
        params = {"owners": lists.values(dialect, removed), "key": key}
        driver_execute(s, _delete_values(model, dialect), params)
    kept = [i for i in ids if values[i] is not None]
    if not kept:
        return
    if dialect == "postgresql":
        arrays = {"owners": kept, "key": key, "values": [values[i] for i in kept]}
        driver_execute(s, _upsert_values(model, dialect), arrays)
    else:
        rows = [{"owner": i, "key": key, "value": values[i]} for i in kept]
        driver_execute(s, _upsert_values(model, dialect), rows)


@functools.cache
def _delete_values(model: ParamModel, dialect: str) -> Delete:
    """The delete of `set_param_values`: parameter `key` of the owners of `owners`."""
    owner = param_owner(model)
    return delete(model.__table__).where(
        lists.among(dialect, "owners")(owner), model.__table__.c.PARAM_KEY == bindparam("key")
    )


@functools.cache
def _upsert_values(model: ParamModel, dialect: str) -> Any:
    """The upsert of `set_param_values`: on PostgreSQL of the arrays `owners` and `values`
    (one statement for all rows), on SQLite of one row (`owner`, `value`), run over the rows
    by executemany; parameter `key` either way."""
    table = model.__table__
    owner = param_owner(model)
    columns = [owner.name, "PARAM_KEY", "PARAM_VALUE"]
    insert: Any
    if dialect == "postgresql":
        pairs = (
            func.unnest(
                cast(bindparam("owners"), ARRAY(BigInteger)), cast(bindparam("values"), ARRAY(Text))
            )
            .table_valued("owner", "value")
            .render_derived()
        )
        source = select(pairs.c.owner, cast(bindparam("key"), Text), pairs.c.value)
        insert = postgresql.insert(table).from_select(columns, source)
    else:
        row: dict[str, Any] = {owner.name: bindparam("owner"), "PARAM_KEY": bindparam("key")}
        insert = sqlite.insert(table).values({**row, "PARAM_VALUE": bindparam("value")})
    return insert.on_conflict_do_update(
        index_elements=[owner.name, "PARAM_KEY"],
        set_={"PARAM_VALUE": insert.excluded.PARAM_VALUE},
    )
