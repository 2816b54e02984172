#!/usr/bin/env bash
# Contract fuzzing: schemathesis generates requests from GET /openapi.json of a running server (a test key,
# limits raised; the tests' build unless SAUTI_SERVER_PROFILE says otherwise, see tools/test-server.sh) and
# checks every answer: no server errors, documented status codes and content types, response schemas, valid
# data accepted and invalid data refused. Any failure fails this script.
# Every operation is fuzzed; recognition runs on the tiny Whisper fixture model (so it answers rather than 503),
# and tools/schemathesis.toml accepts 422 for random bytes sent as `audio`. A second run fuzzes the recognition
# operations of a server without a model: invalid requests must still be 4xx, never the 503 of a missing model.
#   bash tools/schemathesis.sh [--install]   (--install: only install schemathesis)
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check "schemathesis==4.32.5" 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "schemathesis==4.32.5"
[ "${1:-}" = "--install" ] && exit 0
source tools/test-server.sh
key="schemathesis-key-0123456789"
start_test_server "$key" SAUTI__ASR__MODEL="$PWD/tests/fixtures/whisper/model" SAUTI__ASR__MAX_NEW_TOKENS=8 \
  SAUTI__MODELS__ONNXRUNTIME="${ORT_DYLIB_PATH:-$(bash tools/onnxruntime.sh)}"

python3 -m schemathesis.cli --config-file tools/schemathesis.toml run "$base/openapi.json" \
  --header "xi-api-key: $key" --checks all --max-examples 100 --request-timeout 60 \
  --generation-deterministic --no-color

# The same contract without a recognition model: every request that is wrong in itself must still be 4xx (422 for
# forms and audio), and only a valid one may get the documented 503 `asr_unavailable`.
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
rm -rf "$server_data"
start_test_server "$key" SAUTI__ASR__MODEL=no-model-installed
python3 -m schemathesis.cli --config-file tools/schemathesis.toml run "$base/openapi.json" \
  --header "xi-api-key: $key" --checks all --max-examples 60 --request-timeout 60 \
  --include-path-regex "/(speech-to-text|audio/(transcriptions|translations)|voice-agent/converse/audio)" \
  --generation-deterministic --no-color
