"""How the Flight door's callers receive errors (metastore.operation.Door): the core's
errors translated once into Flight errors.

DuckDB's Airport re-raises a Flight error whose extra_info is msgpack
{exception_type, message} with exception_type InvalidInputException (or Constraint,
Permission) as that DuckDB exception (airport.md section 1); the message is what the user
reads. So an unknown table, a column the table lacks or a request that does not fit is
an InvalidInputException there, not DuckDB's generic "IO Error". A connection lost during
the commit cannot happen here (the door only reads); a failure of the database is
FlightUnavailableError, which DuckDB retries (it retries only gRPC UNAVAILABLE).
"""

from __future__ import annotations

import pyarrow.flight as flight
from sqlalchemy.exc import DBAPIError

from metastore.errors import MetastoreError, OutcomeUnknown, Refused
from metastore.flight.wire import pack


def typed(message: str, exception_type: str = "InvalidInputException") -> Exception:
    """A Flight error DuckDB re-raises as its EXCEPTION_TYPE with MESSAGE."""
    detail = pack({"exception_type": exception_type, "message": message})
    error: Exception = flight.FlightServerError(message, extra_info=detail)
    return error


class FlightDoor:
    """How the Flight door's callers receive errors (metastore.operation.Door)."""

    known: tuple[type[Exception], ...] = (flight.FlightError,)

    def error(self, name: str, error: MetastoreError) -> Exception:
        if isinstance(error, Refused):
            return typed(error.message, "PermissionException")
        if isinstance(error, OutcomeUnknown):
            unknown: Exception = flight.FlightServerError(f"{name}: {error.message}")
            return unknown
        return typed(error.message)

    def internal(self, name: str, error: Exception) -> Exception:
        translated: Exception
        if isinstance(error, DBAPIError) and error.connection_invalidated:
            translated = flight.FlightUnavailableError(
                f"{name}: the database is unreachable: {error}"
            )
        else:
            translated = flight.FlightServerError(
                f"internal error in {name}: {type(error).__name__}: {error}"
            )
        return translated


FLIGHT_DOOR = FlightDoor()
