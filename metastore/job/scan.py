"""The one pass over the data: partial statistics per partition, merged on the executors.

Two ways in, one way out:

* file sources (scan_files): the driver lists the files (metastore.files.listing) and Spark runs
  tasks over small lists of Splits; each task reads its files with PyArrow in bounded batches
  and turns them into a Partial per partition. No row passes through Spark.
* a table of the Spark catalog (scan_dataframe): Spark hands the rows to Python as Arrow
  batches (mapInArrow), which become Partials the same way.

Then the Partials are merged by partition on the executors (reduceByKey), and by column for
the table level; the driver receives the table level (one Partial per column) and iterates
over the partitions' Partials (toLocalIterator, one Spark partition of about a write batch at
a time, the next one fetched while this one is written), so its memory does not grow with the
number of partitions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
import math
import pickle
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from metastore import names
from metastore.columns import Column
from metastore.files import object_storage
from metastore.files.errors import FilesError
from metastore.files.formats import ReadSpec
from metastore.files.listing import Split
from metastore.files.reading import Pieces, read_split
from metastore.job import skew
from metastore.job.accumulators import ColumnState
from metastore.job.errors import JobError
from metastore.job.progress import Reporter, Sender
from metastore.job.source import Plan
from metastore.sketches.theta import CompactThetaSketch, ThetaUnion

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import DataFrame, SparkSession

TABLE = "__table__"
"""The key of the table-level basic statistics in the per-column merge."""
EXAMPLES = 3


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else "(no message)"


@dataclasses.dataclass
class Partial:
    """What the scan found of one partition (or of a piece of it): the columns' statistics,
    skew sketches, and the basic statistics (files and bytes only from file sources)."""

    states: dict[str, ColumnState] = dataclasses.field(default_factory=dict)
    skew: dict[str, skew.FrequentValues] = dataclasses.field(default_factory=dict)
    rows: int = 0
    files: int = 0
    bytes: int = 0
    raw_bytes: int = 0
    unparsed: int = 0
    """csv and json values that did not parse as their column's type (read as NULL)..."""
    unparsed_files: int = 0
    """... in this many files ..."""
    examples: list[str] = dataclasses.field(default_factory=list)
    """... such as these (file, row, column, text)."""
    thetas: dict[str, CompactThetaSketch] = dataclasses.field(default_factory=dict)
    """Theta sketches of the columns of an Iceberg table (ThetaRequest)."""

    def merge(self, other: Partial) -> Partial:
        """Combine OTHER into this Partial (in place) and return it."""
        for column, state in other.states.items():
            mine = self.states.get(column)
            self.states[column] = state if mine is None else mine.merge(state)
        for column, theta in other.thetas.items():
            self.thetas[column] = union(self.thetas.get(column), theta)
        for column, sketch in other.skew.items():
            found = self.skew.get(column)
            self.skew[column] = sketch if found is None else found.merge(sketch)
        self.rows += other.rows
        self.files += other.files
        self.bytes += other.bytes
        self.raw_bytes += other.raw_bytes
        self.unparsed += other.unparsed
        self.unparsed_files += other.unparsed_files
        self.examples = sorted(self.examples + other.examples)[:EXAMPLES]
        return self

    def by_column(self) -> Iterator[tuple[str, Partial]]:
        """This Partial cut into one per column (and one of skew combinations and basic
        statistics), to be merged per column for the table level."""
        for column, state in self.states.items():
            found = self.skew.get(column)
            part = Partial({column: state}, {column: found} if found else {})
            if column in self.thetas:
                part.thetas[column] = self.thetas[column]
            yield column, part
        combos = {k: v for k, v in self.skew.items() if k not in self.states}
        yield (
            TABLE,
            Partial(
                {},
                combos,
                self.rows,
                self.files,
                self.bytes,
                self.raw_bytes,
                self.unparsed,
                self.unparsed_files,
                self.examples,
            ),
        )


@dataclasses.dataclass(frozen=True)
class Unparsed:
    """The csv and json values of a run that did not parse as their column's type."""

    values: int = 0
    files: int = 0
    examples: tuple[str, ...] = ()

    @classmethod
    def of(cls, table: Partial) -> Unparsed:
        return cls(table.unparsed, table.unparsed_files, tuple(table.examples))

    def text(self) -> str:
        """The summary's line, e.g. '12 values in 3 files did not parse as their type ...'."""
        values = f"{self.values:,} value{'s' if self.values != 1 else ''}"
        files = f"{self.files:,} file{'s' if self.files != 1 else ''}"
        example = f" (e.g. {self.examples[0]})" if self.examples else ""
        verb = (
            "did not parse as its type and was"
            if self.values == 1
            else ("did not parse as their type and were")
        )
        return f"{values} in {files} {verb} read as NULL{example}; --strict fails on them instead"


