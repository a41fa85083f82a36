#!/usr/bin/env bash
# Installs the real mongosh (the npm registry's mongosh 2.12.0) into a cache folder and prints
# the path of its binary. tests/constraints.rs runs the commands shardkey prints through it
# against the real mongod (path in SHARDKEY_MONGOSH; scripts/test.sh sets it).
#   scripts/mongosh.sh   -> prints /path/to/mongosh
set -euo pipefail

version=2.12.0
cache="${SHARDKEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkey}"
target="$cache/mongosh-$version"
mongosh="$target/node_modules/.bin/mongosh"

if [ ! -x "$mongosh" ]; then
  if ! command -v npm >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "installing nodejs and npm for mongosh" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >&2
    else
      echo "mongosh needs node and npm: apt-get install nodejs npm" >&2
      exit 1
    fi
  fi
  mkdir -p "$target"
  # The optional native modules' install scripts (Kerberos, OS keychains) are not needed.
  npm install --prefix "$target" --no-audit --no-fund --ignore-scripts --loglevel=error "mongosh@$version" >&2
fi
"$mongosh" --version >/dev/null
echo "$mongosh"
