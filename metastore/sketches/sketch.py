"""Recognising stored bit vectors (``ColumnStatisticsData.bitVectors``) and merging them.

A blob is recognised by its first bytes:

* ``HLL`` -> :class:`~metastore.sketches.hll.HyperLogLog` (Hive 3+);
* ``FM`` -> :class:`~metastore.sketches.fm.FMSketch`, binary (Hive 3+);
* ``{`` -> :class:`~metastore.sketches.fm.FMSketch` from Hive 2.x text;
* anything else - empty, truncated, foreign, or the 2-byte ``HL`` placeholder that Hive
  writes for a NULL sketch on PostgreSQL (HIVE-25417) - is not a sketch.

A server should use :func:`try_read_sketch` and :func:`merge_sketch_blobs`, which turn an
unreadable blob into "no sketch" instead of an error.
"""

from __future__ import annotations

from collections.abc import Iterable

from metastore.sketches.errors import SketchFormatError
from metastore.sketches.fm import FMSketch
from metastore.sketches.hll import HyperLogLog

Sketch = HyperLogLog | FMSketch


def read_sketch(blob: bytes | bytearray | memoryview | str | None) -> Sketch:
    """Parse a stored bit vector; raises :class:`SketchFormatError` if it is not one.

    ``str`` is accepted for Thrift clients that carry bitVectors as a string (Hive 2.x
    IDL); it is encoded as Latin-1 so binary content survives unchanged.
    """
    if blob is None:
        raise SketchFormatError("no sketch: the blob is None")
    if isinstance(blob, str):
        try:
            data = blob.encode("latin-1")
        except UnicodeEncodeError as exc:
            raise SketchFormatError("no sketch: a str blob must be Latin-1") from exc
    elif isinstance(blob, bytes | bytearray | memoryview):
        data = bytes(blob)
    else:
        raise SketchFormatError(f"no sketch: expected bytes, got {type(blob).__name__}")
    if not data:
        raise SketchFormatError("no sketch: the blob is empty")
    if data.startswith(b"HLL"):
        return HyperLogLog.from_bytes(data)
    if data.startswith(b"FM"):
        return FMSketch.from_bytes(data)
    if data.startswith(b"{"):
        return FMSketch.from_text(data)
    if data == b"HL":
        raise SketchFormatError("no sketch: 'HL' is Hive's placeholder for a NULL sketch")
    raise SketchFormatError(f"no sketch: unrecognised blob starting with {data[:4]!r}")


def try_read_sketch(blob: bytes | bytearray | memoryview | str | None) -> Sketch | None:
    """Like :func:`read_sketch`, but None for anything that is not a readable sketch."""
    try:
        return read_sketch(blob)
    except SketchFormatError:
        return None


def merge_sketches(sketches: Iterable[Sketch]) -> Sketch | None:
    """Union of sketches of one kind, or None if there are none or the kinds differ.

    HyperLogLogs of different p are merged at the smallest p (Hive folds the larger p
    down); FM sketches must have equal vector counts (otherwise None). The inputs are
    not modified.
    """
    items = list(sketches)
    if not items:
        return None
    if all(isinstance(s, HyperLogLog) for s in items):
        hlls = sorted((s for s in items if isinstance(s, HyperLogLog)), key=lambda s: s.p)
        merged_hll = hlls[0].copy()
        for hll in hlls[1:]:
            merged_hll.merge(hll)
        return merged_hll
    if all(isinstance(s, FMSketch) for s in items):
        fms = [s for s in items if isinstance(s, FMSketch)]
        if len({fm.num_bit_vectors for fm in fms}) != 1:
            return None
        merged_fm = fms[0].copy()
        for fm in fms[1:]:
            merged_fm.merge(fm)
        return merged_fm
    return None


def merge_sketch_blobs(
    blobs: Iterable[bytes | bytearray | memoryview | str | None],
) -> Sketch | None:
    """Union of stored bit vectors for the NDV of a union of partitions.

    None if the list is empty, any blob is absent or unreadable, or they cannot be
    merged (different kinds, or FM sketches of different sizes). Never raises for bad
    blobs. ``merged.ndv()`` is then the NDV as Hive reports it.
    """
    sketches = []
    for blob in blobs:
        sketch = try_read_sketch(blob)
        if sketch is None:
            return None
        sketches.append(sketch)
    return merge_sketches(sketches)
