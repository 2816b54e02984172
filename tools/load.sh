#!/usr/bin/env bash
# A bounded load run over loopback with wrk (Debian's package), as CI runs it: the server the tests built
# (SAUTI_SERVER_PROFILE=release for the release build, see tools/test-server.sh), a 45 s warm-up
# (the job table and SQLite's page cache grow in it, then RSS settles), then 30 s of voices, text-to-speech and jobs
# (tools/load.lua) from 4 connections. Prints the request count, the error rate, p50/p99 and the server's RSS, read
# every second of the run. Fails on any error (non-2xx answer, connection or timeout error), on fewer than 10,000
# requests, or on a leak: the floor of RSS (its least reading) over the last 10 s more than 3 MB above its floor over
# the first 10 s (unscraped histogram samples once grew it ~7 MB per 20 s). The server runs with
# MIMALLOC_ARENA_EAGER_COMMIT=0 so that RSS follows live memory: with the allocator's default, freed pages go back to
# the kernel lazily and stay in RSS, which then swings by ~9 MB with no trend.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends wrk
fi

source tools/test-server.sh
key="load-key-0123456789"
# Jobs are created faster than one worker finishes them; the per-key cap on unfinished jobs is lifted for the run.
start_test_server "$key" SAUTI__JOBS__MAX_UNFINISHED_PER_KEY=1000000 MIMALLOC_ARENA_EAGER_COMMIT=0

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$server/status"; }

SAUTI_LOAD_JOB=$(python3 - "$base" "$key" <<'PY'
import json, sys, urllib.request
request = urllib.request.Request(sys.argv[1] + "/v1/tts/jobs", data=b'{"text":"Habari."}', method="POST",
                                 headers={"xi-api-key": sys.argv[2], "Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(request))["job_id"])
PY
)
export SAUTI_LOAD_JOB SAUTI_LOAD_KEY="$key"

wrk -t 2 -c 4 -d 45s -s tools/load.lua "$base" >/dev/null
(for _ in $(seq 30); do sleep 1; rss_mb; echo; done >"$server_data/rss") &
sampler=$!
out=$(wrk -t 2 -c 4 -d 30s --timeout 5s -s tools/load.lua "$base")
wait "$sampler"
read -r first last < <(awk 'NR <= 10 && (f == "" || $1 < f) { f = $1 } NR > 20 && (l == "" || $1 < l) { l = $1 }
  END { print f, l }' "$server_data/rss")

value() { sed -n "s/^$1 //p" <<<"$out"; }
requests=$(value requests)
errors=$(value errors)
printf 'wrk, 2 threads, 4 connections, 30 s (after a 45 s warm-up), %s build:\n' "$server_profile"
printf '  requests %s (%s/s), errors %s, p50 %s ms, p99 %s ms\n' \
  "$requests" "$((requests / 30))" "$errors" "$(value p50_ms)" "$(value p99_ms)"
printf '  server RSS each second (MB): %s\n' "$(paste -sd ' ' "$server_data/rss")"
printf '  RSS floor: %s MB over the first 10 s, %s MB over the last 10 s\n' "$first" "$last"
[ "$errors" -eq 0 ] || { echo "$out"; echo "the load run saw errors"; exit 1; }
[ "$requests" -ge 10000 ] || { echo "fewer than 10,000 requests in 30 s"; exit 1; }
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l - f <= 3) }' \
  || { echo "the server's RSS floor rose by more than 3 MB over the run (a leak)"; exit 1; }
