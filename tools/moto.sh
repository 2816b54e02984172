#!/usr/bin/env bash
# Install moto's S3-compatible server (pinned) into target/moto for the object-store tests, and print the
# directory to put on PYTHONPATH. The tests start it with `python3 -m moto.server` on a free loopback port.
#   bash tools/moto.sh [DIR]      (default DIR: target/moto)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-target/moto}"
pins=("moto[server]==5.2.5")
stamp="$dir/.installed-$(printf '%s-' "${pins[@]}")"
if [ ! -f "$stamp" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$dir" "${pins[@]}" >&2
  touch "$stamp"
fi
realpath "$dir"
