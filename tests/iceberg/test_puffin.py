"""Puffin files: written and read back, checked byte by byte against the spec, read by
pyiceberg's own reader with each theta blob deserialized by Apache DataSketches, refused in
one line when they are not valid, on local disk and on S3."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

import datasketches
import lz4.frame
import numpy as np
import pyarrow as pa
import pytest
import zstandard
from pyiceberg.table.puffin import PuffinFile as PyicebergPuffin
from pyiceberg.table.statistics import StatisticsFile
from s3_server import BUCKET, S3Server

from metastore.files import object_storage
from metastore.iceberg import puffin
from metastore.sketches.theta import ThetaUnion

THETA = "apache-datasketches-theta-v1"
SNAPSHOT = 3051729675574597004
SEQUENCE = 7


def theta_blob(field_id: int, values: pa.Array, compression: str | None = None) -> puffin.Blob:
    sketch = ThetaUnion()
    sketch.update_values(values)
    compact = sketch.result()
    return puffin.Blob(
        type=THETA,
        fields=[field_id],
        snapshot_id=SNAPSHOT,
        sequence_number=SEQUENCE,
        data=compact.to_bytes(),
        properties={"ndv": str(round(compact.estimate))},
        compression=compression,
    )


@pytest.fixture
def blobs() -> list[puffin.Blob]:
    return [
        theta_blob(1, pa.array(np.arange(100_000, dtype=np.int64))),
        theta_blob(2, pa.array([f"name-{i % 300}" for i in range(5000)]), compression="zstd"),
        theta_blob(4, pa.array([], pa.float64())),
    ]


def test_round_trip(tmp_path: Path, blobs: list[puffin.Blob]) -> None:
    location = str(tmp_path / "metadata" / "stats.puffin")
    written = puffin.write(location, blobs)
    assert written.path == location
    assert written.file_size == (tmp_path / "metadata" / "stats.puffin").stat().st_size
    found = puffin.read(location)
    assert found.blobs == written.blobs
    assert [found.data(b) for b in found.blobs] == [b.data for b in blobs]
    assert found.properties["created-by"].startswith("colstats version ")
    assert [(b.type, b.fields, b.snapshot_id, b.sequence_number) for b in found.blobs] == [
        (THETA, [1], SNAPSHOT, SEQUENCE),
        (THETA, [2], SNAPSHOT, SEQUENCE),
        (THETA, [4], SNAPSHOT, SEQUENCE),
    ]
    assert [b.compression_codec for b in found.blobs] == [None, "zstd", None]
    assert [p.name for p in (tmp_path / "metadata").iterdir()] == ["stats.puffin"]


def test_the_bytes_follow_the_spec(tmp_path: Path, blobs: list[puffin.Blob]) -> None:
    """Magic, blobs, then magic, JSON payload, its size, flags 0, magic; offsets and lengths
    as the footer says; the footer's size is what StatisticsFile records."""
    location = str(tmp_path / "s.puffin")
    written = puffin.write(location, blobs, properties={"created-by": "tests"})
    content = Path(location).read_bytes()
    assert content[:4] == b"PFA1" and content[-4:] == b"PFA1"
    size, flags = struct.unpack("<iI", content[-12:-4])
    assert flags == 0
    assert written.footer_size == size + 16
    footer = content[-written.footer_size :]
    assert footer[:4] == b"PFA1"
    metadata = json.loads(footer[4 : 4 + size].decode("utf-8"))
    assert metadata["properties"] == {"created-by": "tests"}
    offset = 4
    for blob, described in zip(blobs, metadata["blobs"], strict=True):
        stored = content[described["offset"] : described["offset"] + described["length"]]
        assert described["offset"] == offset
        offset += described["length"]
        assert described["type"] == THETA
        assert described["snapshot-id"] == SNAPSHOT
        assert described["sequence-number"] == SEQUENCE
        assert described["properties"] == dict(blob.properties)
        if blob.compression is None:
            assert "compression-codec" not in described
            assert stored == blob.data
        else:
            assert described["compression-codec"] == "zstd"
            assert zstandard.ZstdDecompressor().decompress(stored) == blob.data
    assert offset == len(content) - written.footer_size


