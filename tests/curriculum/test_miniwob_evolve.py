"""New MiniWoB++ tasks from failed ones: new seeds of the failed environments and environments not met yet,
read off the real pages (Chromium), never a seed the run has used or a held-out one."""

from __future__ import annotations

from webrl.curriculum.miniwob import EVOLVED_SEED_START, evolve_miniwob
from webrl.sites.miniwob.tasks import TEST_SEEDS, supported_names
from webrl.sites.task_sets import resolve_task_set


def test_failures_give_new_seeds_and_new_environments(tmp_path):
    known = resolve_task_set("miniwob:click-button,click-link", tmp_path)
    failed = [t for t in known if t.split == "train"][:2]  # click-button.1000, click-link.1000
    tasks, report = evolve_miniwob(failed, known, 4, seed=0, phase=2, cache_dir=tmp_path)
    assert len(tasks) + report["unsolvable_seeds"] == 4 and report["made"] == {"new seed": 2, "new environment": 2}
    pairs = {(t.miniwob.env, t.miniwob.seed) for t in tasks}
    assert {p for p in pairs if p[0] in ("click-button", "click-link")} <= {("click-button", 2000), ("click-link", 2000)}
    new_envs = {env for env, _ in pairs} - {"click-button", "click-link"}
    assert new_envs and new_envs <= set(supported_names())
    used = {(t.miniwob.env, t.miniwob.seed) for t in known}
    for task in tasks:
        assert (task.miniwob.env, task.miniwob.seed) not in used and task.split == "train"
        assert task.miniwob.seed >= EVOLVED_SEED_START > TEST_SEEDS and task.intent
    again, _ = evolve_miniwob(failed, known, 4, seed=0, phase=2, cache_dir=tmp_path)
    assert [t.to_config() for t in again] == [t.to_config() for t in tasks]  # reproducible
    later, _ = evolve_miniwob(failed, known + tasks, 2, seed=0, phase=3, cache_dir=tmp_path)
    assert {(t.miniwob.env, t.miniwob.seed) for t in later}.isdisjoint(used | {(t.miniwob.env, t.miniwob.seed)
                                                                              for t in tasks})


def test_nothing_failed_makes_nothing(tmp_path):
    known = resolve_task_set("miniwob:click-button:train", tmp_path)
    assert evolve_miniwob([], known, 4, seed=0, phase=2, cache_dir=tmp_path)[0] == []
