"""Task families are plug-ins: a third family is one module and one entry point. Installed here as a package would
install it (a module and a dist-info with its entry point on sys.path), it names its own task set, starts its
episodes on a real site page in a real browser, ends them from the page, and adds its section to the summary,
with no change to webrl's generic code."""

from __future__ import annotations

import asyncio
import json
import re
import textwrap

import pytest
from cli_support import webrl

from webrl.policy.base import Response
from webrl.runs.eval import EvalSettings, run_eval
from webrl.runs.executor import LocalExecutor
from webrl.sites.task_sets import resolve_task_set
from webrl.tasks import family as registry

ECHO_MODULE = '''
from webrl.tasks.family import TaskFamily
from webrl.tasks.load import NamedTaskSets
from webrl.tasks.model import Task


def load(name, cache_dir, seed):
    return [Task.model_validate({"task_id": f"echo-{i}", "sites": ["shopping"], "start_url": "__SHOPPING__",
                                 "require_login": False, "intent": "Press the echo button",
                                 "eval": {"eval_types": []}}) for i in range(2)]


class EchoFamily(TaskFamily):
    """Its episodes: the shop's home page with an echo button the family adds; pressing it ends the episode."""

    name = "echo"
    task_sets = (NamedTaskSets(names="echo:test", owns=lambda name: name == "echo:test", load=load),)

    def owns(self, task):
        return str(task.task_id).startswith("echo-")

    async def start(self, page, task, restart, options):
        await page.evaluate("""() => {
            const button = document.createElement('button');
            button.textContent = 'Echo ' + document.title.length;
            button.onclick = () => { window.echoed = true; };
            document.body.prepend(button);
        }""")
        return True

    async def ended(self, page):
        return await page.evaluate("() => window.echoed === true")

    def summary(self, records, settings):
        mine = [r for r in records if self.owns(r)]
        return {"echo": {"episodes": len(mine), "ended_by_the_page": sum(r.truncated_by is None for r in mine)}}
'''


@pytest.fixture
def echo_family(tmp_path, monkeypatch):
    (tmp_path / "echo_family.py").write_text(textwrap.dedent(ECHO_MODULE))
    info = tmp_path / "echo_family-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-family\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[webrl.task_families]\necho = echo_family:EchoFamily\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.families.cache_clear()
    yield
    registry.families.cache_clear()


class PressesEcho:
    """Clicks the element whose text starts with "Echo"."""

    name = "presses-echo"

    def act(self, inputs, sampling):
        answers = []
        for item in inputs:
            element = re.search(r'<button id="(\d+)"[^>]*Echo', item.observation.text)[1]
            answers.append(Response(f'do(action="Click", element="{element}")'))
        return answers


def test_a_family_plugged_in_by_an_entry_point_runs_its_episodes(echo_family, site_servers, tmp_path):
    assert {f.name for f in registry.families()} == {"echo", "miniwob", "verified", "webarena"}
    tasks = resolve_task_set("echo:test", tmp_path)
    assert [registry.family_of(t).name for t in tasks] == ["echo", "echo"]
    assert registry.family_of_set("embedded:test").name == "webarena"  # the others are untouched
    shop = site_servers("shopping")
    settings = EvalSettings(tasks="echo:test", policy="presses-echo", out=tmp_path / "run", screenshots=False)
    summary = asyncio.run(run_eval(settings, tasks, LocalExecutor(shop, PressesEcho())))
    # one step each: the family's button was on the page, and the page ended the episode when it was pressed
    assert summary.section("echo") == {"episodes": 2, "ended_by_the_page": 2}
    assert summary.success_rate["OSS"].mean == 100.0 and summary.section("miniwob") is None


PRESS_PACKAGE = '''
from pydantic import BaseModel

from webrl.tasks.family import TaskFamily
from webrl.tasks.load import NamedTaskSets
from webrl.tasks.model import Task


class Button(BaseModel):
    label: str


def load(name, cache_dir, seed):
    return [Task.model_validate({"task_id": f"press-{i}", "sites": ["shopping"], "start_url": "__SHOPPING__",
                                 "require_login": False, "intent": f"Press Go {i}",
                                 "eval": {"eval_types": ["pressed"]}, "family_data": {"press": {"label": f"Go {i}"}},
                                 "cheat": [f'do(action="Click", element="{{Go {i}}}")']}) for i in range(2)]


async def pressed(task, answer, page, **_):
    """This family's own eval type: the button was pressed."""
    done = await page.evaluate("() => window.pressed === true")
    return {"type": "pressed", "score": 1.0 if done else 0.0}


class PressFamily(TaskFamily):
    name = "press"
    task_sets = (NamedTaskSets(names="press", owns=lambda name: name == "press", load=load),)
    evaluators = {"pressed": pressed}
    data_model = Button
    success_columns = ("Pressed",)

    def owns(self, task):
        return self.data(task) is not None

    def success_column(self, record):
        return "Pressed"

    async def start(self, page, task, restart, options):
        await page.evaluate("""label => {
            const button = document.createElement('button');
            button.textContent = label;
            button.onclick = () => { window.pressed = true; };
            document.body.prepend(button);
        }""", self.data(task).label)
        return True

    async def ended(self, page):
        return await page.evaluate("() => window.pressed === true")
'''


def test_a_family_from_a_package_of_its_own_brings_its_evaluator_and_column(cli_env, tmp_path):
    """A third family, as another distribution ships it (a package and a dist-info with its entry point), with its
    own tasks, family data, eval type and report column: `webrl eval` runs it with no other file changed."""
    (tmp_path / "press_family").mkdir()
    (tmp_path / "press_family" / "__init__.py").write_text(textwrap.dedent(PRESS_PACKAGE))
    info = tmp_path / "press_family-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: press-family\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[webrl.task_families]\npress = press_family:PressFamily\n")
    env = {**cli_env, "PYTHONPATH": str(tmp_path)}
    try:
        assert webrl(env, "up", "--sites", "shopping").returncode == 0
        result = webrl(env, "eval", "--tasks", "press", "--out", str(tmp_path / "run"), timeout=180)
        assert result.returncode == 0, result.stderr
    finally:
        webrl(env, "down")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["success_rate"]["Pressed"]["mean"] == 100.0 and summary["success_rate"]["Average"]["mean"] == 100.0
    records = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert [r["press"] for r in records] == [{"label": "Go 0"}, {"label": "Go 1"}]  # at the top, as files hold it
    assert all(r["eval"]["details"] == [{"type": "pressed", "score": 1.0}] and len(r["steps"]) == 1 for r in records)
