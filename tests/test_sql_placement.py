"""SQL lives in the store (metastore/store, metastore/stats, the migrations): the doors, the
CLI and the rest ask the store's functions for what they need and hold a session only to pass
it on. A module elsewhere may import `Session` (to type what it passes on) and SQLAlchemy's
errors (to translate them); it may not build statements, nor run them on a session.

STILL_WITH_SQL lists the modules that do today, each with the reason: it may only shrink (a
module that no longer has SQL must leave it, and no module may join it).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "metastore"
SQL_HOMES = ("store", "stats", "migrations")

ALLOWED_IMPORTS = {"sqlalchemy.orm.Session", "sqlalchemy.exc"}
"""What a module outside the store may take from SQLAlchemy: a session's type, its errors."""

SESSION_NAMES = {"s", "session", "conn", "connection"}
"""The names a session goes by in this code base (`self.s` too)."""

SQL_METHODS = {"execute", "scalar", "scalars", "add", "add_all", "delete", "get", "merge"}

STILL_WITH_SQL: dict[str, str] = {}


def _module_name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _outside_the_store() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] not in SQL_HOMES
    ]


def _receiver(node: ast.expr) -> str | None:
    """`s` for s.execute(...), `s` for self.s.execute(...)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.value.id == "self" else None
    return None


def sql_in(path: Path) -> list[str]:
    """What PATH does of SQL: imports beyond ALLOWED_IMPORTS, statements run on a session."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if name not in ALLOWED_IMPORTS and node.module not in ALLOWED_IMPORTS:
                    found.append(f"line {node.lineno}: imports {name}")
        elif isinstance(node, ast.Import):
            found += [
                f"line {node.lineno}: imports {alias.name}"
                for alias in node.names
                if alias.name.startswith("sqlalchemy") and alias.name not in ALLOWED_IMPORTS
            ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_METHODS
            and _receiver(node.func.value) in SESSION_NAMES
        ):
            found.append(f"line {node.lineno}: runs {node.func.attr} on a session")
    return found


def test_sql_is_only_in_the_store() -> None:
    offending = {
        _module_name(path): found
        for path in _outside_the_store()
        if (found := sql_in(path)) and _module_name(path) not in STILL_WITH_SQL
    }
    assert offending == {}, "ask the store (metastore/store, metastore/stats) instead"


def test_the_list_of_modules_still_with_sql_only_shrinks() -> None:
    clean = [
        name for name in STILL_WITH_SQL if not (ROOT / name).exists() or not sql_in(ROOT / name)
    ]
    assert clean == [], "these modules have no SQL any more: take them off STILL_WITH_SQL"


def test_the_check_sees_sql() -> None:
    """The check itself finds what it looks for (a handler of the store's own code)."""
    assert sql_in(PACKAGE / "store" / "functions.py")
