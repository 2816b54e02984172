#!/usr/bin/env bash
# Install the ONNX Runtime shared library from the PyPI `onnxruntime` wheel (no Python packages besides it) and
# print its path. Neural voices and the tests that run them load it through models.onnxruntime / ORT_DYLIB_PATH.
#   bash tools/onnxruntime.sh [DIR]      (default DIR: target/onnxruntime)
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.32.0
dir="${1:-target/onnxruntime}"
library="$dir/onnxruntime/capi/libonnxruntime.so.$version"
if [ ! -f "$library" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dir" "onnxruntime==$version" >&2
fi
realpath "$library"
