#!/usr/bin/env bash
# A bounded load run over loopback with wrk (Debian's package), as CI runs it: the release server, a 15 s warm-up (RSS settles in it),
# then 30 s of voices, text-to-speech and jobs (tools/load.lua) from 4 connections. Prints the request count, the
# error rate and p50/p99, and the server's RSS after the warm-up, 10 s into the run and at its end. Fails on any
# error (non-2xx answer, connection or timeout error), on fewer than 10,000 requests, or on RSS growing by more than
# 5 MB over the last 20 s, when it should be flat (a leak: unscraped histogram samples grew ~7 MB there).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v wrk >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends wrk
fi

source tools/release-server.sh
key="load-key-0123456789"
# Jobs are created faster than one worker finishes them; the per-key cap on unfinished jobs is lifted for the run.
start_release_server "$key" SAUTI__JOBS__MAX_UNFINISHED_PER_KEY=1000000

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$server/status"; }

SAUTI_LOAD_JOB=$(python3 - "$base" "$key" <<'PY'
import json, sys, urllib.request
request = urllib.request.Request(sys.argv[1] + "/v1/tts/jobs", data=b'{"text":"Habari."}', method="POST",
                                 headers={"xi-api-key": sys.argv[2], "Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(request))["job_id"])
PY
)
export SAUTI_LOAD_JOB SAUTI_LOAD_KEY="$key"

wrk -t 2 -c 4 -d 15s -s tools/load.lua "$base" >/dev/null
before=$(rss_mb)
(sleep 10 && rss_mb >"$server_data/rss-mid") &
sampler=$!
out=$(wrk -t 2 -c 4 -d 30s --timeout 5s -s tools/load.lua "$base")
after=$(rss_mb)
wait "$sampler"
mid=$(cat "$server_data/rss-mid")

value() { sed -n "s/^$1 //p" <<<"$out"; }
requests=$(value requests)
errors=$(value errors)
printf 'wrk, 2 threads, 4 connections, 30 s (after a 15 s warm-up), release build:\n'
printf '  requests %s (%s/s), errors %s, p50 %s ms, p99 %s ms, server RSS %s MB -> %s MB (10 s) -> %s MB (30 s)\n' \
  "$requests" "$((requests / 30))" "$errors" "$(value p50_ms)" "$(value p99_ms)" "$before" "$mid" "$after"
[ "$errors" -eq 0 ] || { echo "$out"; echo "the load run saw errors"; exit 1; }
[ "$requests" -ge 10000 ] || { echo "fewer than 10,000 requests in 30 s"; exit 1; }
awk -v a="$after" -v m="$mid" 'BEGIN { exit !(a - m <= 5) }' \
  || { echo "server RSS grew by more than 5 MB over the last 20 s of the run"; exit 1; }
