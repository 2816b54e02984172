#!/usr/bin/env bash
# Coverage-guided fuzzing of everything that parses what users send (tests/fuzz/README.md).
#
#   bash tools/fuzz.sh [SECONDS] [TARGET...]
#
# Installs cargo-fuzz when missing, builds the targets (stable toolchain: RUSTC_BOOTSTRAP=1 lets cargo-fuzz use
# the sanitizer and coverage flags), then runs each target for SECONDS (default 30) from its committed corpus.
# New inputs go to target/fuzz-corpus/<target>, so a run never edits the checkout; `--merge` afterwards folds
# the interesting ones into the committed corpus (kept small by libFuzzer's merge). A crash, a panic in sauti's
# code, a timeout or a memory blow-up fails the run and leaves the input in tests/fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

merge=0
if [ "${1:-}" = "--merge" ]; then
  merge=1
  shift
fi
seconds="${1:-30}"
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(audio_decode upload_form normalize g2p scenario agent_turn realtime_message dictionary_file)

export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked --version 0.13.2
fi

fuzz=(cargo fuzz run --fuzz-dir tests/fuzz --release)
echo "== building the fuzz targets"
cargo fuzz build --fuzz-dir tests/fuzz --release

for target in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/$target"
  if [ "$merge" = 1 ]; then
    echo "== $target: merging target/fuzz-corpus/$target into $corpus"
    "${fuzz[@]}" "$target" "$corpus" "target/fuzz-corpus/$target" -- -merge=1 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true
    continue
  fi
  mkdir -p "target/fuzz-corpus/$target"
  echo "== $target: ${seconds} s from $(ls "$corpus" | wc -l) committed inputs"
  log="target/fuzz-corpus/$target.log"
  if ! "${fuzz[@]}" "$target" "target/fuzz-corpus/$target" "$corpus" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz target $target failed; the input is under tests/fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E "^contained panic" "$log" | sed 's/^/   /' || true
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$log" | sed 's/^/   /'
  grep -E "DONE|INITED" "$log" | tail -n 1 | sed 's/^/   /'
done
