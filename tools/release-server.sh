# Sourced by the scripts that test the release server from outside (schemathesis.sh, load.sh).
#
#   start_release_server KEY [SAUTI__X__Y=value ...]
#
# Builds the release binary (nothing to do when the build is fresh, as after tools/test.sh's background build),
# starts `sauti serve` on a free loopback port with a fresh data dir, the given key, limits raised out of the way
# and only the voices that can speak (the shipped neural voices are inactive without their models and rightly
# answer 503), plus any extra environment given. Sets `base` (the server's URL), `server` (its pid) and
# `server_data` (its data dir), and stops the server and removes the dir on exit.

start_release_server() {
  local key="$1"
  shift
  cargo build --release --locked --quiet
  local target_dir
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  server_data=$(mktemp -d)
  local log="$server_data/server.log"
  printf '[tts]\nvoices = []\n' >"$server_data/voices.toml"
  env "$@" SAUTI__SERVER__BIND=127.0.0.1:0 SAUTI__STORAGE__DATA_DIR="$server_data/data" SAUTI__AUTH__API_KEYS="$key" \
    SAUTI__LIMITS__SYNTHESIS_PER_MINUTE=100000000 SAUTI__LIMITS__DEFAULT_PER_MINUTE=100000000 \
    SAUTI__LIMITS__STATUS_PER_MINUTE=100000000 SAUTI__LIMITS__UNAUTHENTICATED_PER_MINUTE=100000000 RUST_LOG=error \
    "$target_dir/release/sauti" serve --config "$server_data/voices.toml" >"$log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$server_data"' EXIT
  base=""
  for _ in $(seq 100); do
    base=$(sed -n 's/^sauti listening on //p' "$log")
    [ -n "$base" ] && break
    sleep 0.1
  done
  [ -n "$base" ] || { cat "$log"; echo "the server did not start"; return 1; }
}
