"""The LLM judge: decision rules, the judge spec, and ``OpenAIJudge`` over plain HTTP against a
tiny local server started here. The server is a stand-in for an external OpenAI-compatible API, which the tests
cannot (and must not) reach; it answers in the same JSON shape."""

from __future__ import annotations

import pytest
from eval_support import make_task, run

from webrl.errors import UsageError, WebrlError
from webrl.evaluators import OpenAIJudge, evaluate, parse_judge_spec
from webrl.evaluators.judge import JudgeReplyError, decide_fuzzy, decide_ua, fuzzy_messages, ua_messages


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("correct", 1.0),
        ("Correct.", 1.0),
        ("The student answer is CORRECT", 1.0),
        ("incorrect", 0.0),
        ("Partially correct", 0.0),
        ("partially correct, but also correct", 0.0),
        ("It is not incorrect... well, correct", 0.0),  # 'incorrect' anywhere wins, as in the originals
        ("maybe", None),
        ("", None),
    ],
)
def test_fuzzy_decision(reply, score):
    if score is None:
        with pytest.raises(JudgeReplyError):
            decide_fuzzy(reply)
    else:
        assert decide_fuzzy(reply) == score


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("same", 1.0),
        ("Same.", 1.0),
        ("different", 0.0),
        ("not the same, different", 0.0),
        ("unclear", None),
    ],
)
def test_ua_decision(reply, score):
    if score is None:
        with pytest.raises(JudgeReplyError):
            decide_ua(reply)
    else:
        assert decide_ua(reply) == score


def test_message_shapes():
    system, user = fuzzy_messages("Q?", "REF", "ans")
    assert system["role"] == "system" and user["role"] == "user"
    lines = user["content"].splitlines()
    assert lines[1:5] == [
        "question: Q?",
        "reference answer: REF",
        "The string 'N/A' means that the task is not achievable.",
        "student answer: ans",
    ]
    assert "correct, incorrect, partially correct" in lines[-1]
    assert "nothing else" in fuzzy_messages("Q?", "REF", "ans", vab=True)[1]["content"]
    lines = ua_messages("do X", "X is gone", "cannot").__getitem__(1)["content"].splitlines()
    assert lines[:3] == ["task: do X", "actual unachievable reason: X is gone", "reported unachievable reason: cannot"]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("none", None),
        ("", None),
        (None, None),
        ("NONE", None),
        ("openai:gpt-4-1106-preview@https://api.openai.com/v1", ("gpt-4-1106-preview", "https://api.openai.com/v1")),
        (
            "openai:meta-llama/Llama-3.1-8B@http://127.0.0.1:8000/v1/",
            ("meta-llama/Llama-3.1-8B", "http://127.0.0.1:8000/v1"),
        ),
    ],
)
def test_parse_judge_spec(spec, expected):
    judge = parse_judge_spec(spec)
    if expected is None:
        assert judge is None
    else:
        assert (judge.model, judge.base_url) == expected
        assert judge.name == f"openai:{expected[0]}@{expected[1]}"


@pytest.mark.parametrize(
    "spec", ["gpt-4", "openai:gpt-4", "openai:@http://x", "anthropic:x@http://x", "openai:m@ftp://x"]
)
def test_parse_judge_spec_rejects(spec):
    with pytest.raises(UsageError, match="openai:MODEL@URL"):
        parse_judge_spec(spec)


def test_openai_judge_request_and_key_handling(chat_server, monkeypatch):
    monkeypatch.setenv("WEBRL_TEST_KEY", "sk-secret-123")
    judge = OpenAIJudge(f"{chat_server.base}/v1/", "judge-model", api_key_env="WEBRL_TEST_KEY")
    chat_server.answer = lambda body: (200, "Correct")
    assert judge.complete([{"role": "user", "content": "hi"}]) == "Correct"
    sent = chat_server.requests[-1]
    assert sent["path"] == "/v1/chat/completions"
    assert sent["body"]["model"] == "judge-model" and sent["body"]["temperature"] == 0
    assert sent["body"]["messages"] == [{"role": "user", "content": "hi"}]
    assert sent["headers"]["Authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(judge) and "sk-secret" not in judge.name

    # failures name the judge and the HTTP status, never the key; 401 is not retried
    chat_server.answer = lambda body: (401, "")
    count = len(chat_server.requests)
    with pytest.raises(WebrlError) as err:
        judge.complete([{"role": "user", "content": "hi"}])
    assert "HTTP 401" in str(err.value) and "sk-secret" not in str(err.value)
    assert len(chat_server.requests) == count + 1

    # without the variable no Authorization header is sent (local servers need none)
    monkeypatch.delenv("WEBRL_TEST_KEY")
    chat_server.answer = lambda body: (200, "same")
    judge.complete([{"role": "user", "content": "hi"}])
    assert "Authorization" not in chat_server.requests[-1]["headers"]


def test_evaluate_with_the_http_judge(chat_server):
    judge = parse_judge_spec(f"openai:judge-model@{chat_server.base}/v1")
    task = make_task(
        {
            "eval_types": ["string_match"],
            "reference_answers": {"fuzzy_match": ["10h 33min"]},
            "reference_url": "",
            "program_html": [],
        },
        intent="How long is the drive?",
    )
    chat_server.answer = lambda body: (
        200,
        "correct" if "10 hours 33" in body["messages"][-1]["content"] else "incorrect",
    )
    good = run(evaluate(task, "About 10 hours 33 minutes", None, judge=judge))
    bad = run(evaluate(task, "5 hours", None, judge=judge))
    assert (good.score, good.status, good.judge) == (1.0, "scored", judge.name)
    assert bad.score == 0.0
    # no judge: unjudged, never a silent pass or fail
    none = run(evaluate(task, "About 10 hours 33 minutes", None))
    assert (none.score, none.status, none.judge) == (None, "unjudged", None)
    # the endpoint failing: an error result
    chat_server.answer = lambda body: (400, "")
    assert run(evaluate(task, "x", None, judge=judge)).status == "error"
