#!/usr/bin/env bash
# Runs every check and test of the project, as CI does. Needs only the Rust
# toolchain; installs anything else the tests need by itself.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "formatting (cargo fmt --check)"
cargo fmt --all -- --check

step "lints (cargo clippy, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "unit and end-to-end tests (cargo test)"
cargo test --workspace --locked
