"""The statistics write functions on PostgreSQL have the body of the database's revision: a
revision that replaces their bodies (0012) puts them in place on upgrade and the previous ones
back on downgrade."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import empty_database

from metastore.store import migrate
from metastore.store.models import WRITE_ALONE_FUNCTION, WRITE_FUNCTION

pytestmark = pytest.mark.postgres

_VERSIONS = "metastore.migrations.versions"
_BODIES = {
    "0011": importlib.import_module(f"{_VERSIONS}.0011_statistics_write_accurate_first"),
    "0012": importlib.import_module(f"{_VERSIONS}.0012_statistics_write_fewer_statements"),
}


def _body(create_function: str) -> str:
    """The body of a CREATE FUNCTION ... AS $$BODY$$, as pg_proc keeps it."""
    return create_function.split("$$")[1]


def _stored_bodies(url: str) -> dict[str, str]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT proname, prosrc FROM pg_proc WHERE proname IN (:one, :alone)"),
                {"one": WRITE_FUNCTION, "alone": WRITE_ALONE_FUNCTION},
            )
            return {name: source for name, source in rows}
    finally:
        engine.dispose()


def _expected(revision: str) -> dict[str, str]:
    module = _BODIES[revision]
    return {
        WRITE_FUNCTION: _body(module.WRITE_FUNCTION),
        WRITE_ALONE_FUNCTION: _body(module.WRITE_ALONE_FUNCTION),
    }


def test_the_bodies_follow_the_revision(tmp_path: Path) -> None:
    for url in empty_database("postgresql", tmp_path):
        migrate.upgrade(url, "0012")
        assert _stored_bodies(url) == _expected("0012")
        migrate.downgrade(url, "0011")
        assert _stored_bodies(url) == _expected("0011")
        assert _expected("0011") != _expected("0012")
        migrate.upgrade(url, "0012")
        assert _stored_bodies(url) == _expected("0012")
