"""The rows a row owns, deleted with it where the database does not do it.

In colstats's own schema every child row's foreign key cascades (metastore.store.models), so
deleting a table deletes its parameters, partitions, statistics and the rest. A database
adopted from a Hive Metastore (metastore.store.adopt) keeps HMS's keys, which do not cascade,
and holds child rows colstats has no model for (privileges, constraints): there each delete of
an owner first deletes what it owns, as HMS's ObjectStore does, deepest first.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Iterable, Sequence

import sqlalchemy as sa
from sqlalchemy.orm import Session

from metastore.store import models as m

# Owned rows colstats has no model for: (child table, its column, owner table, owner column).
HMS_OWNED = (
    ("DB_PRIVS", "DB_ID", "DBS", "DB_ID"),
    ("TBL_PRIVS", "TBL_ID", "TBLS", "TBL_ID"),
    ("TBL_COL_PRIVS", "TBL_ID", "TBLS", "TBL_ID"),
    ("PART_PRIVS", "PART_ID", "PARTITIONS", "PART_ID"),
    ("PART_COL_PRIVS", "PART_ID", "PARTITIONS", "PART_ID"),
    ("KEY_CONSTRAINTS", "PARENT_TBL_ID", "TBLS", "TBL_ID"),
    ("KEY_CONSTRAINTS", "CHILD_TBL_ID", "TBLS", "TBL_ID"),
    ("KEY_CONSTRAINTS", "PARENT_CD_ID", "CDS", "CD_ID"),
    ("KEY_CONSTRAINTS", "CHILD_CD_ID", "CDS", "CD_ID"),
    ("MV_TABLES_USED", "TBL_ID", "TBLS", "TBL_ID"),
    ("IDXS", "ORIG_TBL_ID", "TBLS", "TBL_ID"),
    ("INDEX_PARAMS", "INDEX_ID", "IDXS", "INDEX_ID"),
)


@functools.cache
def _model_edges() -> tuple[tuple[str, str, str, str], ...]:
    """The ownership edges of the models: their foreign keys that cascade."""
    edges = []
    for table in m.Base.metadata.sorted_tables:
        for key in table.foreign_keys:
            if key.ondelete == "CASCADE":
                edges.append((table.name, key.parent.name, key.column.table.name, key.column.name))
    return tuple(edges)


class Ownership:
    """What the rows of each table own in one database: nothing to do where keys cascade
    (colstats's schema), the edges of the models and HMS's extra tables where they do not
    (a database adopted from HMS)."""

    def __init__(self, edges: Sequence[tuple[str, str, str, str]]) -> None:
        self.children: dict[str, list[tuple[str, str, str]]] = {}
        for child, column, owner, owner_column in edges:
            self.children.setdefault(owner, []).append((child, column, owner_column))

    def delete_owned(self, s: Session, owner: str, key: str, ids: Iterable[int]) -> None:
        """Delete the rows that the rows of table OWNER whose column KEY is among IDS own,
        their own rows first (nothing where the keys cascade)."""
        chosen = sorted({i for i in ids if i is not None})
        if not chosen or owner not in self.children:
            return
        for child, column, owner_column in self.children[owner]:
            if owner_column != key:
                owned = s.execute(
                    sa.text(
                        f'SELECT "{owner_column}" FROM "{owner}" WHERE "{key}" IN :ids'
                    ).bindparams(sa.bindparam("ids", expanding=True)),
                    {"ids": chosen},
                ).scalars()
                keys = list(owned)
            else:
                keys = chosen
            for grandchild_key in {k for _, _, k in self.children.get(child, [])}:
                below = s.execute(
                    sa.text(
                        f'SELECT "{grandchild_key}" FROM "{child}" WHERE "{column}" IN :ids'
                    ).bindparams(sa.bindparam("ids", expanding=True)),
                    {"ids": keys},
                ).scalars()
                self.delete_owned(s, child, grandchild_key, list(below))
            s.execute(
                sa.text(f'DELETE FROM "{child}" WHERE "{column}" IN :ids').bindparams(
                    sa.bindparam("ids", expanding=True)
                ),
                {"ids": keys},
            )


_CASCADING = Ownership(())


_FOUND: weakref.WeakKeyDictionary[sa.Engine, Ownership] = weakref.WeakKeyDictionary()


def ownership(s: Session) -> Ownership:
    """The ownership of the database of S (found once per engine: whether it was adopted
    from HMS, and which of HMS's tables it has)."""
    engine = s.get_bind()
    assert isinstance(engine, sa.Engine)
    found = _FOUND.get(engine)
    if found is None:
        tables = set(sa.inspect(s.connection()).get_table_names())
        found = _CASCADING
        if "COLSTATS_ADOPTION" in tables:
            edges = (*_model_edges(), *HMS_OWNED)
            found = Ownership([e for e in edges if e[0] in tables and e[2] in tables])
        _FOUND[engine] = found
    return found


def delete_owned(s: Session, owner: str, key: str, ids: Iterable[int | None]) -> None:
    """Delete what the rows of OWNER whose KEY is among IDS own, where the database does not
    (see the module docstring); call it before deleting those rows."""
    ownership(s).delete_owned(s, owner, key, [i for i in ids if i is not None])
