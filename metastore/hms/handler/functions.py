"""Calls on permanent functions (CREATE FUNCTION db.f AS 'class' USING JAR ...): kept in HMS's
FUNCS and FUNC_RU tables.

Clients find a missing function by the message: Spark treats any error whose text contains
"<db>.<name> does not exist" as "no such function", and fails otherwise. The messages here
are HMS's.
"""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import name_patterns, names
from metastore.errors import NotFound
from metastore.hms.call import call
from metastore.hms.handler.base import ServiceBase
from metastore.hms.structs import now, valid_name
from metastore.store import lookup
from metastore.store import models as m
from metastore.store.owned import delete_owned


class FunctionCalls(ServiceBase):
    def _function(
        self, s: Session, db_name: str | None, name: str | None
    ) -> tuple[m.Database, m.Function]:
        db = lookup.database(s, db_name)
        function_name = names.identifier(name or "")
        row = s.scalar(
            select(m.Function).where(
                m.Function.DB_ID == db.DB_ID, m.Function.FUNC_NAME == function_name
            )
        )
        if row is None:
            raise NotFound(f"Function {db.NAME}.{function_name} does not exist")
        return db, row

    @call(write=True)
    def create_function(self, s: Session, func: t.Function) -> None:
        if func is None:
            raise t.InvalidObjectException("no function given")
        name = valid_name("function", func.functionName)
        if not func.className:
            raise t.InvalidObjectException(f"function {name} has no class name")
        db = lookup.database(s, func.dbName, func.catName)
        exists = s.scalar(
            select(m.Function.FUNC_ID).where(
                m.Function.DB_ID == db.DB_ID, m.Function.FUNC_NAME == name
            )
        )
        if exists is not None:
            raise t.AlreadyExistsException(f"Function {db.NAME}.{name} already exists")
        row = m.Function(DB_ID=db.DB_ID, FUNC_NAME=name, CREATE_TIME=now())
        _assign(row, func)
        s.add(row)
        s.flush()
        _insert_resources(s, row.FUNC_ID, func.resourceUris)

    @call(write=False)
    def get_function(self, s: Session, dbName: str, funcName: str) -> t.Function:
        db, row = self._function(s, dbName, funcName)
        return _function_struct(s, row, db)

    @call(write=False)
    def get_functions(self, s: Session, dbName: str, pattern: str | None) -> list[str]:
        db = lookup.database(s, dbName)
        found = s.scalars(
            select(m.Function.FUNC_NAME)
            .where(m.Function.DB_ID == db.DB_ID)
            .order_by(m.Function.FUNC_NAME)
        )
        return name_patterns.filter_names(found, pattern)

    @call(write=False)
    def get_all_functions(self, s: Session) -> t.GetAllFunctionsResponse:
        rows = s.execute(
            select(m.Function, m.Database)
            .join(m.Database, m.Database.DB_ID == m.Function.DB_ID)
            .order_by(m.Database.NAME, m.Function.FUNC_NAME)
        ).all()
        return t.GetAllFunctionsResponse(
            functions=[_function_struct(s, function, db) for function, db in rows]
        )

    @call(write=True)
    def alter_function(self, s: Session, dbName: str, funcName: str, newFunc: t.Function) -> None:
        """Replace a function's class, owner and resources; its name, database and creation
        time stay (HMS keeps them too)."""
        if newFunc is None:
            raise t.InvalidOperationException("no new function given")
        try:
            db, row = self._function(s, dbName, funcName)
        except NotFound as e:
            raise t.InvalidOperationException(e.message) from None
        new_name = names.identifier(newFunc.functionName or row.FUNC_NAME)
        new_db = names.split_catalog(newFunc.dbName)[1] if newFunc.dbName else None
        if new_name != row.FUNC_NAME or (new_db and names.identifier(new_db) != db.NAME):
            raise t.InvalidOperationException(
                f"cannot alter function {db.NAME}.{row.FUNC_NAME}: renaming or moving it to "
                "another database is not supported"
            )
        if not newFunc.className:
            raise t.InvalidOperationException(f"function {row.FUNC_NAME} needs a class name")
        _assign(row, newFunc)
        s.execute(delete(m.FunctionResource).where(m.FunctionResource.FUNC_ID == row.FUNC_ID))
        _insert_resources(s, row.FUNC_ID, newFunc.resourceUris)

    @call(write=True)
    def drop_function(self, s: Session, dbName: str, funcName: str) -> None:
        _, row = self._function(s, dbName, funcName)
        delete_owned(s, "FUNCS", "FUNC_ID", [row.FUNC_ID])  # its resources
        s.execute(delete(m.Function).where(m.Function.FUNC_ID == row.FUNC_ID))


def _assign(row: m.Function, func: t.Function) -> None:
    row.CLASS_NAME = func.className
    row.OWNER_NAME = func.ownerName
    row.OWNER_TYPE = t.PrincipalType._VALUES_TO_NAMES.get(func.ownerType or t.PrincipalType.USER)
    row.FUNC_TYPE = func.functionType or t.FunctionType.JAVA


def _insert_resources(s: Session, function_id: int, uris: list[t.ResourceUri] | None) -> None:
    for i, resource in enumerate(uris or []):
        if resource is None or resource.resourceType not in t.ResourceType._VALUES_TO_NAMES:
            raise t.InvalidObjectException(
                f"resource {i} of the function has no type (JAR, FILE or ARCHIVE)"
            )
        s.add(
            m.FunctionResource(
                FUNC_ID=function_id,
                INTEGER_IDX=i,
                RESOURCE_TYPE=resource.resourceType,
                RESOURCE_URI=resource.uri,
            )
        )


def _function_struct(s: Session, row: m.Function, db: m.Database) -> t.Function:
    resources = s.scalars(
        select(m.FunctionResource)
        .where(m.FunctionResource.FUNC_ID == row.FUNC_ID)
        .order_by(m.FunctionResource.INTEGER_IDX)
    )
    return t.Function(
        functionName=row.FUNC_NAME,
        dbName=db.NAME,
        className=row.CLASS_NAME,
        ownerName=row.OWNER_NAME,
        ownerType=t.PrincipalType._NAMES_TO_VALUES.get(row.OWNER_TYPE) if row.OWNER_TYPE else None,
        createTime=row.CREATE_TIME,
        functionType=row.FUNC_TYPE,
        resourceUris=[t.ResourceUri(r.RESOURCE_TYPE, r.RESOURCE_URI) for r in resources],
        catName=db.CTLG_NAME,
    )
