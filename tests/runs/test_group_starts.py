"""The members of a group (`repeats` rollouts of one task, what GRPO compares) start from identical states: on the
embedded sites a member's writes are reset before the next member starts, on MiniWoB++ every member gets the task's
seed; in both the first observation is the same, member after member, two slots sharing the work."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.sites.task_sets import resolve_task_set
from webrl.tasks.load import load_tasks

SMOKE = Path(__file__).parents[2] / "sites" / "embedded" / "tasks" / "smoke.json"
MEMBERS = 3


def group_rollouts(backend, tasks, out: Path, policy: str, **settings) -> list[dict]:
    config = EvalSettings(
        tasks="in-memory", policy=policy, out=out, repeats=MEMBERS, screenshots=False, parallel=2, **settings
    )
    asyncio.run(run_eval(config, tasks, LocalExecutor(backend, make_policy(policy))))
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted((r["task_id"], r["repeat"]) for r in rows) == sorted(
        (t.task_id, m) for t in tasks for m in range(MEMBERS)
    )
    return rows


def first_observations(rows: list[dict], task_id) -> list[str]:
    return [r["steps"][0]["observation"] for r in sorted(rows, key=lambda r: r["repeat"]) if r["task_id"] == task_id]


@pytest.mark.slow  # nine oracle episodes in Chromium
def test_a_members_writes_never_reach_the_next_members_start(site_servers, tmp_path):
    backend = site_servers("shopping", "shopping_admin", instances=2)
    backend.reset()
    # the admin changes a price on the page it starts on; the wish list task writes to the shop
    tasks = [t for t in load_tasks(SMOKE) if t.task_id in (2, 4)]
    rows = group_rollouts(backend, tasks, tmp_path, "oracle")
    assert all(r["score"] == 1.0 for r in rows), [(r["task_id"], r["eval"]) for r in rows]  # every member wrote
    for task in tasks:
        starts = first_observations(rows, task.task_id)
        assert len(starts) == MEMBERS and len(set(starts)) == 1, task.task_id
    assert all("27.50" not in start for start in first_observations(rows, 4))  # the new price is never shown
    # every episode but each slot's first found its predecessor's writes (the content checksum off the pristine
    # one) and reset them before it started; the last ones' writes are still there
    assert sum(bool(r["reset"]["reset_sites"]) for r in rows) == len(rows) - 2
    for instance in (0, 1):
        assert backend.is_dirty("shopping", instance, True) or backend.is_dirty("shopping_admin", instance, True)


@pytest.mark.slow  # nine MiniWoB++ episodes in Chromium
def test_miniwob_members_start_from_the_tasks_seed(site_servers, tmp_path):
    backend = site_servers("miniwob", instances=2)
    tasks = resolve_task_set("miniwob:click-button,enter-text,click-checkboxes:test", tmp_path / "state")[:3]
    rows = group_rollouts(backend, tasks, tmp_path / "run", "random:0", max_steps=2, temperature=1.0, seed=0)
    for task in tasks:
        starts = first_observations(rows, task.task_id)
        assert len(starts) == MEMBERS and len(set(starts)) == 1, task.task_id
    # the tasks differ from each other: equal starts are the seed's doing, not a blank page
    assert len({first_observations(rows, t.task_id)[0] for t in tasks}) == len(tasks)
