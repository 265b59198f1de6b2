"""The group-success band (webrl.train.tasks): which candidates the group algorithms roll out next, by hand."""

from __future__ import annotations

from webrl.tasks.model import Task
from webrl.train.tasks import group_band_round, in_group_band


def task(n: int) -> Task:
    return Task.model_validate(
        {
            "task_id": f"t{n}",
            "sites": ["reddit"],
            "start_url": "__REDDIT__",
            "intent": f"Task {n}.",
            "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["x"]}},
        }
    )


CANDIDATES = [task(n) for n in range(7)]


def ids(tasks: list[Task]) -> list[str]:
    return [str(t.task_id) for t in tasks]


def test_the_band_is_strictly_between_all_failed_and_all_succeeded():
    assert [in_group_band(rate) for rate in (0.0, 0.25, 0.5, 0.75, 1.0)] == [False, True, True, True, False]


def test_rounds_take_the_next_candidates_until_enough_groups_are_in_the_band():
    # nothing rolled out yet: as many as wanted, from the front
    assert ids(group_band_round(CANDIDATES, {}, 3)) == ["t0", "t1", "t2"]
    # one of three in the band (t1): two more are missing, the next two candidates
    assert ids(group_band_round(CANDIDATES, {"t0": 0.0, "t1": 0.5, "t2": 1.0}, 3)) == ["t3", "t4"]
    # three in the band: done, whatever is left
    rates = {"t0": 0.0, "t1": 0.5, "t2": 1.0, "t3": 0.25, "t4": 0.75}
    assert group_band_round(CANDIDATES, rates, 3) == []
    # still one missing but only two candidates left: at most what is left, then nothing
    rates = {"t0": 0.0, "t1": 0.5, "t2": 1.0, "t3": 0.0, "t4": 0.75}
    assert ids(group_band_round(CANDIDATES, rates, 3)) == ["t5"]
    rates |= {"t5": 1.0, "t6": 0.0}
    assert group_band_round(CANDIDATES, rates, 3) == []
