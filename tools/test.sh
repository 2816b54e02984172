#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the tests need, then checks formatting, lints and
# runs every test. Safe to run again; installs are skipped when already present.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each stage is announced with `stage NAME`; the time the one before took is printed when the next begins, and
# every stage's time with the total when the run ends (whether it passes or fails).
run_started=$SECONDS
stage_started=$SECONDS
stage_name=""
stage_times=()
stage() {
  if [ -n "$stage_name" ]; then
    stage_times+=("$(printf '%6d s  %s' $((SECONDS - stage_started)) "$stage_name")")
    echo "   ($((SECONDS - stage_started)) s)"
  fi
  stage_name="$1"
  stage_started=$SECONDS
  echo "== $1"
}
summary() {
  local status=$?
  stage_times+=("$(printf '%6d s  %s' $((SECONDS - stage_started)) "$stage_name")")
  echo "== stage times"
  printf '%s\n' "${stage_times[@]}"
  printf '%6d s  total (%d min)\n' $((SECONDS - run_started)) $(((SECONDS - run_started + 59) / 60))
  return $status
}
trap summary EXIT

stage "toolchain: $(cargo --version)"
echo "   disk free for the build: $(df -h --output=avail . | tail -1 | tr -d ' ')"
rustup component add rustfmt clippy >/dev/null 2>&1 || true

stage "test prerequisites: Chromium, Node.js and playwright-core (browser tests), Redis (shared rate limits), PostgreSQL (shared storage)"
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

stage "ONNX Runtime from PyPI (the neural-voice tests run it)"
ORT_DYLIB_PATH="$(bash tools/onnxruntime.sh)"
export ORT_DYLIB_PATH
echo "   $ORT_DYLIB_PATH"

stage "cargo fmt --check"
cargo fmt --all -- --check

stage "cargo clippy"
cargo clippy --all-targets --locked -- -D warnings
cargo clippy --all-targets --locked --features fault-injection -- -D warnings

stage "cargo test"
cargo test --locked

stage "the service conformance tests against two replicas sharing PostgreSQL, Redis and an S3 bucket"
SAUTI_TEST_REPLICAS=2 cargo test --locked --test service -- service_http:: voice_cloning:: voice_agent::

stage "supervision under injected faults"
cargo test --locked --features fault-injection --test fault_injection

stage "contract fuzzing: schemathesis against /openapi.json of the release server"
bash tools/schemathesis.sh

stage "load: wrk against the release server (voices, text-to-speech, jobs)"
bash tools/load.sh

stage "input fuzzing: every cargo-fuzz target for 30 s from its committed corpus"
bash tools/fuzz.sh 30
