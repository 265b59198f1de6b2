"""The replay buffer and its actor-confidence filter.

From the steps of earlier phases (the demonstrations at phase 0): successful trajectories only, the first
one seen per task (over all the data, not per GPU chunk as in the official code). Each step is
scored by the current actor, rank = exp(mean token log-prob of its action) = 1/perplexity, and kept when
low < rank ≤ high (by default the paper's best, 0.5 and 0.95). The kept steps are shuffled, capped at `ratio` ×
the current phase's steps, then mixed with all current steps (successful and failed) and shuffled again.
Selection is pure (scores in, steps out); scoring runs the model.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import torch

from webrl.rl.data import ResponseTooLong, TrainingStep, action_logprobs, collate, encode, pad_token_id
from webrl.rl.settings import REPLAY_CONFIDENCE

SUCCESS = 0.5  # trajectory_reward >= 0.5 counts as a success
REPLAY_RATIO = 2.0  # replay steps <= 2x current-phase steps (paper and code)


def replay_candidates(earlier: Sequence[TrainingStep]) -> list[TrainingStep]:
    """Steps of successful trajectories, keeping only the first successful episode seen per task."""
    chosen: dict[int | str, str] = {}  # task id -> its episode
    for step in earlier:
        if step.reward >= SUCCESS:
            chosen.setdefault(step.task_id, step.episode)
    return [step for step in earlier if step.reward >= SUCCESS and chosen[step.task_id] == step.episode]


def select_replay(
    candidates: Sequence[TrainingStep],
    scores: Sequence[float | None],
    n_current: int,
    seed: int,
    bounds: tuple[float, float] = REPLAY_CONFIDENCE,
    ratio: float = REPLAY_RATIO,
) -> list[TrainingStep]:
    """Candidates with low < score ≤ high (None: unscored, dropped), shuffled, capped at ratio·n_current."""
    if len(scores) != len(candidates):
        raise ValueError(f"{len(scores)} scores for {len(candidates)} candidate steps")
    low, high = bounds
    kept = [step for step, score in zip(candidates, scores) if score is not None and low < score <= high]
    random.Random(seed).shuffle(kept)
    return kept[: int(ratio * n_current)]


def mix(replay: Sequence[TrainingStep], current: Sequence[TrainingStep], seed: int) -> list[TrainingStep]:
    """The phase's training steps: the replay and every current step, shuffled."""
    steps = [*replay, *current]
    random.Random(seed).shuffle(steps)
    return steps


@torch.no_grad()
def confidence_scores(
    model: torch.nn.Module, tokenizer, steps: Sequence[TrainingStep], max_tokens: int, batch_size: int = 4
) -> list[float | None]:
    """exp(mean token log-prob of each step's action) under `model`; None when the response does not fit.

    Steps are batched by length so that little padding is computed.
    """
    scores: list[float | None] = [None] * len(steps)
    encoded = {}
    for index, step in enumerate(steps):
        try:
            encoded[index] = encode(tokenizer, step.prompt, step.response, max_tokens)
        except ResponseTooLong:
            continue
    order = sorted(encoded, key=lambda index: len(encoded[index].input_ids))
    device = next(model.parameters()).device
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        batch = collate([encoded[index] for index in chunk], pad_token_id(tokenizer)).to(device)
        logp, n_tokens = action_logprobs(model, batch)
        for index, total, count in zip(chunk, logp.tolist(), n_tokens.tolist()):
            scores[index] = math.exp(total / count)
    return scores
