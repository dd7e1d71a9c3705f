"""The statistics write functions on PostgreSQL have the body of the database's revision: a
revision that replaces their bodies (0012) puts them in place on upgrade and the previous ones
back on downgrade. The text each revision creates stays what it was when released: later
revisions build theirs from 0009's pieces, and a change to one of those must not change what
an earlier revision (or its downgrade) creates."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest
import sqlalchemy as sa
from conftest import empty_database

from metastore.store import migrate
from metastore.store.models import WRITE_ALONE_FUNCTION, WRITE_FUNCTION

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


@pytest.mark.postgres
def test_the_bodies_follow_the_revision(tmp_path: Path) -> None:
    for url in empty_database("postgresql", tmp_path):
        migrate.upgrade(url, "0012")
        assert _stored_bodies(url) == _expected("0012")
        migrate.downgrade(url, "0011")
        assert _stored_bodies(url) == _expected("0011")
        assert _expected("0011") != _expected("0012")
        migrate.upgrade(url, "0012")
        assert _stored_bodies(url) == _expected("0012")


# The sha256 of each revision's function texts, as released.
RELEASED = {
    ("0009_statistics_write_function", "WRITE_FUNCTION"): (
        "9820a5afaa2ce7bcf636014e4e0ddbb15e4310dd24c7aa66f743db1a78bd653c"
    ),
    ("0010_statistics_write_alone", "WRITE_ALONE_FUNCTION"): (
        "6081705cef3e5d4061c74ec0c5b7e5eca196d2a818c7cb8d97e508c16f07ff67"
    ),
    ("0011_statistics_write_accurate_first", "WRITE_FUNCTION"): (
        "abf31ddfbb7eb4cc18f86c09eeff5011bb206196eb6667fcfeca4917a3b52010"
    ),
    ("0011_statistics_write_accurate_first", "WRITE_ALONE_FUNCTION"): (
        "019bc87f829cb933060adb33acf8ed747cd1503f52a23f2855dbc2ac04cd53e0"
    ),
    ("0012_statistics_write_fewer_statements", "WRITE_FUNCTION"): (
        "e619111398434047e0b51680df91d2fd3dea6e1fdad7287673ba0cf305b8ea83"
    ),
    ("0012_statistics_write_fewer_statements", "WRITE_ALONE_FUNCTION"): (
        "a5b7f2374d3b04da1711bc10168889375b35cde8e4fa3e9910670be7fb3c1449"
    ),
}


@pytest.mark.parametrize(("module", "name"), list(RELEASED))
def test_a_revisions_function_text_is_as_released(module: str, name: str) -> None:
    text = getattr(importlib.import_module(f"{_VERSIONS}.{module}"), name)
    assert hashlib.sha256(text.encode()).hexdigest() == RELEASED[module, name]
