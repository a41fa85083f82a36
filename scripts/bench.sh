#!/usr/bin/env bash
# The benchmark (docs/performance.md): a real mongod with a generated
# collection (1,000,000 documents, 12 candidate fields), then side by side
# (a) the I/O floor, (b) the server's own pipeline per candidate, (c) shardkey, at the
# default sample and at the whole collection; bounded memory on 10M values; log reading
# speed on a 1 GB log against grep; (d) a mongoexport file against DuckDB; the plan's time
# and memory on logs of 100 MB, 1 GB and 10 GB (PLAN_LOG_SIZES); the log readers' ratios
# (workload, analyze and plan; `scripts/bench.sh logs` alone); the sample against the
# server's counts on a few million documents (`scripts/bench.sh sample` alone); (d) alone
# without a server: `scripts/bench.sh export`.
# Sizes can be lowered for a quick run:
#   DOCS=100000 MEM_DOCS=1000000 LOG_BYTES=100000000 EXPORT_DOCS=100000 scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DOCS="${DOCS:-1000000}"
SAMPLE="${SAMPLE:-100000}"
MEM_DOCS="${MEM_DOCS:-10000000}"
LOG_BYTES="${LOG_BYTES:-1000000000}"
EXPORT_DOCS="${EXPORT_DOCS:-1000000}"
cache="${SHARDKEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkey}"

cargo build --release --locked --quiet --bins --examples

# Issue 52's log ratios on a generated log of transactions (LOG_RATIO_BYTES, 500 MB by
# default): workload and analyze --queries against grep -c, plan against workload, each
# alternated with its baseline (scripts/bench.py log_ratios); and workload on a replica set
# member's log of the same transactions (every command with the `$clusterTime` a replica
# set's drivers send) against grep -c. `scripts/bench.sh logs` runs only this part (no
# server); LOG_RATIO_DIR keeps the generated logs between runs.
log_ratios() {
  local dir="${LOG_RATIO_DIR:-$(mktemp -d)}"
  if [ ! -f "$dir/mongod.log" ]; then
    target/release/examples/shardkey-bench gen-plan --dir "$dir" --bytes "${LOG_RATIO_BYTES:-500000000}" >/dev/null
  fi
  if [ ! -f "$dir/rs/mongod.log" ]; then
    target/release/examples/shardkey-bench gen-plan --dir "$dir/rs" --bytes "${LOG_RATIO_BYTES:-500000000}" --cluster-time >/dev/null
  fi
  python3 scripts/bench.py logs "$dir/mongod.log" "$dir/app" "${BENCH_LOGS_OUT:-target/bench-logs.json}" "$dir/rs/mongod.log"
  [ -n "${LOG_RATIO_DIR:-}" ] || rm -rf "$dir"
}
if [ "${1:-}" = logs ]; then
  log_ratios
  exit 0
fi
# DuckDB, the comparison for (d): from PyPI, in its own environment.
duckdb() {
  if [ ! -x "$cache/duckdb/bin/python" ] || ! "$cache/duckdb/bin/python" -c 'import duckdb' 2>/dev/null; then
    python3 -m venv "$cache/duckdb" && "$cache/duckdb/bin/pip" install --quiet duckdb==2.0.0
  fi
}
# (d) alone, no server: `scripts/bench.sh export` generates the export (EXPORT_DOCS documents)
# into EXPORT_DIR (kept there between runs when given) and pairs shardkey with DuckDB
# (EXPORT_PAIRS, 7 by default), wall and CPU seconds (scripts/bench.py export_ratio).
# SHARDKEY_BIN=path/to/other/shardkey measures another build in the same session.
if [ "${1:-}" = export ]; then
  dir="${EXPORT_DIR:-$(mktemp -d)}"
  mkdir -p "$dir"
  if [ ! -f "$dir/export.ndjson" ]; then
    target/release/examples/shardkey-bench gen-export --out "$dir/export.ndjson" --bson "$dir/export.bson" --docs "$EXPORT_DOCS" >/dev/null
  fi
  duckdb
  DUCKDB_PYTHON="$cache/duckdb/bin/python" python3 scripts/bench.py export "$dir/export.ndjson" "${BENCH_EXPORT_OUT:-target/bench-export.json}"
  [ -n "${EXPORT_DIR:-}" ] || rm -rf "$dir"
  exit 0
