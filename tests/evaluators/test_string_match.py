"""string_match: every rule of WebArena's StringEvaluator and each difference of the vab and browsergym modes,
as tables of (reference_answers, answer) -> expected score per mode. None = unjudged (no judge given)."""

from __future__ import annotations

import pytest
from eval_support import ScriptedJudge, make_task, run

from webrl.evaluators import evaluate
from webrl.evaluators.string_match import clean_answer, must_include

W, V, B = "webarena", "vab", "browsergym"


def string_task(answers: dict, **eval_fields):
    return make_task(
        {
            "eval_types": ["string_match"],
            "reference_answers": answers,
            "reference_url": "",
            "program_html": [],
            "string_note": "",
            **eval_fields,
        }
    )


def score(answers: dict, answer, mode: str, judge=None, **eval_fields):
    return run(evaluate(string_task(answers, **eval_fields), answer, None, mode=mode, judge=judge))


RULES = [
    # --- clean_answer: strip (not in vab), one pair of quotes, lower-case; the answer is cleaned twice
    ({"exact_match": "Yes"}, "yes", {W: 1, V: 1, B: 1}),
    ({"exact_match": "Yes"}, "  yes \n", {W: 1, V: 0, B: 1}),
    ({"exact_match": "Yes"}, "'YES'", {W: 1, V: 1, B: 1}),
    ({"exact_match": "yes"}, "\"'yes'\"", {W: 1, V: 1, B: 1}),  # both pairs go: cleaned once, then again
    ({"exact_match": "yes"}, "'yes", {W: 0, V: 0, B: 0}),
    ({"exact_match": "N/A"}, "n/a", {W: 1, V: 1, B: 1}),
    # --- must_include: webarena/browsergym tokenise only a 1-char reference of a one-item list
    ({"must_include": ["0"]}, "$0.00", {W: 0, V: 0, B: 0}),  # web-arena-x/webarena#211
    ({"must_include": ["0"]}, "0 items", {W: 1, V: 1, B: 1}),
    ({"must_include": ["0", "1"]}, "10", {W: 1, V: 0, B: 1}),  # two items: substring in webarena
    ({"must_include": ["170"]}, "000000170", {W: 1, V: 0, B: 1}),  # visualwebarena#71
    ({"must_include": ["3"]}, "it was 65. then 3.", {W: 1, V: 1, B: 1}),
    ({"must_include": ["3"]}, "it was 3.5", {W: 0, V: 0, B: 0}),
    # sentence splitting decides the vab token (answers are lower-cased first): Punkt keeps '65.' whole before
    # 'then' (a number followed by a word seen capitalised elsewhere), but breaks after an ordinary word
    ({"must_include": ["65"]}, "it was 65. then 3.", {W: 1, V: 0, B: 1}),
    ({"must_include": ["65"]}, "it was 65.", {W: 1, V: 1, B: 1}),
    ({"must_include": ["red"]}, "it was red. then blue.", {W: 1, V: 1, B: 1}),
    # vab adds the parts of tokens containing '/'
    ({"must_include": ["month"]}, "$12.99/month", {W: 1, V: 1, B: 1}),
    ({"must_include": ["12.99"]}, "$12.99/month", {W: 1, V: 1, B: 1}),
    ({"must_include": ["Dr. Smith"]}, "it was dr. smith's", {W: 1, V: 1, B: 1}),  # multi-token: substring
    ({"must_include": ["a", "b"]}, "cab", {W: 1, V: 0, B: 1}),
    # |OR| in string_match: literal text in webarena/browsergym, alternatives in vab (WebArena 386 / Lite 94)
    ({"must_include": ["65 |OR| 3"]}, "65", {W: 0, V: 1, B: 0}),
    ({"must_include": ["65 |OR| 3"]}, "about 3 stars", {W: 0, V: 1, B: 0}),
    ({"must_include": ["65 |OR| 3"]}, "65 |OR| 3", {W: 1, V: 1, B: 1}),
    # all items must be there (AND)
    ({"must_include": ["red", "blue"]}, "red and green", {W: 0, V: 0, B: 0}),
    # --- fuzzy_match "N/A" (the string): exact N/A passes without a judge; otherwise the judge decides
    ({"fuzzy_match": "N/A"}, "N/A", {W: 1, V: 1, B: 1}),
    ({"fuzzy_match": "N/A"}, "it cannot be done", {W: None, V: None, B: None}),
    # ["N/A"] (a list) is an ordinary reference: always a judge call
    ({"fuzzy_match": ["N/A"]}, "N/A", {W: None, V: None, B: None}),
    ({"fuzzy_match": ["10h 33min"]}, "10 hours 33 minutes", {W: None, V: None, B: None}),
    # a 0 elsewhere decides without the judge
    ({"must_include": ["Acadia"], "fuzzy_match": ["10h 33min"]}, "Zion", {W: 0, V: 0, B: 0}),
    # --- VAB additions: must_exclude, one_of, required_values (ignored by webarena/browsergym)
    ({"must_exclude": ["no"]}, "yes", {W: 1, V: 1, B: 1}),
    ({"must_exclude": ["no"]}, "no", {W: 1, V: 0, B: 1}),
    ({"must_exclude": ["no"]}, "nothing", {W: 1, V: 1, B: 1}),  # token rule: 'no' is not a token of it
    ({"one_of": ["Pittsburgh", "New York"]}, "I went to new york", {W: 1, V: 1, B: 1}),
    ({"one_of": ["Pittsburgh", "New York"]}, "Boston", {W: 1, V: 0, B: 1}),
    ({"required_values": ["> 10"]}, "12", {W: 1, V: 1, B: 1}),
    ({"required_values": ["> 10"]}, "7", {W: 1, V: 0, B: 1}),
    ({"required_values": ["<= 1300 |OR| == 5"]}, "1,200", {W: 1, V: 1, B: 1}),
    ({"required_values": ["== 5"]}, "5.0", {W: 1, V: 0, B: 1}),  # VAB reads an int
    ({"required_values": ["== 5"]}, "five", {W: 1, V: 0, B: 1}),
]


