"""Exceptions shared by the sketch readers."""


class SketchFormatError(ValueError):
    """A blob is not a readable Hive sketch (empty, truncated, foreign or corrupt).

    Callers that must never fail (the Thrift server) treat such a blob as "no sketch";
    see :func:`metastore.sketches.sketch.try_read_sketch`.
    """
