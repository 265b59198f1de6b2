"""WebArena-Verified: the audited WebArena tasks (tasks.py: its task sets and format, each task's eval blocks kept
whole as its family data) and the mode that scores them, `--mode verified`, with the `webarena-verified` package's
own evaluator (evaluator.py) from the agent's structured answer and the episode's network trace. Its episodes run
on the WebArena sites as the WebArena-format tasks' do and count under the same site columns; the mode asks the
policy for the structured answer, keeps every episode's trace, adds its facts to the summary and can score a
finished run again offline from what its records kept."""

from __future__ import annotations

import asyncio
import hashlib
import json
import statistics
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from webrl.errors import UsageError
from webrl.evaluators.result import EvalResult, EvaluationError, error_result
from webrl.families.verified import evaluator
from webrl.families.verified.tasks import (
    NAME,
    VERIFIED_SETS,
    VerifiedEval,
    is_verified_config,
    verified_config,
    verified_dataset,
)
from webrl.tasks.family import EvalMode, TaskFamily
from webrl.tasks.model import Task

if TYPE_CHECKING:  # records are read, never made, here (webrl.runs is imported by the settings that ask families)
    from webrl.runs.records import EpisodeRecord
    from webrl.runs.summary import EvalSummary

DATASET = "verified_dataset"  # the option: the dataset the package's evaluator reads


async def scored_elsewhere(task, answer, page, *, mode, **_) -> dict[str, Any]:
    """The eval type in WebArena's rule modes: only the verified mode scores a WebArena-Verified task."""
    raise EvaluationError(f"a WebArena-Verified task is scored by --mode verified only, not {mode}", "eval.eval_types")


class VerifiedFamily(TaskFamily):
    """A benchmark: no train split, so the curriculum never asks it for new tasks."""

    name = NAME
    task_sets = (VERIFIED_SETS,)
    evaluators = {NAME: scored_elsewhere}
    data_model = VerifiedEval
    options = {
        DATASET: (
            Path | None,
            Field(
                None,
                description="The verified mode's dataset (None: the installed package's file).",
                json_schema_extra={"option": None},  # the run fills it in (run_options)
            ),
        )
    }
    modes = {
        NAME: EvalMode(
            "WebArena-Verified's evaluator: a structured answer and the network trace",
            errors_count_as="failure",  # the package gives an evaluation that failed (its status "error") the score 0
            records_network=True,
            rescores=True,
        )
    }

    def owns(self, task: Task) -> bool:
        return self.data(task) is not None

    def owns_record(self, record: EpisodeRecord) -> bool:
        return False  # its records keep none of its data: they count as WebArena-format episodes, by site

    def task_config(self, raw: dict[str, Any]) -> dict[str, Any] | None:
        return verified_config(raw) if is_verified_config(raw) else None

    def record_data(self, data: VerifiedEval) -> None:
        return None  # the eval blocks are the dataset's: an episode record never carried them

    def shown_intent(self, task: Task, mode: str) -> str:
        # the mode asks for the structured answer the package judges; every other mode shows the task as it is
        return task.intent + evaluator.VERIFIED_RESPONSE if mode == NAME else task.intent

    # -- the verified mode --------------------------------------------------------------------------------------

    def run_options(self, mode: str, tasks: str) -> dict[str, Any]:
        """A task file in WebArena-Verified's format that --tasks names is the dataset (its evaluator reads the
        whole file); else the installed package's."""
        path = Path(tasks)
        if not path.is_file():
            return {DATASET: None}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {DATASET: None}  # reading the tasks reports it, with the line
        first = data[0] if isinstance(data, list) and data else data
        return {DATASET: path if is_verified_config(first) else None}

    def check_run(self, mode: str, tasks: Sequence[Task], settings: Any, urls: dict[str, str]) -> None:
        """Every task is a WebArena-Verified one, and the package's evaluator takes the dataset."""
        plain = next((t for t in tasks if not self.owns(t)), None)
        if plain is not None:
            raise UsageError(
                f"{settings.tasks}: task {plain.task_id}: field 'eval': --mode verified scores WebArena-Verified "
                "tasks only (webarena-verified[:hard], or a file in its format)"
            )
        evaluator.verified_scorer(getattr(settings, DATASET), urls)

    async def evaluate(
        self, mode: str, task: Task, answer: str | None, *, trace: list[dict] | None, urls: dict, options: dict
    ) -> EvalResult:
        """Only the verified mode scores a WebArena-Verified task (in another mode its eval type is an error), and
        it scores only those."""
        details: list[dict[str, Any]] = [{"type": "warning", "text": w} for w in task.warnings]
        if not self.owns(task):
            why = "--mode verified scores WebArena-Verified tasks only; this task has no verified eval blocks"
            return error_result(details, why, "eval.eval_types", NAME, None)
        dataset = options.get(DATASET)
        result = await asyncio.to_thread(evaluator.score, task.task_id, answer, trace, dataset=dataset, urls=urls)
        return result.model_copy(update={"details": details + result.details})

    def rescore(self, mode: str, record: EpisodeRecord, trace: Path | None, options: dict[str, Any]) -> EvalResult:
        """Scored against the site URLs the live scoring recorded (the trace's URLs read back as __SITE__/...)."""
        urls = next(
            (
                d["urls"]
                for d in (record.eval.details if record.eval else [])
                if d.get("type") == NAME and isinstance(d.get("urls"), dict)
            ),
            None,
        )
        if urls is None:
            why = "the record does not say which site URLs its trace was read against (not scored in --mode verified)"
            return error_result([], why, None, NAME)
        return evaluator.score(record.task_id, record.answer, trace, dataset=options.get(DATASET), urls=urls)

    # -- what the mode adds to reports ---------------------------------------------------------------------------

    def summary(self, records: Sequence[EpisodeRecord], settings: Any) -> dict[str, Any]:
        """The verified mode's own lines: the dataset scored against, the answers that were not the structured
        response (the package failed them), and the size of the network traces kept beside the records."""
        if settings.mode != NAME:
            return {}
        dataset = getattr(settings, DATASET) or verified_dataset()
        answers = [d for r in records if r.eval for d in r.eval.details if d.get("type") == "verified_answer"]
        sizes = [
            (settings.out / r.network_trace).stat().st_size
            for r in records
            if r.network_trace and (settings.out / r.network_trace).is_file()
        ]
        return {
            NAME: {
                "dataset": str(dataset),
                "dataset_md5": hashlib.md5(Path(dataset).read_bytes(), usedforsecurity=False).hexdigest(),
                "package": _version("webarena-verified"),
                "answers_unparsed": sum(not d["parsed"] for d in answers),
                "network_trace_bytes": {
                    "episodes": len(sizes),
                    "mean": round(statistics.mean(sizes)) if sizes else None,
                    "max": max(sizes, default=None),
                },
            }
        }

    def summary_lines(self, summary: EvalSummary) -> list[str]:
        facts = summary.section(NAME)
        if not facts:
            return []
        traces = facts["network_trace_bytes"]
        return [
            f"verified: {facts['answers_unparsed']} answers were not the structured response (scored by the "
            f"package as given); network traces: {traces['episodes']}, mean {traces['mean']} bytes"
        ]


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
