"""Table filters (get_table_names_by_filter): HMS's filter grammar over a table's owner, last
access time and parameters, as SQL on TBLS.

Keys (HMS's hive_metastoreConstants): `hive_filter_field_owner__` is the owner,
`hive_filter_field_last_access__` the last access time (a number), and
`hive_filter_field_params__NAME` the value of parameter NAME (text; a table without it has
no value, which matches nothing). Trino finds its views with
`hive_filter_field_params__presto_view = "true"` (or `LIKE "true"`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, select

from metastore.store import models as m
from metastore.store.partition_filter.sql import Dialect, SqlBuilder
from metastore.store.partition_filter.syntax import Filter, PartitionFilterError
from metastore.vocabulary import KeyKind

OWNER = "hive_filter_field_owner__"
LAST_ACCESS = "hive_filter_field_last_access__"
PARAMS = "hive_filter_field_params__"


class TableFilterBuilder(SqlBuilder):
    def __init__(self, dialect: Dialect) -> None:
        super().__init__([], dialect)

    def _key(self, name: str) -> tuple[KeyKind, ColumnElement[Any]]:
        if name == OWNER:
            return "string", self.dialect.byte_order(m.Table.__table__.c.OWNER)
        if name == LAST_ACCESS:
            return "integer", m.Table.__table__.c.LAST_ACCESS_TIME
        if name.startswith(PARAMS) and len(name) > len(PARAMS):
            value = (
                select(m.TableParam.PARAM_VALUE)
                .where(
                    m.TableParam.TBL_ID == m.Table.TBL_ID,
                    m.TableParam.PARAM_KEY == name[len(PARAMS) :],
                )
                .scalar_subquery()
            )
            return "string", self.dialect.byte_order(value)
        raise PartitionFilterError(
            f"{name} cannot be filtered on: a table filter names {OWNER}, {LAST_ACCESS} "
            f"or {PARAMS}<parameter>"
        )


def table_filter_condition(flt: Filter, dialect: str) -> ColumnElement[bool]:
    """FLT as a condition over TBLS (raises PartitionFilterError for an unknown key or a
    literal of the wrong type)."""
    return TableFilterBuilder(Dialect(dialect)).condition(flt)
