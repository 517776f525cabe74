#!/usr/bin/env bash
# Installs what the tests need beyond Rust, once; re-running is cheap.
set -euo pipefail
need_apt=()
command -v python3 >/dev/null 2>&1 || need_apt+=(python3 python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi
if ! command -v cargo-deny >/dev/null 2>&1; then
  cargo install --locked cargo-deny --quiet || echo "warning: cargo-deny could not be installed; the dependency policy is not checked" >&2
fi
