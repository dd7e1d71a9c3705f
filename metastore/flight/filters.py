"""Partition pruning with the filters DuckDB sends in `endpoints` (json_filters): each
filter is a bound DuckDB expression serialized as JSON (Expression::Serialize; airport.md
section 3.7), all of them ANDed.

A partition is skipped only when the filters are certainly false or NULL for it, whatever
the values of its other columns: each expression is evaluated on the partition's key
values (typed as DuckDB reads them: metastore.flight.types.key_value) in SQL's
three-valued logic plus a fourth value, UNKNOWN, for whatever cannot be decided here (a
column that is not a partition key, a function, a cast or a constant of a type not read
here, values of types that do not compare). AND is false when one operand is false;
OR is true when one is; anything else with an UNKNOWN is UNKNOWN, and an UNKNOWN filter
keeps the partition. So a shape this module does not know prunes nothing; DuckDB keeps
its filters in the plan and applies them to the rows anyway.

Comparisons follow DuckDB: text in byte order (Python compares str by code point, which
is UTF-8 byte order), numbers by value across integer, decimal and float types, dates with
dates, timestamps with timestamps (with a time zone: the UTC instant). A NaN makes a
comparison UNKNOWN (DuckDB orders NaN above every number).
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from metastore.flight.wire import BadRequest


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
"""What this module cannot decide."""

Partition = Mapping[str, Any]
"""A partition's key values by field name (None: NULL)."""

_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "COMPARE_EQUAL": lambda a, b: bool(a == b),
    "COMPARE_NOTEQUAL": lambda a, b: bool(a != b),
    "COMPARE_LESSTHAN": lambda a, b: bool(a < b),
    "COMPARE_GREATERTHAN": lambda a, b: bool(a > b),
    "COMPARE_LESSTHANOREQUALTO": lambda a, b: bool(a <= b),
    "COMPARE_GREATERTHANOREQUALTO": lambda a, b: bool(a >= b),
}


def predicate(json_filters: str) -> Callable[[Partition], bool]:
    """Whether a partition may hold rows that pass JSON_FILTERS ('' passes everything);
    BadRequest for text that is not the JSON DuckDB sends."""
    if not json_filters:
        return lambda _: True
    try:
        document = json.loads(json_filters)
    except ValueError as e:
        raise BadRequest(f"endpoints: json_filters is not JSON ({e})") from None
    if not isinstance(document, dict):
        raise BadRequest("endpoints: json_filters must be a JSON object")
    filters = document.get("filters")
    names = document.get("column_binding_names_by_index")
    if not isinstance(filters, list) or not isinstance(names, list):
        return lambda _: True
    evaluator = _Evaluator([str(n) for n in names])

    def may_match(partition: Partition) -> bool:
        results = [evaluator.value(f, partition) for f in filters]
        return not any(r is False or r is None for r in results)

    return may_match


class _Evaluator:
    def __init__(self, names: Sequence[str]) -> None:
        self.names = names

    def value(self, expression: Any, partition: Partition) -> Any:
        """EXPRESSION's value on PARTITION: a Python value, None (NULL) or UNKNOWN."""
        if not isinstance(expression, dict):
            return UNKNOWN
        try:
            return self._value(expression, partition)
        except (KeyError, TypeError, ValueError, IndexError, ArithmeticError, OverflowError):
            return UNKNOWN

    def _value(self, e: dict[str, Any], partition: Partition) -> Any:
        kind, op = e.get("expression_class"), e.get("type")
        if kind == "BOUND_COLUMN_REF":
            name = self.names[int(e["binding"]["column_index"])]
            return partition.get(name, UNKNOWN)
        if kind == "BOUND_CONSTANT":
            return constant(e["value"])
        if kind == "BOUND_COMPARISON":
            return _compare(op, self.value(e["left"], partition), self.value(e["right"], partition))
        if kind == "BOUND_CONJUNCTION":
            operands = [self.value(c, partition) for c in e["children"]]
            return _and(operands) if op == "CONJUNCTION_AND" else _or(operands)
        if kind == "BOUND_BETWEEN":
            value = self.value(e["input"], partition)
            low = _compare(
                "COMPARE_GREATERTHANOREQUALTO" if e["lower_inclusive"] else "COMPARE_GREATERTHAN",
                value,
                self.value(e["lower"], partition),
            )
            high = _compare(
                "COMPARE_LESSTHANOREQUALTO" if e["upper_inclusive"] else "COMPARE_LESSTHAN",
                value,
                self.value(e["upper"], partition),
            )
            return _and([low, high])
        if kind == "BOUND_OPERATOR":
            return self._operator(op, [self.value(c, partition) for c in e["children"]])
        if kind == "BOUND_CAST":
            return _cast(self.value(e["child"], partition), e["return_type"])
        return UNKNOWN

    def _operator(self, op: Any, children: list[Any]) -> Any:
        if op == "OPERATOR_NOT" and len(children) == 1:
            return _not(children[0])
        if op in ("OPERATOR_IS_NULL", "OPERATOR_IS_NOT_NULL") and len(children) == 1:
            if children[0] is UNKNOWN:
                return UNKNOWN
            return (children[0] is None) == (op == "OPERATOR_IS_NULL")
        if op in ("COMPARE_IN", "COMPARE_NOT_IN") and len(children) >= 2:
            found = _or([_compare("COMPARE_EQUAL", children[0], v) for v in children[1:]])
            return found if op == "COMPARE_IN" else _not(found)
        return UNKNOWN


