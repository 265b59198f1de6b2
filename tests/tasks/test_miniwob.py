"""MiniWoB++ through webrl's own harness, on the real pages of the installed `miniwob` package in real Chromium:
the page's episode protocol (seeded problems, the page's own reward), the named sets, the oracle on the test seeds
of every scripted environment, the random baseline, observation hygiene and bad input."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from cli_support import webrl

from webrl.errors import UsageError
from webrl.families.miniwob import tasks as miniwob
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.sites.task_sets import resolve_task_set
from webrl.tasks.load import load_tasks

# The page's score panel, START cover and click canvas: none may reach the agent (the panel shows the reward).
PANEL_TEXT = ("Last reward", "Last 10 average", "Time left", "Episodes done", "START", "click-canvas")
FORMS = ["click-button", "enter-text", "login-user", "click-checkboxes", "choose-list"]
CI_SEEDS = 3  # test seeds per environment in the oracle test: about 240 episodes, two at a time


@pytest.fixture(scope="module")
def sites(site_servers):
    return site_servers("miniwob", instances=2)


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def oracle_run(sites, state, tmp_path_factory):
    """The oracle over the first CI_SEEDS test seeds of every scripted environment (docs/tasks.md gives the whole
    test split), two at a time: (its tasks, {task_id: episode row}, the summary). Run once for the tests that
    read what the oracle did."""
    tasks = [t for t in resolve_task_set("miniwob:test", state) if t.family_data["miniwob"].seed < CI_SEEDS]
    rows, summary = evaluate(sites, tasks, tmp_path_factory.mktemp("oracle"), parallel=2)
    return tasks, rows, summary


def evaluate(backend, tasks, out, policy="oracle", **settings):
    """`webrl eval`'s runner: the episode rows and the summary."""
    config = EvalSettings(tasks="in-memory", policy=policy, out=out, screenshots=False, **settings)
    summary = asyncio.run(run_eval(config, tasks, LocalExecutor(backend, make_policy(policy))))
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    return {row["task_id"]: row for row in rows}, summary


@pytest.mark.slow  # reads problems off several pages (~15 s)
def test_a_seed_fixes_the_problem():
    pairs = [(env, seed) for env in FORMS for seed in (0, 1, 2)]
    batch = miniwob.read_problems(pairs)  # one page load per environment
    for env, seed in pairs[:6]:  # a fresh page load per problem, as an episode has
        assert miniwob.read_problems([(env, seed)]) == {f"{env}.{seed}": batch[f"{env}.{seed}"]}
    assert miniwob.read_problems(pairs) == batch
    for env in FORMS:
        intents = {batch[f"{env}.{seed}"]["intent"] for seed in (0, 1, 2)}
        assert len(intents) == 3, (env, intents)  # seeds differ


@pytest.mark.slow  # reads problems off pages (~6 s)
def test_named_sets_split_seeds_and_list_environments(state):
    envs = miniwob.environments()
    status = {e.name: e.status for e in envs}
    assert len(envs) == len(miniwob.environment_names()) >= 100
    assert sum(s == "scripted" for s in status.values()) >= 40
    assert status["drag-box"] == "unsupported" and all(e.reason for e in envs if e.status == "unsupported")
    assert not set(miniwob.UNSUPPORTED) & set(miniwob.scripted_names())
    test = resolve_task_set("miniwob:click-button,enter-text:test", state)
    train = resolve_task_set("miniwob:click-button,enter-text:train", state)
    both = resolve_task_set("miniwob:click-button,enter-text", state)
    test_seeds = {t.family_data["miniwob"].seed for t in test}
    assert test_seeds == set(range(miniwob.TEST_SEEDS)) and not test_seeds & {
        t.family_data["miniwob"].seed for t in train
    }
    assert len(train) == 2 * miniwob.TRAIN_SEEDS and {t.split for t in both} == {"train", "test"}
    assert [t.family_data["miniwob"].env for t in test[:4]] == ["click-button", "enter-text"] * 2  # seed by seed
    # :N names how many seeds of the split: the learning benchmark's 50 test seeds, 3 demonstrations each
    wide = resolve_task_set("miniwob:click-button,enter-text:test:50", state)
    assert {t.family_data["miniwob"].seed for t in wide} == set(range(50)) and [
        t.task_id for t in wide[: len(test)]
    ] == [t.task_id for t in test]
    assert len(resolve_task_set("miniwob:click-button,enter-text:train:3", state)) == 6
    task = test[0]
    assert task.sites == ["miniwob"] and task.eval.eval_types == ["miniwob_reward"] and task.cheat
    assert task.intent == 'Click on the "okay" button.' and task.task_id == "click-button.0"
    # a task round-trips through a task file
    assert [t.to_config() for t in load_tasks_from(state, test)] == [t.to_config() for t in test]
    for bad, needle in [
        ("miniwob:nope", "unknown MiniWoB environment 'nope'"),
        ("miniwob:drag-box:test", "not supported: needs dragging"),
        ("miniwob:click-button:test:x", "'x' is not a number of seeds"),
        ("miniwob:click-button:test:1001", "'1001' is not a number of seeds (1-1000)"),
        ("miniwob:click-button:valid:9", "expected miniwob[:ENV"),
        ("miniwob:click-button:valid", "'valid' is not a split (train or test)"),
    ]:
        with pytest.raises(UsageError, match=re.escape(needle)):
            resolve_task_set(bad, state)


