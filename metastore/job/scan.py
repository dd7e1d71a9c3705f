"""The one pass over the data: partial statistics per (partition, column), merged.

Every Spark task turns its Arrow batches (mapInArrow) into ColumnStates per partition and
column and sends them, pickled, to the driver, which merges them.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from metastore import names
from metastore.job.accumulators import ColumnState
from metastore.job.source import Plan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def partial_states(df: DataFrame, plan: Plan) -> dict[tuple[str, str], ColumnState]:
    """(partition name, column) -> merged statistics, from one scan of DF."""
    from pyspark.sql import functions as F

    key_names = [k.name for k in plan.partition_keys]
    kinds = {c.name: c.stats_kind for c in plan.columns}
    selected = df.select(
        *[F.col(k).cast("string").alias(k) for k in key_names],
        *[F.col(c.name) for c in plan.columns],
    )

    def compute(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        states: dict[tuple[str, str], ColumnState] = {}
        for batch in batches:
            for part_name, rows in _split_by_partition(batch, key_names):
                for column, kind in kinds.items():
                    state = ColumnState.of(kind, rows.column(column))
                    key = (part_name, column)
                    states[key] = states[key].merge(state) if key in states else state
        yield pa.RecordBatch.from_pydict(
            {
                "part": [k[0] for k in states],
                "col": [k[1] for k in states],
                "state": [pickle.dumps(s) for s in states.values()],
            },
            schema=pa.schema([("part", pa.string()), ("col", pa.string()), ("state", pa.binary())]),
        )

    merged: dict[tuple[str, str], ColumnState] = {}
    for row in selected.mapInArrow(compute, "part string, col string, state binary").collect():
        state = pickle.loads(row["state"])
        key = (row["part"], row["col"])
        merged[key] = merged[key].merge(state) if key in merged else state
    return merged


def _split_by_partition(
    batch: pa.RecordBatch, keys: Sequence[str]
) -> Iterator[tuple[str, pa.RecordBatch]]:
    """The rows of BATCH per partition, with the partition's name ('' when unpartitioned)."""
    import pyarrow.compute as pc

    if not keys:
        yield "", batch
        return
    joined = pc.binary_join_element_wise(
        *[pc.fill_null(batch.column(k), "\x01") for k in keys], "\x00"
    )
    encoded = pc.dictionary_encode(joined)
    dictionary = encoded.dictionary.to_pylist()
    for index, combined in enumerate(dictionary):
        values = [None if v == "\x01" else v for v in combined.split("\x00")]
        name = names.make_partition_name(keys, values)
        rows = batch if len(dictionary) == 1 else batch.filter(pc.equal(encoded.indices, index))
        yield name, rows
