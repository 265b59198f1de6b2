"""Eval blocks the original evaluators reject. Such a task loads (with a warning) and, when it is
evaluated, gets the outcome its mode's original harness gives it, at the point where that harness raises:
webarena and vab record an error naming the field (WebArena's run.py leaves the task out of its average, VAB's
score.py counts it as a failure); browsergym keeps webrl's normalisation where there is one. An empty
eval_types scores 1.0 everywhere (an empty product)."""

from __future__ import annotations

import pytest
from eval_support import ScriptedJudge, make_task, run

from webrl.evaluators import MODES, evaluate

W, V, B = "webarena", "vab", "browsergym"
E = "error"


class FakePage:
    """A finished episode's page for rules that read only its URL and content."""

    url = "http://shop.test/a"

    async def content(self) -> str:
        return "<p>the page</p>"


class Agreeing(ScriptedJudge):
    """Says yes to every question: 'same' to the unachievable-reason one, 'correct' to a fuzzy match."""

    def complete(self, messages: list[dict]) -> str:
        self.calls.append(messages)
        return "same" if "unachievable reason" in messages[-1]["content"] else "correct"


def task(**eval_block) -> dict:
    """An eval block (made into a task inside each test: building it is part of what is tested)."""
    return {"reference_url": "", "program_html": [], "string_note": "no such thing", **eval_block}


def strings(answers, **eval_block):
    return task(eval_types=["string_match"], reference_answers=answers, **eval_block)


def html(contents):
    return task(
        eval_types=["program_html"], program_html=[{"url": "last", "locator": "", "required_contents": contents}]
    )


# (eval block, answer, expected per mode: a score, or E with the field the error names)
CASES = [
    # must_include must be a list (WebArena-Lite task 81 has a bare string): the originals assert
    (
        strings({"must_include": "yjlou"}),
        "yjlou",
        {W: (E, "eval.reference_answers.must_include"), V: (E, "eval.reference_answers.must_include"), B: 1.0},
    ),
    (
        html({"must_include": "the page"}),
        None,
        {
            W: (E, "eval.program_html[0].required_contents.must_include"),
            V: (E, "eval.program_html[0].required_contents.must_include"),
            B: 1.0,
        },
    ),
    # ...so must fuzzy_match, unless it is the string "N/A"
    (
        strings({"fuzzy_match": "10h"}),
        "10 hours",
        {W: (E, "eval.reference_answers.fuzzy_match"), V: (E, "eval.reference_answers.fuzzy_match"), B: 1.0},
    ),
    # "N/A" without string_note: a KeyError once the unachievable-reason judge is reached, not before
    (
        strings({"fuzzy_match": "N/A"}, string_note=None),
        "it cannot be done",
        {W: (E, "eval.string_note"), V: (E, "eval.string_note"), B: 1.0},
    ),
    (strings({"fuzzy_match": "N/A"}, string_note=None), "N/A", {W: 1.0, V: 1.0, B: 1.0}),
    # string_match with null references, url_match with a null reference URL: errors everywhere
    (strings(None), "x", {m: (E, "eval.reference_answers") for m in MODES}),
    (task(eval_types=["url_match"], reference_url=None), None, {m: (E, "eval.reference_url") for m in MODES}),
    # url_note: only GOLD in PRED (and EXACT in vab); a null note is not a missing one
    (
        task(eval_types=["url_match"], reference_url="http://shop.test/a", url_note="SOMETIMES"),
        None,
        {m: (E, "eval.url_note") for m in MODES},
    ),
    (
        task(eval_types=["url_match"], reference_url="http://shop.test/a", url_note=None),
        None,
        {m: (E, "eval.url_note") for m in MODES},
    ),
    (
        task(eval_types=["url_match"], reference_url="http://shop.test/a", url_note="EXACT"),
        None,
        {W: (E, "eval.url_note"), V: 1.0, B: (E, "eval.url_note")},
    ),
    # a required_contents without a rule
    (html({}), None, {m: (E, "eval.program_html[0].required_contents") for m in MODES}),
    # an unknown eval type, and no eval type at all
    (
        task(eval_types=["string_match", "page_image_query"], reference_answers={"exact_match": "x"}),
        "x",
        {m: (E, "eval.eval_types") for m in MODES},
    ),
    (task(eval_types=[]), "x", {m: 1.0 for m in MODES}),
]


@pytest.mark.parametrize(("block", "answer", "expected"), CASES)
def test_outcome_per_mode(block, answer, expected):
    counts_as = {W: "left out", V: "failure", B: "left out"}
    for mode, want in expected.items():
        result = run(evaluate(make_task(block), answer, FakePage(), mode=mode, judge=Agreeing()))
        if isinstance(want, tuple):
            error = result.details[-1]
            assert (result.status, result.score, error["field"]) == ("error", None, want[1]), (mode, result.details)
            assert error["counts_as"] == counts_as[mode]
        else:
            assert (result.status, result.score) == ("scored", want), (mode, result.details)


def test_the_error_comes_where_the_original_raises():
    # the references are read in the file's order: the judge is asked about fuzzy_match before the bare
    # must_include fails the assert
    judge = ScriptedJudge("correct")
    result = run(evaluate(make_task(strings({"fuzzy_match": ["a"], "must_include": "b"})), "a", None, judge=judge))
    assert result.status == "error" and len(judge.calls) == 1
    # an unknown eval type fails the originals' router before any evaluator runs
    judge = ScriptedJudge("correct")
    block = task(eval_types=["string_match", "image_match"], reference_answers={"fuzzy_match": ["a"]})
    result = run(evaluate(make_task(block), "a", None, judge=judge))
    assert result.status == "error" and judge.calls == []
    # evaluators run in eval_types order: a url_match 0 first does not spare the string_match error after it
    block = task(
        eval_types=["url_match", "string_match"],
        reference_url="http://elsewhere.test",
        url_note="GOLD in PRED",
        reference_answers={"must_include": "x"},
    )
    result = run(evaluate(make_task(block), "x", FakePage()))
    assert result.status == "error" and [d["score"] for d in result.details if d["type"] == "url_match"] == [0.0]
