"""ORM examples from `webrl eval` runs (a real one, and episode records of every status) and from JSONL records;
bad input names the file, the line and the field."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path

import pytest

from webrl.errors import UsageError
from webrl.orm.data import Example, episode_example, load_examples, write_examples
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.runs.records import EpisodeRecord
from webrl.tasks.load import load_tasks

SMOKE = Path(__file__).parents[2] / "sites" / "embedded" / "tasks" / "smoke.json"


def episode(task_id: int, status: str, score: float | None, responses: list[str], **extra) -> dict:
    """An episode record as `webrl eval` writes it (runs/eval.py `_episode` / `run_episode`)."""
    steps = [
        {
            "index": i,
            "url": "http://127.0.0.1:7770/",
            "observation": "<html> a page </html>",
            "response": r,
            "action": {"kind": "click"},
            "error": None,
            "timings_ms": {},
            "screenshot": None,
            "policy": {},
        }
        for i, r in enumerate(responses)
    ]
    return {
        "task_id": task_id,
        "repeat": 0,
        "sites": ["shopping"],
        "intent": f"task {task_id}",
        "status": status,
        "error": None,
        "score": score,
        "answer": "",
        "truncated_by": None,
        "eval": None,
        "reset": {},
        "blocked_requests": [],
        "steps": steps,
        "last_observation": f"<html> page of {task_id} </html>" if steps else None,
        "seconds": 1.0,
        **extra,
    }


def write_lines(path: Path, rows: list) -> Path:
    path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n" for row in rows))
    return path


def test_every_status_of_an_eval_run(tmp_path):
    rows = [
        episode(0, "done", 1.0, ["do(a)", "exit()"]),
        episode(1, "done", 0.0, ["exit()"]),
        episode(2, "unjudged", None, ["exit()"]),
        episode(3, "error", None, ["exit()"]),
        episode(4, "env_error", None, []),
        episode(5, "policy_error", None, []),
        episode(6, "done", 0.5, ["exit()"]),
    ]
    write_lines(tmp_path / "episodes.jsonl", rows)
    loaded = load_examples([tmp_path])  # the run folder
    assert [(e.task_id, e.label) for e in loaded.examples] == [(0, 1), (1, 0), (6, 0)]  # success = score 1
    assert loaded.skipped == Counter({"unjudged": 1, "error": 1, "env_error": 1, "policy_error": 1})
    first = loaded.examples[0]
    assert first == Example(
        intent="task 0",
        responses=("do(a)", "exit()"),
        html="<html> page of 0 </html>",
        label=1,
        task_id=0,
        sites=("shopping",),
        source=str(tmp_path),
    )
    assert load_examples([tmp_path / "episodes.jsonl"]).examples == loaded.examples  # the file itself
    unjudged = episode_example(EpisodeRecord.model_validate(rows[2]))
    assert unjudged.label is None and unjudged.html == "<html> page of 2 </html>"  # what the ORM would score


def test_a_leaderboard_success_the_guard_fails_is_a_failure_to_the_orm(tmp_path):
    """A webarena 1.0 marked dump_suspect (the whole page as the answer) teaches an ORM nothing but to reward it."""
    rows = [
        episode(0, "done", 1.0, ["exit()"], dump_suspect=["the answer is much longer than its references"]),
        episode(1, "done", 1.0, ["exit()"]),
    ]
    write_lines(tmp_path / "episodes.jsonl", rows)
    assert [(e.task_id, e.label) for e in load_examples([tmp_path]).examples] == [(0, 0), (1, 1)]


def test_example_records_round_trip(tmp_path):
    examples = [
        Example("buy a mug", ("do(x)\nexit()",), "<p>ok</p>", 1, "t1", ("shopping",), "rollouts-a"),
        Example("find a road", (), "<p>map</p>", 0, 7, (), "rollouts-b"),
    ]
    write_examples(tmp_path / "x.jsonl", examples)
    assert load_examples([tmp_path / "x.jsonl"]).examples == examples
    write_lines(tmp_path / "bare.jsonl", [{"intent": "a", "responses": ["exit()"], "html": "<p/>", "label": 0}])
    bare = load_examples([tmp_path / "bare.jsonl", tmp_path / "x.jsonl"]).examples
    assert bare[0] == Example("a", ("exit()",), "<p/>", 0, None, (), str(tmp_path / "bare.jsonl")) and len(bare) == 3


GOOD = {"intent": "a", "responses": ["exit()"], "html": "<p/>", "label": 1}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"x\.jsonl:2: not valid JSON"),
        ("[1, 2]", r"x\.jsonl:2: expected a JSON object, got list"),
        (json.dumps({**GOOD, "label": 2}), r"x\.jsonl:2: field 'label' must be 0 or 1, got 2"),
        (json.dumps({**GOOD, "label": True}), r"x\.jsonl:2: .*field 'label' must be int or float, got bool"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "label"}), r"x\.jsonl:2: .*missing field 'label'"),
        (json.dumps({**GOOD, "responses": "exit()"}), r"x\.jsonl:2: .*field 'responses' must be list, got str"),
        (json.dumps({**GOOD, "responses": ["exit()", 3]}), r"x\.jsonl:2: .*field 'responses' item 1 must be str"),
        (json.dumps({**GOOD, "task_id": [1]}), r"x\.jsonl:2: .*field 'task_id' must be int or str"),
        (
            json.dumps({**episode(9, "done", 1.0, ["exit()"]), "last_observation": None}),
            r"x\.jsonl:2: task 9: missing field 'last_observation' .*run the evaluation again",
        ),
        (
            json.dumps({**episode(9, "done", 1.0, ["exit()"]), "steps": []}),
            r"x\.jsonl:2: task 9: field 'steps' is empty",
        ),
        (
            json.dumps({k: v for k, v in episode(9, "done", 1.0, ["exit()"]).items() if k != "score"}),
            r"x\.jsonl:2: task 9: a judged episode \(status done\) needs a score",
        ),
    ],
)
def test_bad_lines_name_file_line_and_field(tmp_path, line, message):
    path = write_lines(tmp_path / "x.jsonl", [GOOD, line])
    with pytest.raises(UsageError, match=message):
        load_examples([path])


def test_bad_paths_and_empty_data(tmp_path):
    with pytest.raises(UsageError, match="folder without episodes.jsonl"):
        load_examples([tmp_path])
    with pytest.raises(UsageError, match="no such file or folder"):
        load_examples([tmp_path / "missing.jsonl"])
    write_lines(tmp_path / "episodes.jsonl", [episode(0, "env_error", None, [])])
    with pytest.raises(UsageError, match=r"no labelled examples .*env_error': 1"):
        load_examples([tmp_path])


@pytest.mark.slow  # a whole eval run (~4 s)
def test_a_real_eval_run_is_orm_data(site_servers, tmp_path):
    """`webrl eval` records the page each episode ended on; the oracle's episodes become success examples."""
    store = site_servers("shopping", "shopping_admin")
    store.reset()
    tasks = load_tasks(SMOKE)[:2]
    settings = EvalSettings(tasks=str(SMOKE), policy="oracle", out=tmp_path, screenshots=False)
    asyncio.run(run_eval(settings, tasks, LocalExecutor(store, make_policy("oracle"))))
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    examples = load_examples([tmp_path]).examples
    assert [e.label for e in examples] == [1, 1] and [e.intent for e in examples] == [t.intent for t in tasks]
    for example, row in zip(examples, rows, strict=True):
        assert example.responses == tuple(step["response"] for step in row["steps"])
        assert example.html == row["last_observation"] and "data-bbox=" in example.html  # simplified HTML
        assert "exit(" in example.responses[-1]  # the page is the one the agent saw before exiting:
    assert "30.95" in examples[0].html  # the price it reported
    assert "Bytewise Streaming Webcam" in examples[1].html  # the product page it opened
