#!/usr/bin/env bash
# The dev-only Python environment for tools/make_vits_fixtures.py, tools/export_mms_tts.py and the neural-voice
# benchmark: torch, transformers, onnx, onnxruntime in target/py (about 6 GB, ~2 minutes). Never needed to run
# or test sauti.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x target/py/bin/python ]; then
  python3 -m venv target/py
fi
target/py/bin/pip install --quiet --disable-pip-version-check torch transformers onnx onnxruntime==1.32.0 onnxscript
echo "target/py/bin/python"
