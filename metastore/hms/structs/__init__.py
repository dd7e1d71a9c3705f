"""Thrift structs of the IDL and the rows of the HMS schema, both ways, with the validation
the wire cannot do (Python's Thrift code never enforces `required`): databases, tables and
their storage, column statistics.
"""

from __future__ import annotations

import re
import time

from hive_metastore_thrift import ttypes as t
from metastore import names

_VALID_NAME = re.compile(r"[A-Za-z0-9_]+")


def valid_name(kind: str, name: str | None) -> str:
    """A database or table name, lower-cased; Hive allows letters, digits and '_'."""
    if not name or not _VALID_NAME.fullmatch(name):
        raise t.InvalidObjectException(
            f"invalid {kind} name {name!r}: use letters, digits and '_' only"
        )
    return names.identifier(name)


def now() -> int:
    return int(time.time())
