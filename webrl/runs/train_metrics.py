"""metrics.json of a `webrl train` run: what each phase measured (PhaseMetrics, phases/<k>/metrics.json; the run's
metrics.json lists every phase's). Made by webrl.train.metrics, drawn by webrl.runs.train_report, read back by the
CLI and the benches through `read_metrics`. Schema versions: 2 adds schema_version itself; 1 is every file before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from webrl.files import read_json, validated, write_atomically
from webrl.runs.summary import EpisodeCounts, GroupRate, SuccessRate

METRICS_FILE = "metrics.json"
SCHEMA_VERSION = 2
OPTIONAL = ("rewards", "tasks-report", "training", "demonstrations")  # left out of the file where a phase has none


class PhaseEval(BaseModel):
    """The phase's evaluation: its summary's success rates and episode counts, the share (%) of its answers that
    parsed as actions, and its success in the task family's groups (MiniWoB++: the environments the SFT saw)."""

    success_rate: dict[str, SuccessRate]
    episodes: EpisodeCounts
    valid_actions: float | None
    environments: dict[str, GroupRate] = {}


class Rewards(BaseModel):
    """The phase's rollouts as rewarded (webrl.train.rewards.reward_summary, rewards.json)."""

    episodes: int
    rewarded: int
    successes: int
    success_rate: float | None
    by_source: dict[str, int]
    orm_agrees_with_rules: float | None


class PhaseMetrics(BaseModel):
    """One phase's metrics.json: the actor it ended with, its evaluation, each stage's seconds, and where the phase
    has them its rewards, its tasks' report (tasks-report.json), its training's summary and its demonstrations."""

    model_config = ConfigDict(populate_by_name=True)

    schema_version: int = SCHEMA_VERSION
    phase: int
    algorithm: str
    actor: str
    eval: PhaseEval
    seconds: dict[str, float]
    rewards: Rewards | None = None
    tasks_report: dict[str, Any] | None = Field(None, alias="tasks-report")
    training: dict[str, Any] | None = None
    demonstrations: int | None = None

    @model_serializer(mode="wrap")
    def _to_file(self, handler: Any) -> dict[str, Any]:
        data = {"tasks-report" if k == "tasks_report" else k: v for k, v in handler(self).items()}
        return {k: v for k, v in data.items() if v is not None or k not in OPTIONAL}


def write_metrics(path: Path, metrics: PhaseMetrics | list[PhaseMetrics]) -> None:
    """A phase's metrics.json, or the run's (every phase's)."""
    data = (
        [m.model_dump(mode="json") for m in metrics] if isinstance(metrics, list) else metrics.model_dump(mode="json")
    )
    write_atomically(path, json.dumps(data, indent=1))


def read_phase_metrics(path: Path) -> PhaseMetrics:
    """A phase's metrics.json; a file without a schema version is the previous release's (version 1)."""
    return validated(PhaseMetrics, _versioned(read_json(path)), path)


def read_metrics(path: Path) -> list[PhaseMetrics]:
    """A run's metrics.json (`path`: the file or the run folder): every finished phase's metrics."""
    path = Path(path)
    if path.is_dir():
        path = path / METRICS_FILE
    data = read_json(path)
    return validated(list[PhaseMetrics], [_versioned(m) for m in data] if isinstance(data, list) else data, path)


def _versioned(data: Any) -> Any:
    return {"schema_version": 1, **data} if isinstance(data, dict) else data
