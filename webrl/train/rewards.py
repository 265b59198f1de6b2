"""From `webrl eval` episodes to the trainer's step files: each episode's reward, then one record per step; the
demonstrations of phase 0 (the oracle's successful episodes) the same way.

Reward of an episode: the task's rule evaluators where it has them (a
judged episode, status "done": 1 if its score is 1), else the outcome reward model (generated tasks, and rule
tasks whose fuzzy or N/A answer waits for a judge). Where an ORM is configured it scores every episode, so the
two can be compared; the reward used is still the rule one where there is one, unless `orm_first` asks for the
ORM's everywhere (an experiment: how far does training on the ORM's verdicts land from training on the rules?).
Episodes that never acted, failed in the environment or the policy, or need an ORM that is not configured get no
reward and are left out (counted).

Step records are webrl.rl.data.StepRecords (task id, episode, step, prompt, response, reward): the prompt is
rebuilt from the step's observation and the earlier responses by the one prompt function, so it is byte for
byte what the policy answered.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webrl.curriculum.generate import needs_orm
from webrl.evaluators.judge import parse_judge_spec
from webrl.files import write_atomically
from webrl.orm.data import episode_example
from webrl.policy.prompt import webrl_prompt
from webrl.rl.data import StepRecord
from webrl.runs.eval import EvalSettings, run_policy
from webrl.runs.records import EpisodeRecord, read_episodes
from webrl.sites.base import SiteBackend
from webrl.tasks.model import Task

FILTERED_BC_PERCENTILE = 70  # the paper's Filtered BC threshold (Table 4)
DEMO_MAX_STEPS = 30  # the scripted solutions' limit, whatever the rollouts' is


@dataclass(frozen=True)
class Rewarded:
    """One episode's outcome: `reward` is what training uses (None: left out), `source` where it came from
    ("rules", "orm", or why it is left out); `rule` and `orm` each verdict where there was one."""

    task_id: int | str
    repeat: int
    status: str
    reward: float | None
    source: str
    rule: float | None = None
    orm: float | None = None

    @property
    def name(self) -> str:
        """The episode's name in step files (EpisodeRecord.name)."""
        return f"{self.task_id}-{self.repeat}"


def reward_episodes(
    records: Sequence[EpisodeRecord], tasks: Mapping[int | str, Task], orm=None, orm_first: bool = False
) -> list[Rewarded]:
    """Every episode's reward (module docstring), in the records' order. `orm` is an
    orm.model.OutcomeRewardModel or None."""
    acted = [record for record in records if record.acted]
    orm_rewards = {}
    if orm is not None and acted:
        scores = orm.rewards([episode_example(record) for record in acted])
        orm_rewards = {record.key: float(r) for record, r in zip(acted, scores, strict=True)}
    result = []
    for record in records:
        by_orm = orm_rewards.get(record.key)
        rule = float(record.success) if record.judged else None
        task = tasks.get(record.task_id)
        outcome = {"task_id": record.task_id, "repeat": record.repeat, "status": record.status}
        if not record.steps or record.status in ("env_error", "policy_error"):
            result.append(Rewarded(**outcome, reward=None, source=f"left out: {record.status}"))
        elif rule is not None and not orm_wanted(task, by_orm, orm_first):
            result.append(Rewarded(**outcome, reward=rule, source="rules", rule=rule, orm=by_orm))
        elif by_orm is not None:
            result.append(Rewarded(**outcome, reward=by_orm, source="orm", rule=rule, orm=by_orm))
        else:
            result.append(Rewarded(**outcome, reward=None, source="left out: needs an ORM"))
    return result


def orm_wanted(task: Task | None, by_orm: float | None, orm_first: bool) -> bool:
    """Whether the ORM's verdict is the reward although the rules judged the episode: the task's rules need an
    ORM (a fuzzy or N/A answer), or `orm_first` asks for the ORM's verdict wherever it gave one."""
    return (task is not None and needs_orm(task)) or (orm_first and by_orm is not None)


def step_records(record: EpisodeRecord, reward: float) -> list[StepRecord]:
    """The step records of one episode (module docstring)."""
    history: list[str] = []
    steps = []
    for index, step in enumerate(record.steps):
        prompt = webrl_prompt(record.intent, history, step.observation)
        steps.append(
            StepRecord(
                task_id=record.task_id,
                episode=record.name,
                step=index,
                prompt=prompt,
                response=step.response,
                reward=reward,
                **sampled_tokens(step.policy),
            )
        )
        history.append(step.response)
    return steps


