"""The critic filter on a real (tiny, random) critic over start pages observed on the real sites, and the
feasibility filter through the judge plumbing (a local OpenAI-compatible server with canned verdicts: GPT-4o
cannot run here) and without a judge."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from curriculum_support import make_task
from transformers import AutoTokenizer

from webrl.curriculum.filters import (
    DEFAULT_BAND,
    CriticScore,
    critic_filter,
    critic_scores,
    decide_feasible,
    feasibility_filter,
    feasibility_messages,
    in_band,
    page_key,
    start_pages,
    stored_start_pages,
)
from webrl.curriculum.generate import generated_task
from webrl.evaluators.judge import OpenAIJudge
from webrl.policy.prompt import webrl_prompt
from webrl.rl.critic import Critic


@pytest.fixture(scope="module")
def critic(tiny):
    torch.manual_seed(0)  # the fresh heads
    return Critic.from_pretrained(tiny).eval(), AutoTokenizer.from_pretrained(tiny)


def test_in_band_rules():
    score = CriticScore(0.02, (0.02, 0.5))
    assert not in_band(score) and in_band(score, rule="either") and in_band(score, (0.0, 0.03))
    assert in_band(CriticScore(0.05, (0.05, 0.9)), DEFAULT_BAND) and not in_band(CriticScore(0.76, (0.8, 0.76)))


@pytest.mark.slow  # a critic over the start pages of every site
def test_critic_filter_on_real_start_pages(suite, all_sites, critic, tmp_path):
    model, tokenizer = critic
    by_page: dict = {}
    for task in suite:
        if task.split == "train" and len(task.sites) == 1:
            by_page.setdefault(task.sites[0], {}).setdefault(page_key(task), []).append(task)
    # per site the two first tasks of its most shared start page, and one task on a page given by the cache
    tasks = [max(pages.values(), key=len)[k] for pages in by_page.values() for k in (0, 1)]
    cached = next(t for t in suite if page_key(t) not in {page_key(t) for t in tasks})
    tasks.append(cached)
    pages = start_pages(tasks, all_sites, cache={page_key(cached): "<html>cached page</html>"})
    assert set(pages) == {page_key(t) for t in tasks} and len(pages) == 6
    assert pages[page_key(cached)] == "<html>cached page</html>"  # observed once per start page, or cached
    assert all("<" in text and len(text) > 200 for key, text in pages.items() if key != page_key(cached))
    # a run's start-pages file: written with what was observed, read back without a browser (no backend)
    stored = tmp_path / "start-pages.json"
    stored.write_text("{}")  # unreadable as pages (an older run's format): observed again, then replaced
    assert stored_start_pages(tasks[:1], all_sites, stored) == {page_key(tasks[0]): pages[page_key(tasks[0])]}
    assert stored_start_pages(tasks[:1], None, stored) == {page_key(tasks[0]): pages[page_key(tasks[0])]}

    # prompts cut to their last 2048 tokens (the trainer's left cut) to keep this CPU test short
    kept, scores = critic_filter(tasks, pages, model, tokenizer, batch_size=4, max_tokens=2048)
    prompts = [webrl_prompt(t.intent, [], pages[page_key(t)]) for t in tasks]
    one_by_one = critic_scores(model, tokenizer, prompts, batch_size=1, max_tokens=2048)
    for score, single in zip(scores, one_by_one):
        assert 0 < score.value < 1 and score.value == pytest.approx(min(score.heads))
        assert score.value == pytest.approx(single.value, abs=1e-4)  # the phase-0 prompt; padding changes nothing
    assert kept == [t for t, s in zip(tasks, scores) if DEFAULT_BAND[0] <= s.value <= DEFAULT_BAND[1]]
    values = sorted(s.value for s in scores)
    assert values[0] < values[-1]  # the start page moves the value
    band = (values[len(values) // 2], 1.0)
    either, _ = critic_filter(tasks, pages, model, tokenizer, band=band, rule="either", max_tokens=2048)
    kept = [t for t, s in zip(tasks, scores) if in_band(s, band)]
    assert 0 < len(kept) < len(tasks) and [t.task_id for t in kept] == [
        t.task_id for t, s in zip(tasks, scores) if s.value >= band[0]
    ]
    assert {t.task_id for t in kept} <= {t.task_id for t in either}
    assert either == [t for t, s in zip(tasks, scores) if max(s.heads) >= band[0]]


def verdict(prompt: str) -> str:
    """The stand-in judge: the weather is infeasible on the map, a task mentioning 'garbled' gets no verdict."""
    task = prompt.split("Task: ", 1)[1].splitlines()[0]
    if "garbled" in task:
        return "I am not sure."
    if "weather" in task:
        return "The map shows no weather. Answer: [NO]"
    return "The site offers this. Answer: [YES]"


def test_feasibility_filter_with_and_without_a_judge(chat_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    url, requests = chat_server(verdict)
    seed = make_task(1, "How far is the museum from the station?", ("map",), "__MAP__/")
    procedural = make_task(2, "What is the weather in the museum's street?", ("map",), "__MAP__/")
    generated = [
        generated_task(intent, [seed], 10 + i, "test", 1)
        for i, intent in enumerate(
            [
                "How long is the walk from the museum to the park?",
                "What will the weather be at the museum tomorrow?",
                "garbled text about the museum",
            ]
        )
    ]
    tasks = [procedural, *generated]

    kept, outcome = feasibility_filter(tasks, None)
    assert kept == [procedural] and outcome == Counter({"procedural": 1, "no judge": 3})

    kept, outcome = feasibility_filter(tasks, OpenAIJudge(url, "gpt-4o"))
    assert [t.task_id for t in kept] == [2, 10]
    assert outcome == Counter({"procedural": 1, "yes": 1, "no": 1, "unparsable": 1})
    assert len(requests) == 3 and all(r["temperature"] == 0 for r in requests)  # procedural tasks are not asked
    user = feasibility_messages(generated[1])[1]["content"]
    assert "weather" in user and "[YES]" in user and "[NO]" in user and "map" in user

    kept, outcome = feasibility_filter(generated, OpenAIJudge(url, "down", retries=1))
    assert kept == [] and outcome == Counter({"judge error": 3})


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Reason: fine. Answer: [YES]", True),
        ("Answer: [no]", False),
        ("[YES] at first, but no: [NO]", False),
        ("yes", None),
        ("", None),
    ],
)
def test_decide_feasible(reply, expected):
    assert decide_feasible(reply) is expected
