#!/bin/sh
# Makes sure a Docker Engine answers on this machine for the elastic `docker` provider's tests
# (tests/dockerProvider.test.ts) and the chaos bench: installs Debian's docker.io when dockerd is missing, starts
# dockerd in the background (overlay2, its log in ${TMPDIR:-/tmp}/eider-dockerd.log) when its socket does not answer,
# and waits for it. Prints the socket's path. Needs root, as dockerd does.
set -eu
SOCK=/var/run/docker.sock
answers() { docker -H "unix://$SOCK" version --format '{{.Server.Version}}' >/dev/null 2>&1; }
if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
  sh "$(dirname "$0")/apt-install.sh" docker.io
fi
if ! answers; then
  if [ "$(id -u)" != "0" ]; then
    echo "dockerd is not running; start it as root: sudo dockerd --storage-driver=overlay2 &" >&2
    exit 1
  fi
  LOG="${TMPDIR:-/tmp}/eider-dockerd.log"
  echo "starting dockerd (log: $LOG)…" >&2
  # Its own session, every stream on the log: it outlives this script and holds no pipe of its caller open.
  setsid dockerd --storage-driver=overlay2 --host "unix://$SOCK" </dev/null >>"$LOG" 2>&1 &
  i=0
  until answers; do
    i=$((i + 1))
    if [ "$i" -ge 120 ]; then
      echo "dockerd did not answer on $SOCK within 60 s; its log ($LOG) ends with:" >&2
      tail -n 20 "$LOG" >&2
      exit 1
    fi
    sleep 0.5
  done
fi
echo "$SOCK"
