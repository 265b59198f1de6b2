"""Helpers shared by the evaluator tests (importable; the fixtures are in conftest.py)."""

from __future__ import annotations

import asyncio

from webrl.tasks import Task


def make_task(eval_spec: dict, intent: str = "What is it?", **fields) -> Task:
    """A minimal task around an ``eval`` block."""
    return Task.model_validate(
        {"task_id": 1, "sites": ["shopping"], "start_url": "http://x", "intent": intent, "eval": eval_spec, **fields}
    )


class ScriptedJudge:
    """An in-process judge that replies from a list (for the evaluator tables)."""

    name = "scripted"

    def __init__(self, *replies: str):
        self.replies = list(replies)
        self.calls: list[list[dict]] = []

    def complete(self, messages: list[dict]) -> str:
        self.calls.append(messages)
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def run(coroutine):
    """Run an evaluator coroutine that needs no browser."""
    return asyncio.run(coroutine)
