#!/usr/bin/env bash
# Regenerates the Python Thrift code in hive_metastore_thrift/ from thrift/hive_metastore.thrift.
# Usage: scripts/generate_thrift.sh [OUTPUT_DIR]   (default: the repository root)
# Needs the Thrift compiler (Debian/Ubuntu: apt-get install thrift-compiler).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root}
command -v thrift >/dev/null || { echo "thrift compiler not found: apt-get install thrift-compiler" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
thrift --gen py -out "$tmp" "$root/thrift/hive_metastore.thrift"
# The compiler also writes a top-level __init__.py and a -remote script; keep the package only.
rm -rf "$out/hive_metastore_thrift"
cp -r "$tmp/hive_metastore_thrift" "$out/hive_metastore_thrift"
rm -f "$out/hive_metastore_thrift/ThriftHiveMetastore-remote"

# SkewedInfo.skewedColValueLocationMaps is a map<list<string>, string>: Python cannot use a
# list as a dict key, so the generated readers (the C one and the Python one) fail on any
# non-empty map. Read its keys as tuples instead: the spec's "immutable" flag of the key list
# makes the C reader build tuples, and the Python reader gets tuple(key). Writers accept both.
python3 - "$out/hive_metastore_thrift/ttypes.py" <<'PY'
import re
import sys

path = sys.argv[1]
text = open(path, encoding="utf-8").read()
spec = "'skewedColValueLocationMaps', (TType.LIST, (TType.STRING, 'UTF8', False),"
assert text.count(spec) == 1, "the spec of skewedColValueLocationMaps changed"
text = text.replace(spec, spec.replace("False),", "True),"))
text, count = re.subn(
    r"self\.skewedColValueLocationMaps\[(_key\d+)\] = ", r"self.skewedColValueLocationMaps[tuple(\1)] = ", text
)
assert count == 1, "the reader of skewedColValueLocationMaps changed"
open(path, "w", encoding="utf-8").write(text)
PY
