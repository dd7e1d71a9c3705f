"""The encoded Partition the calls that list partitions keep and answer with
(metastore.hms.partition_pieces) is what the generated code writes for the same struct."""

from __future__ import annotations

import pytest
from metadata_builders import EVERY_TYPE, partition, storage
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TTransport import TMemoryBuffer

from hive_metastore_thrift import ttypes as t
from metastore.hms import partition_pieces


@pytest.mark.parametrize("extension", [True, False])
def test_a_partition_is_encoded_as_the_generated_code_encodes_it(
    monkeypatch: pytest.MonkeyPatch, extension: bool
) -> None:
    """With thrift's C extension and without it."""
    if not extension:
        monkeypatch.setattr(partition_pieces, "fastbinary", None)
    part = partition(
        "d",
        "t",
        ["é", ""],
        storage(EVERY_TYPE, "file:/w/d", skewedInfo=t.SkewedInfo(["b"], [["x"]], {("x",): "l"})),
        parameters={"k": "v", "ü": ""},
        createTime=5,
        catName="hive",
    )
    buffer = TMemoryBuffer()
    part.write(TBinaryProtocol(buffer))
    assert partition_pieces._encode(part) == buffer.getvalue()
