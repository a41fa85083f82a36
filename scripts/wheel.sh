#!/usr/bin/env bash
# Builds the shardkey wheel (pyproject.toml, maturin `bindings = "bin"`) and prints its path.
# maturin comes from PyPI into a venv in the cache (the CI machine starts bare), as mongod does
# in scripts/mongod.sh. PROFILE=dev (default) reuses target/ from the tests' build for a fast CI;
# the release workflow builds with the release profile. No COMPAT: maturin tags the wheel for this
# machine's glibc (manylinux_2_36 on Debian 12); release wheels for older glibc and musl come from
# the manylinux/musllinux containers in .github/workflows/release.yml.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${SHARDKEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkey}"
venv="$cache/maturin-venv"
if [ ! -x "$venv/bin/maturin" ]; then
  mkdir -p "$cache"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin>=1.7,<2' >&2
fi
out="target/wheels-${PROFILE:-dev}"
rm -rf "$out"
# The release profile's binary is stripped, as the release workflow's (a 7 MB wheel, not 20).
strip=()
[ "${PROFILE:-dev}" = release ] && strip=(--strip)
"$venv/bin/maturin" build --locked --quiet --profile "${PROFILE:-dev}" "${strip[@]}" ${COMPAT:+--compatibility "$COMPAT"} --out "$out" >&2
# The executable cargo built for it, by checksum, before a later build of another profile or with
# the tests' features overwrites it: tests/wheel.rs checks that the wheel holds exactly this.
profile="${PROFILE:-dev}"
[ "$profile" = dev ] && profile=debug
(cd target/"$profile" && sha256sum shardkey) >"$out/shardkey.built.sha256"
ls "$PWD/$out"/shardkey-*.whl
