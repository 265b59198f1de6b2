"""Shared by the engine tests and engine_script.py: synthetic token data, a next-token loss, one training run."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from webrl.rl.engine import Engine, StepHook, TrainSettings
from webrl.rl.lora import trainable_model

SEQ_LEN = 24
DIST_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


def token_items(count: int, vocab: int, seed: int = 0) -> list[torch.Tensor]:
    """Sequences that repeat a short random motif over 16 of the `vocab` tokens: learnable within a few steps."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randperm(vocab, generator=generator)[:16]
    items = []
    for _ in range(count):
        motif = tokens[torch.randint(0, len(tokens), (4,), generator=generator)]
        items.append(motif.repeat(SEQ_LEN // 4))
    return items


def next_token_loss(model, batch: list[torch.Tensor]) -> tuple[torch.Tensor, dict[str, float]]:
    """Mean next-token NLL of the micro-batch (all sequences have the same length)."""
    ids = torch.stack(batch).to(model.device)
    out = model(input_ids=ids, labels=ids)
    return out.loss, {"tokens": float(ids[:, 1:].numel())}


def load_model(model_dir: Path) -> torch.nn.Module:
    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)


def train_tiny(
    model_dir: Path,
    run_dir: Path,
    settings: TrainSettings,
    items: int,
    name: str = "sft",
    out: Path | None = None,
    on_step: StepHook | None = None,
) -> tuple[Engine, dict]:
    """Train the tiny model (every weight, or an adapter as `settings.lora` says) on `items` synthetic sequences;
    save it to `out` when given."""
    model = trainable_model(model_dir, settings.lora, settings.seed)
    engine = Engine(model, settings, run_dir, name)
    summary = engine.train(token_items(items, model.config.vocab_size), next_token_loss, on_step=on_step)
    if out is not None:
        engine.save_pretrained(out)
    return engine, summary


def child_env() -> dict[str, str]:
    """This environment without the process-group variables an in-process Engine set, so that a child
    builds its own group instead of joining (and colliding with) ours."""
    return {key: value for key, value in os.environ.items() if key not in DIST_ENV}


def kill_past_step(
    process: subprocess.Popen, rows: Callable[[], list[dict]], step: int = 2, timeout: float = 180, poll: float = 0.1
) -> None:
    """SIGKILL `process` once `rows()` (its training events so far) show an optimizer step >= `step`; fails with the
    process's output if it ends or `timeout` passes first."""
    deadline = time.monotonic() + timeout
    while not any(row["step"] >= step for row in rows()):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()[0][-4000:]
        time.sleep(poll)
    process.send_signal(signal.SIGKILL)
    process.communicate()
