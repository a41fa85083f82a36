#!/usr/bin/env bash
# The project's test command (README "Set-up"; what each test proves: docs/maintainers.md "Tests"): installs the real mongod the
# integration tests use (and the real mongosh that runs the printed commands, the drivers of the driver matrix, and the wheel), then runs every test and sums up the results.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARDKEY_MONGOD="$(scripts/mongod.sh install)"
export SHARDKEY_MONGOD
SHARDKEY_MONGOSH="$(scripts/mongosh.sh)"
export SHARDKEY_MONGOSH
SHARDKEY_CHROMIUM="$(scripts/chromium.sh)"
export SHARDKEY_CHROMIUM
# pymongo, the Node.js, Java and Go drivers (and the Java/Go programs, compiled once) for tests/driver_matrix.rs.
SHARDKEY_DRIVERS="$(scripts/drivers.sh)"
export SHARDKEY_DRIVERS
# The wheel (scripts/wheel.sh, dev profile: it shares the tests' build) for tests/wheel.rs.
SHARDKEY_WHEEL="$(scripts/wheel.sh)"
export SHARDKEY_WHEEL
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test --locked "$@" 2>&1 | tee "$log" || status=$?
# One closing line over every test binary.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "%d passed, %d failed\n", p, f }' "$log"
exit "$status"
