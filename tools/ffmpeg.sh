#!/usr/bin/env bash
# Install a static ffmpeg from the PyPI `imageio-ffmpeg` wheel (nothing else) and print its path. The output
# format tests decode sauti's audio with it, as a second decoder beside sauti's own.
#   bash tools/ffmpeg.sh [DIR]      (default DIR: target/ffmpeg)
set -euo pipefail
cd "$(dirname "$0")/.."
version=0.6.0
dir="${1:-target/ffmpeg}"
if ! ls "$dir"/imageio_ffmpeg/binaries/ffmpeg-* >/dev/null 2>&1; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir" "imageio-ffmpeg==$version" >&2
fi
binary="$(ls "$dir"/imageio_ffmpeg/binaries/ffmpeg-* | head -1)"
chmod +x "$binary"
realpath "$binary"
