#!/bin/sh
# Makes sure Debian's Chromium is installed for the browser tests (tests/e2e). playwright-core drives it; we never
# download a browser build of our own. Prints the binary's path.
set -eu
BIN="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$BIN" ]; then
  if [ "$(id -u)" != "0" ]; then
    echo "chromium is missing at $BIN; install it with: sudo apt-get update && sudo apt-get install -y chromium" >&2
    exit 1
  fi
  echo "installing chromium from Debian's registry…" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation >&2
fi
echo "$BIN"
