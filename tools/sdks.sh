#!/usr/bin/env bash
# Install the official client SDKs the compatibility tests drive and the WebSocket client library the realtime
# tests use (all pinned) into target/sdks, with their dependencies and nothing else, and print the directory to
# put on PYTHONPATH.
#   bash tools/sdks.sh [DIR]      (default DIR: target/sdks)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-target/sdks}"
pins=("openai==3.54.0" "elevenlabs==2.78.0" "websockets==17.4")
stamp="$dir/.installed-$(printf '%s-' "${pins[@]}")"
if [ ! -f "$stamp" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$dir" "${pins[@]}" >&2
  touch "$stamp"
fi
realpath "$dir"
