#!/bin/sh
# Makes sure Debian's Chromium is installed for the browser tests (tests/e2e). playwright-core drives it; we never
# download a browser build of our own. Prints the binary's path.
set -eu
BIN="${CHROMIUM_PATH:-/usr/bin/chromium}"
if [ ! -x "$BIN" ]; then
  sh "$(dirname "$0")/apt-install.sh" chromium fonts-liberation
fi
echo "$BIN"
