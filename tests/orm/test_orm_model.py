"""p(YES) from the YES/NO logits at the last position, the 0.5 threshold, and batching that pads on either side."""

from __future__ import annotations

import math

import pytest
import torch
from orm_support import synthetic_examples

from webrl.orm.format import orm_input_ids
from webrl.orm.model import THRESHOLD, answer_token_ids, pad_ids, reward


def test_answer_tokens_are_the_first_tokens_of_yes_and_no(untrained):
    tokenizer = untrained.tokenizer
    yes, no = answer_token_ids(tokenizer)
    assert yes != no
    assert tokenizer.decode([yes]) == "YES"[: len(tokenizer.decode([yes]))]
    assert tokenizer.decode([no]) == "NO"[: len(tokenizer.decode([no]))]
    assert (untrained.yes, untrained.no) == (yes, no)


def test_p_yes_is_the_softmax_of_the_two_answer_logits(untrained):
    example = synthetic_examples(1, seed=5)[0]
    ids = orm_input_ids(untrained.tokenizer, example.intent, example.responses, example.html, untrained.max_tokens)
    with torch.no_grad():
        logits = untrained.model(torch.tensor([ids])).logits[0, -1].tolist()
    l_yes, l_no = logits[untrained.yes], logits[untrained.no]
    by_hand = math.exp(l_yes) / (math.exp(l_yes) + math.exp(l_no))
    assert untrained.p_yes([example]) == pytest.approx([by_hand], abs=1e-5)
    assert 0.0 < by_hand < 1.0 and abs(by_hand - 0.5) > 1e-3  # a real preference, not a tie


@pytest.mark.parametrize("side", ["left", "right"])
def test_batched_scores_equal_one_at_a_time(untrained, side):
    examples = synthetic_examples(5, seed=3)
    lengths = {len(untrained.encode(example)) for example in examples}
    assert len(lengths) > 1  # the batch really is padded
    saved = untrained.batch_size, untrained.padding_side
    try:
        untrained.batch_size, untrained.padding_side = 1, side
        alone = untrained.p_yes(examples)
        untrained.batch_size = 5
        assert untrained.p_yes(examples) == pytest.approx(alone, abs=1e-5)
    finally:
        untrained.batch_size, untrained.padding_side = saved


def test_padding_puts_the_tokens_on_the_asked_side():
    ids, mask = pad_ids([[5, 6, 7], [8]], pad_id=0, side="left")
    assert ids.tolist() == [[5, 6, 7], [0, 0, 8]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    ids, mask = pad_ids([[5, 6, 7], [8]], pad_id=0, side="right")
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]


def test_reward_is_one_from_p_yes_one_half(untrained):
    assert THRESHOLD == 0.5
    assert [reward(p) for p in (0.0, 0.4999, 0.5, 0.73, 1.0)] == [0, 0, 1, 1, 1]
    examples = synthetic_examples(4, seed=4)
    assert untrained.rewards(examples) == [int(p >= 0.5) for p in untrained.p_yes(examples)]
