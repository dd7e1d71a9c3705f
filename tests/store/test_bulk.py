"""metastore.store.bulk, called directly on SQLite and PostgreSQL: many rows inserted in one
batched statement, with their new ids in the rows' order, and no statement for none."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from core_builders import rolled_back, statement_count
from driver_trace import DriverStatements

from metastore.store import bulk
from metastore.store import models as m

SERDES = m.SerDe.__table__
PARAMS = m.SerDeParam.__table__


@pytest.mark.parametrize("count", [1, 2, 150])
def test_ids_come_back_in_the_rows_order_from_one_statement(store: sa.Engine, count: int) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        rows = [{"NAME": f"s{i}", "SLIB": f"lib{count - i}"} for i in range(count)]
        before = statement_count(trace)
        ids = bulk.insert_rows(s, SERDES, rows)
        assert statement_count(trace) - before == 1
        assert len(set(ids)) == count
        found = dict(
            s.execute(
                sa.select(SERDES.c.SERDE_ID, SERDES.c.NAME).where(SERDES.c.SERDE_ID.in_(ids))
            ).all()
        )
        assert [found[i] for i in ids] == [row["NAME"] for row in rows]


@pytest.mark.parametrize("count", [1, 40])
def test_rows_without_ids_are_one_statement(store: sa.Engine, count: int) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        (serde_id,) = bulk.insert_rows(s, SERDES, [{"NAME": "s"}])
        rows = [
            {"SERDE_ID": serde_id, "PARAM_KEY": f"k{i}", "PARAM_VALUE": None if i % 2 else "v"}
            for i in range(count)
        ]
        before = statement_count(trace)
        bulk.insert_all(s, PARAMS, rows)
        assert statement_count(trace) - before == 1
        stored = s.execute(
            sa.select(PARAMS.c.PARAM_KEY, PARAMS.c.PARAM_VALUE).where(PARAMS.c.SERDE_ID == serde_id)
        ).all()
        assert sorted(stored) == sorted((r["PARAM_KEY"], r["PARAM_VALUE"]) for r in rows)


def test_no_rows_send_nothing(store: sa.Engine) -> None:
    with DriverStatements(store) as trace, rolled_back(store) as s:
        bulk.insert_rows(s, SERDES, [{"NAME": "first"}])
        before = statement_count(trace)
        assert bulk.insert_rows(s, SERDES, []) == []
        bulk.insert_all(s, PARAMS, [])
        assert statement_count(trace) == before


def test_a_failing_row_fails_the_batch(store: sa.Engine) -> None:
    with rolled_back(store) as s:
        (serde_id,) = bulk.insert_rows(s, SERDES, [{"NAME": "s"}])
        rows = [{"SERDE_ID": serde_id, "PARAM_KEY": "k", "PARAM_VALUE": "v"}] * 2
        with pytest.raises(sa.exc.IntegrityError):
            bulk.insert_all(s, PARAMS, rows)
