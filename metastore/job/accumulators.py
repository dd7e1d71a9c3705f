"""Column statistics computed from Arrow arrays: partial states that merge.

One ColumnState summarises one column of one partition (or of a piece of one). States are
built from Arrow arrays with Arrow's C kernels and the vectorized sketches of
metastore.sketches, merged in any order, and turned into the Thrift ColumnStatisticsObj that
HMS stores. This is what the Spark job runs on every Arrow batch (see metastore.job.scan).

Conventions, the same as Hive's statistics task:

* NULLs are counted in numNulls and never enter a sketch, a minimum or a maximum; NaN
  doubles enter the sketch and the histogram but not the minimum or maximum.
* numDVs is the HyperLogLog estimate of the distinct non-null values, capped at their
  count, plus one when the column has nulls: HMS readers such as Trino take NULL to be one
  of the distinct values (they subtract one again when numNulls > 0).
* Dates are days and timestamps whole seconds since the epoch (floored); both are hashed
  as longs and enter the histogram as epoch seconds.
* String lengths are in characters (Unicode code points).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from hive_metastore_thrift import ttypes as t
from metastore.sketches import HyperLogLog, kll_build, kll_merge, try_read_sketch
from metastore.thrift_stats import STRUCTS, make_union, python_decimal, thrift_decimal, union_member
from metastore.vocabulary import Kind

SECONDS_PER_DAY = 86_400


_NUMPY_TYPES: dict[Any, np.dtype[Any]] = {
    pa.int32(): np.dtype(np.int32),
    pa.int64(): np.dtype(np.int64),
    pa.float64(): np.dtype(np.float64),
}


def _numbers(values: pa.Array, arrow_type: pa.DataType) -> npt.NDArray[Any]:
    """VALUES (no nulls) cast to ARROW_TYPE (int32, int64 or float64), as a NumPy view of
    the Arrow buffer. Arrow's own to_numpy imports pandas, a third of a second in each of
    the job's Python workers, which otherwise never need it."""
    cast = values.cast(arrow_type)
    dtype = _NUMPY_TYPES[arrow_type]
    return np.frombuffer(
        cast.buffers()[1], dtype=dtype, count=len(cast), offset=cast.offset * dtype.itemsize
    )


