"""The one function that resolves a task set's name or path: a task family's named set (webrl.tasks.family: the
embedded suite and the WebArena files, MiniWoB++, ...), else a task file or folder."""

from __future__ import annotations

from pathlib import Path

from webrl.errors import UsageError
from webrl.tasks.family import family_of_set, set_names
from webrl.tasks.load import load_tasks
from webrl.tasks.model import Task


def resolve_task_set(name_or_path: str | Path, cache_dir: str | Path, seed: int = 0) -> list[Task]:
    """A family's named set (the embedded suite is built for the sites' `seed`), else a task file or folder."""
    name = str(name_or_path)
    family = family_of_set(name)
    if family is not None:
        return family.load_set(name, Path(cache_dir), seed)
    path = Path(name_or_path)
    if path.exists():
        return load_tasks(path)
    raise UsageError(f"unknown task set {name!r}: not a file or folder, and not one of the named sets ({set_names()})")
