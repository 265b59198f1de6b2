"""`hf:` policies: real transformers generation with the `tiny` model, batched, checked against a plain
teacher-forced forward pass of the same model."""

from __future__ import annotations

import json
import shutil
import threading
import time

import pytest
import torch

from webrl.env.observation import Observation
from webrl.errors import UsageError
from webrl.policy.base import PolicyInput, Sampling
from webrl.policy.factory import make_policy
from webrl.policy.hf import HFPolicy
from webrl.policy.prompt import webrl_prompt
from webrl.tasks.model import Task

EVAL = {"eval_types": ["string_match"], "reference_answers": {"must_include": ["x"]}}
HTML = (
    '<html> <a id="0" data-text="Sign In"> Sign In </a> <input id="1" type="text" '
    'placeholder="Search entire store here..."> </input> <button id="2" title="Search"> Search </button> </html>'
)
GREEDY = Sampling(max_tokens=24, stop=())


def _input(intent: str, history: list[str], html: str) -> PolicyInput:
    task = Task.model_validate(
        {"task_id": 1, "sites": ["shopping"], "start_url": "__SHOPPING__", "intent": intent, "eval": EVAL}
    )
    return PolicyInput(task, history, Observation(text=html, url="http://x/", title="t", ids=[0, 1, 2], boxes={}))


INPUTS = [
    _input("Buy socks.", [], HTML),
    _input("Find the cheapest laptop.", ['do(action="Click", element="0")'], HTML[:60] + " </html>"),
    _input("How many orders?", [], "<html> <p> 3 orders </p> </html>"),
]


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def policy(state_dir):
    return HFPolicy("tiny", cache_dir=state_dir / "models")


def teacher_forced(policy: HFPolicy, prompt_ids: list[int], generated: list[int]) -> list[float]:
    """Log-probs of `generated` after `prompt_ids` from one plain forward pass (no cache, no padding)."""
    ids = torch.tensor([prompt_ids + generated])
    with torch.no_grad():
        logits = policy.model(ids).logits[0, len(prompt_ids) - 1 : -1].float()
    return torch.log_softmax(logits, -1).gather(1, torch.tensor(generated)[:, None]).squeeze(1).tolist()


def prompt_ids(policy: HFPolicy, x: PolicyInput) -> list[int]:
    return policy.tokenizer(webrl_prompt(x.task.intent, x.history, x.observation.text)).input_ids


def test_a_batch_is_greedy_deterministic_and_equals_one_at_a_time(policy):
    batch = policy.act(INPUTS, GREEDY)
    assert len(batch) == 3 and len({tuple(r.token_logprobs) for r in batch}) == 3  # three different contexts
    assert [r.text for r in policy.act(INPUTS, GREEDY)] == [r.text for r in batch]
    for x, in_batch in zip(INPUTS, batch):
        alone = policy.act([x], GREEDY)[0]
        assert alone.text == in_batch.text and alone.meta["token_ids"] == in_batch.meta["token_ids"]
        assert alone.token_logprobs == pytest.approx(in_batch.token_logprobs, abs=1e-4)
        assert in_batch.meta["batch_size"] == 3 and alone.meta["batch_size"] == 1
        assert in_batch.meta["prompt_tokens"] == len(prompt_ids(policy, x))


def test_token_logprobs_match_a_teacher_forced_forward_pass(policy):
    for x, response in zip(INPUTS, policy.act(INPUTS, GREEDY)):
        generated = response.meta["token_ids"]
        assert len(response.token_logprobs) == len(generated) == response.meta["completion_tokens"] > 0
        assert response.meta["finish_reason"] == "length" and len(generated) == GREEDY.max_tokens
        assert response.token_logprobs == pytest.approx(
            teacher_forced(policy, prompt_ids(policy, x), generated), abs=1e-4
        )
        assert policy.tokenizer.decode(generated) == response.text


def test_stop_strings_cut_the_text_and_end_generation(policy):
    sampled = Sampling(temperature=1.0, max_tokens=24, stop=())  # greedy `tiny` repeats itself; samples vary
    torch.manual_seed(3)
    full = policy.act(INPUTS, sampled)
    stops = tuple(_ascii_token_text(policy, r.meta["token_ids"][12:]) for r in full)
    torch.manual_seed(3)
    cut = policy.act(INPUTS, Sampling(temperature=1.0, max_tokens=24, stop=stops))
    for whole, short in zip(full, cut):
        first = min(p for p in (whole.text.find(s) for s in stops) if p >= 0)
        assert short.text == whole.text[:first] and short.meta["finish_reason"] == "stop"
        n = short.meta["completion_tokens"]
        assert n < sampled.max_tokens and short.meta["token_ids"] == whole.meta["token_ids"][:n]
        stop_text = policy.tokenizer.decode(short.meta["token_ids"])
        assert any(s in stop_text for s in stops)  # the stopping token is counted ...
        assert not any(s in policy.tokenizer.decode(short.meta["token_ids"][:-1]) for s in stops)  # ... once
        assert short.token_logprobs == pytest.approx(whole.token_logprobs[:n], abs=1e-4)


