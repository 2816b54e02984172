#!/usr/bin/env bash
# Regenerate the sample audio the README's API tour sends (samples/*.wav), spoken by the embedded voices with the
# project's own command line, then passed through `sauti audio convert` so they are exactly what the service
# decodes from an upload (16 kHz mono 16-bit WAV).
#   bash tools/make_samples.sh [SAUTI]      (default: builds and runs target/release/sauti)
set -euo pipefail
cd "$(dirname "$0")/.."
sauti="${1:-}"
if [ -z "$sauti" ]; then
  cargo build --release --quiet --bin sauti
  sauti=target/release/sauti
fi
mkdir -p samples
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name, voice, text
make() {
  "$sauti" tts "$3" --voice "$2" -o "$work/$1.wav" 2>/dev/null
  "$sauti" audio convert "$work/$1.wav" -o "samples/$1.wav"
}

# A spoken question for speech-to-text and the agent's audio mode (about 3 s).
make question zuri "Nataka kujua salio la akaunti yangu."
# A reference clip for voice cloning: the recommended 6–30 s of speech.
make amani baraka "Habari za asubuhi. Jina langu ni Amani, na ninaishi Dar es Salaam. \
Ninapenda kusoma vitabu jioni."

for f in samples/*.wav; do
  printf '%s: ' "$f"
  "$sauti" audio info "$f"
done
