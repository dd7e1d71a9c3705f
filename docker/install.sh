#!/bin/sh
# Installs colstats in an image (see Dockerfile), one step at a time so that each step is a
# layer of its own that changes only when its inputs do:
#
#   install.sh java               a Java runtime for Spark, when the base image has none
#   install.sh deps EXTRA...      the virtualenv /opt/colstats and the dependencies declared in
#                                 /src/pyproject.toml with these extras (not the project)
#   install.sh project            the project from /src, without touching its dependencies
#
# Wheels in /wheels (docker/wheels/ of the build context) are used instead of the package
# index when there are any, so that an image builds without a network.
set -eu

venv=/opt/colstats
pip_from() {
  if ls /wheels/*.whl >/dev/null 2>&1; then
    echo "--no-index --find-links /wheels"
  fi
}

case "$1" in
java)
  if ! command -v java >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends openjdk-17-jre-headless procps
    rm -rf /var/lib/apt/lists/*
  fi
  ;;
deps)
  shift
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" - "$@" >/tmp/requirements.txt <<'PY'
import sys
import tomllib

declared = tomllib.load(open("/src/pyproject.toml", "rb"))
project = declared["project"]
# The build requirements too: the project step builds without isolation (and a network).
wanted = declared["build-system"]["requires"] + project["dependencies"]
for extra in sys.argv[1:]:
    wanted += project["optional-dependencies"][extra]
print("\n".join(wanted))
PY
  # shellcheck disable=SC2046
  "$venv/bin/pip" install --no-cache-dir -q $(pip_from) -r /tmp/requirements.txt
  rm /tmp/requirements.txt
  ;;
project)
  "$venv/bin/pip" install --no-cache-dir -q --no-deps --no-build-isolation /src
  ;;
*)
  echo "usage: install.sh java | deps EXTRA... | project" >&2
  exit 2
  ;;
esac