def load_tasks_from(folder, tasks):
    path = folder / "tasks.json"
    path.write_text(json.dumps([t.to_config() for t in tasks]))
    return load_tasks(path)


@pytest.mark.slow  # many MiniWoB episodes (~10 s beside the oracle's run)
def test_the_page_rewards_right_answers_and_punishes_wrong_ones(sites, state, oracle_run, tmp_path):
    tasks = resolve_task_set(f"miniwob:{','.join(FORMS)}:test", state)[:10]
    assert all(
        t.family_data["miniwob"].seed < CI_SEEDS for t in tasks
    )  # the oracle's run: its episodes are the right answers
    right = oracle_run[1]
    # the same tasks, submitted without doing the work first: the last scripted step alone
    wrong = [t.model_copy(update={"cheat": t.cheat[-1:]}) for t in tasks if len(t.cheat) > 1]
    wrong_rows, _ = evaluate(sites, wrong, tmp_path / "wrong")
    for task in tasks:
        reward = reward_of(right[task.task_id])
        assert reward["done"] and reward["raw_reward"] > 0 and right[task.task_id]["score"] == 1.0, task.task_id
    assert len(wrong) >= 5
    for row in wrong_rows.values():
        reward = reward_of(row)
        assert reward["done"] and reward["raw_reward"] <= 0 and row["score"] == 0.0, row["task_id"]


def reward_of(row: dict) -> dict:
    return next(d for d in row["eval"]["details"] if d["type"] == "miniwob_reward")


@pytest.mark.slow  # the oracle over ~240 episodes
def test_oracle_solves_every_scripted_environment_and_hides_the_score_panel(oracle_run):
    """The first CI_SEEDS test seeds of every scripted environment (docs/tasks.md gives the whole test split)."""
    scripted = miniwob.scripted_names()
    tasks, rows, summary = oracle_run
    assert {t.family_data["miniwob"].env for t in tasks} == set(scripted) and set(rows) == {t.task_id for t in tasks}
    failures = [
        f"{row['task_id']}: {row['intent']}\n  {row['status']} {row.get('error')} "
        f"{json.dumps(row.get('eval'))[:400]}\n" + "\n".join(f"  {s['response']!r} {s['error']}" for s in row["steps"])
        for row in rows.values()
        if row["score"] != 1.0
    ]
    assert not failures, "\n\n".join(failures)
    table = summary.section("miniwob")
    assert set(table["environments"]) == set(scripted) and table["mean_success"] == 100.0
    assert summary.settings.miniwob_time_limit_s == 600
    observations = [s["observation"] for row in rows.values() for s in row["steps"]]
    observations += [row["last_observation"] for row in rows.values()]
    leaks = [(text, o[:200]) for o in observations for text in PANEL_TEXT if text in o]
    assert not leaks, leaks[:3]


@pytest.mark.slow  # random and oracle over many MiniWoB episodes (~30 s)
def test_random_baseline_is_below_the_oracle(sites, state, tmp_path):
    tasks = resolve_task_set(f"miniwob:{','.join(miniwob.scripted_names()[:12])}:test", state)[:24]
    rows, summary = evaluate(sites, tasks, tmp_path / "random", policy="random:1", parallel=2)
    table = summary.section("miniwob")["environments"]
    assert len(table) == 12 and all(row["episodes"] == 2 for row in table.values())
    assert summary.section("miniwob")["mean_success"] < 100.0
    assert all(-1 <= row["raw_reward"] <= 1 for row in table.values())


def test_leaving_the_page_scores_zero(sites, state, tmp_path):
    task = resolve_task_set("miniwob:click-button:test", state)[0]
    away = task.model_copy(update={"cheat": ['do(action="Go Backward")', *task.cheat]})
    rows, _ = evaluate(sites, [away], tmp_path / "away")
    row = rows[task.task_id]
    assert row["status"] == "done" and row["score"] == 0.0
    assert reward_of(row)["reason"] == "the agent left the environment's page (now about:blank)"


