"""The replay buffer: success and per-task filters, the confidence band, the cap, the mix, and the scores."""

from __future__ import annotations

import math

import pytest
import torch

from webrl.rl.data import TrainingStep, action_logprobs, collate, encode, mc_returns, pad_token_id
from webrl.rl.replay import confidence_scores, mix, replay_candidates, select_replay


def episode(task_id, name, reward, n_steps=2, response="do()"):
    returns = mc_returns(reward, n_steps)
    return [
        TrainingStep(
            task_id=task_id,
            episode=name,
            step=i,
            prompt=f"{name} prompt {i}",
            response=f"{response} {i}",
            reward=reward,
            next_prompt=None if i == n_steps - 1 else f"{name} prompt {i + 1}",
            done=i == n_steps - 1,
            mc_return=returns[i],
        )
        for i in range(n_steps)
    ]


def names(steps):
    return [(s.episode, s.step) for s in steps]


def test_candidates_are_successful_and_the_first_success_per_task():
    earlier = [
        *episode(1, "a-fail", 0.0),
        *episode(1, "a-first", 1.0),
        *episode(1, "a-second", 1.0),
        *episode(2, "b-half", 0.5),
        *episode(3, "c-low", 0.4),
    ]
    assert names(replay_candidates(earlier)) == [("a-first", 0), ("a-first", 1), ("b-half", 0), ("b-half", 1)]


def test_selection_keeps_the_confidence_band_and_caps_at_twice_the_current_steps():
    candidates = episode(1, "r", 1.0, n_steps=6)
    scores = [0.5, 0.95, 0.96, 0.7, None, 0.51]  # band (0.5, 0.95]: steps 1, 3 and 5
    assert sorted(names(select_replay(candidates, scores, n_current=10, seed=0))) == [("r", 1), ("r", 3), ("r", 5)]
    capped = select_replay(candidates, scores, n_current=1, seed=0)  # 2 × 1 current step
    assert len(capped) == 2 and set(names(capped)) < {("r", 1), ("r", 3), ("r", 5)}
    assert names(select_replay(candidates, scores, 1, seed=0)) == names(capped)  # seeded
    wide = select_replay(candidates, [0.6] * 6, n_current=10, seed=0, bounds=(0.0, 1.0))
    assert len(wide) == 6
    orders = {tuple(names(select_replay(candidates, [0.6] * 6, 10, seed))) for seed in range(5)}
    assert len(orders) > 1  # the order depends on the seed
    with pytest.raises(ValueError, match="scores"):
        select_replay(candidates, scores[:2], 1, 0)


def test_mix_holds_every_current_step_and_the_replay_shuffled():
    replay, current = episode(1, "r", 1.0, 3), episode(2, "c", 0.0, 5)
    mixed = mix(replay, current, seed=3)
    assert sorted(names(mixed)) == sorted(names(replay + current))
    assert names(mixed) != names(replay + current)
    assert names(mix(replay, current, seed=3)) == names(mixed)


def test_scores_are_exp_mean_token_logprob_independent_of_batching(tokenizer, model):
    steps = [
        *episode(1, "a", 1.0, 3, response='do(action="Click", element="5")'),
        *episode(2, "b", 1.0, 2, response="# Note: long\n" * 3 + "exit()"),
    ]
    too_long = episode(3, "c", 1.0, 1, response="word " * 200)
    scores = confidence_scores(model, tokenizer, steps + too_long, max_tokens=64, batch_size=3)
    one_by_one = confidence_scores(model, tokenizer, steps, max_tokens=64, batch_size=1)
    assert scores[-1] is None  # its response does not fit: unscored, so never replayed
    assert scores[:-1] == pytest.approx(one_by_one, rel=1e-4)
    encoded = encode(tokenizer, steps[3].prompt, steps[3].response, 64)
    with torch.no_grad():
        logp, n_tokens = action_logprobs(model, collate([encoded], pad_token_id(tokenizer)))
    assert scores[3] == pytest.approx(math.exp(logp.item() / n_tokens.item()), rel=1e-5)
    assert all(0 < s <= 1 for s in scores[:-1])
