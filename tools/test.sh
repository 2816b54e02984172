#!/usr/bin/env bash
# The whole test suite, on a fresh machine: installs what the tests need, then checks formatting, lints and
# runs every test. Safe to run again; installs are skipped when already present.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== toolchain: $(cargo --version)"
rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy"
cargo clippy --all-targets --locked -- -D warnings
cargo clippy --all-targets --locked --features fault-injection -- -D warnings

echo "== cargo test"
cargo test --locked

echo "== supervision under injected faults"
cargo test --locked --features fault-injection --test supervision
