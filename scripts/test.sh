#!/usr/bin/env bash
# Runs every test gpu-doctor has, on a fresh machine: installs what the tests need, then
# formatting, lints, the workspace tests (which drive the real NVML code path through the
# stand-in driver), the dependency policy and a short fuzzing pass.
#
#   ./scripts/test.sh            everything
#   QUICK=1 ./scripts/test.sh    skip the installs, cargo-deny and fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if [ -z "${QUICK:-}" ]; then
  step "installing test dependencies"
  ./scripts/install-test-deps.sh
fi

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (-D warnings)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test"
# The stand-in NVML driver is a cdylib that tests load at run time: build it first.
cargo build -p fake-nvml --locked
cargo test --workspace --locked --no-fail-fast

if [ -z "${QUICK:-}" ]; then
  if command -v cargo-deny >/dev/null 2>&1; then
    step "cargo deny (bans, licenses, sources)"
    cargo deny check bans licenses sources
  fi
  if [ -x fuzz/run.sh ]; then
    step "fuzzing (short)"
    fuzz/run.sh "${FUZZ_SECONDS:-20}"
  fi
  for t in scripts/integration/*.sh; do
    [ -e "$t" ] || continue
    step "integration: $t"
    "$t"
  done
fi
echo
echo "all tests passed"
