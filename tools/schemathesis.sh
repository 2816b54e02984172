#!/usr/bin/env bash
# Contract fuzzing: schemathesis generates requests from GET /openapi.json of a running release server (a test
# key, limits raised) and checks every answer: no server errors, documented status codes and content types,
# response schemas, valid data accepted and invalid data refused. Any failure fails this script.
# Every operation is fuzzed; recognition runs on the tiny Whisper fixture model (so it answers rather than 503),
# and tools/schemathesis.toml accepts 422 for random bytes sent as `audio`.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check "schemathesis==4.32.5" 2>/dev/null \
  || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "schemathesis==4.32.5"
cargo build --release --locked --quiet
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

data=$(mktemp -d)
log=$(mktemp)
key="schemathesis-key-0123456789"
# Only voices that can speak: the shipped neural voices are inactive without their models and rightly answer 503
# (tests/neural_voices.rs covers that), which schemathesis would count as server errors.
printf '[tts]\nvoices = []\n' >"$data/voices.toml"
SAUTI__ASR__MODEL="$PWD/tests/fixtures/whisper/model" SAUTI__ASR__MAX_NEW_TOKENS=8 \
  SAUTI__MODELS__ONNXRUNTIME="${ORT_DYLIB_PATH:-$(bash tools/onnxruntime.sh)}" \
  SAUTI__SERVER__BIND=127.0.0.1:0 SAUTI__STORAGE__DATA_DIR="$data" SAUTI__AUTH__API_KEYS="$key" \
  SAUTI__LIMITS__SYNTHESIS_PER_MINUTE=100000000 SAUTI__LIMITS__DEFAULT_PER_MINUTE=100000000 \
  SAUTI__LIMITS__STATUS_PER_MINUTE=100000000 RUST_LOG=error \
  "$target_dir/release/sauti" serve --config "$data/voices.toml" >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; rm -rf "$data" "$log"' EXIT
for _ in $(seq 100); do
  base=$(sed -n 's/^sauti listening on //p' "$log")
  [ -n "$base" ] && break
  sleep 0.1
done
[ -n "$base" ] || { cat "$log"; echo "the server did not start"; exit 1; }

python3 -m schemathesis.cli --config-file tools/schemathesis.toml run "$base/openapi.json" \
  --header "xi-api-key: $key" --checks all --max-examples 100 --request-timeout 60 \
  --generation-deterministic --no-color
