#!/bin/sh
# Makes sure Debian's OpenLDAP server (slapd) and its tools are installed for the LDAP sign-in tests
# (tests/ldap.test.ts), which start their own slapd on a free port with a throwaway configuration. The package's
# own service is never used: installing it non-interactively leaves a default directory we do not touch.
# Prints the slapd binary's path.
set -eu
BIN="${SLAPD_PATH:-/usr/sbin/slapd}"
if [ ! -x "$BIN" ] || ! command -v slapadd >/dev/null 2>&1; then
  sh "$(dirname "$0")/apt-install.sh" slapd ldap-utils
fi
echo "$BIN"