fi
MONGOD="$(scripts/mongod.sh install)"
PY="$(scripts/mongod.sh pymongo)"
export PYTHONPATH="${PY}${PYTHONPATH:+:$PYTHONPATH}"
# Issue 47's sample at size: a 2-member replica set of SAMPLE_DOCS documents (3,000,000 by
# default) whose newest 8.5% differ, the default run's shares and distinct-count range beside
# the server's own $group counts (scripts/bench_sample.py). `scripts/bench.sh sample` alone.
sample_trust() {
  DOCS="${SAMPLE_DOCS:-3000000}" python3 scripts/bench_sample.py "$MONGOD" "${BENCH_SAMPLE_OUT:-target/bench-sample.json}"
}
if [ "${1:-}" = sample ]; then
  sample_trust
  exit 0
fi

DB="$(mktemp -d)"
trap 'scripts/mongod.sh stop "$DB"' EXIT
PORT="$(scripts/mongod.sh start "$DB" 2)"
URI="mongodb://127.0.0.1:$PORT/?directConnection=true"

echo "loading $DOCS documents..." >&2
start=$(date +%s)
target/release/examples/shardkey-bench load --uri "$URI" --collection bench.orders --docs "$DOCS"
echo "loaded in $(( $(date +%s) - start )) s" >&2
target/release/examples/shardkey-bench gen-log --out "$DB/big.log" --bytes "$LOG_BYTES" >/dev/null
target/release/examples/shardkey-bench gen-export --out "$DB/export.ndjson" --bson "$DB/export.bson" --docs "$EXPORT_DOCS" >/dev/null

duckdb

# mtools' mloginfo is the usual log tool: does it read 4.4+ JSON logs?
if [ ! -x "$cache/mtools/bin/mloginfo" ]; then
  python3 -m venv "$cache/mtools" >/dev/null 2>&1 && "$cache/mtools/bin/pip" install --quiet mtools python-dateutil >/dev/null 2>&1 || true
fi
if [ -x "$cache/mtools/bin/mloginfo" ]; then
  head -c 10000000 "$DB/big.log" > "$DB/small.log"
  echo "mtools: $(script -qc "$cache/mtools/bin/mloginfo $DB/small.log --queries" /dev/null 2>&1 | head -1 | tr -d '\r')"
else
  echo "mtools: could not be installed from PyPI"
fi

# The plan's time and peak memory against the log's size (issue 37): one generated store
# application (target/release/examples/shardkey-bench gen-plan), logs of each size in turn.
for size in ${PLAN_LOG_SIZES:-100000000 1000000000 10000000000}; do
  rm -rf "$DB/plan"
  target/release/examples/shardkey-bench gen-plan --dir "$DB/plan" --bytes "$size" >/dev/null
  /usr/bin/time -f "%e %M" -o "$DB/plan.time" target/release/shardkey plan --dump "$DB/plan/app" \
    --queries "$DB/plan/mongod.log" --target-version 6.0 --format json > "$DB/plan.json"
  read -r secs kb < "$DB/plan.time"
  echo "plan: log of $size bytes: $secs s, peak RSS $((kb / 1024)) MiB"
done
rm -rf "$DB/plan"
log_ratios
sample_trust

DUCKDB_PYTHON="$cache/duckdb/bin/python" EXPORT="$DB/export.ndjson" \
  python3 scripts/bench.py "$URI" bench.orders "$SAMPLE" "$DB/big.log" "$MEM_DOCS" "${BENCH_OUT:-target/bench.json}"