def test_pyicebergs_reader_and_datasketches_read_it(
    tmp_path: Path, blobs: list[puffin.Blob]
) -> None:
    location = str(tmp_path / "s.puffin")
    puffin.write(location, blobs)
    read = PyicebergPuffin(Path(location).read_bytes())
    assert [b.fields for b in read.footer.blobs] == [[1], [2], [4]]
    assert [b.compression_codec for b in read.footer.blobs] == [None, "zstd", None]
    estimates = []
    for described, blob in zip(read.footer.blobs, blobs, strict=True):
        payload = read.get_blob_payload(described)
        assert payload == blob.data
        sketch = datasketches.compact_theta_sketch.deserialize(payload)
        assert described.properties["ndv"] == str(round(sketch.get_estimate()))
        estimates.append(sketch.get_estimate())
    assert abs(estimates[0] - 100_000) < 0.05 * 100_000
    assert estimates[1:] == [300, 0]
    union = datasketches.theta_union(lg_k=12)
    for blob in blobs:
        union.update(datasketches.compact_theta_sketch.deserialize(blob.data))
    assert abs(union.get_result().get_estimate() - 100_300) < 0.05 * 100_300


def test_pyicebergs_statistics_file_takes_what_write_returns(
    tmp_path: Path, blobs: list[puffin.Blob]
) -> None:
    location = str(tmp_path / "s.puffin")
    written = puffin.write(location, blobs)
    statistics = StatisticsFile.model_validate(written.statistics_file(SNAPSHOT))
    assert statistics.statistics_path == location
    assert statistics.file_size_in_bytes == written.file_size
    assert statistics.file_footer_size_in_bytes == written.footer_size
    assert [
        (b.type, b.fields, b.snapshot_id, b.sequence_number) for b in statistics.blob_metadata
    ] == [
        (THETA, [1], SNAPSHOT, SEQUENCE),
        (THETA, [2], SNAPSHOT, SEQUENCE),
        (THETA, [4], SNAPSHOT, SEQUENCE),
    ]
    assert statistics.blob_metadata[0].properties == dict(blobs[0].properties)
    # The table metadata's JSON form reads back as the same entry.
    assert json.loads(statistics.model_dump_json(by_alias=True, exclude_none=True)) == (
        written.statistics_file(SNAPSHOT)
    )


def test_an_empty_file_and_a_compressed_footer(tmp_path: Path) -> None:
    location = str(tmp_path / "empty.puffin")
    written = puffin.write(location, [])
    assert puffin.read(location).blobs == [] == written.blobs
    assert PyicebergPuffin(Path(location).read_bytes()).footer.blobs == []
    payload = lz4.frame.compress(json.dumps({"blobs": []}).encode(), store_size=True)
    compressed = b"PFA1PFA1" + payload + struct.pack("<iI", len(payload), 1) + b"PFA1"
    assert puffin.parse(compressed).blobs == []


