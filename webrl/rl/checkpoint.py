"""Training checkpoints that survive a kill at any moment.

Layout of one training run's checkpoints, `<run dir>/checkpoints/<name>/`:

    step-000004/    DeepSpeed's files (model, optimizer, engine step), state.json, rng-rank<r>.pt
    latest          the name of the newest complete checkpoint; written last

A checkpoint is written under `.tmp-step-000004/` and renamed once every rank has finished, so a kill leaves
the previous checkpoint or the new one, never a half-written one that `latest` points to. Only the newest
checkpoint is kept. All ranks must see the same folder (one machine, or a shared filesystem).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import torch

from webrl.files import STAGING_PREFIX, write_atomically

LATEST = "latest"
STATE = "state.json"


def step_dir_name(step: int) -> str:
    return f"step-{step:06d}"


class Checkpoints:
    """The checkpoint folder of one training run (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = root

    def latest(self) -> Path | None:
        """The newest complete checkpoint, or None before the first one."""
        pointer = self.root / LATEST
        if not pointer.is_file():
            return None
        path = self.root / pointer.read_text().strip()
        return path if (path / STATE).is_file() else None

    def staging(self, step: int) -> Path:
        """Where every rank writes the checkpoint of `step` before it is published."""
        return self.root / f"{STAGING_PREFIX}{step_dir_name(step)}"

    def publish(self, step: int) -> Path:
        """Rank 0, after all ranks wrote `staging(step)`: make it the latest and drop the older ones."""
        final = self.root / step_dir_name(step)
        if final.exists():  # the same step saved again after a resume
            shutil.rmtree(final)
        self.staging(step).rename(final)
        write_atomically(self.root / LATEST, final.name)
        self.prune()
        return final

    def prune(self) -> None:
        """Remove what a kill can leave behind: staging folders and checkpoints older than the latest."""
        latest = self.latest()
        for path in self.root.iterdir() if self.root.is_dir() else ():
            stale = path.name.startswith(STAGING_PREFIX) or path.name.startswith("step-")
            if path.is_dir() and stale and path != latest:
                shutil.rmtree(path, ignore_errors=True)


def write_state(checkpoint: Path, state: dict) -> None:
    (checkpoint / STATE).write_text(json.dumps(state, indent=2))


def read_state(checkpoint: Path) -> dict:
    return json.loads((checkpoint / STATE).read_text())


def save_rng(checkpoint: Path, rank: int) -> None:
    """This rank's Python, NumPy and torch random states, so that a resumed run draws the same numbers."""
    state = {"python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    torch.save(state, checkpoint / f"rng-rank{rank}.pt")


def load_rng(checkpoint: Path, rank: int) -> None:
    state = torch.load(checkpoint / f"rng-rank{rank}.pt", weights_only=False)  # our own file: tuples, arrays
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
