"""The errors of the core, whatever the door a request came through.

The core (metastore.stats, metastore.store, metastore.operation) raises these; each door
translates them once into its protocol's errors: the Thrift door into the exceptions the
IDL declares for the call (metastore.hms.call), the Flight door into Flight errors. The
message is what the caller reads: it names the object at fault and, where it helps, what
to do.
"""

from __future__ import annotations


class MetastoreError(Exception):
    """A request the metastore cannot carry out; the message says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(MetastoreError):
    """A database, table, partition, column's statistics or function that does not exist."""


class InvalidInput(MetastoreError):
    """A request whose values cannot be right: statistics that do not fit their column, a
    missing field, text longer than the schema keeps."""


class InvalidObject(MetastoreError):
    """A request that names an object that does not fit: a column the table does not have,
    statistics for partitions of an unpartitioned table."""


class AlreadyExists(MetastoreError):
    """An object that is created but exists already."""


class Refused(MetastoreError):
    """The caller lacks the right the request needs (metastore.access)."""


class OutcomeUnknown(MetastoreError):
    """The database connection was lost during the commit: the change may or may not have
    been made, so the request must not simply be sent again."""
