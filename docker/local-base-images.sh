#!/usr/bin/env bash
# Build the base images that Dockerfile and docker-compose.yml name, from Debian packages,
# where no registry of container images can be reached. The images get the public names
# (python:3.11-slim-bookworm, postgres:15-bookworm), so the same files run unchanged on a
# machine that pulls them. An image is built again only when this recipe (this script and
# the entrypoint) changed since it was built.
#
#   docker/local-base-images.sh            # with podman (root)
#
# Needs debootstrap and podman. The python image also carries a Java runtime for the job
# target, which the public image gets from apt when the job image is built.
set -euo pipefail

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PYTHON_IMAGE=${PYTHON_IMAGE:-python:3.11-slim-bookworm}
POSTGRES_IMAGE=${POSTGRES_IMAGE:-postgres:15-bookworm}
here=$(cd "$(dirname "$0")" && pwd)
recipe=$(cat "$0" "$here/postgres-entrypoint.sh" | sha256sum | cut -c1-16)

build() {  # NAME PACKAGES CHANGES...
  local name=$1 packages=$2
  shift 2
  local built
  built=$(podman image inspect --format '{{index .Config.Labels "colstats.recipe"}}' "localhost/$name" \
    2>/dev/null || true)
  if [ "$built" = "$recipe" ]; then
    echo "$name: present"
    return
  fi
  local root started
  root=$(mktemp -d)
  started=$SECONDS
  echo "$name: debootstrap bookworm with $packages"
  debootstrap --variant=minbase --include="$packages" bookworm "$root" "$MIRROR" >"$root.log" 2>&1 \
    || { tail -20 "$root.log"; exit 1; }
  # Registries reached through this machine's CA bundle are reached from the image too.
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  if [ -n "${POSTGRES_ENTRYPOINT:-}" ]; then
    install -m 0755 "$POSTGRES_ENTRYPOINT" "$root/usr/local/bin/docker-entrypoint.sh"
  fi
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  local change=(--change "LABEL colstats.recipe=$recipe")
  local c
  for c in "$@"; do change+=(--change "$c"); done
  tar -C "$root" -c . | podman import -q "${change[@]}" - "localhost/$name" >/dev/null
  # Docker's API (docker-compose talks to podman through it) looks public images up as
  # docker.io/library/NAME, and so do podman's short names when that name exists.
  podman tag "localhost/$name" "docker.io/library/$name"
  rm -rf "$root" "$root.log"
  echo "$name: built in $((SECONDS - started)) s"
}

build "$PYTHON_IMAGE" python3,python3-venv,ca-certificates,openjdk-17-jre-headless,procps \
  'ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' 'CMD ["python3"]'
POSTGRES_ENTRYPOINT="$here/postgres-entrypoint.sh" build "$POSTGRES_IMAGE" postgresql \
  'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  'ENV PGDATA=/var/lib/postgresql/data' \
  'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' 'CMD ["postgres"]'
