"""The admin panel's task templates (webrl.sites.shopping_admin.tasks): their structure over the whole suite (the
oracle solves them in tests/tasks/test_suite.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from webrl.sites.shopping_admin.tasks import TEMPLATES
from webrl.tasks.templates import eval_kind

KEYS = {t.key for t in TEMPLATES}


@pytest.fixture(scope="module")
def tasks(suite):
    return [t for t in suite if t.template in KEYS]


def test_templates_and_tasks(tasks):
    assert len(TEMPLATES) >= 15
    assert all(t.sites == ("shopping_admin",) for t in TEMPLATES)
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
        if eval_kind(task) == "N/A":
            assert task.cheat[-1] == 'exit(message="N/A")' and task.eval.string_note, task.task_id
    intents = [t.intent for t in tasks]
    assert len(intents) == len(set(intents))  # no instance asked twice
    assert {t.tier for t in tasks} == {"easy", "medium", "hard"}
    # navigation is part of most tasks: they start on the dashboard or on a list page, not on the answer
    assert sum(t.start_url.rstrip("/") == "__SHOPPING_ADMIN__" for t in tasks) >= len(tasks) / 2
