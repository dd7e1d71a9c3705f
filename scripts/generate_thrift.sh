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
