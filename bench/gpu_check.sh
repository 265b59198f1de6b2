#!/usr/bin/env bash
# SFT and the WebRL update on one CUDA GPU under DeepSpeed with NCCL (ZeRO-2 and ZeRO-3), checked against the
# same runs on the CPU (gloo), with tokens/s and model FLOPs utilisation. Self-contained and offline: it builds
# a small random Llama and synthetic WebRL-format data on the spot (bench/train.py build-model / write-data).
#
#   bash bench/gpu_check.sh [--cpu-only] [--size tiny|20m] [--keep]
#
#   --cpu-only   only the CPU reference runs (for machines without a GPU: checks the script itself)
#   --size       the model: tiny (0.8M params) or 20m (20.7M, the default; MFU means little for either)
#   --keep       keep the work folder (its path is printed)
#   PYTHON=...   the interpreter [default: .venv/bin/python, else python3]. It needs the project's dependencies
#                (torch with CUDA, deepspeed, transformers, tokenizers, tensorboard, typer, rich); when webrl itself
#                is not importable the script installs this tree with `pip install --no-deps -e .` (offline).
#
# Runs, each `webrl sft` then `webrl rl-update --actor <its reference's CPU SFT actor> --replay demos` (every
# update starts from the same actor, so the update is compared on its own):
#   cpu           fp32, ZeRO-2, gloo            the reference
#   gpu-z2        fp32, ZeRO-2, NCCL            per-step losses must match cpu within rtol 5e-3 / atol 1e-4
#   gpu-z3        fp32, ZeRO-3, NCCL            the same
#   gpu-bf16      bf16, ZeRO-2, NCCL            first-step loss within rtol 2e-2, mean loss within rtol 5e-2
#   cpu-lora      fp32, ZeRO-2, gloo, LoRA      rank-8 adapters on actor and critic: the LoRA reference
#   gpu-lora-z3   fp32, ZeRO-3, NCCL, LoRA      per-step losses must match cpu-lora as gpu-z2 matches cpu
# Exit status: 0 when every check passes, 1 on a mismatch, another non-zero status when a run fails.
#
# MFU = 6 · params · tokens/s / peak FLOP/s: 6N FLOPs per token for forward + backward, all parameters
# (embeddings included; the critic has no LM head, so its MFU is a slight overestimate). The peak is looked
# up by torch.cuda.get_device_properties(0).name in the dense (no sparsity) table below, in TFLOP/s, from
# NVIDIA's data sheets: bf16 tensor-core peak for bf16 runs, plain fp32 (no TF32) for fp32 runs.
#   name contains     bf16    fp32
#   H200               989    67
#   H100 SXM / HBM3    989    67
#   H100 NVL           835    60
#   H100 PCIe          756    51
#   A100               312    19.5
#   L40S               362    91.6
#   L4                 121    30.3
#   RTX 4090           165    82.6
#   A10                125    31.2
# An unlisted GPU gets "n/a".
set -euo pipefail
cd "$(dirname "$0")/.."

CPU_ONLY=0 SIZE=20m KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu-only) CPU_ONLY=1 ;;
    --size) SIZE="$2"; shift ;;
    --keep) KEEP=1 ;;
    *) echo "unknown argument: $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
WORK="$(mktemp -d)"
[ "$KEEP" = 1 ] && echo "work folder: $WORK" || trap 'rm -rf "$WORK"' EXIT
export WEBRL_STATE_DIR="$WORK/state" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 COLUMNS=140

if ! "$PY" -c 'import webrl.cli.main' 2>/dev/null; then  # a fresh machine: install the tree (offline, no deps)
  "$PY" -m pip install -q --no-deps --no-build-isolation -e . || { echo "cannot install webrl with $PY" >&2; exit 2; }
fi
if [ "$CPU_ONLY" = 0 ] && ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "no CUDA GPU visible to torch; run with --cpu-only to check the CPU half" >&2
  exit 2
fi

"$PY" bench/train.py build-model "$WORK/model" --size "$SIZE" >/dev/null
"$PY" bench/train.py write-data "$WORK/data" --tasks 8 --steps 3 --elements 30
COMMON=(--max-tokens 1024 --lr 1e-4 --micro-batch-size 1 --grad-accum 2)

# run NAME DEVICE(cpu|gpu) ZERO PRECISION REFERENCE [lora]: the update starts from REFERENCE's SFT actor; with
# `lora`, rank-8 adapters on the SFT's and the update's actor and on the critic
run() {
  local name="$1" device="$2" zero="$3" precision="$4" reference="$5" out="$WORK/$1" visible=() sft=() update=()
  [ "${6:-}" = lora ] && sft=(--lora-rank 8) update=(--lora-rank 8 --critic-lora-rank 8)
  [ "$device" = cpu ] && visible=(env CUDA_VISIBLE_DEVICES=)
  local began=$SECONDS
  "${visible[@]}" "$PY" -m webrl sft --data "$WORK/data/demos.jsonl" --model "$WORK/model" --out "$out/sft" \
    --zero-stage "$zero" --precision "$precision" "${COMMON[@]}" "${sft[@]}" >"$out.log" 2>&1 \
    || { tail -40 "$out.log"; echo "$name: sft failed" >&2; exit 3; }
  "${visible[@]}" "$PY" -m webrl rl-update --data "$WORK/data/rollouts.jsonl" --actor "$WORK/$reference/sft/actor" \
    --replay-steps "$WORK/data/demos.jsonl" --out "$out/update" --zero-stage "$zero" --precision "$precision" \
    "${COMMON[@]}" "${update[@]}" >>"$out.log" 2>&1 \
    || { tail -40 "$out.log"; echo "$name: rl-update failed" >&2; exit 3; }
  echo "$name: sft + rl-update in $((SECONDS - began)) s"
}

