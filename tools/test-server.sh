# Sourced by the scripts that test the server from outside (schemathesis.sh, load.sh).
#
#   start_test_server KEY [SAUTI__X__Y=value ...]
#
# Builds `sauti` in the profile SAUTI_SERVER_PROFILE names (default `dev`: the binary the black-box tests run, with
# debug assertions and overflow checks on, so nothing is built twice in CI; `release` for figures to compare with
# earlier release runs) and starts `sauti serve` on a free loopback port with a fresh data dir, the given key,
# limits raised out of the way and only the voices that can speak (the shipped neural voices are inactive without
# their models and rightly answer 503), plus any extra environment given. Sets `base` (the server's URL), `server`
# (its pid), `server_data` (its data dir) and `server_profile`, and stops the server and removes the dir on exit.

start_test_server() {
  local key="$1"
  shift
  server_profile="${SAUTI_SERVER_PROFILE:-dev}"
  local profile_dir="$server_profile"
  [ "$server_profile" = dev ] && profile_dir=debug
  # Without the fault switch, whatever the last build of the binary had (the supervision stage builds it with it).
  cargo build --profile "$server_profile" --locked --quiet --bin sauti
  local target_dir
  target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
  server_data=$(mktemp -d)
  local log="$server_data/server.log"
  # The log exists before the server starts, so the wait below never reads a file not yet created.
  : >"$log"
  printf '[tts]\nvoices = []\n' >"$server_data/voices.toml"
  env "$@" SAUTI__SERVER__BIND=127.0.0.1:0 SAUTI__STORAGE__DATA_DIR="$server_data/data" SAUTI__AUTH__API_KEYS="$key" \
    SAUTI__LIMITS__SYNTHESIS_PER_MINUTE=100000000 SAUTI__LIMITS__DEFAULT_PER_MINUTE=100000000 \
    SAUTI__LIMITS__STATUS_PER_MINUTE=100000000 SAUTI__LIMITS__UNAUTHENTICATED_PER_MINUTE=100000000 RUST_LOG=error \
    "$target_dir/$profile_dir/sauti" serve --config "$server_data/voices.toml" >"$log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$server_data"' EXIT
  base=""
  for _ in $(seq 300); do
    base=$(sed -n 's/^sauti listening on //p' "$log")
    [ -n "$base" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$base" ] || { cat "$log"; echo "the server did not start"; return 1; }
}
