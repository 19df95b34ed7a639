#!/usr/bin/env bash
# Install Debian's chromium for the admin browser test (Playwright drives it via executable_path;
# we never run `playwright install`, which would download a browser). Idempotent: does nothing
# when /usr/bin/chromium is already there. One clear line on failure.
set -uo pipefail
CHROMIUM="${BLOOM_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$CHROMIUM" ]; then
  echo "chromium: $CHROMIUM ready"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  command -v sudo >/dev/null && SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
if ! { $SUDO apt-get update -qq >/dev/null 2>&1 && $SUDO apt-get install -y -qq chromium >/dev/null 2>&1; }; then
  echo "install_chromium: could not install Debian's chromium with apt-get (the browser test will be skipped)" >&2
  exit 1
fi
[ -x "$CHROMIUM" ] || { echo "install_chromium: apt-get finished but $CHROMIUM is missing" >&2; exit 1; }
echo "chromium: $CHROMIUM ready ($("$CHROMIUM" --version 2>/dev/null | head -n1))"
