"""New MiniWoB++ tasks from failed ones: the MiniWoB family's counterpart of the embedded evolver.

A MiniWoB++ task is an environment and the seed of its problem generator, so a new task is a new seed. From each
failed task the generator takes
- the same environment with a seed no task of the run has used (another problem of the kind the actor failed), and
- an environment of the run's family (its train and test tasks' environments) that the run has not trained on yet
  (neither in the demonstrations nor in a phase), while there are any: the curriculum widening beyond what the SFT
  saw, within what the run is evaluated on,
one of each per failed task, round after round over the failed tasks until `keep`. Seeds count up from
EVOLVED_SEED_START per environment, beyond the train (1000–1049) and test (0–9) seeds, so a generated task is never
a held-out one. Tasks are read off the pages as every MiniWoB task is (webrl.families.miniwob.tasks.build_tasks);
seeds no WebRL action can solve are left out there, and counted here.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from webrl.families.miniwob.tasks import build_tasks, episode_of
from webrl.tasks.model import Task

EVOLVED_SEED_START = 2000


def evolve_miniwob(
    failed: list[Task], known: list[Task], keep: int, *, trained: set[str], seed: int, phase: int, cache_dir: Path
) -> tuple[list[Task], dict]:
    """Up to `keep` new tasks from the `failed` ones, none with an (environment, seed) of `known` (the family's
    tasks and every phase's); new environments are the family's not in `trained`. A report."""
    rng = random.Random(f"miniwob:{seed}:{phase}")
    used: dict[str, set[int]] = {}
    for episode in filter(None, map(episode_of, known)):
        used.setdefault(episode.env, set()).add(episode.seed)
    unseen = [env for env in sorted(used) if env not in trained]

    def fresh_seed(env: str) -> int:
        taken = used.setdefault(env, set())
        new = max([EVOLVED_SEED_START - 1, *taken]) + 1
        taken.add(new)
        return new

    pairs: list[tuple[str, int, str]] = []
    made: Counter[str] = Counter()
    failed = [episode.env for episode in filter(None, map(episode_of, failed))]
    while failed and len(pairs) < keep:  # round after round over the failures, so that a phase keeps its size
        for env in failed:
            if len(pairs) >= keep:
                break
            pairs.append((env, fresh_seed(env), "train"))
            made["new seed"] += 1
            if unseen and len(pairs) < keep:
                env = unseen.pop(rng.randrange(len(unseen)))
                pairs.append((env, fresh_seed(env), "train"))
                made["new environment"] += 1
    tasks = build_tasks(pairs, cache_dir)
    return tasks, {
        "made": dict(made),
        "unsolvable_seeds": len(pairs) - len(tasks),
        "environments": len({episode_of(t).env for t in tasks}),
    }
