"""`webrl orm train`: fine-tune a causal LM into an ORM on rule-labelled trajectories.

The loss is the cross-entropy of the answer token ("YES" for a success, "NO" for a failure) over the whole
vocabulary at the prompt's last position: supervised fine-tuning on the one-token answer, as the official
ORM was trained with LLaMA-Factory (which also trained the `<|eot_id|>` after it; the score never reads it).
Defaults follow the paper's Table 5: lr 5e-6, 4 epochs, a cosine schedule with 10% warm-up. `balance` repeats
randomly drawn examples of the rarer class (seeded) until both classes are equally many: rollouts of weak
policies are mostly failures, and an ORM that says NO to everything is then accurate but useless.

Output of `run_orm_train(..., out)`:

    out/orm/            Hugging Face folder (weights, config, tokenizer): `--orm OUT/orm`, OutcomeRewardModel.load
    out/metrics.json    the summary `run_orm_train` returns
    out/events.jsonl    one line per optimizer step (loss, accuracy); TensorBoard in out/tb/orm
    out/checkpoints/    resumable checkpoints: re-running the same command after a kill continues
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from webrl.errors import UsageError
from webrl.orm.data import Example, load_examples
from webrl.orm.model import answer_token_ids, encode_examples, last_logits, pad_ids
from webrl.policy.models import load_tokenizer, quiet, resolve_model
from webrl.rl.data import max_tokens_for, pad_token_id
from webrl.rl.engine import Engine, TrainSettings, event_summary, init_distributed, write_metrics
from webrl.rl.lora import trainable_model

ORM_DIR, RUN_NAME = "orm", "orm"


@dataclass(frozen=True)
class Item:
    """One training example: the prompt's ids and its 0/1 label."""

    input_ids: list[int]
    label: int


def encode_items(tokenizer, examples: Sequence[Example], max_tokens: int) -> tuple[list[Item], int]:
    """The examples as Items, and how many were skipped because even an empty page does not fit."""
    encoded = encode_examples(tokenizer, examples, max_tokens)
    items = [Item(ids, int(example.label)) for ids, example in zip(encoded, examples, strict=True) if ids is not None]
    return items, len(examples) - len(items)


def balance_classes(items: list[Item], seed: int) -> list[Item]:
    """`items` plus seeded random repeats of the rarer class's items, until both classes are as many."""
    by_label = {label: [item for item in items if item.label == label] for label in (0, 1)}
    rare, common = sorted(by_label.values(), key=len)
    if not rare:
        raise UsageError(f"--balance needs examples of both classes; the data has only label {common[0].label}")
    extra = random.Random(seed).choices(rare, k=len(common) - len(rare))
    return items + extra


def orm_loss_fn(pad_id: int, yes: int, no: int) -> Callable:
    """The engine's loss: mean cross-entropy of the answer token at the last position of each prompt; logs
    the accuracy of the 0.5 threshold on the micro-batch too."""

    def loss(model, micro: list[Item]) -> tuple[torch.Tensor, dict[str, float]]:
        input_ids, mask = pad_ids([item.input_ids for item in micro], pad_id, "left")
        logits = last_logits(model, input_ids.to(model.device), mask.to(model.device))
        labels = torch.tensor([item.label for item in micro], device=logits.device)
        targets = torch.where(labels == 1, yes, no)
        predicted = (logits[:, yes] >= logits[:, no]).long()  # p(YES) >= 0.5
        return F.cross_entropy(logits, targets), {
            "accuracy": float((predicted == labels).float().mean()),
            "tokens": float(mask.sum()),
        }

    return loss


def run_orm_train(
    data: list[Path],
    model_spec: str,
    out: Path,
    settings: TrainSettings,
    max_tokens: int | None = None,
    balance: bool = False,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """Train an ORM from `model_spec` on the labelled examples of `data` (run folders or JSONL files) and write
    out/orm; see the module docstring. Returns the summary also written to out/metrics.json."""
    began = time.perf_counter()
    loaded = load_examples(data)  # bad input is refused before DeepSpeed and the process group are set up
    model_dir = resolve_model(model_spec, cache_dir)
    init_distributed()
    tokenizer = load_tokenizer(model_dir)
    yes, no = answer_token_ids(tokenizer)
    limit = max_tokens_for(model_dir, max_tokens)
    items, too_long = encode_items(tokenizer, loaded.examples, limit)
    if not items:
        raise UsageError(
            f"no example fits in --max-tokens {limit} (all {too_long} intents and action histories are longer)"
        )
    positives = sum(item.label for item in items)
    trained = balance_classes(items, settings.seed) if balance else items
    engine = Engine(trainable_model(model_dir, settings.lora, settings.seed), settings, Path(out), RUN_NAME)
    result = engine.train(trained, orm_loss_fn(pad_token_id(tokenizer), yes, no))
    with quiet():
        engine.save_pretrained(Path(out) / ORM_DIR, tokenizer)
    summary = {
        "data": {
            "examples": len(loaded.examples),
            "positives": positives,
            "negatives": len(items) - positives,
            "skipped_episodes": dict(loaded.skipped),
            "skipped_too_long": too_long,
            "trained_items": len(trained),
            "balanced": balance,
            "max_tokens": limit,
        },
        "orm": {**event_summary(Path(out), RUN_NAME), "resumed_from": result["resumed_from"]},
        "seconds": round(time.perf_counter() - began, 2),
        "model": str(model_dir),
        "orm_dir": str(Path(out) / ORM_DIR),
        "settings": settings.model_dump(mode="json"),
    }
    write_metrics(Path(out), summary)
    return summary
