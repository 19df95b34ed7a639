#!/usr/bin/env bash
# Install the pgvector extension into this machine's PostgreSQL. Idempotent.
# Debian 13: the binary package. Debian 12 (PostgreSQL 15): no binary package exists, so we
# build Debian's own source package from the next suite (docs/facts.md, pgvector).
set -euo pipefail
fail() { echo "install_pgvector: $*" >&2; exit 1; }

command -v pg_config >/dev/null || command -v psql >/dev/null || fail "PostgreSQL is not installed (no psql/pg_config)"
PG_MAJOR="${PG_MAJOR:-$(ls /etc/postgresql 2>/dev/null | sort -n | tail -n1)}"
[ -n "$PG_MAJOR" ] || fail "no PostgreSQL cluster found under /etc/postgresql"
SHAREDIR="/usr/share/postgresql/$PG_MAJOR/extension"

if [ -f "$SHAREDIR/vector.control" ]; then
  echo "pgvector: already installed for PostgreSQL $PG_MAJOR"
  exit 0
fi
[ "$(id -u)" = 0 ] || fail "installing pgvector needs root (apt-get); run as root or install postgresql-$PG_MAJOR-pgvector"

export DEBIAN_FRONTEND=noninteractive
apt_updated=0
apt_update() { [ $apt_updated = 1 ] || { apt-get update -qq >/dev/null || fail "apt-get update failed"; apt_updated=1; }; }

apt_update
if apt-cache show "postgresql-$PG_MAJOR-pgvector" >/dev/null 2>&1; then
  apt-get install -y -qq "postgresql-$PG_MAJOR-pgvector" >/dev/null || fail "apt-get install postgresql-$PG_MAJOR-pgvector failed"
else
  # Build from Debian's source package. The deb-src entry reuses the URIs of the machine's
  # existing Debian source, so no mirror host is named here.
  SRCLIST=/etc/apt/sources.list.d/bloom-pgvector-src.sources
  if [ ! -f "$SRCLIST" ]; then
    uris=$(grep -h '^URIs:' /etc/apt/sources.list.d/debian.sources 2>/dev/null | grep -v security | head -n1 | sed 's/^URIs:[[:space:]]*//')
    [ -n "$uris" ] || uris=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | grep -v security | head -n1 | awk '{print $2}')
    [ -n "$uris" ] || fail "cannot derive a Debian mirror from the apt sources to fetch pgvector's source"
    printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uris" > "$SRCLIST"
    apt_updated=0; apt_update
  fi
  apt-get install -y -qq "postgresql-server-dev-$PG_MAJOR" build-essential dpkg-dev >/dev/null \
    || fail "apt-get install postgresql-server-dev-$PG_MAJOR failed"
  work=$(mktemp -d)
  ( cd "$work" && apt-get source --download-only pgvector >/dev/null 2>&1 ) || fail "apt-get source pgvector failed (deb-src for trixie unreachable?)"
  ( cd "$work" && dpkg-source -x --no-check ./pgvector_*.dsc src >/dev/null ) || fail "unpacking pgvector source failed"
  ( cd "$work/src" && make -s PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" >/dev/null 2>&1 \
      && make -s install PG_CONFIG="/usr/lib/postgresql/$PG_MAJOR/bin/pg_config" >/dev/null ) || fail "building pgvector failed"
  rm -rf "$work"
fi
[ -f "$SHAREDIR/vector.control" ] || fail "pgvector install finished but $SHAREDIR/vector.control is missing"
echo "pgvector: installed for PostgreSQL $PG_MAJOR"
