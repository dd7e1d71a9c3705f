"""Spark's equi-height histograms: the exact text Spark keeps in its statistics parameters.

Codec (apache/spark ``sql/catalyst/.../plans/logical/Statistics.scala``,
``HistogramSerializer``): a ``DataOutputStream`` (big-endian) of ``double height``,
``int nBins``, nBins x ``double lo``, nBins x ``double hi``, nBins x ``long ndv`` and
``int -1``, written through lz4-java's ``LZ4BlockOutputStream`` with its defaults
(lz4/lz4-java ``LZ4BlockOutputStream.java``: 64 KiB blocks, each with the magic
``LZ4Block``, a token byte ``0x10`` raw or ``0x20`` LZ4 | compression level 6, little-endian
int32 compressed length, raw length and checksum, the checksum being XXH32 with seed
0x9747b28c masked with 0x0FFFFFFF; then a last header with lengths and checksum 0), then
commons-codec's Base64 (standard alphabet, padded, one line). A block is kept raw when LZ4
does not make it smaller, as lz4-java does. The decoder reads what lz4-java's
``LZ4BlockInputStream`` reads and checks what it checks.

A bin covers ``(lo, hi]`` (the first one ``[lo, hi]``) and holds ``height`` rows, of ``ndv``
distinct values. Dates are in days and timestamps in microseconds since the epoch.
kll_bins.py converts between these histograms and Hive's KLL sketches.
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass
from typing import NamedTuple

import lz4.block
import xxhash

DEFAULT_BINS = 254
"""spark.sql.statistics.histogram.numBins's default: the bins of every Spark histogram."""
MAX_KLL_VALUES = 20_000
"""Values fed to a KLL sketch built from a histogram (kll_bins.py): about 80 per bin."""

MAGIC = b"LZ4Block"
_HEADER = struct.Struct("<8sBiii")
_BLOCK_SIZE = 1 << 16  # LZ4BlockOutputStream's default
_LEVEL = 6  # ceil(log2(block size)) - 10
_RAW, _LZ4 = 0x10, 0x20
_SEED = 0x9747B28C
_CHECK_MASK = 0x0FFFFFFF  # StreamingXXHash32.asChecksum().getValue()


class HistogramBin(NamedTuple):
    lo: float
    hi: float
    ndv: int


@dataclass(frozen=True)
class Histogram:
    """Spark's Histogram: HEIGHT rows in each bin."""

    height: float
    bins: tuple[HistogramBin, ...]


class HistogramFormatError(ValueError):
    """Text that Spark's HistogramSerializer would not read."""


# ------------------------------------------------------------------------------------------
# Codec


def histogram_payload(histogram: Histogram) -> bytes:
    """The DataOutputStream bytes HistogramSerializer.serialize compresses."""
    n = len(histogram.bins)
    los = [b.lo for b in histogram.bins]
    his = [b.hi for b in histogram.bins]
    ndvs = [b.ndv for b in histogram.bins]
    return struct.pack(f">di{n}d{n}d{n}qi", histogram.height, n, *los, *his, *ndvs, -1)


def _checksum(data: bytes) -> int:
    return xxhash.xxh32_intdigest(data, seed=_SEED) & _CHECK_MASK


def lz4_blocks(data: bytes) -> bytes:
    """DATA framed as LZ4BlockOutputStream(out) writes it, closing header included."""
    out = bytearray()
    for start in range(0, len(data), _BLOCK_SIZE):
        block = data[start : start + _BLOCK_SIZE]
        packed = lz4.block.compress(block, mode="default", store_size=False)
        method = _LZ4 if len(packed) < len(block) else _RAW
        body = packed if method == _LZ4 else block
        out += _HEADER.pack(MAGIC, method | _LEVEL, len(body), len(block), _checksum(block))
        out += body
    out += _HEADER.pack(MAGIC, _RAW | _LEVEL, 0, 0, 0)
    return bytes(out)


def encode_histogram(histogram: Histogram) -> str:
    """The text HistogramSerializer.serialize gives for HISTOGRAM (the same bytes whenever
    lz4-java's compressor and Python's liblz4 pick the same matches, which is usual)."""
    return base64.b64encode(lz4_blocks(histogram_payload(histogram))).decode("ascii")


def read_lz4_blocks(data: bytes) -> bytes:
    """The bytes of an LZ4BlockInputStream: blocks up to an empty one or the end of DATA,
    with lz4-java's checks (magic, method, lengths, checksum)."""
    out = bytearray()
    offset = 0
    while offset + _HEADER.size <= len(data):
        magic, token, packed_len, raw_len, check = _HEADER.unpack_from(data, offset)
        offset += _HEADER.size
        method, level = token & 0xF0, 10 + (token & 0x0F)
        if magic != MAGIC or method not in (_RAW, _LZ4):
            raise HistogramFormatError("not an LZ4Block stream")
        if (
            raw_len > 1 << level
            or raw_len < 0
            or packed_len < 0
            or (raw_len == 0) != (packed_len == 0)
            or (method == _RAW and raw_len != packed_len)
        ):
            raise HistogramFormatError("corrupted LZ4Block header")
        if raw_len == 0:
            if check != 0:
                raise HistogramFormatError("corrupted LZ4Block end")
            break
        body = data[offset : offset + packed_len]
        offset += packed_len
        if len(body) < packed_len:
            raise HistogramFormatError("the LZ4Block stream ends inside a block")
        block = body if method == _RAW else _decompress(body, raw_len)
        if _checksum(block) != check:
            raise HistogramFormatError("LZ4Block checksum mismatch")
        out += block
    return bytes(out)


def _decompress(body: bytes, raw_len: int) -> bytes:
    try:
        block: bytes = lz4.block.decompress(body, uncompressed_size=raw_len)
    except lz4.block.LZ4BlockError as exc:
        raise HistogramFormatError(f"corrupted LZ4 block: {exc}") from None
    if len(block) != raw_len:
        raise HistogramFormatError("an LZ4 block is shorter than its header says")
    return block


def decode_histogram(text: str) -> Histogram:
    """HistogramSerializer.deserialize: HistogramFormatError where Spark would throw.

    Like commons-codec's decodeBase64, characters outside the alphabet are skipped; like
    Spark, what follows the last ndv (the -1) is not read.
    """
    try:
        data = base64.b64decode(_pad(text))
    except binascii.Error as exc:
        raise HistogramFormatError(f"not Base64: {exc}") from None
    payload = read_lz4_blocks(data)
    if len(payload) < 12:
        raise HistogramFormatError("the histogram ends before its bin count")
    height, n = struct.unpack_from(">di", payload)
    if n < 0 or len(payload) < 12 + 24 * n:
        raise HistogramFormatError(f"the histogram does not hold {n} bins")
    values = struct.unpack_from(f">{n}d{n}d{n}q", payload, 12)
    bins = tuple(
        HistogramBin(lo, hi, ndv)
        for lo, hi, ndv in zip(values[:n], values[n : 2 * n], values[2 * n :], strict=True)
    )
    return Histogram(height, bins)


def _pad(text: str) -> str:
    kept = "".join(c for c in text if c.isalnum() or c in "+/")
    return kept + "=" * (-len(kept) % 4)
