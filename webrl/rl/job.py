"""One training (an SFT, or a phase's critic and actor update) as a typed job, run in this process or as a process
of its own.

`webrl sft` and `webrl rl-update` build a job from their options and run it here; `webrl train` writes each of its
trainings as a job file in the training's folder and runs `python -m webrl.rl.job FILE`, under the DeepSpeed
launcher when the run asks for several processes, so that all of a training's memory is returned when it ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, Field, TypeAdapter

from webrl.errors import WebrlError
from webrl.files import write_atomically
from webrl.rl.settings import SftSettings, UpdateSettings

JOB_FILE = "job.yaml"


class _Job(BaseModel):
    model_config = {"extra": "forbid"}

    data: Path  # the step file (webrl.rl.data)
    model: str  # the model spec or folder it starts from
    out: Path
    max_tokens: int | None = None  # prompt + response, in tokens [default: the model's context, at most 16384]
    models_dir: Path | None = None  # where model specs are prepared (<state dir>/models)


class SftJob(_Job):
    """Fine-tune `model` on the demonstrations in `data` (webrl.rl.sft)."""

    kind: Literal["sft"] = "sft"
    settings: SftSettings


class UpdateJob(_Job):
    """One phase's critic and actor update (webrl.rl.update): `model` is the actor at the start of the phase (also
    the frozen reference), `critic` the previous phase's (None: a fresh one from the actor's weights), `replay` the
    earlier step files whose successes may be replayed."""

    kind: Literal["update"] = "update"
    settings: UpdateSettings
    critic: Path | None = None
    replay: list[Path] = []


TrainJob = Annotated[SftJob | UpdateJob, Field(discriminator="kind")]
JOB = TypeAdapter(TrainJob)


def run_job(job: SftJob | UpdateJob) -> dict[str, Any]:
    """Train as `job` says, in this process (and its launcher's siblings); the training's summary."""
    if isinstance(job, SftJob):
        from webrl.rl.sft import run_sft

        return run_sft(job)
    from webrl.rl.update import run_update

    return run_update(job)


def write_job(job: SftJob | UpdateJob) -> Path:
    job.out.mkdir(parents=True, exist_ok=True)
    path = job.out / JOB_FILE
    write_atomically(path, yaml.safe_dump(job.model_dump(mode="json"), sort_keys=False))
    return path


def read_job(path: Path) -> SftJob | UpdateJob:
    return JOB.validate_python(yaml.safe_load(Path(path).read_text()))


def spawn(job: SftJob | UpdateJob, procs: int, log: Path) -> None:
    """Run `job` as a child process (`procs` of them under the DeepSpeed launcher); its output goes to `log`."""
    from webrl.rl.engine import DIST_VARIABLES, launch_command

    path = write_job(job)
    runner = launch_command(procs) + ["--module"] if procs > 1 else [sys.executable, "-m"]
    command = [*runner, "webrl.rl.job", str(path)]
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
    run_job(read_job(Path(path)))


if __name__ == "__main__":
    main(sys.argv[1:])
