"""Each site's task templates (webrl.sites.SITE.tasks): their structure over the whole suite, what every site's
share and then each site's own (the oracle solves them in tests/tasks/test_suite.py)."""

from __future__ import annotations

import importlib
import sqlite3
from contextlib import closing

import pytest

from webrl.sites.embedded.registry import site_spec
from webrl.tasks.templates import Data, eval_kind

TEMPLATES = {
    site: importlib.import_module(f"webrl.sites.{site}.tasks").TEMPLATES
    for site in ("gitlab", "map", "reddit", "shopping", "shopping_admin")
}


def tasks_of(suite, site: str) -> list:
    keys = {t.key for t in TEMPLATES[site]}
    return [t for t in suite if t.template in keys]


@pytest.mark.parametrize("site", TEMPLATES)
def test_templates_and_tasks(suite, site):
    templates, tasks = TEMPLATES[site], tasks_of(suite, site)
    assert sum(t.sites == (site,) for t in templates) >= 15
    keys = {t.key for t in templates}
    assert {t.template for t in tasks} == keys, keys - {t.template for t in tasks}  # every template has instances
    assert sum(t.sites == [site] for t in tasks) >= 120
    eval_types = {kind for t in tasks for kind in t.eval.eval_types}
    assert {"string_match", "url_match", "program_html"} <= eval_types
    assert 1 <= len({t.template for t in tasks if eval_kind(t) == "N/A"}) <= 2
    fuzzy = {
        t.template for t in tasks if t.eval.reference_answers and isinstance(t.eval.reference_answers.fuzzy_match, list)
    }
    assert len(fuzzy) <= 1  # few LLM-judged answers
    for task in tasks:
        assert task.cheat and task.cheat[-1].splitlines()[-1].startswith("exit(message="), task.task_id
        if eval_kind(task) == "N/A":
            assert task.cheat[-1] == 'exit(message="N/A")' and task.eval.string_note, task.task_id
    intents = [t.intent for t in tasks]
    assert len(intents) == len(set(intents))  # no instance asked twice
    assert {t.tier for t in tasks} == {"easy", "medium", "hard"}


def test_the_forges_templates(suite):
    tasks = tasks_of(suite, "gitlab")
    assert all(t.sites == ("gitlab",) for t in TEMPLATES["gitlab"])
    locators = {p.locator.split("(")[0] for t in tasks for p in t.eval.program_html}
    assert "func:gitlab_get_project_memeber_role" in locators
    assert all(t.cheat == ['exit(message="N/A")'] for t in tasks if eval_kind(t) == "N/A")
    # a realistic start (a list page, the dashboard or a project's overview) for most templates
    assert all("/-/issues/" not in t.start_url and "/-/merge_requests/" not in t.start_url for t in tasks)


def test_the_maps_templates(suite):
    tasks = tasks_of(suite, "map")
    assert all(t.sites == ("map",) for t in TEMPLATES["map"])
    for task in tasks:
        assert not task.require_login and task.storage_state is None, task.task_id  # as WebArena's map tasks
    assert sum(1 for t in tasks if t.start_url.rstrip("/") == "__MAP__") >= len(tasks) / 2


def test_the_forums_templates(suite):
    """The forum's own templates and those with the forge."""
    multi = [t for t in TEMPLATES["reddit"] if t.sites != ("reddit",)]
    assert 2 <= len(multi) <= 3 and all(set(t.sites) == {"gitlab", "reddit"} for t in multi)
    assert all(t.cheat == ['exit(message="N/A")'] for t in tasks_of(suite, "reddit") if eval_kind(t) == "N/A")


def test_the_admin_panels_templates(suite):
    tasks = tasks_of(suite, "shopping_admin")
    assert all(t.sites == ("shopping_admin",) for t in TEMPLATES["shopping_admin"])
    # navigation is part of most tasks: they start on the dashboard or on a list page, not on the answer
    assert sum(t.start_url.rstrip("/") == "__SHOPPING_ADMIN__" for t in tasks) >= len(tasks) / 2


def test_the_storefronts_templates(suite):
    tasks = tasks_of(suite, "shopping")
    assert all(t.sites == ("shopping",) and t.key.startswith("shopping.") for t in TEMPLATES["shopping"])
    for task in tasks:
        assert "__SHOPPING__" in task.start_url and task.require_login, task.task_id
    # navigation is part of most tasks: they start on the home page, not on the answer
    assert sum(t.start_url == "__SHOPPING__/" for t in tasks) >= len(tasks) / 2
    # state changes are checked through the site's pages and WebArena's shopping helpers
    locators = {p.locator.split("(")[0] for t in tasks for p in t.eval.program_html}
    assert {"func:shopping_get_sku_latest_review_author", "func:shopping_get_sku_latest_review_rating"} <= locators
    assert any(p.url == "func:shopping_get_latest_order_url()" for t in tasks for p in t.eval.program_html)


def test_the_storefronts_templates_are_deterministic(tmp_path):
    path = site_spec("shopping").database.build_snapshot(tmp_path, 0)
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        data = Data({"store": conn})
        for template in TEMPLATES["shopping"]:
            assert template.instances(data) == template.instances(data), template.key
