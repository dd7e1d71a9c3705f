"""The committed Thrift code is what the IDL generates."""

from __future__ import annotations

import filecmp
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_matches_the_idl(tmp_path: Path) -> None:
    if shutil.which("thrift") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the Thrift compiler is required when CI=true")
        pytest.skip("the Thrift compiler is not installed (apt-get install thrift-compiler)")
    subprocess.run([str(ROOT / "scripts" / "generate_thrift.sh"), str(tmp_path)], check=True)
    fresh, committed = tmp_path / "hive_metastore_thrift", ROOT / "hive_metastore_thrift"
    names = sorted(p.name for p in fresh.iterdir())
    assert names == sorted(p.name for p in committed.iterdir() if p.name != "__pycache__")
    _, mismatch, errors = filecmp.cmpfiles(fresh, committed, names, shallow=False)
    assert not mismatch and not errors, (
        f"{mismatch or errors} differ from thrift/hive_metastore.thrift: run "
        "scripts/generate_thrift.sh and commit the result"
    )


def test_skewed_value_locations_decode_with_tuple_keys() -> None:
    """map<list<string>, string> needs hashable keys in Python: both readers give tuples."""
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TTransport

    from hive_metastore_thrift import ttypes as t

    info = t.SkewedInfo(["a", "b"], [["1", "x"]], {("1", "x"): "file:/t/a=1/b=x"})
    out = TTransport.TMemoryBuffer()
    info.write(TBinaryProtocol.TBinaryProtocol(out))
    for factory in (TBinaryProtocol.TBinaryProtocol, TBinaryProtocol.TBinaryProtocolAccelerated):
        got = t.SkewedInfo()
        got.read(factory(TTransport.TMemoryBuffer(out.getvalue())))
        assert got == info
