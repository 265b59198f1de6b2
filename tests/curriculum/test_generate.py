"""LLM task generation: parsing the generator's reply, de-duplication against everything seen, the rounds of
seeds per site, and the whole loop against a local OpenAI-compatible server (canned replies: GPT-4o cannot run
here) and against the real `tiny` model in this process."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from curriculum_support import given_tasks, make_task
from transformers import AutoTokenizer

from webrl.curriculum.generate import (
    GENERATION_SAMPLING,
    chat_prompt,
    describe_sites,
    evolve_prompt,
    generate_tasks,
    make_generator,
    needs_orm,
    parse_tasks,
    plan_rounds,
)
from webrl.curriculum.seen import Seen, next_task_id, normalise
from webrl.errors import UsageError
from webrl.policy.base import Sampling


def test_parse_good_reply():
    reply = (
        "Here are some new tasks:\n- `What is the price of the Sony WH-1000XM4 headphones?`\n"
        "- `Show me the reviews of Sony WH-1000XM4` \n3. `  -  Add two Sony WH-1000XM4 to my cart. `"
    )
    parsed = parse_tasks(reply)
    assert parsed.tasks == [
        "What is the price of the Sony WH-1000XM4 headphones?",
        "Show me the reviews of Sony WH-1000XM4",
        "Add two Sony WH-1000XM4 to my cart.",
    ]
    assert parsed.found == 3 and not parsed.rejected


@pytest.mark.parametrize("reply", ["", "I cannot think of any new tasks.", "``", "`   `\n`\t`"])
def test_parse_empty_replies(reply):
    parsed = parse_tasks(reply)
    assert parsed.tasks == [] and sum(parsed.rejected.values()) == parsed.found
    assert set(parsed.rejected) <= {"empty"}


def test_parse_malformed_and_leaking_markers():
    reply = (
        "#Created Task#\n- `#Created Task# Find the cheapest laptop`\n- `Another given task: list the forums`\n"
        "- `open it`\n- `12345 678 90`\n- `Find the cheapest\nlaptop` and `Find the best-rated laptop bag`\n"
        "- `" + "very long " * 60 + "`\n- `unclosed task about the map"
    )
    parsed = parse_tasks(reply)
    assert parsed.tasks == ["Find the best-rated laptop bag"]
    assert parsed.rejected == Counter({"marker": 2, "malformed": 4})


def test_parse_code_fences_do_not_eat_the_first_task():
    reply = "```markdown\n- `Show the open issues of a11yproject`\n- `Star the project primer/css`\n```"
    assert parse_tasks(reply).tasks == ["Show the open issues of a11yproject", "Star the project primer/css"]


def test_parse_drops_duplicates_within_a_reply():
    reply = "`Star the project primer/css.` `star the project  Primer/CSS` `Fork the project primer/css`"
    parsed = parse_tasks(reply)
    assert parsed.tasks == ["Star the project primer/css.", "Fork the project primer/css"]
    assert parsed.rejected == Counter({"duplicate": 1})


def test_seen_deduplicates_normalised_intents_and_ids_stay_fresh():
    suite = [make_task(4, "What is the price of Sony headphones?"), make_task("x", "Star primer/css")]
    seen = Seen(suite)
    assert "  what is the PRICE of sony headphones " in seen and "What is the price of Sony earbuds?" not in seen
    assert normalise('"Star primer/css!"') == "star primer/css"
    assert seen.add("Fork primer/css") and not seen.add("fork primer/css.") and len(seen) == 3
    assert next_task_id(suite) == 5 and next_task_id([]) == 0


def test_prompt_has_the_reference_structure():
    prompt = evolve_prompt(["map"], ["How far is A from B?", "What is the `zip` code of C?"])
    assert describe_sites(["map"]) in prompt
    given = "- `How far is A from B?`\n- `What is the 'zip' code of C?`"
    assert prompt.endswith(f"#Given Task#\n{given}\n\n#Created Task#\n")
    assert "backticks" in prompt and "Reuse the names" in prompt and "Never write '#Given Task#'" in prompt
    assert given_tasks(prompt) == ["How far is A from B?", "What is the 'zip' code of C?"]


def test_rounds_group_by_site_and_draw_at_most_ten_seeds():
    failed = [make_task(i, f"shop task {i}") for i in range(25)]
    failed += [make_task(100 + i, f"map task {i}", ("map",), "__MAP__/") for i in range(3)]
    failed += [make_task(200, "multi task", ("gitlab", "reddit"), "__GITLAB__/"), make_task(201, "shop task 3")]
    rounds = plan_rounds(failed, rounds_per_site=2, seeds_per_round=10, seed=7)
    assert [r.sites for r in rounds] == [("gitlab", "reddit"), ("map",), ("shopping",)] * 2  # interleaved
    for r in rounds:
        assert len(r.seeds) == min(10, {"shopping": 25, "map": 3}.get(r.sites[0], 1))
        assert len({t.task_id for t in r.seeds}) == len(r.seeds) and all(tuple(t.sites) == r.sites for t in r.seeds)
    assert rounds[2].seeds != rounds[5].seeds  # two draws of the shop's 25
    assert [r.seeds for r in plan_rounds(failed, 2, 10, seed=7)] == [r.seeds for r in rounds]  # seeded
    assert [r.seeds for r in plan_rounds(failed, 2, 10, seed=8)] != [r.seeds for r in rounds]


def canned_reply(prompt: str) -> str:
    """What the stand-in generator answers: one new task per round (the first seed, extended), and the kinds
    of noise a real model produces (a seed copied back, a leaking marker, an empty pair, a repeat)."""
    first = given_tasks(prompt)[0]
    return (
        f"Sure! Here are the new tasks.\n- `{first} Answer in one sentence.`\n- `{first}`\n"
        "- `#Given Task# rephrased for the site`\n- `  `\n"
        f"- `{first.lower()}  answer in one sentence`\n"
    )


def test_generation_loop_against_an_openai_compatible_server(chat_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    url, requests = chat_server(canned_reply)
    failed = [make_task(i, f"What is the price of product number {i}?") for i in range(12)]
    failed += [
        make_task(50 + i, f"How far is place {i} from the station?", ("map",), f"__MAP__/node/{i}", require_login=False)
        for i in range(4)
    ]
    suite = [*failed, make_task(70, "What is the price of product number 3? Answer in one sentence.")]
    seen = Seen(suite)
    generator = make_generator(f"openai:gpt-4o@{url}")
    tasks, report = generate_tasks(failed, generator, seen, first_id=next_task_id(suite), seed=1, phase=2)

    assert len(requests) == report.calls == report.rounds == 4  # 2 sites x 2 rounds
    body = requests[0]
    assert body["model"] == "gpt-4o" and body["temperature"] == 1.0 and body["top_p"] == 1.0 and "stop" not in body
    assert body["messages"] == [{"role": "user", "content": body["messages"][0]["content"]}]
    assert report.found == 5 * 4 and report.kept == len(tasks)
    assert report.rejected["marker"] == report.rejected["empty"] == report.rejected["duplicate"] == 4
    assert report.rejected["seen"] == 4 + (4 - len(tasks))  # the copied seeds, and any task an earlier round made
    assert 2 <= len(tasks) <= 4 and sum(report.kept_by_site.values()) == len(tasks)
    for task in tasks:
        assert needs_orm(task) and task.split == "train" and task.eval.reference_answers.fuzzy_match
        assert task.origin["generator"] == generator.name and task.origin["phase"] == 2
        base = next(s for s in failed if task.intent.startswith(s.intent))  # the closest seed gives the start
        assert (task.sites, task.start_url, task.require_login) == (base.sites, base.start_url, base.require_login)
        assert base.task_id in task.origin["seeds"] and task.origin["start_from"] == base.task_id
    assert [t.task_id for t in tasks] == list(range(71, 71 + len(tasks)))
    assert all(t.intent in seen for t in tasks)
    assert "What is the price of product number 3? Answer in one sentence." not in [t.intent for t in tasks]

    capped, report = generate_tasks(failed, generator, Seen(suite), first_id=71, keep=1, seed=1)
    assert len(capped) == 1 and report.calls == 1

    down, report = generate_tasks(failed, make_generator(f"openai:down@{url}"), Seen(), first_id=0)
    assert down == [] and report.calls == 0 and len(report.errors) == 4 and "503" in report.errors[0]


def test_generator_specs():
    for spec in ("gpt-4o", "oracle", "random:1"):
        with pytest.raises(UsageError, match="valid forms"):
            make_generator(spec)
    assert make_generator("openai:gpt-4o@http://127.0.0.1:9/v1").policy.chat
    assert not make_generator("openai:base@http://127.0.0.1:9/v1?completion").policy.chat
    served = make_generator("vllm:tiny")  # the server starts on the first call only
    assert served.name == "vllm:tiny" and served.policy.server is None


def test_chat_prompt_uses_the_template_without_a_second_bos(tiny):
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    assert chat_prompt(tokenizer, "Write tasks.") == "Write tasks."  # tiny has no chat template
    tokenizer.chat_template = (
        "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n{{ m.content }}"
        "<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n"
        "{% endif %}"
    )
    text = chat_prompt(tokenizer, "Write tasks.")
    assert (
        text == "<|start_header_id|>user<|end_header_id|>\nWrite tasks.<|eot_id|><|start_header_id|>assistant"
        "<|end_header_id|>\n"
    )
    assert tokenizer(text).input_ids.count(tokenizer.bos_token_id) == 1


def test_generation_with_the_tiny_model_counts_unusable_replies(tiny):
    """A real (random) model: its replies have no usable backtick task, so nothing is kept, and that is counted."""
    torch.manual_seed(0)
    failed = [make_task(i, f"Show me the reviews of product {i}") for i in range(3)]
    failed.append(make_task(9, "Who wrote the latest post in the books forum?", ("reddit",), "__REDDIT__/"))
    generator = make_generator("hf:tiny", tiny.parent)
    sampling = Sampling(temperature=GENERATION_SAMPLING.temperature, top_p=1.0, max_tokens=96, stop=())
    tasks, report = generate_tasks(failed, generator, Seen(failed), first_id=10, rounds_per_site=1, sampling=sampling)
    assert report.calls == 2 and not report.errors
    assert tasks == [] and report.kept == 0 and report.unparseable_replies == 2
    assert sum(report.rejected.values()) == report.found
