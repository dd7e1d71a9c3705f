#!/usr/bin/env bash
# Fill docker/wheels/ with wheels of every dependency of the images (the project's own
# dependencies, the psycopg2 and spark extras, the build requirements), for the Python of
# the base image (3.11, manylinux x86_64), so that `docker build` needs no network. Run with
# the Python that pip should resolve with (3.11). Wheels already there are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - >docker/wheels/requirements.txt <<'PY'
import tomllib

declared = tomllib.load(open("pyproject.toml", "rb"))
project = declared["project"]
wanted = declared["build-system"]["requires"] + project["dependencies"]
for extra in ("psycopg2", "spark"):
    wanted += project["optional-dependencies"][extra]
print("\n".join(wanted))
PY
python3 -m pip wheel -q --wheel-dir docker/wheels -r docker/wheels/requirements.txt
rm docker/wheels/requirements.txt
echo "docker/wheels: $(ls docker/wheels/*.whl | wc -l) wheels, $(du -sh docker/wheels | cut -f1)"
