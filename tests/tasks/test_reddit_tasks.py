"""The forum's task templates (webrl.sites.reddit.tasks), the forum's own and those with the forge: their
structure over the whole suite (the oracle solves them in tests/tasks/test_suite.py)."""

from __future__ import annotations

from collections import Counter

import pytest

from webrl.sites.reddit.tasks import TEMPLATES
from webrl.tasks.templates import eval_kind

KEYS = {t.key for t in TEMPLATES}


@pytest.fixture(scope="module")
def tasks(suite):
    return [t for t in suite if t.template in KEYS]


def test_templates_and_tasks(tasks):
    forum_only = [t for t in TEMPLATES if t.sites == ("reddit",)]
    multi = [t for t in TEMPLATES if t.sites != ("reddit",)]
    assert len(forum_only) >= 15
    assert 2 <= len(multi) <= 3 and all(set(t.sites) == {"gitlab", "reddit"} for t in multi)
    made = Counter(t.template for t in tasks)
    assert set(made) == KEYS, KEYS - set(made)  # every template has instances
    assert sum(1 for t in tasks if t.sites == ["reddit"]) >= 120
    eval_types = {kind for t in tasks for kind in t.eval.eval_types}
    assert {"string_match", "url_match", "program_html"} <= eval_types
    assert any(eval_kind(t) == "N/A" for t in tasks)
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