def _ascii_token_text(policy: HFPolicy, ids: list[int]) -> str:
    """The text of the first of `ids` that decodes to printable ASCII (a stop string that cannot straddle
    a split UTF-8 character)."""
    texts = [policy.tokenizer.decode([i]) for i in ids]
    return next(t for t in texts if t.strip() and t.isascii() and t.isprintable())


def test_sampling_uses_the_raw_log_probs_and_top_p(policy):
    greedy = policy.act(INPUTS, GREEDY)
    nucleus = policy.act(INPUTS, Sampling(temperature=1.5, top_p=1e-6, max_tokens=24, stop=()))
    assert [r.text for r in nucleus] == [r.text for r in greedy]  # top-p this small keeps only the argmax
    for a, b in zip(nucleus, greedy):  # and the log-probs are the model's, not the tempered ones
        assert a.token_logprobs == pytest.approx(b.token_logprobs, abs=1e-4)
    free = Sampling(temperature=1.0, max_tokens=24, stop=())
    torch.manual_seed(1)
    first = [r.text for r in policy.act(INPUTS, free)]
    torch.manual_seed(1)
    assert [r.text for r in policy.act(INPUTS, free)] == first
    torch.manual_seed(2)
    assert [r.text for r in policy.act(INPUTS, free)] != first


def test_calls_waiting_together_share_one_batch_and_a_seeded_answer_does_not_depend_on_it(policy):
    """Parallel episodes call act() from their own threads: the calls that wait while the model is busy run
    as one batch (those with the same settings), and a seeded sample is the same in a batch as alone."""
    seeded = [Sampling(temperature=1.0, max_tokens=24, stop=(), seed=seed) for seed in (11, 12, 13)]
    other = Sampling(max_tokens=8, stop=())  # other settings: a batch of its own
    calls = [(x, s) for x, s in zip(INPUTS, seeded)] + [(INPUTS[0], other)]
    alone = [policy.act([x], s)[0] for x, s in calls]
    answers = [None] * len(calls)

    def ask(i):
        answers[i] = policy.act([calls[i][0]], calls[i][1])[0]

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(len(calls))]
    with policy._generating:  # the model is busy until every call waits
        for thread in threads:
            thread.start()
        while len(policy._waiting) < len(calls):
            time.sleep(0.01)
    for thread in threads:
        thread.join(timeout=60)
    assert [a.meta["batch_size"] for a in answers] == [3, 3, 3, 1]
    assert len({a.text for a in answers[:3]}) == 3
    for batched, single in zip(answers, alone):
        assert batched.text == single.text and batched.meta["token_ids"] == single.meta["token_ids"]
        assert batched.token_logprobs == pytest.approx(single.token_logprobs, abs=1e-4)


@pytest.mark.parametrize("limited_by", ["the model's config", "the context argument"])
def test_a_prompt_longer_than_the_context_loses_the_end_of_its_page_not_its_instruction(policy, tmp_path, limited_by):
    """A 64-token context, the model's own or a training's budget given to the policy (webrl train's rollouts)."""
    if limited_by == "the context argument":
        short = HFPolicy(policy.model.name_or_path, context=64)
    else:
        small = tmp_path / "tiny-64"
        shutil.copytree(policy.model.name_or_path, small)
        config = json.loads((small / "config.json").read_text())
        (small / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 64}))
        short = HFPolicy(str(small))
    x = INPUTS[0]
    prompt = webrl_prompt(x.task.intent, x.history, x.observation.text)
    ids = prompt_ids(short, x)
    response = short.act([x], Sampling(max_tokens=8, stop=()))[0]
    head, page = prompt.split("<|start_header_id|>user<|end_header_id|>\n")
    head_ids = short.tokenizer(head + "<|start_header_id|>user<|end_header_id|>\n").input_ids
    tail_ids = short.tokenizer(
        "\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n", add_special_tokens=False
    ).input_ids
    page_ids = short.tokenizer(
        page.removesuffix("\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"), add_special_tokens=False
    ).input_ids
    kept = head_ids + page_ids[: 56 - len(head_ids) - len(tail_ids)] + tail_ids  # 64 - 8 new tokens
    assert len(ids) > 64 and kept[0] == short.tokenizer.bos_token_id and len(kept) == 56
    assert "Buy socks." in short.tokenizer.decode(kept)  # the instruction survives the cut
    assert response.meta["prompt_tokens"] == 56 and response.meta["truncated_prompt_tokens"] == len(ids) - 56
    assert response.token_logprobs == pytest.approx(teacher_forced(short, kept, response.meta["token_ids"]), abs=1e-4)


def test_hf_specs_build_through_make_policy(state_dir, monkeypatch):
    monkeypatch.setenv("WEBRL_STATE_DIR", str(state_dir))
    assert make_policy("hf:tiny").name == "hf:tiny"
    with pytest.raises(UsageError, match="valid forms"):
        make_policy("hf:no-such-model")
