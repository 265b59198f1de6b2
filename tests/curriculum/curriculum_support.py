"""Helpers of the curriculum tests (tests/curriculum is on sys.path: no __init__.py)."""

from __future__ import annotations

import re

from webrl.tasks.model import Task


def make_task(task_id: int, intent: str, sites=("shopping",), start_url: str = "__SHOPPING__/", **extra) -> Task:
    """A minimal suite-like task (an exact-match answer)."""
    return Task.model_validate(
        {
            "task_id": task_id,
            "sites": list(sites),
            "start_url": start_url,
            "intent": intent,
            "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "1"}},
            **extra,
        }
    )


def given_tasks(prompt: str) -> list[str]:
    """The seed tasks listed under #Given Task# in a generation prompt."""
    given = prompt.rsplit("#Given Task#", 1)[1].split("#Created Task#", 1)[0]
    return re.findall(r"^- `(.*)`$", given, flags=re.MULTILINE)
