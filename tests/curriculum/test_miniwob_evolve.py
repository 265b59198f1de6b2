"""New MiniWoB++ tasks from failed ones: new seeds of the failed environments and environments of the run's family not
trained on yet, read off the real pages (Chromium), never a seed the run has used or a held-out one."""

from __future__ import annotations

from webrl.families.miniwob.curriculum import EVOLVED_SEED_START, evolve_miniwob
from webrl.families.miniwob.tasks import TEST_SEEDS
from webrl.sites.task_sets import resolve_task_set

FAMILY = "miniwob:click-button,click-link,focus-text,click-test"


def test_failures_give_new_seeds_and_the_familys_untrained_environments(tmp_path):
    known = resolve_task_set(FAMILY, tmp_path)  # train and test seeds of the family: the run's evaluation covers all
    failed = [
        t for t in known if t.split == "train" and t.family_data["miniwob"].env in ("click-button", "click-link")
    ][:2]
    trained = {"click-button", "click-link"}  # e.g. the demonstrations' environments
    tasks, report = evolve_miniwob(failed, known, 4, trained=trained, seed=0, phase=2, cache_dir=tmp_path)
    assert len(tasks) + report["unsolvable_seeds"] == 4 and report["made"] == {"new seed": 2, "new environment": 2}
    pairs = {(t.family_data["miniwob"].env, t.family_data["miniwob"].seed) for t in tasks}
    assert {p for p in pairs if p[0] in trained} <= {("click-button", 2000), ("click-link", 2000)}
    assert {env for env, _ in pairs} - trained <= {"focus-text", "click-test"}  # never beyond the family
    used = {(t.family_data["miniwob"].env, t.family_data["miniwob"].seed) for t in known}
    for task in tasks:
        assert (task.family_data["miniwob"].env, task.family_data["miniwob"].seed) not in used and task.split == "train"
        assert task.family_data["miniwob"].seed >= EVOLVED_SEED_START > TEST_SEEDS and task.intent
    again, _ = evolve_miniwob(failed, known, 4, trained=trained, seed=0, phase=2, cache_dir=tmp_path)
    assert [t.to_config() for t in again] == [t.to_config() for t in tasks]  # reproducible
    # once every environment of the family has been trained on, only new seeds remain
    everything = trained | {t.family_data["miniwob"].env for t in tasks}
    later, report = evolve_miniwob(
        failed, known + tasks, 5, trained=everything | {"focus-text", "click-test"}, seed=0, phase=3, cache_dir=tmp_path
    )
    assert report["made"] == {"new seed": 5}  # round after round over the two failures: the phase keeps its size
    assert sorted(t.family_data["miniwob"].seed for t in later if t.family_data["miniwob"].env == "click-button") == [
        2001,
        2002,
        2003,
    ]
    assert {(t.family_data["miniwob"].env, t.family_data["miniwob"].seed) for t in later}.isdisjoint(used | pairs)


def test_nothing_failed_makes_nothing(tmp_path):
    known = resolve_task_set("miniwob:click-button:train", tmp_path)
    assert evolve_miniwob([], known, 4, trained=set(), seed=0, phase=2, cache_dir=tmp_path)[0] == []
