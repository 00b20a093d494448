#!/bin/sh
# Makes sure Debian's HAProxy is installed for the load-balancer tests (tests/loadBalancer.test.ts); `eider up`
# itself only uses it when present. Prints the binary's path.
set -eu
BIN="$(command -v haproxy || true)"
[ -n "$BIN" ] || BIN=/usr/sbin/haproxy
if [ ! -x "$BIN" ]; then
  sh "$(dirname "$0")/apt-install.sh" haproxy
fi
echo "$BIN"
