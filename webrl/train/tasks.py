"""A phase's tasks (the recipe's stage 1): candidates generated from the previous phase's failures, checked for
feasibility, and kept by the previous critic's band, or, for the group algorithms (no critic), by the group-success
band as they are rolled out.

The critic band is topped up with the closest candidates outside it when it holds too few (a young critic scores
nearly everything alike), and everything is capped at `tasks_per_phase`. The group-success band rolls the
candidates out in their order, round after round, until `tasks_per_phase` groups have a success rate strictly
between 0 and 1 (a group all alike carries no signal to a group-relative objective: DAPO's dynamic sampling, its
batch refilled), or the candidates run out.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from webrl.sites.base import SiteBackend
from webrl.tasks.family import CurriculumContext
from webrl.tasks.model import Task
from webrl.train.settings import RunSettings


def generate(
    settings: RunSettings,
    phase: int,
    failed: list[Task],
    known: list[Task],
    trained: list[Task],
    state_dir: Path,
    sites_seed: int,
    models_dir: Path,
) -> tuple[list[Task], dict]:
    """New candidates from the `failed` tasks, none seen before among `known` (the family's tasks and the phases');
    `trained` are the tasks the run has learnt from (demonstrations and phases); the generator's report."""
    want = math.ceil(settings.tasks_per_phase * settings.candidate_factor)
    report: dict[str, Any] = {"failed_seeds": len(failed), "generator": settings.generator}
    if not failed:
        return [], report
    context = CurriculumContext(
        phase=phase,
        seed=settings.seed,
        generator=settings.generator,
        state_dir=state_dir,
        sites_seed=sites_seed,
        models_dir=models_dir,
    )
    tasks, made = settings.task_family.new_tasks(failed, known, trained, want, context)
    report |= made
    report["candidates"] = len(tasks)
    return tasks, report


def feasible(settings: RunSettings, tasks: list[Task]) -> tuple[list[Task], dict]:
    """With a judge: the feasibility filter. Without one, generated tasks go unchecked (the paper checked them by
    hand; procedural tasks are feasible by construction)."""
    from webrl.curriculum.filters import feasibility_filter
    from webrl.evaluators.judge import parse_judge_spec

    judge = parse_judge_spec(settings.judge)
    if judge is None:
        return tasks, {"checked": False}
    kept, reasons = feasibility_filter(tasks, judge)
    return kept, {"checked": True, "kept": len(kept), "outcomes": dict(reasons)}


def in_group_band(success_rate: float) -> bool:
    return 0.0 < success_rate < 1.0


def group_band_round(candidates: list[Task], success_rates: dict[str, float], want: int) -> list[Task]:
    """The group-success band's next round: the candidates after those rolled out so far (`success_rates`: task id
    -> its group's success rate; the rolled-out ones are always a prefix of `candidates`), as many as groups are
    still missing from the band; none once `want` are in it or no candidate is left."""
    rolled = sum(1 for t in candidates if str(t.task_id) in success_rates)
    inside = sum(1 for rate in success_rates.values() if in_group_band(rate))
    return candidates[rolled : rolled + max(0, want - inside)]


def in_critic_band(
    settings: RunSettings, tasks: list[Task], critic_dir: Path | None, backend: SiteBackend, start_pages_file: Path
) -> tuple[list[Task], dict]:
    """The candidates in the critic's band, topped up by those closest to it; capped at tasks_per_phase."""
    if critic_dir is None or not tasks:
        return tasks[: settings.tasks_per_phase], {"applied": False}
    import torch

    from webrl.curriculum.filters import critic_filter, in_band, stored_start_pages
    from webrl.policy.models import load_tokenizer, quiet
    from webrl.rl.critic import Critic

    pages = stored_start_pages(tasks, backend, start_pages_file, settings.observation)
    with quiet():
        critic = Critic.load(critic_dir, torch.float32)
    inside, scores = critic_filter(
        tasks,
        pages,
        critic,
        load_tokenizer(critic_dir),
        band=settings.critic_band,
        rule=settings.critic_rule,
        max_tokens=settings.max_tokens,
    )
    del critic
    low, high = settings.critic_band
    outside = [
        t
        for t, s in sorted(
            ((t, s) for t, s in zip(tasks, scores) if not in_band(s, settings.critic_band, settings.critic_rule)),
            key=lambda pair: min(abs(pair[1].value - low), abs(pair[1].value - high)),
        )
    ]
    kept = (inside + outside)[: settings.tasks_per_phase]
    values = [s.value for s in scores]
    return kept, {
        "applied": True,
        "critic": str(critic_dir),
        "scored": len(tasks),
        "in_band": len(inside),
        "topped_up": max(0, len(kept) - len(inside)),
        "value_min": min(values),
        "value_mean": sum(values) / len(values),
        "value_max": max(values),
    }