def sampled_tokens(policy: dict) -> dict[str, Any]:
    """The tokens the policy sampled for a step, their log-probs and its prompt's length, where it reported them
    (hf: all three; vllm: tokens and log-probs)."""
    ids, logprobs = policy.get("token_ids"), policy.get("token_logprobs")
    if ids is None or logprobs is None or len(ids) != len(logprobs):
        return {}
    return {"sampled_ids": ids, "sampled_logprobs": logprobs, "sampled_prompt_tokens": policy.get("prompt_tokens")}


def write_steps(
    path: Path, records: Sequence[EpisodeRecord], rewarded: Sequence[Rewarded], successful_only: bool = False
) -> int:
    """Write the step file of the rewarded episodes (only the successful ones: demonstrations); the number of
    steps written. `rewarded` is `reward_episodes(records, ...)`."""
    steps = [
        step
        for record, item in zip(records, rewarded, strict=True)
        if item.reward is not None and (item.reward >= 0.5 or not successful_only)
        for step in step_records(record, item.reward)
    ]
    write_atomically(Path(path), "".join(step.to_line() for step in steps))
    return len(steps)


def reward_summary(rewarded: Sequence[Rewarded]) -> dict:
    """Counts for metrics.json: episodes by reward source, successes, and rule/ORM agreement where both exist."""
    used = [r for r in rewarded if r.reward is not None]
    both = [r for r in rewarded if r.rule is not None and r.orm is not None]
    return {
        "episodes": len(rewarded),
        "rewarded": len(used),
        "successes": sum(r.reward >= 0.5 for r in used),
        "success_rate": round(100 * sum(r.reward >= 0.5 for r in used) / len(used), 1) if used else None,
        "by_source": dict(Counter(r.source for r in rewarded)),
        "orm_agrees_with_rules": (round(sum(r.rule == r.orm for r in both) / len(both), 3) if both else None),
    }


def percentile_threshold(rewards: Sequence[float], percentile: float) -> float:
    """The reward at `percentile` (nearest rank) of the episodes' rewards."""
    ordered = sorted(rewards)
    rank = max(1, math.ceil(percentile / 100 * len(ordered)))
    return ordered[rank - 1]


def filtered_bc_episodes(rewarded: Sequence[Rewarded]) -> set[str]:
    """The Filtered BC baseline's episodes (as step records name them): the successful ones at or above the 70th
    percentile of reward."""
    scored = [r for r in rewarded if r.reward is not None]
    threshold = percentile_threshold([r.reward for r in scored], FILTERED_BC_PERCENTILE) if scored else 1.0
    return {r.name for r in scored if r.reward >= max(threshold, 0.5)}


def write_demos(
    tasks: Sequence[Task],
    backend: SiteBackend,
    episodes_dir: Path,
    steps_file: Path,
    *,
    backend_name: str,
    parallel: int = 1,
    judge: str = "none",
    mode: str = "strict",
    observation: str = "webrl",
    on_episode=lambda row: None,
) -> tuple[int, int]:
    """Demonstrations: the oracle runs each task's scripted solution through the episode runner into
    `episodes_dir` (continuing what is there), and the steps of the successful episodes go to `steps_file`, in
    the exact WebRL prompt format; `mode` judges them (the guarded reward, as training's). Returns (episodes kept,
    steps written)."""
    settings = EvalSettings(
        tasks=str(episodes_dir),
        policy="oracle",
        backend=backend_name,
        parallel=parallel,
        max_steps=DEMO_MAX_STEPS,
        mode=mode,
        judge=judge,
        observation=observation,
        out=episodes_dir,
        resume=True,
        screenshots=False,
    )
    run_policy(settings, list(tasks), backend, judge=parse_judge_spec(judge), on_episode=on_episode)
    records = read_episodes(episodes_dir)
    rewarded = reward_episodes(records, {t.task_id: t for t in tasks})
    written = write_steps(steps_file, records, rewarded, successful_only=True)
    return sum(r.reward is not None and r.reward >= 0.5 for r in rewarded), written
