"""The run report and the console table fit the run's task family: a MiniWoB++ run made by `webrl eval` shows its
environments (no WebArena site columns, no "Other"), a WebArena-format run WebRL's site table; both show their
settings as YAML. A training run's evaluation adds the demonstrated / new environments split."""

from __future__ import annotations

import asyncio
import json
import os
import re
from html import unescape
from pathlib import Path

import pytest
import yaml
from cli_support import webrl

from webrl.families.miniwob import MiniwobFamily
from webrl.families.webarena import SITE_COLUMNS
from webrl.policy.factory import make_policy
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.runs.train_report import write_train_report
from webrl.sites.task_sets import resolve_task_set
from webrl.tasks.load import load_tasks
from webrl.train.metrics import phase_metrics
from webrl.train.settings import RunSettings

ENVS = ("click-button", "enter-text", "click-test")
SMOKE = Path(__file__).parents[2] / "sites" / "embedded" / "tasks" / "smoke.json"


def text_of(html: str) -> str:
    """The report's visible text, one cell per line."""
    return unescape(re.sub(r"<[^>]+>", "\n", html))


def settings_block(html: str) -> dict:
    """The settings report.html shows, read back as YAML."""
    return yaml.safe_load(unescape(re.search(r'<pre class="settings">(.*?)</pre>', html, re.S)[1]))


@pytest.fixture(scope="module")
def miniwob_run(site_servers, tmp_path_factory):
    """`webrl eval` of the oracle over the first test seed of three MiniWoB++ environments: (stdout, run folder)."""
    backend = site_servers("miniwob")
    out = tmp_path_factory.mktemp("miniwob") / "run"
    env = dict(os.environ, WEBRL_STATE_DIR=str(backend.config.state_dir), COLUMNS="200")
    tasks = f"miniwob:{','.join(ENVS)}:test"
    result = webrl(env, "eval", "--tasks", tasks, "--limit", "3", "--policy", "oracle", "--out", str(out))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout, out


def test_a_miniwob_run_shows_its_environments_not_site_columns(miniwob_run):
    stdout, out = miniwob_run
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["success_rate"]) == {"Average"}  # no site column, no "Other" repeating the average
    assert set(summary["miniwob"]["environments"]) == set(ENVS)
    assert "episodes: 3 planned, 3 done  ·  report:" in stdout  # the counts as words, not a dict
    for shown in (stdout, text_of((out / "report.html").read_text())):
        assert "100.0% of 3 judged episodes succeeded" in shown
        assert not any(re.search(rf"\b{column}\b", shown) for column in [*SITE_COLUMNS, "Other"]), shown
        for env in ENVS:  # a row per environment: its episodes and success
            assert re.search(rf"{env}\s+1\s+100\.0", shown), (env, shown)
        assert re.search(r"mean over environments\s+100\.0", shown)
    html = (out / "report.html").read_text()
    assert settings_block(html) == summary["settings"] and '"miniwob_time_limit_s"' not in html  # YAML, not JSON


def test_a_webarena_run_shows_the_site_table(site_servers, tmp_path):
    backend = site_servers("shopping", "shopping_admin")
    backend.reset()
    env = dict(os.environ, WEBRL_STATE_DIR=str(backend.config.state_dir), COLUMNS="200")
    result = webrl(env, "eval", "--tasks", str(SMOKE), "--limit", "2", "--policy", "oracle", "--out", str(tmp_path))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    html = (tmp_path / "report.html").read_text()
    for shown in (result.stdout, text_of(html)):
        assert "success rate (%)" in shown and "MiniWoB++" not in shown
        assert re.search(r"Reddit\s+GitLab\s+CMS\s+Map\s+OSS\s+Other\s+Average", shown), shown
        assert re.search(r"(–\s+){4}100\.0 ± 0\.0\s+–\s+100\.0 ± 0\.0", shown), shown  # OSS and Average
    assert settings_block(html)["tasks"] == str(SMOKE)


def test_a_mixed_training_evaluation_shows_each_family_and_the_demonstrated_split(site_servers, tmp_path):
    """A run of MiniWoB++ and WebArena-format tasks, evaluated as a training run evaluates (its groups: the
    environments the SFT was shown): each family's table, the split in the report, summary.json and the phase's
    metrics, and a training report with only the columns measured."""
    backend = site_servers("shopping", "miniwob")
    tasks = [*resolve_task_set(f"miniwob:{','.join(ENVS[:2])}:test", tmp_path / "state")[:2], load_tasks(SMOKE)[0]]
    demonstrated = resolve_task_set(f"miniwob:{ENVS[0]}:train", tmp_path / "state")
    miniwob = MiniwobFamily()
    settings = EvalSettings(tasks="mixed", policy="oracle", out=tmp_path / "phases/0/eval", screenshots=False)
    executor = LocalExecutor(backend, make_policy("oracle"))
    groups = lambda records: miniwob.groups(records, demonstrated)  # noqa: E731
    summary = asyncio.run(run_eval(settings, tasks, executor, groups=groups))
    assert summary.model_dump()["groups"] == {
        "demonstrated envs": {"mean": 100.0, "episodes": 1},
        "new envs": {"mean": 100.0, "episodes": 1},
    }
    assert set(summary.success_rate) == {"OSS", "Average"} and summary.success_rate["Average"].episodes == 3
    report = text_of((settings.out / "report.html").read_text())
    assert "success rate (%)" in report and "MiniWoB++ (episode timer" in report
    assert re.search(r"demonstrated envs\s+1\s+100\.0\s+new envs\s+1\s+100\.0", report), report
    metrics = phase_metrics(tmp_path / "phases/0", 0, "sft", "oracle", {"eval": 1.0}, groups)
    assert metrics.eval.environments == summary.groups
    write_train_report(tmp_path, RunSettings(), [metrics])
    train = (tmp_path / "report.html").read_text()
    header = re.search(r"<tr><th>phase</th>(.*?)<th>rollout success", train, re.S)[1]
    assert re.findall(r"<th>(.*?)</th>", header) == ["OSS", "Average", "demonstrated envs", "new envs"]
    assert yaml.safe_load(unescape(re.search(r"<pre>(.*?)</pre>", train, re.S)[1])) == RunSettings().model_dump(
        mode="json"
    )
    assert (tmp_path / "curve.png").stat().st_size > 1000
