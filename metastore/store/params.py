"""Queries on the parameter tables (DATABASE_PARAMS, TABLE_PARAMS, PARTITION_PARAMS,
SERDE_PARAMS, SD_PARAMS): rows of (owner id, PARAM_KEY, PARAM_VALUE). Every function runs
inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import delete, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import KeyedColumnElement

from metastore.store import models as m

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
    """Set parameter KEY of many owners at once; None removes it.

    STORED, when given, is what param_values returned for these owners: owners whose value
    does not change are not written.
    """
    if stored is not None:
        values = {i: v for i, v in values.items() if stored.get(i) != v}
    if not values:
        return
    owner = param_owner(model)
    ids = sorted(values)  # one lock order for every writer
    for start in range(0, len(ids), 5000):
        s.execute(delete(model).where(owner.in_(ids[start : start + 5000]), model.PARAM_KEY == key))
    new = [
        {owner.name: i, "PARAM_KEY": key, "PARAM_VALUE": v}
        for i, v in sorted(values.items())
        if v is not None
    ]
    if new:
        s.execute(model.__table__.insert(), new)
