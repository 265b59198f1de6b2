"""The storefront's task templates (webrl.sites.shopping.tasks): their structure over the whole suite (the oracle
solves them in tests/tasks/test_suite.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from webrl.sites.shopping.tasks import TEMPLATES
from webrl.tasks.templates import eval_kind

KEYS = {t.key for t in TEMPLATES}


@pytest.fixture(scope="module")
def tasks(suite):
    return [t for t in suite if t.template in KEYS]


def test_templates_and_tasks(tasks):
    assert len(TEMPLATES) >= 15
    assert all(t.sites == ("shopping",) and t.key.startswith("shopping.") for t in TEMPLATES)
    made = Counter(t.template for t in tasks)
    assert set(made) == KEYS, KEYS - set(made)  # every template has instances
    assert len(tasks) >= 120
    eval_types = {kind for t in tasks for kind in t.eval.eval_types}
    assert {"string_match", "url_match", "program_html"} <= eval_types
    assert 1 <= len({t.template for t in tasks if eval_kind(t) == "N/A"}) <= 2
    fuzzy = {
        t.template for t in tasks if t.eval.reference_answers and isinstance(t.eval.reference_answers.fuzzy_match, list)
    }
    assert len(fuzzy) <= 1
    for task in tasks:
        assert task.cheat and task.cheat[-1].splitlines()[-1].startswith("exit(message="), task.task_id
        assert "__SHOPPING__" in task.start_url and task.require_login, task.task_id
        if eval_kind(task) == "N/A":
            assert task.cheat[-1] == 'exit(message="N/A")' and task.eval.string_note, task.task_id
    intents = [t.intent for t in tasks]
    assert len(intents) == len(set(intents))  # no instance asked twice
    assert {t.tier for t in tasks} == {"easy", "medium", "hard"}
    # navigation is part of most tasks: they start on the home page, not on the answer
    assert sum(t.start_url == "__SHOPPING__/" for t in tasks) >= len(tasks) / 2
    # state changes are checked through the site's pages and WebArena's shopping helpers
    locators = {p.locator.split("(")[0] for t in tasks for p in t.eval.program_html}
    assert {"func:shopping_get_sku_latest_review_author", "func:shopping_get_sku_latest_review_rating"} <= locators
    assert any(p.url == "func:shopping_get_latest_order_url()" for t in tasks for p in t.eval.program_html)


def test_templates_are_deterministic(tmp_path):
    import sqlite3
    from contextlib import closing

    from webrl.sites.embedded.registry import site_spec
    from webrl.tasks.templates import Data

    path = site_spec("shopping").database.build_snapshot(tmp_path, 0)
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        data = Data({"store": conn})
        for template in TEMPLATES:
            assert template.instances(data) == template.instances(data), template.key