@pytest.mark.parametrize(("answers", "answer", "expected"), RULES)
def test_rules_per_mode(answers, answer, expected):
    for mode, want in expected.items():
        result = score(answers, answer, mode)
        assert result.score == want, (mode, result.details)
        assert result.status == ("unjudged" if want is None else "scored")


def test_clean_answer_and_tokenize_flag():
    assert clean_answer("  'Hello'  ") == "hello"
    assert clean_answer("  'Hello'  ", "vab") == "  'hello'  "
    assert clean_answer("'") == ""  # one character is both the opening and the closing quote
    assert must_include("0", "$0.00", tokenize=False) == 1.0  # without the one-item flag: substring


def test_ignored_rules_are_recorded():
    result = score({"must_exclude": ["no"]}, "no", W)
    check = result.details[-1]["checks"][0]
    assert check["ignored"] is True and check["rule"] == "must_exclude"


def test_missing_answer():
    # webarena/vab: an empty answer; browsergym: the dummy "whatever"
    assert score({"exact_match": ""}, None, W).score == 1.0
    assert score({"exact_match": "whatever"}, None, B).score == 1.0
    assert score({"exact_match": "whatever"}, None, V).score == 0.0


# --- with a judge -------------------------------------------------------------------------------------------

JUDGED = [
    # (reference_answers, judge replies, expected score per mode, judge calls per mode)
    ({"fuzzy_match": ["10h 33min"]}, ["Correct."], {W: 1, V: 1, B: 1}, {W: 1, V: 1, B: 1}),
    ({"fuzzy_match": ["10h 33min"]}, ["The answer is partially correct"], {W: 0, V: 0, B: 0}, None),
    ({"fuzzy_match": ["10h 33min"]}, ["INCORRECT"], {W: 0, V: 0, B: 0}, None),
    # one call per reference in webarena/browsergym, one joined call in vab
    ({"fuzzy_match": ["a", "b", "c"]}, ["correct"], {W: 1, V: 1, B: 1}, {W: 3, V: 1, B: 3}),
    ({"fuzzy_match": ["a", "b"]}, ["correct", "incorrect"], {W: 0, V: 1, B: 0}, {W: 2, V: 1, B: 2}),
    # an unparsable reply: the originals assert (error); browsergym catches it (0)
    ({"fuzzy_match": ["a"]}, ["maybe"], {W: "error", V: "error", B: 0}, None),
    # the unachievable rule: the judge's 'same'/'different' replaces the running score
    ({"fuzzy_match": "N/A"}, ["same"], {W: 1, V: 1, B: 1}, {W: 1, V: 1, B: 1}),
    ({"fuzzy_match": "N/A"}, ["Different."], {W: 0, V: 0, B: 0}, None),
    ({"fuzzy_match": "N/A"}, ["no idea"], {W: "error", V: "error", B: 0}, None),
    # replacement, not multiplication: a failed must_include before it is forgotten
    ({"must_include": ["zzz"], "fuzzy_match": "N/A"}, ["same"], {W: 1, V: 1, B: 1}, None),
    # ...and order matters: after the N/A rule a failing factor still multiplies
    ({"fuzzy_match": "N/A", "must_include": ["zzz"]}, ["same"], {W: 0, V: 0, B: 0}, None),
]


