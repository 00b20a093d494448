#!/bin/sh
# Makes sure Debian's PostgreSQL server programs (initdb, pg_ctl, pg_basebackup) are installed for the failover test
# (tests/databaseFailover.test.ts: a primary and a streaming standby). The embedded PostgreSQL ships no
# pg_basebackup. Prints the folder of the programs.
set -eu
find_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }
DIR="$(find_bin)"
if [ -z "$DIR" ] || [ ! -x "$DIR/pg_basebackup" ]; then
  sh "$(dirname "$0")/apt-install.sh" postgresql
  DIR="$(find_bin)"
fi
echo "$DIR"
