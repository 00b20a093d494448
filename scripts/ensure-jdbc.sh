#!/bin/sh
# Makes sure Debian's pgjdbc (and a JDK to launch a single-file Java program with it) is installed for the
# PostgreSQL wire endpoint's JDBC test. We never download a driver of our own. Prints the jar's path.
set -eu
JAR="${PGJDBC_JAR:-/usr/share/java/postgresql.jar}"
if [ ! -f "$JAR" ] || ! command -v javac >/dev/null 2>&1; then
  sh "$(dirname "$0")/apt-install.sh" libpostgresql-jdbc-java default-jdk-headless
fi
echo "$JAR"