mkdir -p "$WORK"
run cpu cpu 2 fp32 cpu
run cpu-lora cpu 2 fp32 cpu-lora lora
if [ "$CPU_ONLY" = 0 ]; then
  run gpu-z2 gpu 2 fp32 cpu
  run gpu-z3 gpu 3 fp32 cpu
  run gpu-bf16 gpu 2 bf16 cpu
  run gpu-lora-z3 gpu 3 fp32 cpu-lora lora
fi

"$PY" - "$WORK" "$CPU_ONLY" <<'EOF'
"""Compare the runs' per-step losses with the CPU reference; print tokens/s and MFU; exit 1 on a mismatch."""
import json
import sys
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from webrl.policy.models import load_causal_lm

work, cpu_only = Path(sys.argv[1]), sys.argv[2] == "1"
PEAKS = [("H200", 989, 67), ("H100 NVL", 835, 60), ("H100 PCIe", 756, 51), ("H100", 989, 67), ("A100", 312, 19.5),
         ("L40S", 362, 91.6), ("L4", 121, 30.3), ("RTX 4090", 165, 82.6), ("A10", 125, 31.2)]
TRAININGS = [("sft", "sft"), ("update", "critic"), ("update", "actor")]
# run -> (precision, the CPU run it must match)
RUNS = {
    "gpu-z2": ("fp32", "cpu"),
    "gpu-z3": ("fp32", "cpu"),
    "gpu-bf16": ("bf16", "cpu"),
    "gpu-lora-z3": ("fp32", "cpu-lora"),
}
CPU_RUNS = {"cpu": ("fp32", "cpu"), "cpu-lora": ("fp32", "cpu-lora")}


def losses(run, folder, name):
    rows = [json.loads(line) for line in (work / run / folder / "events.jsonl").read_text().splitlines()]
    return [row["loss"] for row in rows if row["name"] == name]


def tokens_per_s(run, folder, name):
    metrics = json.loads((work / run / folder / "metrics.json").read_text())
    return metrics["sft" if name == "sft" else name]["tokens_per_s"]


def close(a, b, rtol, atol):
    return abs(a - b) <= atol + rtol * abs(b)


def check(run, precision, reference):
    """(training, verdict, detail) rows for one run against the CPU losses."""
    rows, ok = [], True
    for (folder, name), ref in zip(TRAININGS, reference):
        got = losses(run, folder, name)
        if len(got) != len(ref):
            rows.append((name, False, f"{len(got)} steps, cpu {len(ref)}"))
            ok = False
            continue
        worst = max(abs(a - b) for a, b in zip(got, ref))
        if precision == "fp32":
            good = all(close(a, b, 5e-3, 1e-4) for a, b in zip(got, ref))
        else:
            good = close(got[0], ref[0], 2e-2, 1e-3) and close(sum(got) / len(got), sum(ref) / len(ref), 5e-2, 1e-2)
        rows.append((name, good, f"{len(got)} steps, max |Δ| {worst:.2e}"))
        ok &= good
    return rows, ok


def peak(precision):
    if not torch.cuda.is_available():
        return None, "no GPU"
    name = torch.cuda.get_device_properties(0).name
    for key, bf16, fp32 in PEAKS:
        if key in name:
            return (bf16 if precision == "bf16" else fp32) * 1e12, name
    return None, name


params = sum(t.numel() for t in load_causal_lm(work / "model").parameters())
table = Table(title=f"gpu_check: {params / 1e6:.1f}M params, losses against the CPU runs")
for column in ("run", "training", "steps / max |Δ loss|", "match", "tokens/s", "MFU"):
    table.add_column(column)
all_ok = True
for folder_name, (precision, cpu_run) in (CPU_RUNS if cpu_only else CPU_RUNS | RUNS).items():
    rows, ok = check(folder_name, precision, [losses(cpu_run, folder, name) for folder, name in TRAININGS])
    all_ok &= ok
    flops, device = peak(precision) if folder_name not in CPU_RUNS else (None, "cpu")
    for (folder, name), (training, good, detail) in zip(TRAININGS, rows):
        speed = tokens_per_s(folder_name, folder, name)
        mfu = f"{6 * params * speed / flops:.2%}" if flops else "n/a"
        table.add_row(f"{folder_name} ({device})", training, detail, "✓" if good else "✗", f"{speed:,.0f}", mfu)
Console().print(table)
sys.exit(0 if all_ok else 1)
EOF
