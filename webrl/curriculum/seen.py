"""What counts as the same task (its normalised intent) and fresh task ids, shared by the LLM generator and the
procedural evolver so that neither proposes a task the run has already had."""

from __future__ import annotations

from collections.abc import Iterable

from webrl.tasks.model import Task

TRIM = " \t\"'`.!?;:"


def normalise(intent: str) -> str:
    """Lower case, single spaces, no surrounding quotes or final punctuation: one task written two ways
    ("Star the project X." / "star the project x") is one task."""
    return " ".join(intent.lower().split()).strip(TRIM)


class Seen:
    """The normalised intents of every task so far: the suite, earlier phases, and this phase's new ones."""

    def __init__(self, tasks: Iterable[Task] = ()):
        self._keys = {normalise(t.intent) for t in tasks}

    def __contains__(self, intent: str) -> bool:
        return normalise(intent) in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, intent: str) -> bool:
        """Record `intent`; False when it was seen already."""
        key = normalise(intent)
        if key in self._keys:
            return False
        self._keys.add(key)
        return True


def next_task_id(tasks: Iterable[Task]) -> int:
    """One past the largest integer task id in `tasks` (0 if none): new ids never collide with the suite's or
    an earlier phase's, and stay integers so that runs can sort episodes by task id."""
    return 1 + max((t.task_id for t in tasks if isinstance(t.task_id, int)), default=-1)
