#!/usr/bin/env bash
# Short fuzzing pass for every cargo-fuzz target in fuzz/Cargo.toml.
#
#   fuzz/run.sh [SECONDS]     (default 20 per target)
#
# With cargo-fuzz installed, each target runs under libFuzzer (with AddressSanitizer) for
# SECONDS: on a nightly toolchain when there is one, else on the stable one with
# RUSTC_BOOTSTRAP=1 (cargo-fuzz passes nightly-only `-Z` flags). Without cargo-fuzz, the stable
# stand-ins run instead: the randomized tests that feed the same code hostile input (`cargo
# test` harnesses listed in STABLE_FALLBACKS below). Each engineer adds their target's fallback.
set -u
cd "$(dirname "$0")/.."
seconds="${1:-20}"

STABLE_FALLBACKS=(
  "-p gpu-doctor-scan --test robustness --test long_line"
)

targets=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^gpu-doctor-fuzz$')

if cargo fuzz --version >/dev/null 2>&1; then
  if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    fuzz=(cargo +nightly fuzz)
  else
    export RUSTC_BOOTSTRAP=1
    fuzz=(cargo fuzz)
  fi
  status=0
  for t in $targets; do
    echo "==> ${fuzz[*]} run $t (${seconds}s)"
    mkdir -p "fuzz/corpus/$t"
    if ! "${fuzz[@]}" run "$t" "fuzz/corpus/$t" -- -max_total_time="$seconds" -rss_limit_mb=2048; then
      echo "fuzz target $t failed" >&2
      status=1
    fi
  done
  exit $status
fi

echo "cargo-fuzz is missing: running the stable randomized stand-ins"
status=0
for args in "${STABLE_FALLBACKS[@]}"; do
  # shellcheck disable=SC2086
  if ! cargo test --locked $args; then
    status=1
  fi
done
exit $status
