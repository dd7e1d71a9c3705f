"""A table's column (or partition key): its name, its Hive type and its comment. The one
Column of the code base: the store reads and writes them (metastore.store.storage), the
job plans and reads them, the Flight door serves them; what each needs besides is derived
from the type (the kind of statistics HMS keeps for it, its Arrow type)."""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

from metastore.vocabulary import HiveTypeError, Kind, kind_of_type

if TYPE_CHECKING:
    import pyarrow as pa


@dataclasses.dataclass(frozen=True)
class Column:
    """NAME as the table or the data spells it, HIVE_TYPE as the metastore keeps it."""

    name: str
    hive_type: str
    comment: str | None = None

    @functools.cached_property
    def kind(self) -> Kind | None:
        """The kind of statistics HMS keeps for the column (None: arrays, maps, structs)."""
        return kind_of_type(self.hive_type)

    @property
    def stats_kind(self) -> Kind:
        """The kind, for a column that is analyzed (it has one)."""
        if self.kind is None:
            raise ValueError(f"HMS keeps no statistics for {self.name} of type {self.hive_type}")
        return self.kind

    @functools.cached_property
    def arrow(self) -> pa.DataType:
        """Its Arrow type (metastore.arrow_types); Arrow's null type for a type text that
        is not a Hive type (such a column reads as NULL)."""
        import pyarrow as pa

        from metastore import arrow_types

        try:
            return arrow_types.arrow_type(self.hive_type)
        except HiveTypeError:
            return pa.null()
