"""Supervised fine-tuning on demonstrations (reference/webrl-method.md §2 step 0, §13): the same engine as the
WebRL update, with the token-mean NLL of the response tokens only (objective.sft_loss).

Output layout of `run_sft(..., out)`, the same as an RL update's so the next command takes `--actor OUT/actor`:

    out/actor/          Hugging Face folder (weights, config, tokenizer) for from_pretrained and vLLM
    out/metrics.json    the summary `run_sft` returns
    out/events.jsonl    one line per optimizer step; TensorBoard in out/tb/sft
    out/checkpoints/    the engine's resumable checkpoints: re-running the same command after a kill continues

The learning rate schedule is the engine's constant one, not the cosine schedule with 10% warmup that the
official SFT used: with one epoch over a few thousand demonstrations the difference is small, and a
constant rate keeps SFT and RL on one engine. Steps whose response does not fit `max_tokens` are skipped
and counted (the prompt is cut from the left first; the response never is).

The helpers below (model loading, encoding with skip counts, event summaries, metrics files, sharded
no-grad passes) are shared with webrl.rl.update.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import torch
import torch.distributed as dist

from webrl.errors import UsageError
from webrl.models import load_causal_lm, load_tokenizer, model_cache, quiet, resolve_model
from webrl.rl.checkpoint import write_atomically
from webrl.rl.data import (
    Batch,
    Encoded,
    ResponseTooLong,
    Step,
    action_logprobs,
    collate,
    encode,
    load_steps,
    pad_token_id,
)
from webrl.rl.engine import Engine, TrainSettings, init_distributed
from webrl.rl.objective import sft_loss

T = TypeVar("T")
MAX_TOKENS = 16384  # the official cutoff for SFT, critic and actor (§13)
ACTOR_DIR, METRICS_FILE, EVENTS_FILE = "actor", "metrics.json", "events.jsonl"
SFT_LR = 1e-5  # paper Table 4 (the engine's default, 1e-6, is the RL one)


# ---- shared helpers --------------------------------------------------------------------------------------


def is_main() -> bool:
    """Rank 0 (or no process group): the process that writes files and prints."""
    return not dist.is_initialized() or dist.get_rank() == 0


def resolve(spec: str, cache_dir: Path | None) -> Path:
    """A model spec's local folder (models built here go to the state dir's model cache)."""
    return resolve_model(spec, cache_dir if cache_dir is not None else model_cache())


def max_tokens_for(model_dir: Path, requested: int | None) -> int:
    """`requested`, else the official 16384 capped by the model's context length (SmolLM2: 8192)."""
    if requested is not None:
        if requested < 2:
            raise UsageError(f"--max-tokens {requested}: need at least 2 (one prompt and one response token)")
        return requested
    config = json.loads((model_dir / "config.json").read_text())
    return min(MAX_TOKENS, int(config.get("max_position_embeddings") or MAX_TOKENS))


def load_for_training(model_dir: Path) -> torch.nn.Module:
    """The causal LM in fp32: DeepSpeed casts it to bf16 itself when the settings ask for bf16."""
    return load_causal_lm(model_dir, "float32")


def pass_dtype(settings: TrainSettings) -> torch.dtype:
    """The dtype a no-grad pass runs in: the training's, so a reference matches the trained model's numbers."""
    return torch.bfloat16 if settings.compute_precision() == "bf16" else torch.float32


def pass_device() -> torch.device:
    """This process's GPU (the launcher's LOCAL_RANK), else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def encode_steps(tokenizer, steps: Sequence[Step], max_tokens: int) -> tuple[list[Encoded | None], int]:
    """Each step's tokens (None where the response does not fit) and how many were skipped."""
    encoded: list[Encoded | None] = []
    for step in steps:
        try:
            encoded.append(encode(tokenizer, step.prompt, step.response, max_tokens))
        except ResponseTooLong:
            encoded.append(None)
    return encoded, sum(e is None for e in encoded)


def sharded_map(fn: Callable[[list[int]], list[T]], n: int) -> list[T]:
    """`fn` over this rank's share of range(n), gathered in order on every rank. Every share has the same
    length (the last index repeated), so every rank runs the same number of forward passes: ZeRO-3 gathers
    parameters collectively in each."""
    if n == 0:
        return []
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    share = math.ceil(n / world)
    results = fn([min(i, n - 1) for i in range(rank * share, (rank + 1) * share)])
    if world == 1:
        return results
    gathered: list[list[T]] = [[] for _ in range(world)]
    dist.all_gather_object(gathered, results)
    return [item for part in gathered for item in part][:n]


