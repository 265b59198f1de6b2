"""The episode record: one line of a run's episodes.jsonl, written and read only here.

`webrl eval`, the training loop's rollouts, evaluations and demonstrations all write EpisodeRecords; rewards,
metrics, the ORM's data, reports and comparisons read them back through `read_episodes`. Each line carries the
schema version it was written with; a line without one was written before records had a version (version 1: the
same fields, less what later versions added) and loads all the same.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ValidationError,
    field_validator,
    model_validator,
)

from webrl.errors import UsageError, field_problem
from webrl.files import json_object
from webrl.tasks import installed
from webrl.tasks.model import Task

SCHEMA_VERSION = 4  # 4: dump_suspect, digests; 3: network_trace; 2: schema_version itself; 1: every line before
EPISODES_FILE = "episodes.jsonl"

# done: the rule evaluators judged it (score 0 or 1); unjudged: it needs a judge that was not given; error: the
# evaluator failed on the task (its file names the cause); env_error / policy_error: the environment or the policy
# failed, nothing was judged
Status = Literal["done", "unjudged", "error", "env_error", "policy_error"]


def in_run(path: str | None) -> str | None:
    """A path a record names (a screenshot, a network trace): relative to the run folder and inside it, so that no
    reader of a record (a rescore, the report) is led to a file elsewhere."""
    if path is not None and (PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts or "\\" in path):
        raise ValueError(f"{path!r} leads outside the run folder")
    return path


def run_file(run: Path, record: EpisodeRecord, path: str) -> Path:
    """The file `path` of `record` in the run folder `run`; a link that leads out of the folder is refused."""
    target = (run / path).resolve()
    if not target.is_relative_to(Path(run).resolve()):
        raise UsageError(f"{run}: task {record.task_id!r}: {path} leads outside the run folder (a link)")
    return target


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def answer_digest(answer: str | None) -> str:
    """The answer as its record keeps it (JSON escapes what UTF-8 cannot encode; None is not "")."""
    return digest(json.dumps(answer).encode())


class EpisodeStep(BaseModel):
    """One step: the observation the policy answered, its raw response, the parsed action, what went wrong and
    where the time went."""

    index: int
    url: str
    observation: str
    response: str
    action: dict[str, Any]
    error: str | None = None
    timings_ms: dict[str, float] = {}
    capped: list[str] = []  # the waits for rest that hit their cap ("load", "dom", ...)
    screenshot: str | None = None  # relative to the run folder
    policy: dict[str, Any] = {}  # what the policy reports about its answer (tokens, cut, ...)

    _screenshot_in_run = field_validator("screenshot")(in_run)


class EpisodeEval(BaseModel):
    mode: str  # the evaluation mode (webarena, vab, browsergym, strict, verified)
    judge: str | None = None
    details: list[dict[str, Any]] = []  # one entry per evaluator, checks inside


class EpisodeRecord(installed.CarriesFamilyData):
    """One episode of a task: its outcome and every step; its family data is what the task's family keeps of the
    task's in its records (TaskFamily.record_data)."""

    schema_version: int = SCHEMA_VERSION
    task_id: int | str
    repeat: int = 0
    sites: list[str] = []
    intent: str = ""
    status: Status
    error: str | None = None
    score: float | None = None  # None: not judged
    answer: str | None = None
    truncated_by: str | None = None  # the limit that ended an episode the agent did not end
    eval: EpisodeEval | None = None
    dump_suspect: list[str] = []  # why the strict mode's guard fails this leaderboard mode's 1.0 (version 4)
    reset: dict[str, Any] | None = None  # the environment's reset info: sites reset and where its time went
    blocked_requests: list[str] = []  # what the sandbox refused (host:port, or a refused navigation's URL)
    network_trace: str | None = None  # the episode's HAR, relative to the run folder (--record-network)
    # what the episode was scored from, as answer_digest and digest make them: "answer", and "network_trace" (the
    # HAR file's bytes) where there is one; a rescore scores an episode whose files differ as an error (version 4)
    digests: dict[str, str] = {}
    steps: list[EpisodeStep] = []
    last_observation: str | None = None  # the page after the last step (the ORM's final page)
    seconds: float | None = None
    timings_ms: dict[str, float] = {}
    requeued: int = 0  # times it was moved off an environment worker that died while playing it (Ray executor)

    _trace_in_run = field_validator("network_trace")(in_run)

    @model_validator(mode="after")
    def _judged_has_a_score(self) -> EpisodeRecord:
        if self.status == "done" and self.score is None:
            raise ValueError("a judged episode (status done) needs a score")
        return self

    @classmethod
    def of(cls, task: Task, repeat: int, **fields: Any) -> EpisodeRecord:
        """The record of `task`'s episode `repeat`: the task's own fields, and what happened."""
        return cls(
            task_id=task.task_id,
            repeat=repeat,
            sites=task.sites,
            intent=task.intent,
            family_data=installed.record_data(task.family_data),
            **fields,
        )

    @classmethod
    def unplayed(cls, task: Task, repeat: int, status: Status, error: str, **fields: Any) -> EpisodeRecord:
        """The record of an episode that never got to a judgement (the environment or the policy failed)."""
        return cls.of(task, repeat, status=status, error=error, **fields)

    @property
    def key(self) -> tuple[int | str, int]:
        return self.task_id, self.repeat

    @property
    def name(self) -> str:
        """The episode's name in step files: task id and repeat."""
        return f"{self.task_id}-{self.repeat}"

    @property
    def judged(self) -> bool:
        return self.status == "done"

    @property
    def success(self) -> bool | None:
        """Whether a judged episode succeeded (None: not judged)."""
        return self.score == 1.0 if self.judged else None

    @property
    def suspect(self) -> bool:
        """A success that the strict mode's guard fails: a leaderboard mode's 1.0 marked dump_suspect."""
        return bool(self.success and self.dump_suspect)

    @property
    def acted(self) -> bool:
        """Whether the policy answered at least once and the final page was observed."""
        return bool(self.steps) and self.last_observation is not None

    def to_line(self) -> str:
        return json.dumps(self.model_dump(mode="json")) + "\n"


def parse_episode(line: str, where: str = "episode") -> EpisodeRecord:
    """One line of an episodes file; a bad line is a usage error naming `where` and the field."""
    data = json_object(line, where)
    try:
        return EpisodeRecord.model_validate({"schema_version": 1, **data})
    except ValidationError as err:
        problem = field_problem(err)
        field = f"field '{problem.field}': " if problem.loc else ""
        raise UsageError(f"{where}: task {data.get('task_id')!r}: {field}{problem.message}") from None


def read_episodes(path: Path) -> list[EpisodeRecord]:
    """The episode records of a run folder (its episodes.jsonl) or of an episodes file, in task order; none where
    the file does not exist yet."""
    path = Path(path)
    if path.is_dir():
        path = path / EPISODES_FILE
    if not path.exists():
        return []
    records = [
        parse_episode(line, f"{path}:{number}")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if line.strip()
    ]
    return sorted(records, key=lambda r: (str(r.task_id), r.repeat))