def test_an_existing_file_is_never_replaced(tmp_path: Path, blobs: list[puffin.Blob]) -> None:
    location = tmp_path / "s.puffin"
    location.write_bytes(b"other")
    with pytest.raises(puffin.PuffinError, match="exists already"):
        puffin.write(str(location), blobs)
    assert location.read_bytes() == b"other"
    with pytest.raises(puffin.PuffinError, match="uncompressed or zstd"):
        puffin.write(str(tmp_path / "t.puffin"), [theta_blob(1, pa.array([1]), "lz4")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.puffin"]


def test_remove(tmp_path: Path, blobs: list[puffin.Blob]) -> None:
    location = str(tmp_path / "s.puffin")
    puffin.write(location, blobs)
    puffin.remove(location)
    puffin.remove(location)
    assert list(tmp_path.iterdir()) == []


def footer(metadata: object, flags: int = 0) -> bytes:
    payload = json.dumps(metadata).encode()
    return b"PFA1" + payload + struct.pack("<iI", len(payload), flags) + b"PFA1"


def blob(**changes: object) -> dict[str, object]:
    described: dict[str, object] = {
        "type": THETA,
        "fields": [1],
        "snapshot-id": 1,
        "sequence-number": 1,
        "offset": 4,
        "length": 4,
    }
    described.update(changes)
    return described


VALID = b"PFA1" + b"blob" + footer({"blobs": [blob()]})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "0 bytes is too short"),
        (b"PFA1" * 4, "16 bytes is too short"),
        (b"XXXX" + VALID[4:], "PFA1 magic at both ends"),
        (VALID[:-4] + b"PFA2", "PFA1 magic at both ends"),
        (VALID[:-12] + struct.pack("<iI", 10_000, 0) + b"PFA1", "does not fit in"),
        (VALID[:-12] + struct.pack("<iI", -5, 0) + b"PFA1", "does not fit in"),
        (b"PFA1blob" + b"ZZZZ" + VALID[12:], "magic at the footer's start"),
        (b"PFA1" + footer("nope")[:4] + b"{no json" + struct.pack("<iI", 8, 0) + b"PFA1", "JSON"),
        (b"PFA1" + footer([1]), "not a JSON object"),
        (b"PFA1" + footer({"blob": []}), "no list of blobs"),
        (b"PFA1blob" + footer({"blobs": [blob(offset=6)]}), "outside the blobs"),
        (b"PFA1blob" + footer({"blobs": [blob(offset=0)]}), "outside the blobs"),
        (b"PFA1blob" + footer({"blobs": [blob(length=-1)]}), "outside the blobs"),
        (b"PFA1blob" + footer({"blobs": [blob(**{"compression-codec": "gzip"})]}), "'gzip'"),
        (b"PFA1blob" + footer({"blobs": [blob(type=None)]}), "has no type"),
        (b"PFA1blob" + footer({"blobs": [blob(fields=["a"])]}), "list of field ids"),
        (b"PFA1blob" + footer({"blobs": [blob(properties={"ndv": 3})]}), "not strings"),
        (b"PFA1" + footer({"blobs": [], "properties": {"a": 1}}), "not strings"),
        (b"PFA1blob" + footer({"blobs": [blob()]}, flags=1), "JSON"),
    ],
)
def test_invalid_files_are_refused_in_one_line(content: bytes, message: str) -> None:
    with pytest.raises(puffin.PuffinError, match=message) as raised:
        puffin.parse(content, "s3a://lake/t/metadata/x.stats")
    assert "\n" not in str(raised.value)
    assert str(raised.value).startswith("s3a://lake/t/metadata/x.stats")


def test_a_blob_that_does_not_decompress() -> None:
    content = b"PFA1blob" + footer({"blobs": [blob(**{"compression-codec": "zstd"})]})
    found = puffin.parse(content, "x.stats")
    with pytest.raises(puffin.PuffinError, match="does not decompress"):
        found.data(found.blobs[0])


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(puffin.PuffinError, match="no such file"):
        puffin.read(str(tmp_path / "none.puffin"))


@pytest.fixture
def s3_settings(s3: S3Server) -> Iterator[S3Server]:
    saved = object_storage.current()
    object_storage.use(object_storage.S3Settings.from_spark_conf(s3.spark_conf(), {}))
    yield s3
    object_storage.use(saved)


def test_on_object_storage(s3_settings: S3Server, blobs: list[puffin.Blob]) -> None:
    location = f"s3a://{BUCKET}/puffin/metadata/{SNAPSHOT}.stats"
    written = puffin.write(location, blobs)
    assert [found.data(b) for found in [puffin.read(location)] for b in found.blobs] == [
        b.data for b in blobs
    ]
    fs = s3_settings.filesystem()
    assert fs.get_file_info(f"{BUCKET}/puffin/metadata/{SNAPSHOT}.stats").size == written.file_size
    with pytest.raises(puffin.PuffinError, match="exists already"):
        puffin.write(location, blobs)
    puffin.remove(location)
    with pytest.raises(puffin.PuffinError, match="no such file"):
        puffin.read(location)