def _not(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    return None if value is None else UNKNOWN


def _and(values: Sequence[Any]) -> Any:
    if any(v is False for v in values):
        return False
    if any(v is UNKNOWN or not (v is None or isinstance(v, bool)) for v in values):
        return UNKNOWN
    return None if any(v is None for v in values) else True


def _or(values: Sequence[Any]) -> Any:
    if any(v is True for v in values):
        return True
    if any(v is UNKNOWN or not (v is None or isinstance(v, bool)) for v in values):
        return UNKNOWN
    return None if any(v is None for v in values) else False


def _family(value: Any) -> str | None:
    """Which values VALUE compares with (None: none that this module compares)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | decimal.Decimal):
        return "number"
    if isinstance(value, float):
        return None if math.isnan(value) else "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, datetime.datetime):
        return "timestamp"
    if isinstance(value, datetime.date):
        return "date"
    return None


def _compare(op: Any, left: Any, right: Any) -> Any:
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    if op in ("COMPARE_DISTINCT_FROM", "COMPARE_NOT_DISTINCT_FROM"):
        if left is None or right is None:
            same = left is None and right is None
        else:
            equal = _compare("COMPARE_EQUAL", left, right)
            if equal is UNKNOWN:
                return UNKNOWN
            same = bool(equal)
        return same if op == "COMPARE_NOT_DISTINCT_FROM" else not same
    if op not in _COMPARISONS:
        return UNKNOWN
    if left is None or right is None:
        return None
    family = _family(left)
    if family is None or family != _family(right):
        return UNKNOWN
    return _COMPARISONS[op](_plain(left), _plain(right))


def _plain(value: Any) -> Any:
    """VALUE as compared: an instant with a time zone as its UTC wall time."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.UTC).replace(tzinfo=None)
    return value


# -- DuckDB's values ------------------------------------------------------------------------

_INTEGERS = frozenset(
    {
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "HUGEINT",
        "UHUGEINT",
    }
)
_TIMESTAMP_UNITS = {
    "TIMESTAMP_SEC": 1_000_000,
    "TIMESTAMP_MS": 1_000,
    "TIMESTAMP": 1,
    "TIMESTAMP_TZ": 1,
    "TIMESTAMP WITH TIME ZONE": 1,
}
_EPOCH = datetime.datetime(1970, 1, 1)


def _huge(value: Any) -> int:
    """An integer DuckDB serializes as a number, or a hugeint as {upper, lower}."""
    if isinstance(value, dict):
        return (int(value["upper"]) << 64) | int(value["lower"])
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("not an integer")
    return value


def constant(value: Any) -> Any:
    """A serialized DuckDB Value ({type, is_null, value}) as a Python value (None for NULL,
    UNKNOWN for a type not read here)."""
    if not isinstance(value, dict):
        return UNKNOWN
    logical = value.get("type") or {}
    type_id = logical.get("id")
    if value.get("is_null"):
        return None
    raw = value.get("value")
    if type_id == "BOOLEAN" and isinstance(raw, bool):
        return raw
    if type_id in _INTEGERS:
        return _huge(raw)
    if type_id in ("FLOAT", "DOUBLE") and isinstance(raw, int | float):
        return float(raw)
    if type_id == "DECIMAL":
        scale = int((logical.get("type_info") or {})["scale"])
        return decimal.Decimal(_huge(raw)).scaleb(-scale)
    if type_id == "VARCHAR" and isinstance(raw, str):
        return raw
    if type_id == "DATE":
        return datetime.date(1970, 1, 1) + datetime.timedelta(days=_huge(raw))
    if type_id in _TIMESTAMP_UNITS:
        micros = _huge(raw) * _TIMESTAMP_UNITS[type_id]
        moment = _EPOCH + datetime.timedelta(microseconds=micros)
        return moment.replace(tzinfo=datetime.UTC) if "TZ" in type_id else moment
    if type_id == "TIMESTAMP_NS":
        return _EPOCH + datetime.timedelta(microseconds=_huge(raw) // 1000)
    return UNKNOWN


def _cast(value: Any, return_type: Any) -> Any:
    """VALUE cast to RETURN_TYPE where that changes nothing a comparison sees (a number to
    a wider number type, text to text, a date to a timestamp); UNKNOWN otherwise."""
    if value is UNKNOWN or value is None:
        return value
    type_id = return_type.get("id") if isinstance(return_type, dict) else None
    family = _family(value)
    if family == "number" and type_id in ("DOUBLE", "HUGEINT", "BIGINT", "DECIMAL"):
        if type_id == "DOUBLE":
            return float(value) if float(value) == value else UNKNOWN
        if type_id in ("HUGEINT", "BIGINT") and isinstance(value, int):
            return value
        return UNKNOWN
    if family == "text" and type_id == "VARCHAR":
        return value
    if family == "date" and type_id == "TIMESTAMP":
        return datetime.datetime.combine(value, datetime.time())
    return UNKNOWN
