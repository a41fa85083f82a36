#!/usr/bin/env bash
# The project's test command (README "Tests"): installs the real mongod the
# integration tests use, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARDKEY_MONGOD="$(scripts/mongod.sh install)"
export SHARDKEY_MONGOD
cargo test --locked "$@"
