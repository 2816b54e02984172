#!/usr/bin/env bash
# Install the voice-agent frameworks the compatibility tests drive (all pinned) into target/frameworks, with their
# dependencies and nothing else, and print the directory to put on PYTHONPATH. Kept apart from tools/sdks.sh: the
# frameworks bring their own versions of libraries the SDK tests pin.
#   bash tools/frameworks.sh [DIR]      (default DIR: target/frameworks)
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-target/frameworks}"
pins=("pipecat-ai[elevenlabs]==1.14.0" "livekit-agents==1.8.9" "livekit-plugins-elevenlabs==1.8.9")
stamp="$dir/.installed-$(printf '%s-' "${pins[@]}" | tr -c 'A-Za-z0-9.=_-' '_')"
if [ ! -f "$stamp" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$dir" "${pins[@]}" >&2
  touch "$stamp"
fi
realpath "$dir"
