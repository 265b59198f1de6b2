"""One training of a `webrl train` run (phase 0's SFT, a phase's update) as a process of its own.

The recipe (webrl.train.recipe) writes what to train as a `TrainJob` file in the training's folder and runs
`python -m webrl.train.job FILE`, under the DeepSpeed launcher when the run asks for several processes. The
child reads that one file, the resolved settings, and calls the same functions `webrl sft` and
`webrl rl-update` call; all of a training's memory is returned when it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel

from webrl.errors import WebrlError
from webrl.files import write_atomically
from webrl.rl.settings import REPLAY_CONFIDENCE, TrainSettings

JOB_FILE = "job.yaml"


class TrainJob(BaseModel):
    """A training, resolved: its data, its starting model, where it writes, and how it trains."""

    model_config = {"extra": "forbid"}

    kind: Literal["sft", "update"]
    data: Path  # the step file (webrl.rl.data)
    model: str  # the model spec or folder it starts from (for an update: the actor, also the frozen reference)
    out: Path
    settings: TrainSettings
    max_tokens: int | None = None
    models_dir: Path  # where model specs are prepared (<state dir>/models)
    page_loss: float = 0.0  # the SFT's (webrl.rl.sft)
    # the update's (webrl.rl.update)
    objective: Literal["official", "paper", "awr"] = "official"
    beta: float = 1.0
    critic: Path | None = None
    critic_lr: float | None = None  # None: settings.lr
    critic_replay: bool = True  # the critic trains on the replayed steps too (official)
    replay: list[Path] = []
    replay_confidence: tuple[float, float] = REPLAY_CONFIDENCE  # replayed steps' actor confidence, (low, high]


def run_job(job: TrainJob) -> dict:
    """Train as `job` says, in this process (and its launcher's siblings); the training's summary."""
    if job.kind == "sft":
        from webrl.rl.sft import run_sft

        return run_sft(job.data, job.model, job.out, job.settings, job.max_tokens, job.models_dir, job.page_loss)
    from webrl.rl.objective import Objective
    from webrl.rl.update import run_update

    return run_update(job.data, job.model, job.critic, job.replay, job.out, job.settings,
                      Objective(job.objective, beta=job.beta), job.max_tokens, job.models_dir, job.critic_lr,
                      job.critic_replay, job.replay_confidence)


def spawn(job: TrainJob, procs: int, log: Path) -> None:
    """Run `job` as a child process (`procs` of them under the DeepSpeed launcher); its output goes to `log`."""
    from webrl.rl.engine import DIST_VARIABLES, launch_command

    job.out.mkdir(parents=True, exist_ok=True)
    path = job.out / JOB_FILE
    write_atomically(path, yaml.safe_dump(job.model_dump(mode="json"), sort_keys=False))
    runner = launch_command(procs) + ["--module"] if procs > 1 else [sys.executable, "-m"]
    command = [*runner, "webrl.train.job", str(path)]
    env = {k: v for k, v in os.environ.items() if k not in DIST_VARIABLES}  # its own process group, not ours
    with log.open("a") as sink:
        sink.write("$ " + " ".join(command) + "\n")
        sink.flush()
        code = subprocess.run(command, env=env, stdout=sink, stderr=subprocess.STDOUT, check=False).returncode
    if code != 0:
        tail = "".join(log.read_text().splitlines(keepends=True)[-8:])
        raise WebrlError(f"training `{job.kind}` into {job.out} failed (exit {code}); the end of {log}:\n{tail}")


def main(argv: list[str]) -> None:
    [path] = argv
    run_job(TrainJob.model_validate(yaml.safe_load(Path(path).read_text())))


if __name__ == "__main__":
    main(sys.argv[1:])
