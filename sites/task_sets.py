"""Named task sets: every family that provides some, and the one function that resolves a name or a path.

Families: the embedded suite (webrl.sites.embedded.suite), MiniWoB++ (webrl.sites.miniwob.tasks) and the
WebArena files (webrl.tasks.load). A new family defines a `TaskSetFamily` beside its tasks and is listed here.
"""

from __future__ import annotations

from pathlib import Path

from webrl.errors import UsageError
from webrl.sites.embedded.suite import FAMILY as EMBEDDED
from webrl.sites.miniwob.tasks import FAMILY as MINIWOB
from webrl.tasks.load import WEBARENA_FILES, load_tasks
from webrl.tasks.model import Task

FAMILIES = (EMBEDDED, MINIWOB, WEBARENA_FILES)


def resolve_task_set(name_or_path: str | Path, cache_dir: str | Path, seed: int = 0) -> list[Task]:
    """A family's named set (the embedded suite is built for the sites' `seed`), else a task file or folder."""
    name = str(name_or_path)
    for family in FAMILIES:
        if family.owns(name):
            return family.load(name, Path(cache_dir), seed)
    path = Path(name_or_path)
    if path.exists():
        return load_tasks(path)
    raise UsageError(f"unknown task set {name!r}: not a file or folder, and not one of the named sets "
                     f"({', '.join(family.names for family in FAMILIES)})")
