#!/usr/bin/env bash
# Builds the shardkey wheel (pyproject.toml, maturin `bindings = "bin"`) and prints its path.
# maturin comes from PyPI into a venv in the cache (the CI machine starts bare), as mongod does
# in scripts/mongod.sh.
#   PROFILE=dev (default)  reuses target/ from the tests' build (CI: about 30 s); tagged for this
#                          machine's glibc (manylinux_2_34 on Debian 12)
#   PROFILE=release        stripped, as the release's (a 7 MB wheel)
#   PORTABLE=1             the release's manylinux2014 wheel (glibc 2.17+, any current
#                          distribution), linked by zig (PyPI's ziglang) against old glibc
#                          symbols, in target/x86_64-unknown-linux-gnu (about 9 minutes from
#                          scratch on 2 cores); auditwheel show says manylinux_2_17
# The release workflow (.github/workflows/release.yml) builds manylinux2014 and musllinux wheels
# for x86_64 and aarch64 in maturin's containers.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${SHARDKEY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/shardkey}"
venv="$cache/maturin-venv"
if [ ! -x "$venv/bin/maturin" ]; then
  mkdir -p "$cache"
  python3 -m venv "$venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'maturin>=1.7,<2' >&2
fi
tdir="${CARGO_TARGET_DIR:-target}"
profile="${PROFILE:-dev}"
args=(--profile "$profile")
built="$tdir/$profile/shardkey"
[ "$profile" = dev ] && built="$tdir/debug/shardkey"
if [ -n "${PORTABLE:-}" ]; then
  [ -x "$venv/bin/python-zig" ] || "$venv/bin/python" -m pip install --quiet --disable-pip-version-check 'ziglang<1' >&2
  profile=release
  args=(--release --strip --zig --compatibility manylinux2014 --target "$(uname -m)-unknown-linux-gnu")
  built="$tdir/$(uname -m)-unknown-linux-gnu/release/shardkey"
elif [ "$profile" = release ]; then
  args+=(--strip)
fi
out="$tdir/wheels-$profile${PORTABLE:+-portable}"
rm -rf "$out"
PATH="$venv/bin:$PATH" "$venv/bin/maturin" build --locked --quiet "${args[@]}" --out "$out" >&2
# The executable cargo built for it, by checksum, before a later build of another profile or with
# the tests' features overwrites it: tests/wheel.rs checks that the wheel holds exactly this.
(cd "$(dirname "$built")" && sha256sum shardkey) >"$out/shardkey.built.sha256"
ls "$(cd "$out" && pwd)"/shardkey-*.whl