@dataclasses.dataclass(frozen=True)
class SkewRequest:
    """Which skew sketches to keep: every analyzed column's, and the combinations of
    columns --record-skew names (a key per row of their values together)."""

    columns: tuple[str, ...] = ()
    combinations: tuple[tuple[str, ...], ...] = ()


ThetaRequest = Mapping[str, pa.DataType]
"""The columns whose theta sketches to keep (an Iceberg table's), each with the Arrow type
of its Iceberg type: values are hashed as that type serializes them, whatever type an older
data file holds them in (an int column promoted to long since, say)."""


def union(first: CompactThetaSketch | None, second: CompactThetaSketch) -> CompactThetaSketch:
    if first is None:
        return second
    both = ThetaUnion()
    both.update(first)
    both.update(second)
    return both.result()


def add_batch(
    partial: Partial,
    batch: pa.RecordBatch,
    columns: Sequence[Column],
    skewed: SkewRequest,
    thetas: ThetaRequest | None = None,
) -> None:
    """Add the rows of BATCH (the analyzed COLUMNS, by name) to PARTIAL."""
    if batch.num_rows == 0:
        return
    partial.rows += batch.num_rows
    texts: dict[str, pa.Array] = {}
    for column in columns:
        values = batch.column(column.name)
        state = ColumnState.of(column.stats_kind, values)
        found = partial.states.get(column.name)
        partial.states[column.name] = state if found is None else found.merge(state)
        if thetas and column.name in thetas:
            sketch = ThetaUnion()
            if column.name in partial.thetas:
                sketch.update(partial.thetas[column.name])
            sketch.update_values(values.cast(thetas[column.name]))
            partial.thetas[column.name] = sketch.result()
        if column.name in skewed.columns:
            texts[column.name] = skew.as_text(column.stats_kind, values)
            partial.skew.setdefault(column.name, skew.FrequentValues()).add(texts[column.name])
    for combination in skewed.combinations:
        key = ",".join(combination)
        keys = skew.combined([texts[c] for c in combination])
        partial.skew.setdefault(key, skew.FrequentValues()).add(keys)


def _file_task(
    spec: ReadSpec,
    columns: Sequence[Column],
    skewed: SkewRequest,
    progress: Any,
    reporter: Reporter | None,
    strict: bool,
    thetas: ThetaRequest | None,
) -> Callable[[Iterable[Split]], Iterator[tuple[str, Partial]]]:
    storage = object_storage.current()  # the driver's settings, sent with the task

    def run(splits: Iterable[Split]) -> Iterator[tuple[str, Partial]]:
        object_storage.use(storage)
        partials: dict[str, Partial] = {}
        send = reporter.sender() if reporter is not None else None
        try:
            _read_splits(splits, partials, send)
        finally:
            if send is not None:
                send.close()
        for name, partial in partials.items():
            if partial.rows:  # as Spark, a partition of empty files has no rows to show
                yield name, partial

    def _read_splits(
        splits: Iterable[Split], partials: dict[str, Partial], send: Sender | None
    ) -> None:
        for split in splits:
            partial = partials.setdefault(split.partition, Partial())
            pieces = Pieces()
            try:
                for batch in read_split(split, spec, columns, pieces, strict):
                    add_batch(partial, batch, columns, skewed, thetas)
                    if send is not None:
                        send(split.index, pieces.fraction)
                if send is not None:
                    send(split.index, 1.0)
            except FilesError as e:  # as the job's own, which task_errors finds again
                raise JobError(str(e)) from e
            except Exception as e:  # one line that names the file, for the driver to show
                raise JobError(
                    f"reading {split.path} failed: {type(e).__name__}: {_first_line(e)}"
                ) from e
            partial.raw_bytes += pieces.raw_bytes
            if pieces.unparsed and split.counts_file:
                partial.unparsed += pieces.unparsed
                partial.unparsed_files += 1
                partial.examples = sorted(partial.examples + pieces.examples)[:EXAMPLES]
            if split.counts_file:
                partial.files += 1
                partial.bytes += split.size
            if progress is not None:
                progress.add((split.size if split.counts_file else 0, split.share))

    return run


def scan_files(
    spark: SparkSession,
    splits: Sequence[Split],
    spec: ReadSpec,
    plan: Plan,
    skewed: SkewRequest,
    progress: Any,
    strict: bool = False,
    reporter: Reporter | None = None,
    thetas: ThetaRequest | None = None,
) -> RDD[tuple[str, Partial]]:
    """The map side over file SPLITS: (partition name, Partial) per task and partition.
    PROGRESS is a Spark accumulator of (bytes, partitions) done, or None, REPORTER where
    tasks send how far they have read (metastore.job.progress); STRICT: a text value that
    does not parse as its type fails the run; THETAS: the columns whose theta sketches to
    keep."""
    groups = task_groups(splits, spark.sparkContext.defaultParallelism)
    task = _file_task(spec, plan.columns, skewed, progress, reporter, strict, thetas)
    rdd = spark.sparkContext.parallelize(groups, max(1, len(groups)))
    return rdd.mapPartitions(lambda tasks: task(split for group in tasks for split in group))


