#!/usr/bin/env bash
# Reference clips for the voice-cloning tests, made by a synthesizer other than ours: eSpeak NG's Swahili voice
# at a low and a high pitch, encoded by ffmpeg as WAV, MP3 and WebM/Opus, plus a clip too short to clone from.
#   apt-get install espeak-ng ffmpeg && bash tools/make_clone_fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=tests/fixtures/clone
mkdir -p "$out"
need() { command -v "$1" >/dev/null || { echo "missing $1 (apt-get install espeak-ng ffmpeg)" >&2; exit 1; }; }
need espeak-ng; need ffmpeg
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

text="Habari za asubuhi. Jina langu ni Amani na ninaishi Dar es Salaam. Leo ninataka kutuma pesa kwa mama yangu \
kijijini, halafu nitaenda sokoni kununua matunda na mboga. Asante sana kwa msaada wako."

# -p: pitch 0-99 (eSpeak's default is 50); -a amplitude; -s words per minute.
espeak-ng -v sw -p 15 -s 150 -a 120 -w "$tmp/low.wav" "$text"
espeak-ng -v sw+f3 -p 70 -s 165 -a 120 -w "$tmp/high.wav" "$text"   # a female variant, higher still
espeak-ng -v sw -p 50 -s 160 -w "$tmp/short.wav" "Habari yako."

ff -i "$tmp/low.wav" -ar 16000 -ac 1 -c:a pcm_s16le "$out/low.wav"
ff -i "$tmp/low.wav" -ar 22050 -ac 1 -c:a libmp3lame -b:a 48k "$out/low.mp3"
ff -i "$tmp/high.wav" -ar 48000 -ac 1 -c:a libopus -b:a 32k "$out/high.webm"
ff -i "$tmp/high.wav" -ar 22050 -ac 1 -c:a libmp3lame -b:a 48k "$out/high.mp3"
ff -i "$tmp/short.wav" -ar 16000 -ac 1 -c:a pcm_s16le "$out/short.wav"
ls -l "$out"
