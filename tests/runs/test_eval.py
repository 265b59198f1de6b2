"""`webrl eval` end to end on the embedded shop: the oracle solves the smoke tasks, random does not,
records and the report are written, --resume skips finished episodes, bad input is a usage error."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from webrl.errors import UsageError
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval, summarize
from webrl.runs.executor import LocalExecutor
from webrl.runs.records import EpisodeEval, EpisodeRecord
from webrl.runs.summary import SuccessRate
from webrl.tasks.load import load_tasks
from webrl.tasks.model import Task

SMOKE = Path(__file__).parents[2] / "sites" / "embedded" / "tasks" / "smoke.json"


@pytest.fixture
def store(site_servers):
    backend = site_servers("shopping", "shopping_admin")
    backend.reset()
    return backend


def webrl_eval(store, out: Path, policy: str, **settings):
    config = EvalSettings(tasks=str(SMOKE), policy=policy, out=out, **settings)
    return asyncio.run(run_eval(config, load_tasks(SMOKE), LocalExecutor(store, make_policy(policy))))


def oracle_eval_command(out: Path) -> list[str]:
    """`webrl eval` of the smoke tasks three times over in a subprocess: seconds of work to interrupt."""
    options = ["--tasks", str(SMOKE), "--policy", "oracle", "--repeats", "3", "--out", str(out)]
    return [sys.executable, "-m", "webrl", "eval", *options]


def test_oracle_solves_every_smoke_task(store, tmp_path):
    summary = webrl_eval(store, tmp_path, "oracle")
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [r["score"] for r in rows] == [1.0] * len(rows), [(r["task_id"], r["eval"]) for r in rows]
    assert summary.success_rate["Average"].mean == 100.0
    assert summary.success_rate["OSS"].episodes == 4 and summary.success_rate["CMS"].episodes == 1
    assert summary.settings.mode == "webarena" and summary.policy == "oracle"
    assert summary.settings.site_resets == "database-changed"  # the embedded sites reset on any write
    assert summary.settings.click_at == "box" and summary.settings.escape_text is False  # VAB's
    report = (tmp_path / "report.html").read_text()
    assert "What is the price of the Spokewise Gel Bike Saddle?" in report and "success" in report
    shots = [s["screenshot"] for r in rows for s in r["steps"] if s["screenshot"]]
    assert shots and all((tmp_path / s).stat().st_size > 1000 for s in shots)
    for row in rows:  # where each episode's time went, its parts adding up to no more than the whole
        spent = row["timings_ms"]
        assert set(spent) == {"reset", "policy", "screenshots", "steps", "close", "total"}
        parts = sum(spent.values()) - spent["total"]
        assert all(v >= 0 for v in spent.values()) and parts <= spent["total"] + 0.05 * 5  # each rounded to 0.1
        assert {"close", "reset", "sign_in", "context", "start_page", "observe"} <= set(row["reset"]["timings_ms"])
        assert sum(row["reset"]["timings_ms"].values()) <= spent["reset"] + 1
        assert "evaluate" in row["steps"][-1]["timings_ms"]
    # The admin task changed a price: the next episode that needs the store finds it reset.
    assert store.is_dirty("shopping", 0)


@pytest.mark.slow  # a whole random run over the smoke set (~10 s)
def test_random_policy_scores_near_zero(store, tmp_path):
    summary = webrl_eval(store, tmp_path, "random:3", max_steps=8)
    assert summary.success_rate["Average"].mean <= 40.0


@pytest.mark.slow  # two eval runs in subprocesses (~15 s)
def test_resume_skips_finished_episodes(store, tmp_path):
    webrl_eval(store, tmp_path, "oracle")
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    (tmp_path / "episodes.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:30])  # a crash mid-write
    webrl_eval(store, tmp_path, "oracle", resume=True)
    rows = [
        json.loads(line)
        for line in (tmp_path / "episodes.jsonl").read_text().splitlines()
        if line.startswith("{") and line.endswith("}")
    ]
    assert sorted(r["task_id"] for r in rows) == [0, 1, 2, 3, 4]
    with pytest.raises(UsageError, match="--resume"):
        webrl_eval(store, tmp_path, "oracle")  # an existing run is never overwritten
    # nor continued with another policy or other settings: its score would blend two runs
    with pytest.raises(
        UsageError,
        match=r"other settings than the run's \(policy: 'oracle' -> 'random:1'; "
        r"max_steps: 30 -> 8\)",
    ):
        webrl_eval(store, tmp_path, "random:1", max_steps=8, resume=True)
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 5  # nothing was added


def test_evaluator_errors_enter_the_rate_as_the_mode_says():
    rows = [
        EpisodeRecord(task_id=0, sites=["shopping"], status="done", score=1.0),
        EpisodeRecord(
            task_id=1,
            sites=["shopping"],
            status="error",
            eval=EpisodeEval(
                mode="vab",
                details=[
                    {"type": "warning", "text": "w"},
                    {"type": "error", "field": "eval.url_note", "error": "url_note 'X' is not supported"},
                ],
            ),
        ),
    ]
    for mode, rate, episodes, counts_as in (
        ("webarena", 100.0, 1, "left out"),
        ("vab", 50.0, 2, "failure"),
        ("browsergym", 100.0, 1, "left out"),
    ):
        summary = summarize(rows, EvalSettings(tasks="x", out=Path(), mode=mode), "oracle", 2)
        assert summary.success_rate["OSS"] == SuccessRate(mean=rate, std=0.0, episodes=episodes), mode
        assert summary.model_dump()["evaluator_errors"] == [
            {
                "task_id": 1,
                "repeat": 0,
                "field": "eval.url_note",
                "error": "url_note 'X' is not supported",
                "counts_as": counts_as,
            }
        ]


@pytest.mark.slow  # two eval runs (~11 s)
def test_a_task_its_mode_rejects_counts_as_that_harness_counts_it(store, tmp_path):
    # the oracle answers both tasks right, but the second's must_include is a bare string, which
    # the webarena and vab evaluators reject: WebArena's run.py leaves it out of the average, VAB's score.py
    # counts it as a failure; either way it is reported with its field
    smoke = load_tasks(SMOKE)
    config = smoke[3].to_config()
    bad = Task.model_validate({**config, "eval": {**config["eval"], "reference_answers": {"must_include": "19"}}})
    for mode, rate, episodes in (("webarena", 100.0, 1), ("vab", 50.0, 2)):
        settings = EvalSettings(tasks=str(SMOKE), policy="oracle", out=tmp_path / mode, mode=mode)
        summary = asyncio.run(run_eval(settings, [smoke[0], bad], LocalExecutor(store, make_policy("oracle"))))
        assert summary.success_rate["Average"] == SuccessRate(mean=rate, std=0.0, episodes=episodes), mode
        assert summary.episodes.model_dump() == {"planned": 2, "done": 1, "error": 1, "missing": 0, "requeued": 0}
        [error] = summary.evaluator_errors
        assert (error.task_id, error.field) == (3, "eval.reference_answers.must_include")
        assert error.counts_as == {"webarena": "left out", "vab": "failure"}[mode]


def test_parallel_needs_instances(store, tmp_path):
    with pytest.raises(UsageError, match="--instances 2"):
        webrl_eval(store, tmp_path, "oracle", parallel=2)


def test_cli_rejects_bad_policy_and_mode(tmp_path):
    env = dict(os.environ, WEBRL_STATE_DIR=str(tmp_path))
    bad_policy = subprocess.run(
        [sys.executable, "-m", "webrl", "eval", "--tasks", str(SMOKE), "--policy", "gpt"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad_policy.returncode == 2 and "valid forms" in bad_policy.stderr and "random[:SEED]" in bad_policy.stderr
    assert bad_policy.stderr.count("\n") == 1, bad_policy.stderr  # one line
    bad_mode = subprocess.run(
        [sys.executable, "-m", "webrl", "eval", "--tasks", str(SMOKE), "--mode", "x"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert bad_mode.returncode == 2 and "--mode" in bad_mode.stderr


class SiteDown:
    """The real backend, except that the shop's URL points at a closed port: a site that went down
    (fault injection; everything else is real)."""

    def __init__(self, backend, dead_port: int):
        self.backend, self.dead = backend, f"http://127.0.0.1:{dead_port}"

    def urls(self, instance):
        return {**self.backend.urls(instance), "shopping": self.dead}

    def __getattr__(self, name):
        return getattr(self.backend, name)


class BrokenPolicy:
    name = "broken"

    def act(self, inputs, sampling):
        raise ConnectionError("model server unreachable")


def episode(env_backend, tmp_path, policy, crash_browser=False):
    from webrl.runs.episodes import Browsers, open_env, run_episode

    async def go():
        settings = EvalSettings(tasks="smoke", out=tmp_path)
        async with Browsers() as browsers, open_env(browsers, env_backend, 0, settings) as env:
            if crash_browser:
                await (await browsers.get()).close()  # the shared browser is gone before the episode
            return await run_episode(env, browsers, policy, load_tasks(SMOKE)[0], 0, settings)

    return asyncio.run(go())


def test_site_down_is_env_error_not_failure(store, tmp_path):
    from webrl.netutil import free_port

    row = episode(SiteDown(store, free_port()), tmp_path, make_policy("oracle"))
    # the sign-in's request or the page load finds nobody listening
    assert row.status == "env_error" and row.score is None
    assert "ECONNREFUSED" in row.error or "ERR_CONNECTION_REFUSED" in row.error, row.error


def test_crashed_browser_is_relaunched(store, tmp_path):
    row = episode(store, tmp_path, make_policy("oracle"), crash_browser=True)
    assert row.status == "done" and row.score == 1.0


def test_policy_failure_is_recorded(store, tmp_path):
    row = episode(store, tmp_path, BrokenPolicy())
    assert row.status == "policy_error" and "model server unreachable" in row.error


@pytest.mark.slow  # an eval interrupted and resumed in subprocesses (~30 s)
def test_ctrl_c_keeps_finished_episodes_and_resume_finishes(store, tmp_path):
    """Interrupted after its first episode, with 14 to go (seconds of work): the run always has episodes left."""
    import signal
    import time

    env = dict(os.environ, WEBRL_STATE_DIR=str(store.config.state_dir), COLUMNS="200")
    command = oracle_eval_command(tmp_path)
    # as from a terminal: a shell starts a background job (a CI script run with &) with SIGINT ignored, and the
    # eval would inherit that and, rightly, not stop
    proc = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    episodes = tmp_path / "episodes.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (episodes.exists() and episodes.read_text().count("\n") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out[-2000:] + err
    assert "--resume" in out and (tmp_path / "summary.json").exists() and (tmp_path / "report.html").exists()
    recorded = episodes.read_text().count("\n")
    assert 1 <= recorded < 15
    resumed = subprocess.run([*command, "--resume"], env=env, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    rows = [json.loads(line) for line in episodes.read_text().splitlines()]
    assert sorted((r["task_id"], r["repeat"]) for r in rows) == [(t, r) for t in range(5) for r in range(3)]
    assert json.loads((tmp_path / "summary.json").read_text())["success_rate"]["Average"]["mean"] == 100.0


@pytest.mark.slow  # a private site server started twice and killed once, an eval in subprocesses (~40 s)
def test_a_run_whose_sites_die_is_reported_incomplete_and_resume_finishes_it(tmp_path, make_config):
    """The site server is killed after the second episode of 15: the run stops after two environment faults in
    a row instead of failing every remaining episode, says how much of the plan is judged, and exits 3; once
    the sites are up again, --resume runs the faulted and the missing episodes and ends complete."""
    import signal
    import time

    from webrl.sites.embedded.backend import EmbeddedBackend

    backend = EmbeddedBackend(make_config(tmp_path / "state", sites=["shopping", "shopping_admin"]))
    backend.up()
    out = tmp_path / "run"
    env = dict(os.environ, WEBRL_STATE_DIR=str(backend.config.state_dir), COLUMNS="200")
    command = oracle_eval_command(out)
    try:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        episodes = out / "episodes.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (episodes.exists() and episodes.read_text().count("\n") >= 2):
            time.sleep(0.05)
        os.kill(json.loads(backend.paths.server.read_text())["pid"], signal.SIGKILL)
        started = time.monotonic()
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 3, err
        assert time.monotonic() - started < 60
        counts = json.loads((out / "summary.json").read_text())["episodes"]
        assert counts["planned"] == 15 and counts["env_error"] == 2 and counts["missing"] > 0
        assert counts["done"] + counts["env_error"] + counts["missing"] == 15
        assert f"incomplete: {counts['done']} of 15 planned episodes judged, 2 ended in an environment fault" in err
        assert "--resume" in err
        backend.up()
        resumed = subprocess.run([*command, "--resume"], env=env, capture_output=True, text=True, timeout=180)
        assert resumed.returncode == 0, resumed.stderr
        summary = json.loads((out / "summary.json").read_text())
        assert summary["episodes"] == {"planned": 15, "done": 15, "missing": 0, "requeued": 0}
        assert summary["success_rate"]["Average"]["mean"] == 100.0
    finally:
        backend.down()


def test_an_instance_in_use_refuses_a_second_run_and_a_reset(store, tmp_path):
    """A run holds its instances: a second run on one of them, or `webrl reset` of it, is refused with who holds
    it (a reset in the middle of an episode would change the pages under it and score it wrongly)."""
    from webrl.sites.leases import instance_lease

    state = store.config.state_dir
    with instance_lease(state, 0, "a run into runs/first"):
        with pytest.raises(UsageError, match=r"site instance 0 is in use by pid \d+ \(a run into runs/first\)"):
            webrl_eval(store, tmp_path / "second", "oracle")
        assert not (tmp_path / "second").exists()  # refused before anything is written
        env = dict(os.environ, WEBRL_STATE_DIR=str(state))
        reset = subprocess.run(
            [sys.executable, "-m", "webrl", "reset", "shopping"], env=env, capture_output=True, text=True, timeout=60
        )
        assert reset.returncode == 2 and "site instance 0 is in use by pid" in reset.stderr, reset.stderr
        forced = subprocess.run(
            [sys.executable, "-m", "webrl", "reset", "shopping", "--force"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert forced.returncode == 0, forced.stderr
    summary = webrl_eval(store, tmp_path / "after", "oracle")  # released when the holder is done
    assert summary.episodes.count("done") == summary.episodes.planned


class ResettingOracle:
    """The oracle, but the task's sites are reset under it (as `webrl reset --force` would) before its first move."""

    name = "oracle"

    def __init__(self, backend):
        self.backend, self.oracle, self.resets = backend, make_policy("oracle"), 0

    def act(self, inputs, sampling):
        if not inputs[0].history:
            self.backend.reset(inputs[0].task.sites, 0)
            self.resets += 1
        return self.oracle.act(inputs, sampling)


def test_a_site_reset_during_an_episode_makes_it_an_env_error(store, tmp_path):
    """The episode's own moves did not make the state the evaluator would judge: not a score (each try is reset
    under it, so the retry faults too)."""
    policy = ResettingOracle(store)
    row = episode(store, tmp_path, policy)
    assert row.status == "env_error" and row.score is None, row
    assert "was reset during its episode" in row.error and policy.resets == 2  # the episode and its retry
    assert episode(store, tmp_path / "clean", make_policy("oracle")).status == "done"