TASK_BYTES = 128 << 20
"""The input a task reads at least, unless that leaves a core idle. A PySpark task costs
0.1-0.2 s of its own on Python 3.11 (the worker re-reads the directory of every zip on its
path, pyspark.zip and Spark's jar among them, before each task): a task per small file made
the job's tasks cost more than its statistics."""


def task_groups(splits: Sequence[Split], cores: int) -> list[list[Split]]:
    """SPLITS in groups of about equal bytes, a Spark task each: a group per core while
    the input is small (TASK_BYTES a task at least); with more, up to 8 tasks per core,
    so that the progress shown (counted when a task ends) moves often; with many splits,
    64 splits a task, so that scheduling does not dominate. Largest splits first, each to
    the lightest group."""
    if not splits:
        return []
    total = sum(split.size for split in splits)
    wanted = max(cores, min(cores * 8, math.ceil(total / TASK_BYTES)), math.ceil(len(splits) / 64))
    count = max(1, min(len(splits), wanted))
    groups: list[list[Split]] = [[] for _ in range(count)]
    loads = [(0, index) for index in range(count)]
    heapq.heapify(loads)
    for split in sorted(splits, key=lambda split: split.size, reverse=True):
        load, index = heapq.heappop(loads)
        groups[index].append(split)
        heapq.heappush(loads, (load + max(split.size, 1), index))
    return groups


def scan_dataframe(df: DataFrame, plan: Plan, skewed: SkewRequest) -> RDD[tuple[str, Partial]]:
    """The map side over a DataFrame (the rows reach Python as Arrow batches)."""
    from pyspark.sql import functions as F

    key_names = [k.name for k in plan.partition_keys]
    columns = plan.columns
    selected = df.select(
        *[F.col(k).cast("string").alias(k) for k in key_names],
        *[F.col(c.name) for c in plan.columns],
    )

    def compute(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        partials: dict[str, Partial] = {}
        for batch in batches:
            for part_name, rows in _split_by_partition(batch, key_names):
                add_batch(partials.setdefault(part_name, Partial()), rows, columns, skewed)
        yield pa.RecordBatch.from_pydict(
            {"part": list(partials), "partial": [pickle.dumps(p) for p in partials.values()]},
            schema=pa.schema([("part", pa.string()), ("partial", pa.binary())]),
        )

    rows = selected.mapInArrow(compute, "part string, partial binary").rdd
    return rows.map(lambda row: (row["part"], pickle.loads(row["partial"])))


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


@dataclasses.dataclass
class Merged:
    """The scan's result: the table level, and the partitions' Partials to iterate over."""

    table: Partial
    partitions: RDD[tuple[str, Partial]]

    def __iter__(self) -> Iterator[tuple[str, Partial]]:
        # The next Spark partition is fetched while this one is written: two at most.
        try:
            with task_errors():
                yield from self.partitions.toLocalIterator(prefetchPartitions=True)
        finally:
            with contextlib.suppress(Exception):  # Spark may be stopped already (interrupted)
                self.partitions.unpersist()


@contextlib.contextmanager
def task_errors() -> Iterator[None]:
    """A JobError raised in a task (data the job cannot read) raised again as itself, with
    its one-line message, not as Spark's report of a failed task."""
    try:
        yield
    except JobError:
        raise
    except Exception as e:
        found = re.search(r"JobError: (.*)", str(e))
        if found is None:
            raise
        raise JobError(found.group(1).strip()) from e


def merge(partials: RDD[tuple[str, Partial]], expected_partitions: int, batch: int) -> Merged:
    """Partials merged per partition, then per column for the table level, on the executors.
    The merged partitions are spread over Spark partitions of about BATCH each, which the
    driver fetches one at a time. They are kept on the executors' disks (not in memory,
    which would grow with the partitions) from the table level's pass to the driver's: a
    second merge would cost a Python task per Spark partition. The per-column merge has a
    key per column: a task per core at most (a Python task costs 0.1-0.2 s of its own)."""
    from pyspark import StorageLevel

    spread = max(1, math.ceil(expected_partitions / batch))
    by_partition = partials.reduceByKey(Partial.merge, spread).persist(StorageLevel.DISK_ONLY)
    columns = by_partition.flatMap(lambda item: item[1].by_column())
    table = Partial()
    reducers = min(spread, partials.context.defaultParallelism)
    with task_errors():
        for _, partial in columns.reduceByKey(Partial.merge, reducers).collect():
            table.merge(partial)
    return Merged(table, by_partition)