@torch.no_grad()
def batched_pass(fn: Callable[[Batch], list[T]], encoded: Sequence[Encoded], pad_id: int, device: torch.device,
                 batch_size: int) -> list[T]:
    """`fn(batch)` (one result per row) over `encoded`, in batches of similar length; results in input order."""
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].input_ids))
    results: list[T | None] = [None] * len(encoded)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        for index, result in zip(chunk, fn(collate([encoded[i] for i in chunk], pad_id).to(device)), strict=True):
            results[index] = result
    return results  # type: ignore[return-value]


def logprob_rows(model: torch.nn.Module) -> Callable[[Batch], list[tuple[float, int]]]:
    """A batched_pass function: per row, (Σ action-token log-probs, number of action tokens) under `model`."""

    def rows(batch: Batch) -> list[tuple[float, int]]:
        logp, n_tokens = action_logprobs(model, batch)
        return list(zip(logp.float().tolist(), n_tokens.tolist(), strict=True))

    return rows


def event_summary(out: Path, name: str) -> dict[str, float]:
    """One training's per-step log reduced: first/last/mean loss, mean of every other metric, and tokens/s
    over all steps (total tokens / total step time)."""
    path = out / EVENTS_FILE
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    rows = [row for row in rows if row.get("name") == name]
    if not rows:
        return {}
    summary = {"optimizer_steps": len(rows), "loss_first": rows[0]["loss"], "loss_last": rows[-1]["loss"]}
    skip = {"name", "step", "time", "lr", "tokens", "tokens_per_s", "step_seconds"}
    for key in [k for k in rows[-1] if k not in skip]:
        summary[f"{key}_mean"] = sum(row.get(key, 0.0) for row in rows) / len(rows)
    seconds = sum(row["step_seconds"] for row in rows)
    if "tokens" in rows[-1] and seconds > 0:
        summary["tokens_per_s"] = sum(row["tokens"] for row in rows) / seconds
    return summary


def write_metrics(out: Path, metrics: dict[str, Any]) -> None:
    """out/metrics.json, all-or-nothing (rank 0)."""
    if is_main():
        out.mkdir(parents=True, exist_ok=True)
        write_atomically(out / METRICS_FILE, json.dumps(metrics, indent=2) + "\n")


# ---- SFT -------------------------------------------------------------------------------------------------


def sft_loss_fn(pad_id: int) -> Callable:
    """The engine's loss function: token-mean NLL of the response tokens of a micro-batch of Encoded."""

    def loss(model, micro: list[Encoded]) -> tuple[torch.Tensor, dict[str, float]]:
        batch = collate(micro, pad_id).to(model.device)
        logp, n_tokens = action_logprobs(model, batch)
        return sft_loss(logp, n_tokens), {"tokens": float(batch.attention_mask.sum()),
                                          "action_tokens": float(n_tokens.sum())}

    return loss


def run_sft(data: Path, model_spec: str, out: Path, settings: TrainSettings, max_tokens: int | None = None,
            cache_dir: Path | None = None) -> dict[str, Any]:
    """Fine-tune `model_spec` on the step file `data` (webrl.rl.data format; `webrl tasks demos` writes one)
    and write out/actor; see the module docstring. Returns the summary also written to out/metrics.json."""
    began = time.perf_counter()
    init_distributed()
    model_dir = resolve(model_spec, cache_dir)
    tokenizer = load_tokenizer(model_dir)
    limit = max_tokens_for(model_dir, max_tokens)
    steps = load_steps(Path(data))
    encoded, skipped = encode_steps(tokenizer, steps, limit)
    items = [e for e in encoded if e is not None]
    if not items:
        raise UsageError(f"{data}: no step fits in --max-tokens {limit} (all {len(steps)} responses are longer)")
    engine = Engine(load_for_training(model_dir), settings, Path(out), "sft")
    result = engine.train(items, sft_loss_fn(pad_token_id(tokenizer)))
    with quiet():
        engine.save_pretrained(Path(out) / ACTOR_DIR, tokenizer)
    summary = {"data": {"steps": len(steps), "kept": len(items), "skipped_too_long": skipped, "max_tokens": limit},
               "sft": {**event_summary(Path(out), "sft"), "resumed_from": result["resumed_from"]},
               "seconds": round(time.perf_counter() - began, 2), "model": str(model_dir),
               "actor": str(Path(out) / ACTOR_DIR), "settings": settings.model_dump(mode="json")}
    write_metrics(Path(out), summary)
    return summary
