#!/usr/bin/env bash
# Debian's Chromium for the HTML report test (tests/html.rs): installed when missing.
# Prints the browser's path.
set -euo pipefail
for b in chromium chromium-browser; do
  if command -v "$b" >/dev/null 2>&1; then command -v "$b"; exit 0; fi
done
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
sudo_ apt-get update -q >&2
DEBIAN_FRONTEND=noninteractive sudo_ apt-get install -y -q chromium >&2
command -v chromium
