"""Shared by the per-site task tests (tests/tasks is on sys.path: no __init__.py)."""

from __future__ import annotations

from webrl.tasks.templates import eval_kind


def judged_later(task, row: dict) -> bool:
    """Whether an episode record is unjudged only because its fuzzy answer waits for an LLM judge."""
    return row["status"] == "unjudged" and "fuzzy_match" in eval_kind(task).split("+")
