"""summary.json: what a run of episodes measured (EvalSummary), written by webrl.runs.eval and read back by the
reports, a training phase's metrics, --rescore and the benches through `read_summary`.

The task families' own sections (TaskFamily.summary) sit at the top level of the file, under each family's name,
as every release wrote them; `EvalSummary.section(name)` reads one. Schema versions: 2 adds schema_version itself;
1 is every file before (without dump_suspect where older still: none counted).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, model_serializer, model_validator

from webrl.files import read_json, validated, write_atomically
from webrl.runs.eval_settings import EvalSettings

SUMMARY_FILE = "summary.json"
SCHEMA_VERSION = 2


class SuccessRate(BaseModel):
    """A success-rate cell: the mean (%) over repeats, its standard deviation, and the episodes it counts."""

    mean: float
    std: float
    episodes: int


class GroupRate(BaseModel):
    """The success (%) of one group of a run's episodes (TaskFamily.groups), and the episodes in it."""

    mean: float
    episodes: int


class EpisodeCounts(BaseModel):
    """The episodes planned, those recorded by status, those missing (planned but never run: the run stopped before
    them) and those requeued (moved off a worker that died). The file lists the statuses between planned and
    missing, in the order the run first met them, as `webrl eval` and report.html print them."""

    planned: int
    statuses: dict[str, int] = {}
    missing: int = 0
    requeued: int = 0

    @model_validator(mode="before")
    @classmethod
    def _from_file(cls, data: Any) -> Any:
        if isinstance(data, dict) and "statuses" not in data:
            totals = {k: v for k, v in data.items() if k in ("planned", "missing", "requeued")}
            return {**totals, "statuses": {k: v for k, v in data.items() if k not in totals}}
        return data

    @model_serializer
    def _to_file(self) -> dict[str, int]:
        return {"planned": self.planned, **self.statuses, "missing": self.missing, "requeued": self.requeued}

    def count(self, status: str) -> int:
        return self.statuses.get(status, 0)


class EvaluatorError(BaseModel):
    """An episode whose evaluation raised: its task, the field at fault (None: not the task file), the error and how
    the mode's success rate counted it."""

    task_id: int | str
    repeat: int
    field: str | None
    error: str
    counts_as: str


class Provenance(BaseModel):
    """The commit, date, machine and command that made the numbers (webrl.provenance)."""

    commit: str
    date: str
    machine: str
    cores: int | None
    load_1min: float
    command: str


class ExecutorInfo(BaseModel):
    """Where the episodes ran: the executor's kind, and what it says of itself (Ray: its address, workers...)."""

    model_config = ConfigDict(extra="allow")

    kind: str


class EvalSummary(BaseModel):
    """A run's summary.json (module docstring). The fields the file has only sometimes are left out where unset:
    groups (a training run's evaluation), executor (a live run's) and rescored_from (a --rescore's)."""

    model_config = ConfigDict(extra="allow")  # the task families' sections

    schema_version: int = SCHEMA_VERSION
    provenance: Provenance
    settings: EvalSettings
    policy: str
    success_rate: dict[str, SuccessRate]  # column (a family's, or Average) -> mean ± std over repeats
    groups: dict[str, GroupRate] | None = None
    episodes: EpisodeCounts
    evaluator_errors: list[EvaluatorError] = []
    # the successes that the strict mode's guard fails (a dumped answer or URL): what inflates the rate
    dump_suspect: int = 0
    versions: dict[str, str | None] = {}
    python: str
    executor: ExecutorInfo | None = None
    rescored_from: str | None = None

    @model_serializer(mode="wrap")
    def _to_file(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        return {k: v for k, v in data.items() if v is not None or k not in ("groups", "executor", "rescored_from")}

    def section(self, name: str) -> Any:
        """A task family's section of the summary (None: the run has none)."""
        return (self.model_extra or {}).get(name)

    def write(self, out: Path) -> None:
        write_atomically(out / SUMMARY_FILE, json.dumps(self.model_dump(mode="json"), indent=2))


def read_summary(path: Path) -> EvalSummary:
    """A run's summary.json (`path`: the file or the run folder); a file without a schema version is the previous
    release's (version 1)."""
    path = Path(path)
    if path.is_dir():
        path = path / SUMMARY_FILE
    data = read_json(path)
    return validated(EvalSummary, {"schema_version": 1, **data} if isinstance(data, dict) else data, path)
