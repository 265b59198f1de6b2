"""Step records (validation, grouping, returns) and tokens (boundary, truncation, action log-probs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from webrl.errors import UsageError
from webrl.policy.prompt import END_OF_TURN, webrl_prompt
from webrl.rl.data import (
    STEP_SCHEMA_VERSION,
    ResponseTooLong,
    StepRecord,
    action_logprobs,
    collate,
    encode,
    load_steps,
    next_token_logprobs,
    pad_token_id,
)
from webrl.rl.sft import sft_loss_fn


def write_jsonl(path, records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def record(task_id=1, step=0, **extra):
    return {"task_id": task_id, "step": step, "prompt": f"prompt {task_id}/{step}", "response": "do()", **extra}


def test_steps_grouped_by_episode_with_next_prompt_and_returns(tmp_path):
    # episode "7" (default: str(task_id)) written out of order and interleaved with a failed episode
    path = write_jsonl(
        tmp_path / "steps.jsonl",
        [
            record(7, 1),
            record("t", 0, episode="e", reward=0),
            record(7, 0),
            record(7, 2),
            record("t", 1, episode="e", reward=0),
        ],
    )
    steps = load_steps(path)
    assert [(s.episode, s.step) for s in steps] == [("7", 0), ("7", 1), ("7", 2), ("e", 0), ("e", 1)]
    success = steps[:3]
    assert [s.next_prompt for s in success] == ["prompt 7/1", "prompt 7/2", None]
    assert [s.done for s in success] == [False, False, True]
    assert success[2].next_observation == "prompt 7/2"  # official s' at the terminal step: s itself
    assert [s.reward for s in steps] == [1.0, 1.0, 1.0, 0.0, 0.0]  # demos default to success
    # r = 1 on every step, γ = 0.9: 1 + 0.9 + 0.81, 1 + 0.9, 1
    assert [s.mc_return for s in success] == pytest.approx([2.71, 1.9, 1.0])
    assert [s.mc_return for s in steps[3:]] == [0.0, 0.0]


@pytest.mark.parametrize(
    "lines, line, field",
    [
        ([record(), "{not json"], 2, None),
        ([record(), record(step=1), {k: v for k, v in record(step=2).items() if k != "response"}], 3, "response"),
        ([record(step="0")], 1, "step"),
        ([record(step=-1)], 1, "step"),
        ([record(reward=1.5)], 1, "reward"),
        ([record(reward=True)], 1, "reward"),
        ([record(prompt="")], 1, "prompt"),
        ([record(step=0), record(step=2)], 2, "step"),  # a gap
        ([record(step=0), record(step=0)], 2, "step"),  # a duplicate
        ([record(step=0, reward=1), record(step=1, reward=0)], 2, "reward"),  # outcome differs within an episode
    ],
)
def test_bad_lines_name_file_line_task_and_field(tmp_path, lines, line, field):
    path = write_jsonl(tmp_path / "bad.jsonl", lines)
    with pytest.raises(UsageError) as caught:
        load_steps(path)
    message = str(caught.value)
    assert f"{path}:{line}:" in message
    assert caught.value.exit_code == 2
    if field:
        assert f"'{field}'" in message and "task 1" in message


def test_a_step_file_of_the_previous_release_loads_and_rewrites_the_same(tmp_path):
    """Three demonstration steps the previous release wrote (no schema version: version 1) load as they were;
    written back through StepRecord they carry version 2 and load to the same steps."""
    recorded = Path(__file__).with_name("data") / "steps-v1.jsonl"
    steps = load_steps(recorded)
    originals = [json.loads(line) for line in recorded.read_text().splitlines()]
    assert [(s.task_id, s.episode, s.step, s.prompt, s.response, s.reward) for s in steps] == [
        (o["task_id"], o["episode"], o["step"], o["prompt"], o["response"], o["reward"]) for o in originals
    ]
    again = tmp_path / "steps.jsonl"
    again.write_text("".join(StepRecord.model_validate(o).to_line() for o in originals))
    assert load_steps(again) == steps
    assert all(json.loads(line)["schema_version"] == STEP_SCHEMA_VERSION for line in again.read_text().splitlines())


def test_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="absent.jsonl"):
        load_steps(tmp_path / "absent.jsonl")


def ids(tokenizer, text, special=False):
    return tokenizer(text, add_special_tokens=special).input_ids


def test_action_tokens_are_the_separately_tokenized_response(tokenizer):
    prompt, response = "Click the ", "Search button"  # BPE merges " S" across this boundary
    joint = ids(tokenizer, prompt + response + END_OF_TURN, special=True)
    separate = ids(tokenizer, prompt, special=True) + ids(tokenizer, response + END_OF_TURN)
    assert joint != separate  # the case the official get_log_prob gets wrong (it tokenizes both as one string)
    encoded = encode(tokenizer, prompt, response, max_tokens=100)
    assert encoded.input_ids == separate
    assert encoded.input_ids[-encoded.n_action :] == ids(tokenizer, response + END_OF_TURN)
    assert encoded.input_ids[0] == tokenizer.bos_token_id


def test_a_too_long_prompt_of_another_layout_is_cut_from_the_left_keeping_bos_and_response(tokenizer):
    prompt = " ".join(f"word{i}" for i in range(200))
    response = 'do(action="Click", element="7")'
    action = ids(tokenizer, response + END_OF_TURN)
    full = ids(tokenizer, prompt, special=True)
    budget = len(action) + 11
    encoded = encode(tokenizer, prompt, response, max_tokens=budget)
    assert len(encoded.input_ids) == budget and encoded.n_action == len(action)
    assert encoded.input_ids == [tokenizer.bos_token_id] + full[-10:] + action
    # exactly room for BOS + response; one token less and the step is skipped
    assert encode(tokenizer, prompt, response, len(action) + 1).input_ids == [tokenizer.bos_token_id] + action
    with pytest.raises(ResponseTooLong):
        encode(tokenizer, prompt, response, len(action))


def test_a_too_long_webrl_prompt_loses_the_end_of_its_page_never_the_instruction(tokenizer):
    page = "<html> " + " ".join(f'<a id="{i}"> word{i} </a>' for i in range(300)) + " </html>"
    history = ['do(action="Click", element="3")']
    prompt = webrl_prompt("Open the third tab.", history, page)
    response = 'do(action="Click", element="7")'
    action = ids(tokenizer, response + END_OF_TURN)
    budget = 200
    assert len(ids(tokenizer, prompt, special=True)) + len(action) > budget
    encoded = encode(tokenizer, prompt, response, max_tokens=budget)
    assert len(encoded.input_ids) == budget and encoded.input_ids[-encoded.n_action :] == action
    head, page_and_tail = prompt.rsplit("<|start_header_id|>user<|end_header_id|>\n", 1)
    head_ids = ids(tokenizer, head + "<|start_header_id|>user<|end_header_id|>\n", special=True)
    tail = "\n\n<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n"
    tail_ids = ids(tokenizer, tail)
    page_ids = ids(tokenizer, page_and_tail.removesuffix(tail))
    room = budget - len(action) - len(head_ids) - len(tail_ids)
    assert encoded.input_ids[: -encoded.n_action] == head_ids + page_ids[:room] + tail_ids
    text = tokenizer.decode(encoded.input_ids[: -encoded.n_action])
    assert "Task Instruction: Open the third tab." in text and history[0] in text and "word0" in text
    assert "word299" not in text
    # a prompt that fits is tokenized whole, as before
    short = webrl_prompt("Open the third tab.", history, "<html> </html>")
    assert encode(tokenizer, short, response, budget).input_ids == ids(tokenizer, short, special=True) + action


def test_collate_pads_right_and_marks_actions(tokenizer):
    short, long = encode(tokenizer, "a", "b", 50), encode(tokenizer, "a longer prompt here", "do(x)", 50)
    batch = collate([short, long], pad_id=pad_token_id(tokenizer))
    n = len(short.input_ids)
    assert batch.input_ids[0, n:].eq(tokenizer.pad_token_id).all()
    assert batch.attention_mask.sum(-1).tolist() == [n, len(long.input_ids)]
    assert batch.action_mask.sum(-1).tolist() == [short.n_action, long.n_action]
    assert batch.input_ids[0][batch.action_mask[0]].tolist() == short.input_ids[-short.n_action :]


def test_action_logprobs_match_a_hand_loop_with_padding(tokenizer, model):
    pairs = [
        ("Task Instruction: find the price", '# Note: it is $3\nexit(message="3")'),
        ("short", 'do(action="Click", element="12")'),
        ("a much longer prompt " * 6, "x"),
    ]
    encoded = [encode(tokenizer, p, r, 200) for p, r in pairs]
    with torch.no_grad():
        logp, n_tokens = action_logprobs(model, collate(encoded, pad_token_id(tokenizer)))
        for row, item in enumerate(encoded):
            log_probs = torch.log_softmax(model(torch.tensor([item.input_ids])).logits[0].float(), -1)
            start = len(item.input_ids) - item.n_action
            expected = sum(log_probs[k - 1, item.input_ids[k]] for k in range(start, len(item.input_ids)))
            assert n_tokens[row] == item.n_action
            assert logp[row].item() == pytest.approx(expected.item(), abs=1e-4)


def test_the_page_loss_adds_the_prompts_token_mean_nll_to_the_answers(tokenizer, model):
    pairs = [
        ("Task Instruction: click the second tab", 'do(action="Click", element="1")'),
        ("a much longer prompt " * 6, "exit()"),
    ]
    encoded = [encode(tokenizer, p, r, 200) for p, r in pairs]
    pad = pad_token_id(tokenizer)
    with torch.no_grad():
        answer_only, stats = sft_loss_fn(pad)(model, encoded)
        with_page, page_stats = sft_loss_fn(pad, page_loss=0.5)(model, encoded)
        token_logp = next_token_logprobs(model, collate(encoded, pad))
        page_nll, answer_nll, n_page, n_answer = 0.0, 0.0, 0, 0
        for row, item in enumerate(encoded):
            log_probs = torch.log_softmax(model(torch.tensor([item.input_ids])).logits[0].float(), -1)
            start = len(item.input_ids) - item.n_action
            for k in range(1, len(item.input_ids)):
                term = -log_probs[k - 1, item.input_ids[k]].item()
                assert -token_logp[row, k - 1].item() == pytest.approx(term, abs=1e-4)
                if k < start:  # the prompt's tokens after BOS
                    page_nll, n_page = page_nll + term, n_page + 1
                else:
                    answer_nll, n_answer = answer_nll + term, n_answer + 1
    assert answer_only.item() == pytest.approx(answer_nll / n_answer, abs=1e-4)
    assert page_stats["page_loss"] == pytest.approx(page_nll / n_page, abs=1e-4)
    assert with_page.item() == pytest.approx(answer_nll / n_answer + 0.5 * page_nll / n_page, abs=1e-4)
    assert stats["action_tokens"] == page_stats["action_tokens"] == n_answer
