#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the tests need, then checks formatting, lints and
# runs every test. Safe to run again; installs are skipped when already present.
#
# The build that only the last stage needs (the fuzz targets) runs in the background at the lowest priority while
# the lints and tests run, which often wait on servers and sockets; the fuzzing stage waits for it first.
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

# Background jobs: `background NAME NICENESS DESCRIPTION COMMAND...` starts COMMAND at that priority in its own
# process group, its output in target/ci/NAME.log; `await NAME` waits for it and fails the run, showing the end
# of the log, if it failed. The summary lists each job's own time and when it finished; jobs still running
# when the run ends are stopped.
mkdir -p target/ci
declare -A job_pid job_what
background() {
  local name="$1" niceness="$2" what="$3"
  shift 3
  job_what[$name]="$what"
  rm -f "target/ci/$name.done" "target/ci/$name.pgid"
  (
    started=$SECONDS
    status=0
    # A session of its own (so the whole job can be stopped), niced twice: the kernel schedules each session as
    # one group (autogroup), so a nice inside it alone would only rank its processes among themselves.
    setsid bash -c 'echo "$1" >/proc/self/autogroup 2>/dev/null || true; shift; exec nice -n "$0" "$@"' \
      "$niceness" "$niceness" "$@" >"target/ci/$name.log" 2>&1 </dev/null &
    echo $! >"target/ci/$name.pgid"
    wait $! || status=$?
    echo "$status $((SECONDS - started)) $((SECONDS - run_started))" >"target/ci/$name.done"
    exit "$status"
  ) &
  job_pid[$name]=$!
  echo "   in the background: $what (target/ci/$name.log)"
}
await() {
  local name="$1" status=0 seconds at
  echo "   waiting for the background job: ${job_what[$name]}"
  wait "${job_pid[$name]}" || status=$?
  unset "job_pid[$name]"
  read -r _ seconds at <"target/ci/$name.done" 2>/dev/null || { seconds=0; at=$((SECONDS - run_started)); }
  stage_times+=("$(printf '%6d s  %s (background, done at %d s)' "$seconds" "${job_what[$name]}" "$at")")
  if [ "$status" -ne 0 ]; then
    echo "---- target/ci/$name.log (last 100 lines)"
    tail -n 100 "target/ci/$name.log"
    echo "---- the background job failed (exit $status): ${job_what[$name]}" >&2
    exit "$status"
  fi
  echo "   done in the background in $seconds s: ${job_what[$name]}"
  grep -E "^ *Finished" "target/ci/$name.log" | sed 's/^ */   /' || true
}
summary() {
  local status=$?
  local name
  for name in "${!job_pid[@]}"; do
    kill -- "-$(cat "target/ci/$name.pgid" 2>/dev/null)" 2>/dev/null || true
    wait "${job_pid[$name]}" 2>/dev/null || true
    stage_times+=("$(printf '%6s    %s (background, stopped unfinished)' "" "${job_what[$name]}")")
  done
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

stage "test prerequisites: Chromium, Node.js and playwright-core (browser tests), Redis (shared rate limits), PostgreSQL (shared storage), wrk (load run), schemathesis"
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# The tests start private servers from the package's programs; SAUTI_TEST_POSTGRES_URL names one instead.
if [ -z "${SAUTI_TEST_POSTGRES_URL:-}" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v wrk >/dev/null 2>&1 || missing+=(wrk) # the load run
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

background schemathesis-install 0 "schemathesis from PyPI (contract fuzzing)" bash tools/schemathesis.sh --install

stage "ONNX Runtime from PyPI (the neural-voice tests run it)"
ORT_DYLIB_PATH="$(bash tools/onnxruntime.sh)"
export ORT_DYLIB_PATH
echo "   $ORT_DYLIB_PATH"

stage "cargo fmt --check"
cargo fmt --all -- --check

# The build for the last stage, the fuzz targets: niced, it takes only the CPU the stages leave idle (the serial
# stretches of compiling sauti itself, the test binaries' waiting). It starts before the lints when the machine
# has the memory for two compilers of sauti at once, otherwise once the test binaries are built. Schemathesis and
# the load run use the server binary the tests built (tools/test-server.sh), so nothing is compiled twice.
start_builds() {
  background fuzz-build 19 "the fuzz targets (tools/fuzz.sh --build)" bash tools/fuzz.sh --build
}
memory_gb=$(awk '/^MemTotal:/ { print int($2 / 1048576) }' /proc/meminfo)
early=0
[ "$memory_gb" -ge 8 ] && early=1

stage "cargo clippy"
[ "$early" = 1 ] && start_builds
cargo clippy --all-targets --locked -- -D warnings
# The fault switch changes only the library (and so the binary) and adds the test built with it; the other
# targets' code is the same with it on, and the run above linted it.
cargo clippy --locked --features fault-injection --lib --bins --test fault_injection -- -D warnings

stage "cargo test --no-run: building the test binaries"
cargo test --locked --no-run

stage "cargo test"
[ "$early" = 1 ] || start_builds
cargo test --locked

stage "the service conformance tests against two replicas sharing PostgreSQL, Redis and an S3 bucket"
SAUTI_TEST_REPLICAS=2 cargo test --locked --test service -- service_http:: voice_cloning:: voice_agent::

stage "supervision under injected faults"
cargo test --locked --features fault-injection --test fault_injection

stage "waiting for schemathesis"
await schemathesis-install

stage "contract fuzzing: schemathesis against /openapi.json of the server the tests ran"
bash tools/schemathesis.sh

stage "load: wrk against the server the tests ran (voices, text-to-speech, jobs)"
bash tools/load.sh

stage "waiting for the fuzz targets' build"
await fuzz-build

stage "input fuzzing: every cargo-fuzz target for 30 s from its committed corpus, two at a time"
bash tools/fuzz.sh --no-build --jobs 2 30
