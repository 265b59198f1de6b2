"""New MiniWoB++ tasks from failed ones: the MiniWoB family's counterpart of the embedded evolver.

A MiniWoB++ task is an environment and the seed of its problem generator, so a new task is a new seed. From each
failed task the generator takes
- the same environment with a seed no task of the run has used (another problem of the kind the actor failed), and
- an environment no task of the run has come from yet, while there are any (the curriculum widening beyond what
  the SFT saw),
one of each per failed task, until `keep`. Seeds count up from EVOLVED_SEED_START per environment, beyond the
train (1000–1049) and test (0–9) seeds, so a generated task is never a held-out one. Tasks are read off the
pages as every MiniWoB task is (webrl.sites.miniwob.tasks.build_tasks); seeds no WebRL action can solve are
left out there, and counted here.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from webrl.sites.miniwob.tasks import build_tasks, supported_names
from webrl.tasks.model import Task

EVOLVED_SEED_START = 2000


def evolve_miniwob(failed: list[Task], known: list[Task], keep: int, *, seed: int, phase: int,
                   cache_dir: Path) -> tuple[list[Task], dict]:
    """Up to `keep` new tasks from the `failed` ones, none with an (environment, seed) of `known`; a report."""
    rng = random.Random(f"miniwob:{seed}:{phase}")
    used: dict[str, set[int]] = {}
    for task in known:
        if task.miniwob is not None:
            used.setdefault(task.miniwob.env, set()).add(task.miniwob.seed)
    unseen = [env for env in supported_names() if env not in used]

    def fresh_seed(env: str) -> int:
        taken = used.setdefault(env, set())
        new = max([EVOLVED_SEED_START - 1, *taken]) + 1
        taken.add(new)
        return new

    pairs: list[tuple[str, int, str]] = []
    made: Counter[str] = Counter()
    for task in failed:
        if task.miniwob is None or len(pairs) >= keep:
            continue
        pairs.append((task.miniwob.env, fresh_seed(task.miniwob.env), "train"))
        made["new seed"] += 1
        if unseen and len(pairs) < keep:
            env = unseen.pop(rng.randrange(len(unseen)))
            pairs.append((env, fresh_seed(env), "train"))
            made["new environment"] += 1
    tasks = build_tasks(pairs, cache_dir)
    return tasks, {"made": dict(made), "unsolvable_seeds": len(pairs) - len(tasks),
                   "environments": len({t.miniwob.env for t in tasks})}
