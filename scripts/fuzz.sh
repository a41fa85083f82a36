#!/usr/bin/env bash
# Fuzz every parser (cargo-fuzz, libFuzzer) on the stable toolchain: no sanitizer
# (it needs nightly); Rust's own checks turn memory errors, overflow and
# out-of-range indexing into panics, and every panic is a crash.
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default 10 s, every target)
# Seeds come from fixtures/ and ../shared/real-logs (examples/fuzz_seeds.rs).
# A crash leaves its input in fuzz/artifacts/<target>/ and fails the script:
# turn it into a row of tests/bad_input.rs.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
shift || true
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  targets=(documents projected bson_documents log_lines profile_documents key_syntax policy)
fi
if ! command -v cargo-fuzz >/dev/null; then
  cargo install cargo-fuzz --locked --version 0.13.2
fi
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
cargo run --quiet --locked --example fuzz_seeds -- "$corpus" >&2
cargo fuzz build --sanitizer none -O
for t in "${targets[@]}"; do
  log="$corpus/$t.log"
  if ! cargo fuzz run --sanitizer none -O "$t" "$corpus/$t" -- \
      -max_total_time="$secs" -max_len=65536 -rss_limit_mb=4096 -timeout=20 >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "fuzz: $t crashed (input in fuzz/artifacts/$t/)" >&2
    exit 1
  fi
  runs="$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -n 1 | grep -Eo '[0-9]+')"
  echo "fuzz: $t: ${runs:-?} executions in ${secs} s, no crash"
done
