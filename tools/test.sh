#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the tests need, then checks formatting, lints and
# runs every test. Safe to run again; installs are skipped when already present.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== toolchain: $(cargo --version)"
echo "   disk free for the build: $(df -h --output=avail . | tail -1 | tr -d ' ')"
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== test prerequisites: Chromium, Node.js and playwright-core (browser tests), Redis (shared rate limits), PostgreSQL (shared storage)"
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# The tests start private servers from the package's programs; SAUTI_TEST_POSTGRES_URL names one instead.
if [ -z "${SAUTI_TEST_POSTGRES_URL:-}" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -d target/browser/node_modules/playwright-core ]; then
  mkdir -p target/browser
  (cd target/browser && npm install --no-save --no-audit --no-fund --loglevel=error playwright-core@1.65.1)
fi

echo "== ONNX Runtime from PyPI (the neural-voice tests run it)"
ORT_DYLIB_PATH="$(bash tools/onnxruntime.sh)"
export ORT_DYLIB_PATH
echo "   $ORT_DYLIB_PATH"

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --all-targets --locked -- -D warnings
cargo clippy --all-targets --locked --features fault-injection -- -D warnings

echo "== cargo test"
cargo test --locked

echo "== the service conformance tests against two replicas sharing PostgreSQL, Redis and an S3 bucket"
SAUTI_TEST_REPLICAS=2 cargo test --locked --test service_http --test voice_cloning --test voice_agent

echo "== supervision under injected faults"
cargo test --locked --features fault-injection --test supervision --test poison_jobs

echo "== contract fuzzing: schemathesis against /openapi.json of the release server"
bash tools/schemathesis.sh

echo "== load: wrk against the release server (voices, text-to-speech, jobs)"
bash tools/load.sh

echo "== input fuzzing: every cargo-fuzz target for 30 s from its committed corpus"
bash tools/fuzz.sh 30
