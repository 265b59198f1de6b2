"""The forge's task templates (webrl.sites.gitlab.tasks): their structure over the whole suite (the oracle solves
them in tests/tasks/test_suite.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from webrl.sites.gitlab.tasks import TEMPLATES
from webrl.tasks.templates import eval_kind

KEYS = {t.key for t in TEMPLATES}


@pytest.fixture(scope="module")
def tasks(suite):
    return [t for t in suite if t.template in KEYS]


def test_templates_and_tasks(tasks):
    assert len(TEMPLATES) >= 15 and all(t.sites == ("gitlab",) for t in TEMPLATES)
    made = Counter(t.template for t in tasks)
    assert set(made) == KEYS, KEYS - set(made)  # every template has instances
    assert len(tasks) >= 120
    eval_types = {kind for t in tasks for kind in t.eval.eval_types}
    assert {"string_match", "url_match", "program_html"} <= eval_types
    locators = {p.locator.split("(")[0] for t in tasks for p in t.eval.program_html}
    assert "func:gitlab_get_project_memeber_role" in locators
    assert 1 <= len({t.template for t in tasks if eval_kind(t) == "N/A"}) <= 2
    fuzzy = {
        t.template for t in tasks if t.eval.reference_answers and isinstance(t.eval.reference_answers.fuzzy_match, list)
    }
    assert len(fuzzy) <= 1
    for task in tasks:
        assert task.cheat and task.cheat[-1].splitlines()[-1].startswith("exit(message="), task.task_id
        if eval_kind(task) == "N/A":
            assert task.cheat == ['exit(message="N/A")'] and task.eval.string_note, task.task_id
    intents = [t.intent for t in tasks]
    assert len(intents) == len(set(intents))  # no instance asked twice
    assert {t.tier for t in tasks} == {"easy", "medium", "hard"}
    # a realistic start (a list page, the dashboard or a project's overview) for most templates
    assert all("/-/issues/" not in t.start_url and "/-/merge_requests/" not in t.start_url for t in tasks)
