#!/usr/bin/env bash
# Set up webrl in ./.venv on a fresh Debian/Ubuntu machine: Chromium, a CPU build of torch, webrl itself.
# Idempotent: re-running only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian's chromium"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "Chromium is missing: run 'sudo apt-get install chromium' (or 'playwright install chromium')" >&2
    exit 1
  fi
fi

# pip, minus the noise of index locations configured on some machines; pip's own failure still fails.
pipq() { .venv/bin/pip "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }; }

[ -x .venv/bin/python ] || python3 -m venv .venv
pipq install -q --upgrade pip
# torch first, so that webrl's torch range is already met by a CPU build and pip pulls no CUDA build.
# Elsewhere, point TORCH_SPEC / PIP_INDEX_URL at a CPU wheel index for this step if you have no GPU.
.venv/bin/python -c "import torch" 2>/dev/null || \
  pipq install -q "${TORCH_SPEC:-torch==2.13.0}"
pipq install -q -e ".[dev]"
.venv/bin/python -c "import webrl.cli.main" && echo "webrl installed in .venv (run: .venv/bin/webrl --help)"
