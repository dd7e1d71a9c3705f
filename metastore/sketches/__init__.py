"""Column-statistics sketches in Apache Hive's formats.

* :class:`HyperLogLog` - Hive 3+/4 ``HLL`` bit vectors (NDV), bit-exact with Hive.
* :class:`FMSketch` - the older ``FM`` bit vectors, binary and Hive 2.x text.
* :func:`read_sketch` / :func:`try_read_sketch` / :func:`merge_sketch_blobs` - recognise
  and merge stored bit vectors; unreadable blobs are "no sketch" for a server.
* ``kll_*`` - Hive 4 KLL histograms (DataSketches ``KllFloatsSketch`` bytes).
* :mod:`metastore.sketches.murmur3` - Hive's Murmur3 hash and value feeding.
"""

from metastore.sketches.errors import SketchFormatError
from metastore.sketches.fm import FMSketch
from metastore.sketches.hll import HyperLogLog
from metastore.sketches.kll import (
    EqualWidthHistogram,
    EquiHeightHistogram,
    kll_build,
    kll_count,
    kll_equal_width_histogram,
    kll_histogram,
    kll_merge,
    kll_quantiles,
)
from metastore.sketches.murmur3 import (
    hash64,
    hash_binaries,
    hash_decimal,
    hash_decimals,
    hash_double,
    hash_doubles,
    hash_long,
    hash_longs,
    hash_string,
    hash_strings,
)
from metastore.sketches.sketch import (
    Sketch,
    merge_sketch_blobs,
    merge_sketches,
    read_sketch,
    try_read_sketch,
)

__all__ = [
    "EqualWidthHistogram",
    "EquiHeightHistogram",
    "FMSketch",
    "HyperLogLog",
    "Sketch",
    "SketchFormatError",
    "hash64",
    "hash_binaries",
    "hash_decimal",
    "hash_decimals",
    "hash_double",
    "hash_doubles",
    "hash_long",
    "hash_longs",
    "hash_string",
    "hash_strings",
    "kll_build",
    "kll_count",
    "kll_equal_width_histogram",
    "kll_histogram",
    "kll_merge",
    "kll_quantiles",
    "merge_sketch_blobs",
    "merge_sketches",
    "read_sketch",
    "try_read_sketch",
]