@dataclasses.dataclass
class ColumnState:
    """Partial statistics of one column; merge() combines two of them."""

    kind: Kind
    rows: int = 0
    nulls: int = 0
    low: Any = None
    high: Any = None
    trues: int = 0
    falses: int = 0
    total_length: int = 0
    max_length: int = 0
    sketch: HyperLogLog | None = None
    histogram: bytes | None = None
    distinct: int | None = None
    """Distinct non-null values known otherwise (a theta sketch's estimate), for a state
    whose HyperLogLog is unknown (sketch None although the kind has one)."""
    histogram_unknown: bool = False
    """Whether part of the rows is known only by statistics without a histogram."""

    @classmethod
    def empty(cls, kind: Kind) -> ColumnState:
        return cls(kind=kind, sketch=HyperLogLog() if kind.has_ndv else None)

    @classmethod
    def from_thrift(cls, kind: Kind, obj: t.ColumnStatisticsObj, rows: int) -> ColumnState:
        """The state of ROWS rows that stored statistics OBJ describe, to merge new rows
        into; a sketch or histogram OBJ lacks (a metastore that returns none) is unknown, and
        stays unknown through merges."""
        data = union_member(obj.statsData)
        state = cls(kind=kind, rows=rows, nulls=data.numNulls or 0)
        if kind is Kind.BOOLEAN:
            state.trues, state.falses = data.numTrues or 0, data.numFalses or 0
            return state
        if kind in (Kind.STRING, Kind.BINARY):
            state.max_length = data.maxColLen or 0
            state.total_length = round((data.avgColLen or 0.0) * state.non_null)
        else:
            state.low, state.high = _python_bounds(kind, data.lowValue, data.highValue)
            state.histogram = data.histogram or None
            state.histogram_unknown = state.histogram is None and state.non_null > 0
        if kind.has_ndv:
            found = try_read_sketch(data.bitVectors)
            state.sketch = found if isinstance(found, HyperLogLog) else None
            if state.sketch is None and state.non_null == 0:
                state.sketch = HyperLogLog()
        return state

    @classmethod
    def of(cls, kind: Kind, array: pa.Array | pa.ChunkedArray) -> ColumnState:
        """The statistics of ARRAY, holding values of a column of KIND."""
        state = cls.empty(kind)
        state.rows = len(array)
        state.nulls = array.null_count
        values = array.drop_null() if state.nulls else array
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        if len(values) == 0:
            return state
        if kind is Kind.BOOLEAN:
            state.trues = int(pc.sum(values.cast(pa.int64())).as_py())
            state.falses = len(values) - state.trues
        elif kind in (Kind.STRING, Kind.BINARY):
            lengths = pc.utf8_length(values) if kind is Kind.STRING else pc.binary_length(values)
            state.total_length = int(pc.sum(lengths.cast(pa.int64())).as_py())
            state.max_length = int(pc.max(lengths).as_py())
            if kind is Kind.STRING:
                assert state.sketch is not None
                state.sketch.add_strings(values)
        else:
            state._add_ordered(values)
        return state

    def _add_ordered(self, values: pa.Array) -> None:
        assert self.sketch is not None
        if self.kind is Kind.DECIMAL:
            extremes = pc.min_max(values)
            self.low, self.high = extremes["min"].as_py(), extremes["max"].as_py()
            as_double = _numbers(values, pa.float64())
            self.sketch.add_doubles(as_double)
            self.histogram = kll_build(as_double)
            return
        if self.kind is Kind.DOUBLE:
            numbers = _numbers(values, pa.float64())
            self.sketch.add_doubles(numbers)
            finite = numbers[~np.isnan(numbers)]
            if finite.size:
                self.low, self.high = float(finite.min()), float(finite.max())
            self.histogram = kll_build(numbers)
            return
        if self.kind is Kind.DATE:
            numbers = _numbers(values, pa.int32()).astype(np.int64)
            seconds = numbers * SECONDS_PER_DAY
        elif self.kind is Kind.TIMESTAMP:
            micros = _numbers(values, pa.int64())
            unit = values.type.unit
            per_second = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
            numbers = np.floor_divide(micros, per_second)
            seconds = numbers
        else:
            numbers = _numbers(values, pa.int64())
            seconds = numbers
        self.sketch.add_longs(numbers)
        self.low, self.high = int(numbers.min()), int(numbers.max())
        self.histogram = kll_build(seconds)

    def merge(self, other: ColumnState) -> ColumnState:
        """Combine OTHER into this state (in place) and return it."""
        if other.kind != self.kind:
            raise ValueError(f"cannot merge {other.kind} statistics into {self.kind}")
        self.rows += other.rows
        self.nulls += other.nulls
        self.trues += other.trues
        self.falses += other.falses
        self.total_length += other.total_length
        self.max_length = max(self.max_length, other.max_length)
        if other.low is not None:
            self.low = other.low if self.low is None else min(self.low, other.low)
            self.high = other.high if self.high is None else max(self.high, other.high)
        if self.sketch is not None and other.sketch is not None:
            self.sketch.merge(other.sketch)
        elif self.kind.has_ndv:  # one side's is unknown: so is the merge's
            self.sketch = None
        self.histogram_unknown = self.histogram_unknown or other.histogram_unknown
        histograms = [h for h in (self.histogram, other.histogram) if h is not None]
        self.histogram = (
            None
            if self.histogram_unknown
            else kll_merge(histograms)
            if len(histograms) == 2
            else (histograms[0] if histograms else None)
        )
        return self

    @property
    def non_null(self) -> int:
        return self.rows - self.nulls

    def ndv(self) -> int:
        """Distinct values, NULL counted as one (see the module docstring)."""
        if self.sketch is not None:
            distinct = min(self.sketch.estimate(), self.non_null)
        else:
            distinct = min(self.distinct or 0, self.non_null)
        return distinct + (1 if self.nulls else 0)

    def to_thrift(self, column: str, column_type: str) -> t.ColumnStatisticsObj:
        """The ColumnStatisticsObj HMS stores for this state."""
        stats: Any
        if self.kind is Kind.BOOLEAN:
            stats = t.BooleanColumnStatsData(
                numTrues=self.trues, numFalses=self.falses, numNulls=self.nulls
            )
        elif self.kind is Kind.BINARY:
            stats = t.BinaryColumnStatsData(
                maxColLen=self.max_length, avgColLen=self._average_length(), numNulls=self.nulls
            )
        elif self.kind is Kind.STRING:
            stats = t.StringColumnStatsData(
                maxColLen=self.max_length,
                avgColLen=self._average_length(),
                numNulls=self.nulls,
                numDVs=self.ndv(),
                bitVectors=self.sketch.to_bytes() if self.sketch is not None else None,
            )
        else:
            low, high = self._thrift_bounds()
            stats = STRUCTS[self.kind](
                lowValue=low,
                highValue=high,
                numNulls=self.nulls,
                numDVs=self.ndv(),
                bitVectors=self.sketch.to_bytes() if self.sketch is not None else None,
                histogram=self.histogram,
            )
        return t.ColumnStatisticsObj(
            colName=column, colType=column_type, statsData=make_union(self.kind, stats)
        )

    def _average_length(self) -> float:
        return self.total_length / self.non_null if self.non_null else 0.0

    def _thrift_bounds(self) -> tuple[Any, Any]:
        if self.low is None:
            return None, None
        if self.kind is Kind.DECIMAL:
            return thrift_decimal(self.low), thrift_decimal(self.high)
        if self.kind is Kind.DATE:
            return t.Date(self.low), t.Date(self.high)
        if self.kind is Kind.TIMESTAMP:
            return t.Timestamp(self.low), t.Timestamp(self.high)
        return self.low, self.high


def _python_bounds(kind: Kind, low: Any, high: Any) -> tuple[Any, Any]:
    """Thrift's low and high values as a state keeps them (see _thrift_bounds)."""
    if low is None or high is None:
        return None, None
    if kind is Kind.DECIMAL:
        return python_decimal(low), python_decimal(high)
    if kind is Kind.DATE:
        return low.daysSinceEpoch, high.daysSinceEpoch
    if kind is Kind.TIMESTAMP:
        return low.secondsSinceEpoch, high.secondsSinceEpoch
    return low, high
