"""Calls on permanent functions (CREATE FUNCTION db.f AS 'class' USING JAR ...): kept in HMS's
FUNCS and FUNC_RU tables.

Clients find a missing function by the message: Spark treats any error whose text contains
"<db>.<name> does not exist" as "no such function", and fails otherwise. The messages here
are HMS's.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from hive_metastore_thrift import ttypes as t
from metastore import name_patterns, names
from metastore.errors import NotFound
from metastore.hms.call import call
from metastore.hms.handler.base import ServiceBase
from metastore.hms.structs import now, valid_name
from metastore.store import functions, lookup
from metastore.store import models as m


class FunctionCalls(ServiceBase):
    def _function(
        self, s: Session, db_name: str | None, name: str | None
    ) -> tuple[m.Database, m.Function]:
        db = lookup.database(s, db_name)
        function_name = names.identifier(name or "")
        row = functions.find_function(s, db.DB_ID, function_name)
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
        if functions.find_function(s, db.DB_ID, name) is not None:
            raise t.AlreadyExistsException(f"Function {db.NAME}.{name} already exists")
        row = m.Function(DB_ID=db.DB_ID, FUNC_NAME=name, CREATE_TIME=now())
        _assign(row, func)
        uris = _resources(func.resourceUris)
        functions.replace_resources(s, functions.add_function(s, row), uris)

    @call(write=False)
    def get_function(self, s: Session, dbName: str, funcName: str) -> t.Function:
        db, row = self._function(s, dbName, funcName)
        return _function_struct(s, row, db)

    @call(write=False)
    def get_functions(self, s: Session, dbName: str, pattern: str | None) -> list[str]:
        db = lookup.database(s, dbName)
        return name_patterns.filter_names(functions.function_names(s, db.DB_ID), pattern)

    @call(write=False)
    def get_all_functions(self, s: Session) -> t.GetAllFunctionsResponse:
        return t.GetAllFunctionsResponse(
            functions=[_function_struct(s, row, db) for row, db in functions.all_functions(s)]
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
        uris = _resources(newFunc.resourceUris)
        _assign(row, newFunc)
        functions.replace_resources(s, row.FUNC_ID, uris)

    @call(write=True)
    def drop_function(self, s: Session, dbName: str, funcName: str) -> None:
        _, row = self._function(s, dbName, funcName)
        functions.delete_function(s, row.FUNC_ID)


def _assign(row: m.Function, func: t.Function) -> None:
    row.CLASS_NAME = func.className
    row.OWNER_NAME = func.ownerName
    row.OWNER_TYPE = t.PrincipalType._VALUES_TO_NAMES.get(func.ownerType or t.PrincipalType.USER)
    row.FUNC_TYPE = func.functionType or t.FunctionType.JAVA


def _resources(uris: list[t.ResourceUri] | None) -> list[tuple[int, str | None]]:
    """(type, uri) of each of URIS; InvalidObjectException for one without a type."""
    out: list[tuple[int, str | None]] = []
    for i, resource in enumerate(uris or []):
        if resource is None or resource.resourceType not in t.ResourceType._VALUES_TO_NAMES:
            raise t.InvalidObjectException(
                f"resource {i} of the function has no type (JAR, FILE or ARCHIVE)"
            )
        out.append((resource.resourceType, resource.uri))
    return out


def _function_struct(s: Session, row: m.Function, db: m.Database) -> t.Function:
    resources = functions.resources(s, row.FUNC_ID)
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
