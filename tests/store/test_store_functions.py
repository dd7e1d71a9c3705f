"""metastore.store.functions, called directly on SQLite and PostgreSQL: permanent functions
found, listed (by name; all of them by database and name), counted, added; their resources
in order, replaced, and deleted with the function."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from core_builders import add_database, count_rows, rolled_back
from sqlalchemy.orm import Session

from metastore.store import functions
from metastore.store import models as m


def _function(s: Session, db_id: int, name: str) -> int:
    return functions.add_function(
        s,
        m.Function(
            DB_ID=db_id,
            FUNC_NAME=name,
            CLASS_NAME=f"org.example.{name}",
            OWNER_NAME="hive",
            OWNER_TYPE="USER",
            CREATE_TIME=1,
            FUNC_TYPE=1,
        ),
    )


def test_functions_are_found_listed_and_counted(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db, other, empty = add_database(s, "db"), add_database(s, "alpha"), add_database(s, "e")
        ids = {name: _function(s, db, name) for name in ("upper_x", "f", "b_f")}
        _function(s, other, "f")
        found = functions.find_function(s, db, "f")
        assert found is not None and found.FUNC_ID == ids["f"]
        assert found.CLASS_NAME == "org.example.f"
        assert functions.find_function(s, db, "F") is None  # names as stored
        assert functions.find_function(s, empty, "f") is None
        assert functions.function_names(s, db) == ["b_f", "f", "upper_x"]
        assert functions.function_names(s, empty) == []
        assert [(db_row.NAME, f.FUNC_NAME) for f, db_row in functions.all_functions(s)] == [
            ("alpha", "f"),
            ("db", "b_f"),
            ("db", "f"),
            ("db", "upper_x"),
        ]
        assert (functions.count_functions(s, db), functions.count_functions(s, empty)) == (3, 0)


def test_a_name_is_unique_in_its_database(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        _function(s, db, "f")
        with pytest.raises(sa.exc.IntegrityError):
            _function(s, db, "f")


def test_resources_are_in_order_and_replaced_whole(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        func_id, other = _function(s, db, "f"), _function(s, db, "g")
        assert functions.resources(s, func_id) == []
        uris: list[tuple[int, str | None]] = [(1, "hdfs:/z.jar"), (2, None), (3, "file:/a b.zip")]
        functions.replace_resources(s, func_id, uris)
        functions.replace_resources(s, other, [(1, "g.jar")])
        s.flush()
        found = functions.resources(s, func_id)
        assert [(r.INTEGER_IDX, r.RESOURCE_TYPE, r.RESOURCE_URI) for r in found] == [
            (0, 1, "hdfs:/z.jar"),
            (1, 2, None),
            (2, 3, "file:/a b.zip"),
        ]
        functions.replace_resources(s, func_id, [(1, "new.jar")])
        s.flush()
        assert [r.RESOURCE_URI for r in functions.resources(s, func_id)] == ["new.jar"]
        functions.replace_resources(s, func_id, [])
        s.flush()
        assert functions.resources(s, func_id) == []
        assert [r.RESOURCE_URI for r in functions.resources(s, other)] == ["g.jar"]


def test_a_function_is_deleted_with_its_resources(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        db = add_database(s)
        func_id, kept = _function(s, db, "f"), _function(s, db, "g")
        functions.replace_resources(s, func_id, [(1, "a.jar"), (1, "b.jar")])
        functions.replace_resources(s, kept, [(1, "c.jar")])
        s.flush()
        functions.delete_function(s, func_id)
        assert functions.find_function(s, db, "f") is None
        assert count_rows(s, m.FunctionResource, FUNC_ID=func_id) == 0
        assert count_rows(s, m.FunctionResource, FUNC_ID=kept) == 1
        assert functions.function_names(s, db) == ["g"]
