"""Agent data is data: what the agent controls (its answer, the URL it ends on) never becomes code of an
evaluator's expression, an evaluator that fails on it gives that episode an evaluation error instead of ending the
run, and text no encoding takes (a lone surrogate) is stored escaped, read back exactly and resumed after."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from webrl.evaluators.judge import OpenAIJudge
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.runs.records import read_episodes
from webrl.tasks.load import load_tasks
from webrl.tasks.model import Task

SMOKE = Path(__file__).parents[2] / "sites" / "embedded" / "tasks" / "smoke.json"
SURROGATE = "a\ud800b"  # what `exit(message="a\ud800b")` parses to: a lone surrogate, which no UTF-8 takes


@pytest.fixture
def shop_and_forum(site_servers):
    backend = site_servers("shopping", "reddit")
    backend.reset()
    return backend


def task(base: Task, task_id: int, **changes) -> Task:
    return Task.model_validate({**base.to_config(), "task_id": task_id, **changes})


def webrl_eval(backend, out: Path, tasks: list[Task], judge=None, **settings) -> dict:
    config = EvalSettings(tasks="agent data", policy="oracle", out=out, screenshots=False, **settings)
    return asyncio.run(run_eval(config, tasks, LocalExecutor(backend, make_policy("oracle"), judge)))


def test_the_last_url_is_a_value_of_the_expression_not_its_text(shop_and_forum, tmp_path):
    """A last URL holding `','` once made `reddit_get_post_url('...','...')`, whose TypeError ended the run."""
    price = load_tasks(SMOKE)[0]
    forum = shop_and_forum.urls(0)["reddit"]
    post_check = {
        "eval_types": ["program_html"],
        "reference_answers": None,
        "reference_url": "",
        "program_html": [
            {
                "url": "func:reddit_get_post_url('__last_url__')",
                "locator": "document.body.innerText",
                "required_contents": {"must_include": ["never on the page"]},
            }
        ],
    }
    common = {"sites": ["reddit"], "start_url": "__REDDIT__/", "storage_state": None, "eval": post_check}
    quoted = task(price, 101, **common, cheat=[f"goto [{forum}/f/nyc/1/a','b]", "stop []"])
    # a URL that would read as a call of another helper, were it spliced into the expression
    called = task(price, 102, **common, cheat=[f"goto [{forum}/f/nyc/1/x',shopping_get_auth_token(),'y]", "stop []"])
    answered = task(price, 0, cheat=["stop [$30.95]"])  # the same answer in this action space
    summary = webrl_eval(shop_and_forum, tmp_path, [quoted, called, answered], action_space="webarena")
    records = {r.task_id: r for r in read_episodes(tmp_path)}
    for task_id in (101, 102):
        record = records[task_id]
        assert record.status == "done" and record.score == 0.0, record.eval
        [check] = next(d for d in record.eval.details if d["type"] == "program_html")["checks"]
        assert check["url"] == f"{forum}/f/nyc/1/"  # the helper read the URL as its one argument
    assert records[0].score == 1.0 and summary.episodes.count("done") == 3  # the run went on


def test_an_evaluator_failing_on_the_answer_is_that_episodes_error(shop_and_forum, tmp_path, chat_server):
    """The judge's request cannot encode a lone surrogate: the episode gets the error, the run goes on."""
    price = load_tasks(SMOKE)[0]
    fuzzy = {**price.to_config()["eval"], "reference_answers": {"fuzzy_match": ["$30.95"]}}
    answered = task(price, 103, eval=fuzzy, cheat=[r'exit(message="a\ud800b")'])
    judge = OpenAIJudge(chat_server.base, "judge-model")
    summary = webrl_eval(shop_and_forum, tmp_path, [answered, price], judge=judge, mode="vab")
    records = {r.task_id: r for r in read_episodes(tmp_path)}
    assert records[103].status == "error" and records[103].answer == SURROGATE
    [error] = summary.evaluator_errors
    assert error.task_id == 103 and error.error.startswith("UnicodeEncodeError"), error
    assert error.counts_as == "failure" and records[0].score == 1.0


def test_an_answer_no_encoding_takes_is_stored_escaped_and_resumed_after(shop_and_forum, tmp_path):
    price = load_tasks(SMOKE)[0]
    answered = task(price, 104, cheat=[r'exit(message="a\ud800b")'])
    webrl_eval(shop_and_forum, tmp_path, [answered, price])
    episodes = tmp_path / "episodes.jsonl"
    first = episodes.read_text().splitlines()[0]
    assert "a\\ud800b" in first and "a\\ud800b" in (tmp_path / "report.html").read_text()  # stored, shown escaped
    record = read_episodes(tmp_path)[1]
    assert record.answer == SURROGATE and record.status == "done"  # read back exactly
    episodes.write_text(first + "\n")  # the run stopped after that episode
    summary = webrl_eval(shop_and_forum, tmp_path, [answered, price], resume=True)
    assert summary.episodes.count("done") == 2 and [r.answer for r in read_episodes(tmp_path)] == ["$30.95", SURROGATE]
