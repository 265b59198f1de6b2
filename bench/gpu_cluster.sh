#!/usr/bin/env bash
# The Ray executor's GPU path on one machine, in under 10 minutes: a one-node Ray cluster whose node offers the GPU
# and one environment slot, then `webrl eval --executor ray --policy vllm:tiny` over a dozen MiniWoB++ tasks — a
# vLLM server started as a Ray actor on the GPU (webrl.runs.model_servers), an environment worker acting through
# it — and the same tasks with the oracle and with hf:tiny in the worker (the CPU parts, which run anywhere).
#
#   bash bench/gpu_cluster.sh [--cpu-only]
#
#   --cpu-only   only the CPU parts (the oracle and hf:tiny through the cluster): checks the script itself
#   PYTHON=...   webrl's interpreter [default: .venv/bin/python]; vLLM is found as webrl finds it (.venv-vllm,
#                $WEBRL_VLLM_PYTHON, or `vllm` on PATH; scripts/install-vllm.sh installs it)
# Exit status: 0 when every run judged all its episodes, 1 otherwise. Prints each run's summary line and, for the
# vLLM run, the server's start time and the episodes' policy latency.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
RAY=$(dirname "$PYTHON")/ray
cpu_only=0
[ "${1:-}" = "--cpu-only" ] && cpu_only=1
work=$(mktemp -d)
export WEBRL_STATE_DIR=$work/state COLUMNS=160
trap '"$RAY" stop --force >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

gpus=0
if [ $cpu_only = 0 ] && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  gpus=1
fi
port=$("$PYTHON" -c "from webrl.netutil import free_port; print(free_port())")
"$RAY" start --head --port "$port" --num-cpus 4 --num-gpus $gpus --resources '{"webrl_env": 1}' \
  --include-dashboard false --disable-usage-stats >/dev/null
address=127.0.0.1:$port
"$PYTHON" -m webrl doctor --ray-address "$address" | tail -8 || true  # exits 1 over unrelated checks (ports)

failed=0
run() {  # NAME POLICY: one eval through the cluster; its summary's episode counts
  local name=$1 policy=$2 began=$SECONDS
  if "$PYTHON" -m webrl eval --tasks miniwob:test --limit 12 --executor ray --ray-address "$address" \
      --policy "$policy" --max-steps 5 --max-tokens 64 --out "$work/$name" >"$work/$name.log" 2>&1; then
    "$PYTHON" - "$work/$name" "$name" $((SECONDS - began)) <<'EOF'
import json, statistics, sys
out, name, seconds = sys.argv[1:]
summary = json.load(open(f"{out}/summary.json"))
latency = [s["policy"].get("latency_s") for line in open(f"{out}/episodes.jsonl") for s in json.loads(line)["steps"]]
latency = [x for x in latency if x is not None]
print(f"{name}: {seconds} s, episodes {summary['episodes']}, workers {summary['executor']['workers']}"
      + (f", median policy latency {statistics.median(latency):.3f} s" if latency else ""))
EOF
  else
    echo "$name: FAILED"; tail -5 "$work/$name.log"; failed=1
  fi
}
run oracle oracle
run hf-tiny hf:tiny
if [ $gpus = 1 ]; then
  run vllm-tiny vllm:tiny
else
  echo "vllm-tiny: skipped (no GPU, or --cpu-only)"
fi
exit $failed
