"""The procedural evolver for the embedded backend: new verifiable tasks from failed ones.

The embedded suite's templates can make far more instances than the suite's fixed sample: in pool mode
(`webrl.sites.embedded.suite.template_tasks(..., pool=True)`) each template gives every candidate it knows, with
the same rule evaluator and scripted solution as its suite tasks. From each failed task that came from a template,
the evolver takes
- a task of the same template with other entities (no instantiation value in common with the failed one), and
- a task of a neighbouring template (same site group, same kind of check: `site_group`, `eval_kind`), preferably
  about one of the failed task's own entities (the official generation prompt's "reuse the seeds' names"),
one of each per failed task and pass, passes repeated until the phase's cap or until nothing new is left. A task
is new when no task the run has seen (suite, earlier phases, this phase) has the same normalised intent. New
tasks keep the pool task's evaluator and solution, get fresh integer ids and split "train", and are marked
`scored_by="rules"` with their origin. They are feasible by construction (the oracle solves them).

Added constraints are not made: a template's evaluator checks exactly its own values, so a constraint would need
a new evaluator per template.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from webrl.curriculum.generate import KEEP_PER_PHASE
from webrl.curriculum.seen import Seen, normalise
from webrl.sites.embedded.suite import template_tasks
from webrl.tasks.model import Task
from webrl.tasks.templates import eval_kind, site_group

RULES_SCORED = "rules"
RELATIONS = ("same", "neighbour")


def _values(task: Task) -> set[str]:
    return {str(v) for v in task.instantiation_dict.values()}


@dataclass
class EvolveReport:
    """What one phase's evolution did: usable seeds, seeds skipped by reason, new tasks by relation and site."""

    seeds: int = 0
    skipped: Counter = field(default_factory=Counter)
    made: Counter = field(default_factory=Counter)
    made_by_site: Counter = field(default_factory=Counter)


class Evolver:
    """New tasks from the template pool; `seed` makes every choice reproducible (with the phase)."""

    def __init__(self, pool: Sequence[Task], seed: int = 0):
        self.seed = seed
        self.by_template: dict[str, list[Task]] = {}
        for task in pool:
            self.by_template.setdefault(task.template, []).append(task)
        self.kind = {key: (site_group(tasks[0]), eval_kind(tasks[0])) for key, tasks in self.by_template.items()}

    @classmethod
    def from_snapshots(cls, snapshot_dir: Path, data_seed: int = 0, seed: int = 0) -> Evolver:
        """The pool of the embedded sites' data for `data_seed` (the suite's seed); building it takes a while
        (every template over all its candidates, routes on the map): build it once per run."""
        return cls(template_tasks(snapshot_dir, data_seed, pool=True), seed)

    def neighbours(self, key: str) -> list[str]:
        """Other templates of the same site group whose tasks are checked the same way."""
        return [k for k, kind in self.kind.items() if k != key and kind == self.kind[key]]

    def available(self, seen: Seen) -> Counter:
        """Pool tasks not seen yet, by site group: how much the evolver still has to give."""
        return Counter(site_group(t) for tasks in self.by_template.values() for t in tasks if t.intent not in seen)

    def evolve(
        self, failed: Sequence[Task], seen: Seen, *, first_id: int, keep: int = KEEP_PER_PHASE, phase: int = 0
    ) -> tuple[list[Task], EvolveReport]:
        """Up to `keep` new tasks from the failed ones, ids from `first_id` on; adds them to `seen`."""
        rng = random.Random(f"evolve:{self.seed}:{phase}")
        report, seeds = EvolveReport(), self._seeds(failed, seen)
        report.seeds = len(seeds)
        for task in failed:
            if not self._usable(task):
                report.skipped["no template" if getattr(task, "template", None) is None else "unknown template"] += 1
        rng.shuffle(seeds)
        out: list[Task] = []
        while seeds and len(out) < keep:
            productive = []
            for seed_task in seeds:
                made = 0
                for relation in RELATIONS:
                    pick = self._pick(seed_task, relation, seen, rng) if len(out) < keep else None
                    if pick is not None:
                        out.append(self._new(pick, seed_task, relation, first_id + len(out), phase))
                        report.made[relation] += 1
                        report.made_by_site[site_group(pick)] += 1
                        made += 1
                if made:
                    productive.append(seed_task)
            seeds = productive
        return out, report

    def _usable(self, task: Task) -> bool:
        return getattr(task, "template", None) in self.by_template

    def _seeds(self, failed: Sequence[Task], seen: Seen) -> list[Task]:
        """The failed tasks that came from a template, one per intent (they are seen: they were rolled out)."""
        seeds: dict[str, Task] = {}
        for task in failed:
            seen.add(task.intent)
            if self._usable(task):
                seeds.setdefault(normalise(task.intent), task)
        return list(seeds.values())

    def _pick(self, failed: Task, relation: str, seen: Seen, rng: random.Random) -> Task | None:
        """An unseen pool task of the failed task's template (other entities first) or of a random neighbour
        (its entities first); it is marked seen."""
        keys = [failed.template] if relation == "same" else self.neighbours(failed.template)
        rng.shuffle(keys)
        for key in keys:
            fresh = [t for t in self.by_template[key] if t.intent not in seen]
            if not fresh:
                continue
            # same template: other entities first; a neighbour: the failed task's own entities first
            want_shared = relation != "same"
            preferred = [t for t in fresh if bool(_values(t) & _values(failed)) == want_shared]
            pick = rng.choice(preferred or fresh)
            seen.add(pick.intent)
            return pick
        return None

    def _new(self, pick: Task, failed: Task, relation: str, task_id: int, phase: int) -> Task:
        config = pick.to_config()
        config.pop("suite_version", None)
        return Task.model_validate(
            config
            | {
                "task_id": task_id,
                "split": "train",
                "scored_by": RULES_SCORED,
                "origin": {
                    "kind": "evolved",
                    "relation": relation,
                    "phase": phase,
                    "from": failed.task_id,
                    "from_template": failed.template,
                },
            }
        )
