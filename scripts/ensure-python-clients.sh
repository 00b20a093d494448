#!/bin/sh
# Makes sure a Python virtual environment with psycopg, SQLAlchemy and pandas exists for the PostgreSQL wire
# endpoint's client tests (tests/pgwire-python.test.ts); installs from the configured pip index (the local wheel
# index on the build machine). Prints the environment's python. Exits non-zero, saying why, when it cannot.
set -eu
DIR="${EIDER_PY_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/eider/py-clients}"
PY="$DIR/bin/python"
if [ ! -x "$PY" ] || ! "$PY" -c 'import psycopg, sqlalchemy, pandas' >/dev/null 2>&1; then
  command -v python3 >/dev/null 2>&1 || { echo "python3 is not installed" >&2; exit 1; }
  python3 -m venv "$DIR" >&2 || { echo "python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
  "$PY" -m pip install --quiet psycopg sqlalchemy pandas >&2 || { echo "pip could not install psycopg sqlalchemy pandas" >&2; exit 1; }
fi
echo "$PY"
