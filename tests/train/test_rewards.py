"""From eval episodes to rewards and step files: rule rewards, the ORM where there is no rule (a real `tiny` ORM,
random weights: its verdicts are arbitrary but real), episodes left out and why, prompts rebuilt exactly."""

from __future__ import annotations

import json

from webrl.curriculum.generate import generated_task
from webrl.orm.model import OutcomeRewardModel
from webrl.policy.prompt import webrl_prompt
from webrl.rl.data import load_steps
from webrl.runs.records import EpisodeRecord, EpisodeStep
from webrl.tasks.model import Task
from webrl.train.rewards import reward_episodes, reward_summary, step_records, write_steps

SEED = Task.model_validate(
    {
        "task_id": 1,
        "sites": ["shopping"],
        "start_url": "__SHOPPING__",
        "intent": "Buy a lamp",
        "require_login": True,
        "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "5"}},
    }
)
GENERATED = generated_task("Buy two lamps", [SEED], 2, "test", 1)


def episode(task_id, status, score=None, responses=("click [3]", 'exit(message="5")'), repeat=0) -> EpisodeRecord:
    steps = [
        EpisodeStep(
            index=i,
            url="http://127.0.0.1:7770/",
            observation=f"<html>page {i} of {task_id}</html>",
            response=r,
            action={},
        )
        for i, r in enumerate(responses)
    ]
    return EpisodeRecord(
        task_id=task_id,
        repeat=repeat,
        intent=f"intent of {task_id}",
        sites=["shopping"],
        status=status,
        score=score,
        steps=steps,
        last_observation=steps[-1].observation if steps else None,
    )


def test_rules_where_the_task_has_them_the_orm_elsewhere_and_the_rest_left_out(tiny):
    tasks = {1: SEED, 2: GENERATED, 3: SEED.model_copy(update={"task_id": 3})}
    rows = [
        episode(1, "done", 1.0),
        episode(1, "done", 0.0, repeat=1),
        episode(2, "unjudged"),
        episode(3, "env_error", responses=()),
        episode(3, "policy_error", repeat=1),
        episode(3, "unjudged", repeat=2),
    ]
    without = reward_episodes(rows, tasks)
    assert [(r.reward, r.source) for r in without] == [
        (1.0, "rules"),
        (0.0, "rules"),
        (None, "left out: needs an ORM"),
        (None, "left out: env_error"),
        (None, "left out: policy_error"),
        (None, "left out: needs an ORM"),
    ]

    orm = OutcomeRewardModel.load(str(tiny))
    with_orm = reward_episodes(rows, tasks, orm)
    assert [r.source for r in with_orm] == [
        "rules",
        "rules",
        "orm",
        "left out: env_error",
        "left out: policy_error",
        "orm",
    ]
    assert with_orm[0].reward == 1.0 and with_orm[0].orm in (0.0, 1.0)  # the ORM's verdict is recorded beside
    assert with_orm[2].reward == with_orm[2].orm in (0.0, 1.0)
    summary = reward_summary(with_orm)
    assert summary["episodes"] == 6 and summary["rewarded"] == 4
    assert summary["by_source"] == {"rules": 2, "orm": 2, "left out: env_error": 1, "left out: policy_error": 1}
    assert summary["orm_agrees_with_rules"] in (0.0, 0.5, 1.0)

    # orm_first (RunSettings.reward "orm"): the ORM's verdict wherever it gave one, the rule's kept beside it
    orm_first = reward_episodes(rows, tasks, orm, orm_first=True)
    assert [r.source for r in orm_first] == [
        "orm",
        "orm",
        "orm",
        "left out: env_error",
        "left out: policy_error",
        "orm",
    ]
    assert [(r.reward, r.rule) for r in orm_first[:2]] == [(with_orm[0].orm, 1.0), (with_orm[1].orm, 0.0)]


def test_step_records_rebuild_each_prompt_and_load_as_an_episode(tmp_path):
    row = episode(7, "done", 1.0, responses=("click [3]", "type [4] [lamp]", 'exit(message="5")'))
    records = step_records(row, 1.0)
    assert [r.prompt for r in records] == [
        webrl_prompt("intent of 7", [], "<html>page 0 of 7</html>"),
        webrl_prompt("intent of 7", ["click [3]"], "<html>page 1 of 7</html>"),
        webrl_prompt("intent of 7", ["click [3]", "type [4] [lamp]"], "<html>page 2 of 7</html>"),
    ]
    rows = [row, episode(8, "done", 0.0)]
    rewarded = reward_episodes(rows, {7: SEED, 8: SEED})
    path = tmp_path / "steps.jsonl"
    assert write_steps(path, rows, rewarded) == 5
    steps = load_steps(path)
    assert [(s.episode, s.step, s.reward, s.done) for s in steps] == [
        ("7-0", 0, 1.0, False),
        ("7-0", 1, 1.0, False),
        ("7-0", 2, 1.0, True),
        ("8-0", 0, 0.0, False),
        ("8-0", 1, 0.0, True),
    ]
    assert steps[0].next_prompt == records[1].prompt
    assert write_steps(path, rows, rewarded, successful_only=True) == 3
    assert {json.loads(line)["episode"] for line in path.read_text().splitlines()} == {"7-0"}
