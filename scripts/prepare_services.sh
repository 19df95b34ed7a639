#!/usr/bin/env bash
# Prepare the production-like services the test suite runs against: PostgreSQL with pgvector
# and Redis. Each step is idempotent; each failure prints one line naming what is missing.
set -uo pipefail
PGHOST="${PGHOST:-127.0.0.1}"; PGPORT="${PGPORT:-5432}"; PGUSER="${PGUSER:-postgres}"
DB_NAME="${BLOOM_DB_NAME:-bloom}"
REDIS_HOST="${REDIS_HOST:-127.0.0.1}"; REDIS_PORT="${REDIS_PORT:-6379}"
here="$(cd "$(dirname "$0")" && pwd)"
fail() { echo "prepare_services: $*" >&2; exit 1; }

psql_q() { psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -v ON_ERROR_STOP=1 -qtAX "$@"; }

# 1. PostgreSQL is up (start the local cluster if it is installed but stopped).
if ! pg_isready -h "$PGHOST" -p "$PGPORT" -q 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -n | tail -n1)" main start >/dev/null 2>&1 || true
    for _ in $(seq 1 20); do pg_isready -h "$PGHOST" -p "$PGPORT" -q && break; sleep 0.5; done
  fi
  pg_isready -h "$PGHOST" -p "$PGPORT" -q || fail "PostgreSQL is not reachable at $PGHOST:$PGPORT"
fi

# 2. pgvector is installed into that PostgreSQL.
"$here/install_pgvector.sh" || fail "pgvector could not be installed"

# 3. The database exists and has the vector extension; template1 gets it too, so the test
#    database pytest creates starts with it.
psql_q -d postgres -c "SELECT 1" >/dev/null || fail "cannot connect to PostgreSQL as $PGUSER"
if [ "$(psql_q -d postgres -c "SELECT 1 FROM pg_database WHERE datname='$DB_NAME'")" != "1" ]; then
  psql_q -d postgres -c "CREATE DATABASE \"$DB_NAME\"" || fail "cannot create database $DB_NAME"
fi
for db in "$DB_NAME" template1; do
  psql_q -d "$db" -c "CREATE EXTENSION IF NOT EXISTS vector" >/dev/null || fail "cannot create extension vector in $db"
done
echo "postgres: $PGHOST:$PGPORT/$DB_NAME ready (vector $(psql_q -d "$DB_NAME" -c "SELECT extversion FROM pg_extension WHERE extname='vector'"))"

# 4. Redis answers PING (start a local one if installed but stopped).
redis_ping() { redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; }
if ! redis_ping; then
  if command -v redis-server >/dev/null; then
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log >/dev/null 2>&1 || true
    for _ in $(seq 1 20); do redis_ping && break; sleep 0.25; done
  fi
  redis_ping || fail "Redis is not reachable at $REDIS_HOST:$REDIS_PORT"
fi
echo "redis: $REDIS_HOST:$REDIS_PORT ready"

# 5. Debian's chromium for the admin browser test (not fatal: that test skips, naming why).
"$here/install_chromium.sh" || true
