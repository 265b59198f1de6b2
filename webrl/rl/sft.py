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
and counted (the prompt's page is cut first; the response never is).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from webrl.errors import UsageError
from webrl.policy.models import load_causal_lm, load_tokenizer, quiet, resolve_model
from webrl.rl.data import Encoded, action_logprobs, collate, encode_steps, load_steps, max_tokens_for, pad_token_id
from webrl.rl.engine import ACTOR_DIR, Engine, TrainSettings, event_summary, init_distributed, write_metrics
from webrl.rl.objective import sft_loss


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
    steps = load_steps(Path(data))  # bad input is refused before DeepSpeed and the process group are set up
    model_dir = resolve_model(model_spec, cache_dir)
    tokenizer = load_tokenizer(model_dir)
    limit = max_tokens_for(model_dir, max_tokens)
    init_distributed()
    encoded, skipped = encode_steps(tokenizer, steps, limit)
    items = [e for e in encoded if e is not None]
    if not items:
        raise UsageError(f"{data}: no step fits in --max-tokens {limit} (all {len(steps)} responses are longer)")
    engine = Engine(load_causal_lm(model_dir), settings, Path(out), "sft")
    result = engine.train(items, sft_loss_fn(pad_token_id(tokenizer)))
    with quiet():
        engine.save_pretrained(Path(out) / ACTOR_DIR, tokenizer)
    summary = {"data": {"steps": len(steps), "kept": len(items), "skipped_too_long": skipped, "max_tokens": limit},
               "sft": {**event_summary(Path(out), "sft"), "resumed_from": result["resumed_from"]},
               "seconds": round(time.perf_counter() - began, 2), "model": str(model_dir),
               "actor": str(Path(out) / ACTOR_DIR), "settings": settings.model_dump(mode="json")}
    write_metrics(Path(out), summary)
    return summary
