"""WebArena-Verified's tasks (ServiceNow, Apache-2.0): the audited 812 and the hard subset's task ids, read from the
installed package's own dataset files (no download route: the evaluator that scores them is that package), and its
task format (`start_urls` and a list of eval blocks) as webrl task configs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from webrl.errors import UsageError
from webrl.tasks.load import NamedTaskSets, load_tasks, packaged_file
from webrl.tasks.model import AND_SEPARATOR, Task

NAME = "verified"  # the family's name: the key of its tasks' data, and its evaluation mode and eval type
VERIFIED_DISTRIBUTION = "webarena-verified==1.2.3"
VERIFIED_DATASET = "webarena_verified/assets/dataset/webarena-verified.json"
VERIFIED_DATASET_MD5 = "642f90896800474ef2800a7159a9fc08"
VERIFIED_SUBSETS = {  # set name -> (the subset file of task ids, its md5); None: the whole dataset
    "webarena-verified": None,
    "webarena-verified:hard": (
        "webarena_verified/assets/dataset/subsets/webarena-verified-hard.json",
        "e37ec287c24c36f9c9416a1880881418",
    ),
}
# Sites whose WebArena tasks sign in first (WebArena's storage states); the map and Wikipedia need no account.
_NO_ACCOUNT = ("map", "wikipedia")


class VerifiedEval(BaseModel):
    """A WebArena-Verified task's data: its evaluation, kept whole as the dataset has it (its eval blocks, which the
    package's evaluators read, never webrl) and the task's revision."""

    model_config = ConfigDict(extra="allow")

    eval: list[dict[str, Any]] = Field(min_length=1)
    revision: int | None = None

    @property
    def task_type(self) -> str | None:
        """The expected structured response's task type (RETRIEVE, MUTATE, NAVIGATE)."""
        for block in self.eval:
            expected = block.get("expected") if block.get("evaluator") == "AgentResponseEvaluator" else None
            if isinstance(expected, dict) and isinstance(expected.get("task_type"), str):
                return expected["task_type"].upper()
        return None


def verified_eval(task: Task) -> VerifiedEval | None:
    """A WebArena-Verified task's evaluation (None: not one of its tasks)."""
    return task.family_data.get(NAME)


def is_verified_config(raw: Any) -> bool:
    """Whether a raw task is in WebArena-Verified's format: `start_urls` and a list of eval blocks."""
    return isinstance(raw, dict) and "start_urls" in raw and isinstance(raw.get("eval"), list)


def verified_config(raw: dict[str, Any]) -> dict[str, Any]:
    """A WebArena-Verified task as a webrl task config: the tabs' URLs joined as WebArena joins them, the eval
    blocks and revision kept whole under `verified` (eval_types ["verified"]), a storage state where a site needs
    an account, a reset before a task that mutates; any other field (webrl's `cheat`, ...) as it is."""
    data = {k: v for k, v in raw.items() if k not in ("start_urls", "eval", "revision")}
    urls = raw["start_urls"]
    data["start_url"] = AND_SEPARATOR.join(urls) if isinstance(urls, list) else urls
    data["eval"] = {"eval_types": [NAME]}
    data[NAME] = {"eval": raw["eval"], "revision": raw.get("revision")}
    sites = raw.get("sites") if isinstance(raw.get("sites"), list) else []
    account = [s for s in sites if isinstance(s, str) and s not in _NO_ACCOUNT]
    data.setdefault("storage_state", f"./.auth/{'.'.join(sorted(account))}_state.json" if account else None)
    mutates = any(
        isinstance(b, dict) and str((b.get("expected") or {}).get("task_type", "")).upper() == "MUTATE"
        for b in raw["eval"]
        if isinstance(b, dict) and isinstance(b.get("expected"), dict)
    )
    data.setdefault("require_reset", mutates)
    return data


def _verified_file(name: str, inner: str, md5: str) -> Path:
    path = packaged_file(VERIFIED_DISTRIBUTION, inner, md5, f"{VERIFIED_DISTRIBUTION}: {inner}")
    if path is None:
        raise UsageError(
            f"task set {name!r}: {VERIFIED_DISTRIBUTION.partition('==')[0]} is not installed "
            f"(pip install --no-deps {VERIFIED_DISTRIBUTION}, and its evaluator's dependencies: docs/tasks.md)"
        )
    return path


def verified_dataset(name: str = "webarena-verified") -> Path:
    """WebArena-Verified's dataset file (812 tasks) in the installed package, md5-checked."""
    return _verified_file(name, VERIFIED_DATASET, VERIFIED_DATASET_MD5)


def _verified_set(name: str, cache_dir: Path, seed: int) -> list[Task]:
    tasks = load_tasks(verified_dataset(name))
    subset = VERIFIED_SUBSETS[name]
    if subset is None:
        return tasks
    path = _verified_file(name, *subset)
    ids = json.loads(path.read_text()).get("task_ids")
    known = {t.task_id for t in tasks}
    if not isinstance(ids, list) or not set(ids) <= known:
        raise UsageError(f"{path}: field 'task_ids': not a list of the dataset's task ids")
    wanted = set(ids)
    return [t for t in tasks if t.task_id in wanted]


VERIFIED_SETS = NamedTaskSets(names=", ".join(VERIFIED_SUBSETS), owns=VERIFIED_SUBSETS.__contains__, load=_verified_set)