@pytest.mark.parametrize(("answers", "replies", "expected", "calls"), JUDGED)
def test_judged_rules(answers, replies, expected, calls):
    for mode, want in expected.items():
        judge = ScriptedJudge(*replies)
        result = score(answers, "the unit test answer", mode, judge=judge, string_note="no such item")
        assert result.judge == "scripted"
        if want == "error":
            assert result.status == "error" and result.score is None
        else:
            assert (result.status, result.score) == ("scored", want), (mode, result.details)
        if calls:
            assert len(judge.calls) == calls[mode]


@pytest.mark.parametrize(
    ("answers", "replies", "expected", "calls"),
    [
        # the originals ask the judge about every reference even when a 0 already fixes the score:
        # the same score, the originals' call count...
        ({"must_include": ["zzz"], "fuzzy_match": ["a", "b"]}, ["correct"], {W: 0, V: 0, B: 0}, {W: 2, V: 1, B: 2}),
        ({"fuzzy_match": ["a", "b", "c"]}, ["incorrect", "correct"], {W: 0, V: 0, B: 0}, {W: 3, V: 1, B: 3}),
        # ...and an unparsable later reply is the originals' error; browsergym's 0 ends the evaluation at once
        (
            {"must_include": ["zzz"], "fuzzy_match": ["a"]},
            ["maybe"],
            {W: "error", V: "error", B: 0},
            {W: 1, V: 1, B: 1},
        ),
        ({"fuzzy_match": ["a", "b"]}, ["incorrect", "maybe"], {W: "error", V: 0, B: 0}, {W: 2, V: 1, B: 2}),
        ({"fuzzy_match": ["a", "b"]}, ["maybe", "correct"], {W: "error", V: "error", B: 0}, {W: 1, V: 1, B: 1}),
    ],
)
def test_the_judge_is_asked_in_the_originals_order(answers, replies, expected, calls):
    for mode, want in expected.items():
        judge = ScriptedJudge(*replies)
        result = score(answers, "the unit test answer", mode, judge=judge)
        assert (result.status, result.score) == (("error", None) if want == "error" else ("scored", want)), mode
        assert len(judge.calls) == calls[mode], mode


def test_judge_messages_carry_the_inputs():
    judge = ScriptedJudge("correct")
    score({"fuzzy_match": ["ref one", "ref two"]}, "My Answer", V, judge=judge)
    text = judge.calls[0][-1]["content"]
    assert "reference answer: ref one, ref two" in text and "student answer: my answer" in text
    assert "question: What is it?" in text and "nothing else" in text

    judge = ScriptedJudge("same")
    score({"fuzzy_match": "N/A"}, "Not Possible", W, judge=judge, string_note="There is no such order")
    text = judge.calls[0][-1]["content"]
    assert "actual unachievable reason: There is no such order" in text
    assert "reported unachievable reason: not possible" in text and "'same'" in text and "'different'" in text


def test_real_tasks(lite_tasks):
    by_id = {t.task_id: t for t in lite_tasks}
    # Lite 81: must_include is a bare string; webarena and vab fail the originals' assert (an error, the field
    # named), browsergym reads a one-item list; flagged in every mode
    results = {m: run(evaluate(by_id[81], "The top contributor is yjlou", None, mode=m)) for m in (W, V, B)}
    assert {m: (r.status, r.score) for m, r in results.items()} == {
        W: ("error", None),
        V: ("error", None),
        B: ("scored", 1.0),
    }
    assert [results[m].details[-1]["field"] for m in (W, V)] == ["eval.reference_answers.must_include"] * 2
    assert all(any("bare string" in d.get("text", "") for d in r.details) for r in results.values())
    # Lite 94: '65 |OR| 3'
    assert [run(evaluate(by_id[94], "3", None, mode=m)).score for m in (W, V, B)] == [0.0, 1.0, 0.0]
    # Lite 114: fuzzy_match "N/A"
    assert run(evaluate(by_id[114], "N/A", None)).score == 1.0
    assert run(evaluate(by_id[114], "impossible", None)).status == "unjudged"
