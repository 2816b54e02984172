#!/usr/bin/env bash
# Install one group of pinned Python packages the compatibility tests drive into target/pypi/GROUP, with their
# dependencies and nothing else, and print the directory to put on PYTHONPATH. The groups are kept apart
# because they pin different versions of the libraries they share.
#   bash tools/pypi.sh GROUP
#     sdks        the official client SDKs and the WebSocket client the realtime tests use
#     frameworks  the voice-agent frameworks (Pipecat, LiveKit Agents)
#     decoders    pyctcdecode and KenLM's Python module (built from its source, about a minute), the reference
#                 the CTC beam search is checked against
set -euo pipefail
cd "$(dirname "$0")/.."
group="${1:?usage: tools/pypi.sh sdks|frameworks|decoders}"
case "$group" in
  sdks) pins=("openai==3.54.0" "elevenlabs==2.78.0" "websockets==17.4") ;;
  frameworks) pins=("pipecat-ai[elevenlabs]==1.14.0" "livekit-agents==1.8.9" "livekit-plugins-elevenlabs==1.8.9") ;;
  decoders) pins=("pyctcdecode==0.5.0" "kenlm==0.3.0" "numpy==1.26.4" "pygtrie==2.5.0" "hypothesis==6.130.12") ;;
  *) echo "tools/pypi.sh: no group $group" >&2; exit 2 ;;
esac
dir="target/pypi/$group"
stamp="$dir/.installed-$(printf '%s-' "${pins[@]}" | tr -c 'A-Za-z0-9.=_-' '_')"
if [ ! -f "$stamp" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --upgrade --target "$dir" "${pins[@]}" >&2
  touch "$stamp"
fi
realpath "$dir"
