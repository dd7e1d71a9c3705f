"""Filters as DuckDB sends them in json_filters (bound expressions, Expression::Serialize
with every property written) and as SQL, built from one small tree, so that a test can
compare the rows of a pruned scan with DuckDB's own answer to the same filter."""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Sequence
from typing import Any

NO_LOCATION = 2**64 - 1


def _expression(kind: str, op: str, **fields: Any) -> dict[str, Any]:
    return {
        "expression_class": kind,
        "type": op,
        "alias": "",
        "query_location": NO_LOCATION,
        **fields,
    }


def _type(type_id: str) -> dict[str, Any]:
    return {"id": type_id, "type_info": None}


@dataclasses.dataclass(frozen=True)
class Node:
    sql: str
    tree: dict[str, Any]


def column(name: str, type_id: str, names: Sequence[str]) -> Node:
    return Node(
        name,
        _expression(
            "BOUND_COLUMN_REF",
            "BOUND_COLUMN_REF",
            return_type=_type(type_id),
            binding={"table_index": 0, "column_index": list(names).index(name)},
            depth=0,
        ),
    )


def constant(value: Any, type_id: str) -> Node:
    if value is None:
        serialized: dict[str, Any] = {"type": _type(type_id), "is_null": True}
        return Node(
            f"NULL::{type_id}", _expression("BOUND_CONSTANT", "VALUE_CONSTANT", value=serialized)
        )
    if type_id == "DATE":
        raw: Any = (value - datetime.date(1970, 1, 1)).days
        text = f"DATE '{value.isoformat()}'"
    elif type_id == "VARCHAR":
        raw, text = value, "'" + value.replace("'", "''") + "'"
    else:
        raw, text = value, f"{value}::{type_id}"
    serialized = {"type": _type(type_id), "is_null": False, "value": raw}
    return Node(text, _expression("BOUND_CONSTANT", "VALUE_CONSTANT", value=serialized))


_SQL_OPS = {
    "COMPARE_EQUAL": "=",
    "COMPARE_NOTEQUAL": "<>",
    "COMPARE_LESSTHAN": "<",
    "COMPARE_GREATERTHAN": ">",
    "COMPARE_LESSTHANOREQUALTO": "<=",
    "COMPARE_GREATERTHANOREQUALTO": ">=",
    "COMPARE_DISTINCT_FROM": "IS DISTINCT FROM",
    "COMPARE_NOT_DISTINCT_FROM": "IS NOT DISTINCT FROM",
}


def compare(op: str, left: Node, right: Node) -> Node:
    return Node(
        f"({left.sql} {_SQL_OPS[op]} {right.sql})",
        _expression("BOUND_COMPARISON", op, left=left.tree, right=right.tree),
    )


def conjunction(op: str, *children: Node) -> Node:
    word = " AND " if op == "CONJUNCTION_AND" else " OR "
    return Node(
        "(" + word.join(c.sql for c in children) + ")",
        _expression("BOUND_CONJUNCTION", op, children=[c.tree for c in children]),
    )


def operator(op: str, *children: Node) -> Node:
    tree = _expression(
        "BOUND_OPERATOR", op, return_type=_type("BOOLEAN"), children=[c.tree for c in children]
    )
    if op == "OPERATOR_NOT":
        return Node(f"(NOT {children[0].sql})", tree)
    if op == "OPERATOR_IS_NULL":
        return Node(f"({children[0].sql} IS NULL)", tree)
    if op == "OPERATOR_IS_NOT_NULL":
        return Node(f"({children[0].sql} IS NOT NULL)", tree)
    listed = ", ".join(c.sql for c in children[1:])
    word = "IN" if op == "COMPARE_IN" else "NOT IN"
    return Node(f"({children[0].sql} {word} ({listed}))", tree)


def between(value: Node, low: Node, high: Node) -> Node:
    return Node(
        f"({value.sql} BETWEEN {low.sql} AND {high.sql})",
        _expression(
            "BOUND_BETWEEN",
            "COMPARE_BETWEEN",
            input=value.tree,
            lower=low.tree,
            upper=high.tree,
            lower_inclusive=True,
            upper_inclusive=True,
        ),
    )


def function(name: str, *children: Node, type_id: str = "VARCHAR") -> Node:
    return Node(
        f"{name}(" + ", ".join(c.sql for c in children) + ")",
        _expression(
            "BOUND_FUNCTION",
            "BOUND_FUNCTION",
            return_type=_type(type_id),
            children=[c.tree for c in children],
            name=name,
            arguments=[],
            original_arguments=[],
            has_serialize=False,
            is_operator=False,
        ),
    )


def json_filters(filters: Sequence[Node], names: Sequence[str]) -> str:
    """The json_filters of FILTERS over the columns NAMES (column_binding_names_by_index)."""
    return json.dumps(
        {"filters": [f.tree for f in filters], "column_binding_names_by_index": list(names)},
        separators=(",", ":"),
    )
