#!/usr/bin/env bash
# Coverage-guided fuzzing of everything that parses what users send (tests/fuzz/README.md).
#
#   bash tools/fuzz.sh [--jobs N] [SECONDS] [TARGET...]   build, then run each target for SECONDS (default 30)
#   bash tools/fuzz.sh --build                             only build the targets
#   bash tools/fuzz.sh --no-build [--jobs N] [SECONDS] [TARGET...]   only run them (built before)
#   bash tools/fuzz.sh --merge [TARGET...]                 fold what runs found into the committed corpus
#
# Installs cargo-fuzz when missing and builds the targets (stable toolchain: RUSTC_BOOTSTRAP=1 lets cargo-fuzz
# use its coverage flags) the way tests/fuzz/README.md describes: coverage-guided, without a sanitizer, without
# debug info. Then runs each target for SECONDS from its committed corpus, N at a time (default 1; libFuzzer uses
# one core per target). New inputs go to target/fuzz-corpus/<target>, so a run never edits the checkout;
# `--merge` afterwards folds the interesting ones into the committed corpus (kept small by libFuzzer's merge).
# A crash, a panic in sauti's code, a timeout or a memory blow-up fails the run and leaves the input in
# tests/fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

merge=0
build=1
run=1
jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --merge) merge=1 ;;
    --build) run=0 ;;
    --no-build) build=0 ;;
    --jobs) jobs="$2"; shift ;;
    *) break ;;
  esac
  shift
done
seconds=30
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  seconds="$1"
  shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(audio_decode upload_form normalize g2p scenario agent_turn realtime_message dictionary_file speech_input)

export RUSTC_BOOTSTRAP=1
# Without debug info (cargo-fuzz asks for line tables); panics still name their file and line.
export RUSTFLAGS="${RUSTFLAGS:-} -Cdebuginfo=0"
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked --version 0.13.2
fi

# The same options for building and running, so that `cargo fuzz run` finds the build fresh.
options=(--fuzz-dir tests/fuzz --release --sanitizer none)
if [ "$build" = 1 ]; then
  echo "== building the fuzz targets"
  cargo fuzz build "${options[@]}"
fi
[ "$run" = 1 ] || exit 0

if [ "$merge" = 1 ]; then
  for target in "${targets[@]}"; do
    corpus="tests/fuzz/corpus/$target"
    echo "== $target: merging target/fuzz-corpus/$target into $corpus"
    cargo fuzz run "${options[@]}" "$target" "$corpus" "target/fuzz-corpus/$target" -- -merge=1 2>&1 \
      | grep -E "MERGE-OUTER: [0-9]+ new files" || true
  done
  exit 0
fi

# One target: its output goes to target/fuzz-corpus/<target>.log, its exit status to <target>.status.
fuzz_one() {
  local target="$1" status=0
  local log="target/fuzz-corpus/$target.log"
  cargo fuzz run "${options[@]}" "$target" "target/fuzz-corpus/$target" "tests/fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1 || status=$?
  echo "$status" >"target/fuzz-corpus/$target.status"
}

for target in "${targets[@]}"; do
  mkdir -p "target/fuzz-corpus/$target"
  rm -f "target/fuzz-corpus/$target.status"
done
echo "== running ${#targets[@]} targets for ${seconds} s each, $jobs at a time"
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait

failed=()
for target in "${targets[@]}"; do
  log="target/fuzz-corpus/$target.log"
  echo "== $target: ${seconds} s from $(ls "tests/fuzz/corpus/$target" | wc -l) committed inputs"
  if [ "$(cat "target/fuzz-corpus/$target.status" 2>/dev/null)" != 0 ]; then
    tail -n 60 "$log"
    echo "fuzz target $target failed; the input is under tests/fuzz/artifacts/$target/" >&2
    failed+=("$target")
    continue
  fi
  grep -E "^contained panic" "$log" | sed 's/^/   /' || true
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed 's/^/   /'
  grep -E "DONE|INITED" "$log" | tail -n 1 | sed 's/^/   /'
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed fuzz targets: ${failed[*]}" >&2
  exit 1
fi
