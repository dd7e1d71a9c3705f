#!/bin/sh
# The entrypoint of the local PostgreSQL image (docker/local-base-images.sh): the public
# image's settings POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB, a cluster in $PGDATA made
# on first start, connections from the network with a password (trust without one).
set -eu
: "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=$POSTGRES_USER}"
mkdir -p "$PGDATA" /run/postgresql
chown -R postgres:postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  method=trust password=
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    method=scram-sha-256 password=--pwfile=/tmp/pwfile
    printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/pwfile
    chown postgres /tmp/pwfile
  fi
  su postgres -c "initdb -D '$PGDATA' -U '$POSTGRES_USER' -E UTF8 --locale=C.UTF-8 $password --auth-local=trust --auth-host=$method" >/dev/null
  rm -f /tmp/pwfile
  echo "host all all all $method" >>"$PGDATA/pg_hba.conf"
  su postgres -c "pg_ctl -D '$PGDATA' -o '-c listen_addresses=' -w start" >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    su postgres -c "psql -U '$POSTGRES_USER' -d postgres -c 'CREATE DATABASE \"$POSTGRES_DB\"'" >/dev/null
  fi
  su postgres -c "pg_ctl -D '$PGDATA' -m fast -w stop" >/dev/null
  echo "database cluster made in $PGDATA"
fi
if [ "$1" = postgres ]; then
  shift
  exec su postgres -c "exec postgres -D '$PGDATA' -c listen_addresses='*' $*"
fi
exec "$@"
