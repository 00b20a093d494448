#!/bin/sh
# Installs Debian packages for a test suite that needs a system program (Chromium, slapd): as root through apt,
# otherwise it stops with the command an operator would run. Usage: apt-install.sh <package>…
set -eu
if [ "$(id -u)" != "0" ]; then
  echo "$1 is missing; install it with: sudo apt-get update && sudo apt-get install -y $*" >&2
  exit 1
fi
echo "installing $* from Debian's registry…" >&2
DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "$@" >&2
