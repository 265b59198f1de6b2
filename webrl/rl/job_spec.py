"""What one training is (an SFT, or a phase's critic and actor update): a typed job, and its job file (what
webrl.rl.job runs, and what a training's folder keeps)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, Field, TypeAdapter

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


def write_job(job: SftJob | UpdateJob) -> Path:
    job.out.mkdir(parents=True, exist_ok=True)
    path = job.out / JOB_FILE
    write_atomically(path, yaml.safe_dump(job.model_dump(mode="json"), sort_keys=False))
    return path


def read_job(path: Path) -> SftJob | UpdateJob:
    return JOB.validate_python(yaml.safe_load(Path(path).read_text()))
