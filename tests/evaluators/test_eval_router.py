"""evaluate(): one evaluator per eval_type in list order, scores multiplied; how unjudged and
error parts combine; placeholders; BrowserGym's open-tab safeguard; and every real task config of both
files run through the string/url evaluators in every mode without an error."""

from __future__ import annotations

import pytest
from eval_support import ScriptedJudge, make_task, run

from webrl.evaluators import MODES, evaluate


class FakePage:
    def __init__(self, url):
        self.url = url


H = "http://shop:7770"


def combo(answers: dict, reference_url: str, types=("string_match", "url_match")):
    return make_task(
        {
            "eval_types": list(types),
            "reference_answers": answers,
            "reference_url": reference_url,
            "program_html": [],
            "url_note": "GOLD in PRED",
        }
    )


@pytest.mark.parametrize(
    ("answers", "url", "judge", "expected"),
    [
        ({"exact_match": "yes"}, f"{H}/a", None, (1.0, "scored")),
        ({"exact_match": "no"}, f"{H}/a", None, (0.0, "scored")),  # string 0 x url 1
        ({"exact_match": "yes"}, f"{H}/b", None, (0.0, "scored")),  # string 1 x url 0
        ({"fuzzy_match": ["yes"]}, f"{H}/a", None, (None, "unjudged")),  # unjudged x 1
        ({"fuzzy_match": ["yes"]}, f"{H}/b", None, (0.0, "scored")),  # unjudged x 0: 0 whatever the judge says
        ({"fuzzy_match": ["yes"]}, f"{H}/a", ScriptedJudge("correct"), (1.0, "scored")),
        ({"fuzzy_match": ["yes"]}, f"{H}/b", ScriptedJudge("gibberish"), (None, "error")),  # an error wins
    ],
)
def test_combination(answers, url, judge, expected):
    result = run(evaluate(combo(answers, url), "yes", FakePage(f"{H}/a"), judge=judge))
    assert (result.score, result.status) == expected
    assert result.mode == "webarena"


def test_placeholders_modes_and_missing_page():
    task = combo({"exact_match": "yes"}, "__SHOPPING__/a")
    assert run(evaluate(task, "yes", FakePage(f"{H}/a"), urls={"shopping": H})).score == 1.0
    assert run(evaluate(task, "yes", FakePage(f"{H}/a"))).score == 0.0  # the literal placeholder never matches
    with pytest.raises(ValueError, match="unknown evaluation mode"):
        run(evaluate(task, "yes", None, mode="vwa"))
    result = run(evaluate(task, "yes", None))
    assert result.status == "error" and "needs the page" in result.details[-1]["error"]


def test_warnings_are_in_the_details(lite_tasks):
    task = next(t for t in lite_tasks if t.task_id == 94)
    result = run(evaluate(task, "3", None))
    assert result.details[0]["type"] == "warning" and "|OR|" in result.details[0]["text"]


def test_browsergym_scores_0_with_a_tab_outside_the_sites(async_browser, static_site):
    static_site.pages["/ok"] = "<p>ok</p>"
    task = combo({"exact_match": "yes"}, f"{static_site.base}/ok")
    urls = {"shopping": static_site.base}

    async def scenario(page):
        await page.goto(f"{static_site.base}/ok")
        before = {m: (await evaluate(task, "yes", page, mode=m, urls=urls)).score for m in MODES}
        # BrowserGym compares host:port only: a tab without one (data:, about:blank) passes...
        other = await page.context.new_page()
        await other.goto("data:text/html,<p>elsewhere</p>")
        blank = {m: (await evaluate(task, "yes", page, mode=m, urls=urls)).score for m in MODES}
        # ...one on another host does not (the same server, named otherwise)
        await other.goto(static_site.base.replace("127.0.0.1", "localhost") + "/ok")
        after = {m: (await evaluate(task, "yes", page, mode=m, urls=urls)).score for m in MODES}
        return before, blank, after

    before, blank, after = async_browser.run(scenario)
    assert before == blank == {"webarena": 1.0, "vab": 1.0, "browsergym": 1.0}
    assert after == {"webarena": 1.0, "vab": 1.0, "browsergym": 0.0}


def test_every_real_config_evaluates(lite_tasks):
    """All string/url configs of both task files, in every mode, give a score or 'unjudged' (no judge) - never an
    error, but for the one the originals reject: Lite task 81's bare-string must_include, in webarena and vab
    (program_html needs live sites; its configs are covered by test_tasks' loading checks)."""
    from webrl.sites.task_sets import resolve_task_set

    urls = {
        s: f"http://{s}.test:1000"
        for s in ("shopping", "shopping_admin", "reddit", "gitlab", "map", "wikipedia", "homepage")
    }
    statuses, errors = set(), set()
    for name, tasks in (("lite", lite_tasks), ("full", resolve_task_set("webarena", "/nonexistent"))):
        for task in tasks:
            if "program_html" in task.eval.eval_types:
                continue
            first = (task.reference_urls or ["__SHOPPING__/"])[0]
            for mode in MODES:
                result = run(
                    evaluate(
                        task, "N/A", FakePage(first.replace("__SHOPPING__", urls["shopping"])), mode=mode, urls=urls
                    )
                )
                statuses.add(result.status)
                if result.status == "error":
                    errors.add((name, task.task_id, mode, result.details[-1]["field"]))
    assert statuses == {"scored", "unjudged", "error"}
    assert errors == {("lite", 81, m, "eval.reference_answers.must_include") for m in ("webarena", "vab")}