def test_a_page_timer_that_runs_out_scores_zero(sites, state, tmp_path):
    task = resolve_task_set("miniwob:enter-text:test", state)[0]
    slow = task.model_copy(update={"cheat": [task.cheat[0], *['do(action="Scroll Down")'] * 3, task.cheat[-1]]})
    rows, summary = evaluate(sites, [slow], tmp_path / "timer", miniwob_time_limit_s=0.2)
    reward = reward_of(rows[task.task_id])
    assert reward["raw_reward"] == -1 and reward["reason"] == "timed out" and rows[task.task_id]["score"] == 0.0
    assert summary.settings.miniwob_time_limit_s == 0.2


def test_bad_input_is_one_line(cli_env, tmp_path):
    for args, needle in [
        (["--tasks", "miniwob:nope"], "unknown MiniWoB environment 'nope'"),
        (["--tasks", "miniwob:use-slider:test"], "is not supported: needs dragging"),
    ]:
        result = webrl(cli_env, "eval", *args, "--out", str(tmp_path / "out"))
        assert result.returncode == 2 and needle in result.stderr and "Traceback" not in result.stderr, result
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            [
                {
                    "task_id": "x.1",
                    "sites": ["miniwob"],
                    "start_url": "__MINIWOB__/miniwob/x.html",
                    "intent": "x",
                    "eval": {"eval_types": ["miniwob_reward"]},
                    "miniwob": {"env": "click-button", "seed": "one"},
                }
            ]
        )
    )
    result = webrl(cli_env, "eval", "--tasks", str(bad), "--out", str(tmp_path / "out2"))
    assert result.returncode == 2 and "task x.1: field 'family_data.miniwob.seed'" in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_episode_on_the_page_the_last_one_left_is_a_fresh_one(sites, state):
    """Episodes of one environment start on the page the previous one ran on, as MiniWoB's own driver runs them
    (no reload): the next seed's first observation must be the one a fresh load gives, whatever the last episode
    did there, with no storage left; a page whose history the agent changed is loaded afresh."""
    from playwright.async_api import async_playwright

    from webrl.browser import launch_chromium
    from webrl.env.browser_env import BrowserEnv

    envs = ["click-checkboxes", "enter-text", "click-tab-2-easy"]
    tasks = {t.task_id: t for t in resolve_task_set(f"miniwob:{','.join(envs)}:test", state)}
    mess = """() => { window.leftOver = 1; localStorage.setItem('trace', '1');
                      for (const el of document.querySelectorAll('#area input')) el.click(); }"""

    async def main():
        async with async_playwright() as p:
            browser = await launch_chromium(p)
            try:
                fresh, reused = BrowserEnv(browser, sites, 0), BrowserEnv(browser, sites, 1)
                seen = []
                for env_name in envs:
                    first, second = tasks[f"{env_name}.0"], tasks[f"{env_name}.1"]
                    expected, _ = await fresh.reset(second)
                    await reused.reset(first)
                    await reused.page.evaluate(mess)
                    observed, info = await reused.reset(second)
                    left = await reused.page.evaluate("() => [window.leftOver, localStorage.getItem('trace')]")
                    seen.append((env_name, observed.text == expected.text, left))
                await reused.page.evaluate("() => history.pushState({}, '', '#moved')")
                await reused.reset(tasks[f"{envs[-1]}.2"])
                seen.append(await reused.page.evaluate("() => [window.leftOver ?? null, history.length]"))
                await fresh.shutdown()
                await reused.shutdown()
                return seen
            finally:
                await browser.close()

    # the same page (window.leftOver survives), the fresh load's observation, no storage; history: a new load
    assert asyncio.run(main()) == [(env, True, [1, None]) for env in envs] + [[None, 2]]


def test_a_run_plays_an_environment_page_by_page(sites, state, tmp_path):
    """Tasks listed seed by seed are played environment by environment, so a worker loads each page once and
    starts every later episode on it (`start_page` takes no load: under 5 ms, against ~70 for a load)."""
    envs = ["click-test", "focus-text"]
    tasks = {t.task_id: t for t in resolve_task_set(f"miniwob:{','.join(envs)}:test", state)}
    interleaved = [tasks[f"{env}.{seed}"] for seed in range(3) for env in envs]
    rows, _ = evaluate(sites, interleaved, tmp_path / "run", parallel=1)
    loaded = {
        row["task_id"]: row["reset"]["timings_ms"]["start_page"] >= 5 for row in rows.values() if row["score"] == 1.0
    }
    assert len(loaded) == 6 and sorted(t for t, load in loaded.items() if load) == [f"{env}.0" for env in envs]
