"""Supervised fine-tuning on demonstrations: the same engine as the
WebRL update, with the token-mean NLL of the response tokens only (objective.sft_loss), as WebRL trains.

`page_loss` > 0 adds a language-model loss on the prompt's tokens. WebRL starts from a pretrained model that
already reads pages; a from-scratch one (`tiny`) learns from the answer's one token of signal per page to
output the commonest element id, and only with the page's own text as a target does it learn to look the
instruction up in the page (docs/log.md, "a loss on the page": click-tab's held-out answers 26/80 -> 80/80).

Output layout of `run_sft(job)` in job.out, the same as an RL update's so the next command takes `--actor OUT/actor`:

    out/actor/          Hugging Face folder (weights, config, tokenizer) for from_pretrained and vLLM
    out/metrics.json    the summary `run_sft` returns
    out/events.jsonl    one line per optimizer step; TensorBoard in out/tb/sft
    out/checkpoints/    the engine's resumable checkpoints: re-running the same command after a kill continues

Steps whose response does not fit `max_tokens` are skipped and counted (the prompt's page is cut first; the
response never is).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from webrl.errors import UsageError
from webrl.policy.models import load_tokenizer, quiet, resolve_model
from webrl.rl.data import (
    Encoded,
    action_logprobs,
    collate,
    encode_steps,
    load_steps,
    max_tokens_for,
    next_token_logprobs,
    pad_token_id,
)
from webrl.rl.engine import ACTOR_DIR, Engine, event_summary, init_distributed, write_metrics
from webrl.rl.job_spec import SftJob
from webrl.rl.lora import trainable_model
from webrl.rl.objective import sft_loss


def sft_loss_fn(pad_id: int, page_loss: float = 0.0) -> Callable:
    """The engine's loss function on a micro-batch of Encoded: token-mean NLL of the response tokens, plus
    `page_loss` x the token-mean NLL of the prompt's tokens (a language-model loss on the page) when it is > 0."""

    def loss(model, micro: list[Encoded]) -> tuple[torch.Tensor, dict[str, float]]:
        batch = collate(micro, pad_id).to(model.device)
        stats = {"tokens": float(batch.attention_mask.sum())}
        if not page_loss:
            logp, n_tokens = action_logprobs(model, batch)
            return sft_loss(logp, n_tokens), {**stats, "action_tokens": float(n_tokens.sum())}
        token_logp = next_token_logprobs(model, batch)  # every position's logits: the page is a target too
        answer = batch.action_mask[:, 1:]
        page = batch.attention_mask[:, 1:].bool() & ~answer
        answer_loss = sft_loss(torch.where(answer, token_logp, 0.0).sum(-1), answer.sum(-1))
        page_nll = -torch.where(page, token_logp, 0.0).sum() / page.sum().clamp(min=1)
        stats |= {
            "action_tokens": float(answer.sum()),
            "answer_loss": float(answer_loss.detach()),
            "page_loss": float(page_nll.detach()),
        }
        return answer_loss + page_loss * page_nll, stats

    return loss


def run_sft(job: SftJob) -> dict[str, Any]:
    """Fine-tune `job.model` on the step file `job.data` (webrl.rl.data format; `webrl tasks demos` writes one)
    and write out/actor; see the module docstring and `sft_loss_fn` for the page loss. Returns the summary also
    written to out/metrics.json."""
    settings, out = job.settings, Path(job.out)
    began = time.perf_counter()
    steps = load_steps(Path(job.data))  # bad input is refused before DeepSpeed and the process group are set up
    model_dir = resolve_model(job.model, job.models_dir)
    tokenizer = load_tokenizer(model_dir)
    limit = max_tokens_for(model_dir, job.max_tokens)
    init_distributed()
    encoded, skipped = encode_steps(tokenizer, steps, limit)
    items = [e for e in encoded if e is not None]
    if not items:
        raise UsageError(f"{job.data}: no step fits in --max-tokens {limit} (all {len(steps)} responses are longer)")
    engine = Engine(trainable_model(model_dir, settings.lora, settings.seed), settings, out, "sft")
    result = engine.train(items, sft_loss_fn(pad_token_id(tokenizer), settings.page_loss))
    with quiet():
        engine.save_pretrained(out / ACTOR_DIR, tokenizer)
    summary = {
        "data": {"steps": len(steps), "kept": len(items), "skipped_too_long": skipped, "max_tokens": limit},
        "sft": {**event_summary(out, "sft"), "resumed_from": result["resumed_from"], "page_loss": settings.page_loss},
        "seconds": round(time.perf_counter() - began, 2),
        "model": str(model_dir),
        "actor": str(out / ACTOR_DIR),
        "settings": settings.model_dump(mode="json"),
    }
    write_metrics(out, summary)
    return summary
