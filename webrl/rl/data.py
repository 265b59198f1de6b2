"""Step records and their tokens.

A step is one (prompt, response) pair of an episode, plus what the critic and the advantage need: the
next prompt, the trajectory outcome copied onto every step and its discounted Monte-Carlo return, as in
the official code. Tokens: the prompt is tokenized with the tokenizer's special tokens (BOS) and the
response (+ END_OF_TURN) separately without them, then concatenated, so the action tokens are exactly the
response's own tokens whatever BPE would have merged across the boundary (the official get_log_prob tokenizes
them as one string). Too-long inputs lose the end of the prompt's page (the instruction and the headers stay),
never response tokens.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from webrl.errors import UsageError
from webrl.policy.prompt import END_OF_TURN, prompt_token_ids

MAX_TOKENS = 16384  # the official cutoff for SFT, critic and actor
GAMMA = 0.9  # official default.yaml gamma; process_data.py hard-codes it too


@dataclass(frozen=True)
class Step:
    """One step of an episode. `next_prompt` is None at the last step (terminal, `done`)."""

    task_id: int | str
    episode: str
    step: int
    prompt: str
    response: str
    reward: float  # the trajectory's final outcome, the same on every step (official semantics)
    next_prompt: str | None
    done: bool
    mc_return: float

    @property
    def next_observation(self) -> str:
        """s' as the official critic and advantage see it: the step's own prompt at the terminal step, so
        V(s') − V(s) = 0 there (kept for the official form; the paper form uses `done` to set V(s_{T+1}) = 0
        instead)."""
        return self.prompt if self.next_prompt is None else self.next_prompt


# field -> (accepted types, required); bool is rejected separately because it is an int subclass
_FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "task_id": ((int, str), True),
    "step": ((int,), True),
    "prompt": ((str,), True),
    "response": ((str,), True),
    "episode": ((str,), False),
    "reward": ((int, float), False),
}


def _where(path: Path, line: int, task_id: Any) -> str:
    return f"{path}:{line}: task {task_id!r}"


def _check_record(record: Any, path: Path, line: int, reward_required: bool) -> None:
    """Raise UsageError naming file, line, task id and field for the first problem in one record."""
    if not isinstance(record, dict):
        raise UsageError(f"{path}:{line}: expected a JSON object, got {type(record).__name__}")
    task_id = record.get("task_id")
    for field, (types, required) in _FIELDS.items():
        if field not in record:
            if required or (field == "reward" and reward_required):
                raise UsageError(f"{_where(path, line, task_id)}: missing field '{field}'")
            continue
        value = record[field]
        if isinstance(value, bool) or not isinstance(value, types):
            expected = " or ".join(t.__name__ for t in types)
            raise UsageError(f"{_where(path, line, task_id)}: field '{field}' must be {expected}, got {value!r}")
    if record["step"] < 0:
        raise UsageError(f"{_where(path, line, task_id)}: field 'step' must be >= 0, got {record['step']}")
    if not record["prompt"]:
        raise UsageError(f"{_where(path, line, task_id)}: field 'prompt' is empty")
    reward = record.get("reward", 1.0)
    if not (math.isfinite(reward) and 0.0 <= reward <= 1.0):
        raise UsageError(f"{_where(path, line, task_id)}: field 'reward' must be in [0, 1], got {reward!r}")


def _read_records(path: Path, reward_required: bool) -> list[tuple[int, dict]]:
    """(line number, record) for every non-blank line, validated."""
    try:
        text = path.read_text()
    except OSError as err:
        raise UsageError(f"cannot read step file {path}: {err.strerror or err}") from err
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text (a step file is JSON lines)") from None
    records = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as err:
            raise UsageError(f"{path}:{number}: not valid JSON ({err.msg})") from err
        _check_record(record, path, number, reward_required)
        records.append((number, record))
    return records


def mc_returns(reward: float, n_steps: int, gamma: float = GAMMA) -> list[float]:
    """mc_return_t = Σ_{k=t}^{T-1} γ^{k-t}·r with the outcome r on every step (official add_mc_return)."""
    returns, running = [], 0.0
    for _ in range(n_steps):
        running = reward + gamma * running
        returns.append(running)
    return returns[::-1]


def _episode_steps(path: Path, rows: list[tuple[int, dict]], gamma: float) -> list[Step]:
    """The Steps of one episode, ordered, after checking steps 0..n-1 and one task id and reward."""
    rows = sorted(rows, key=lambda row: row[1]["step"])
    first = rows[0][1]
    for index, (line, record) in enumerate(rows):
        where = _where(path, line, record["task_id"])
        if record["step"] != index:
            raise UsageError(
                f"{where}: field 'step' is {record['step']} but episode {_episode(record)!r} "
                f"needs steps 0..{len(rows) - 1} each once (expected {index})"
            )
        for field, default in (("task_id", None), ("reward", 1.0)):
            if record.get(field, default) != first.get(field, default):
                raise UsageError(f"{where}: field '{field}' differs from step 0 of episode {_episode(record)!r}")
    reward = float(first.get("reward", 1.0))
    returns = mc_returns(reward, len(rows), gamma)
    last = len(rows) - 1
    return [
        Step(
            task_id=record["task_id"],
            episode=_episode(record),
            step=index,
            prompt=record["prompt"],
            response=record["response"],
            reward=reward,
            next_prompt=None if index == last else rows[index + 1][1]["prompt"],
            done=index == last,
            mc_return=returns[index],
        )
        for index, (_, record) in enumerate(rows)
    ]


def _episode(record: dict) -> str:
    return record.get("episode", str(record["task_id"]))


def load_steps(path: Path, gamma: float = GAMMA, reward_required: bool = False) -> list[Step]:
    """Every step of a step JSONL file, episodes in order of first appearance, steps in order. A record without
    a reward is a demonstration (reward 1), which SFT data may be; an update's rollouts must say theirs."""
    episodes: dict[str, list[tuple[int, dict]]] = {}
    for line, record in _read_records(Path(path), reward_required):
        episodes.setdefault(_episode(record), []).append((line, record))
    return [step for rows in episodes.values() for step in _episode_steps(Path(path), rows, gamma)]


# ---- tokens ----------------------------------------------------------------------------------------------


class ResponseTooLong(ValueError):
    """The response (+ END_OF_TURN) plus one prompt token does not fit: callers skip the step and count it."""


@dataclass(frozen=True)
class Encoded:
    """Token ids of prompt + response; the last `n_action` ids are the response's (the action tokens)."""

    input_ids: list[int]
    n_action: int


def encode_prompt(tokenizer, prompt: str, max_tokens: int) -> list[int]:
    """The prompt's ids with special tokens, at most `max_tokens`: a long page loses its end, never the task
    instruction or the assistant header (webrl.policy.prompt.prompt_token_ids, as at inference)."""
    return prompt_token_ids(tokenizer, prompt, max_tokens)[0]


def encode(tokenizer, prompt: str, response: str, max_tokens: int) -> Encoded:
    """Prompt ids (BOS, left-cut when needed) + ids of `response + END_OF_TURN` tokenized on their own."""
    action = tokenizer(response + END_OF_TURN, add_special_tokens=False).input_ids
    if len(action) + 1 > max_tokens:  # the first action token needs one prompt position to be predicted from
        raise ResponseTooLong(f"response has {len(action)} tokens; with a prompt token that exceeds {max_tokens}")
    return Encoded(encode_prompt(tokenizer, prompt, max_tokens - len(action)) + action, len(action))


@dataclass(frozen=True)
class Batch:
    """Right-padded token tensors [B, L]; `action_mask` is True at the action (response) tokens."""

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    action_mask: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        return Batch(self.input_ids.to(device), self.attention_mask.to(device), self.action_mask.to(device))


def pad_token_id(tokenizer) -> int:
    """The id to pad with: the pad token, else EOS (Llama-3 has no pad token); pads are masked anyway."""
    for candidate in (tokenizer.pad_token_id, tokenizer.eos_token_id):
        if candidate is not None:
            return candidate
    return 0


def collate(encoded: Sequence[Encoded], pad_id: int) -> Batch:
    """Stack encodings with right padding (critic inputs are Encoded with n_action = 0)."""
    length = max(len(e.input_ids) for e in encoded)
    input_ids = torch.full((len(encoded), length), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(encoded), length), dtype=torch.long)
    action_mask = torch.zeros((len(encoded), length), dtype=torch.bool)
    for row, item in enumerate(encoded):
        n = len(item.input_ids)
        input_ids[row, :n] = torch.tensor(item.input_ids, dtype=torch.long)
        attention_mask[row, :n] = 1
        action_mask[row, n - item.n_action : n] = True
    return Batch(input_ids, attention_mask, action_mask)


def position_ids(attention_mask: torch.Tensor) -> torch.Tensor:
    """Positions counted over real tokens only, so a row's outputs do not depend on left padding."""
    return (attention_mask.long().cumsum(-1) - 1).clamp(min=0)


def action_logprobs(model: torch.nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """(Σ log π(a_k | s, a_<k) over each row's action tokens [B], number of action tokens [B]).

    Only the positions from the earliest action token on get logits, so the vocabulary-sized tensor covers the
    actions, not the prompts.
    """
    targets = batch.action_mask[:, 1:]
    first = int(targets.int().argmax(-1).min()) if bool(targets.any()) else targets.shape[1] - 1
    mask = targets[:, first:]
    return torch.where(mask, next_token_logprobs(model, batch, first), 0.0).sum(-1), mask.sum(-1)


def next_token_logprobs(model: torch.nn.Module, batch: Batch, first: int = 0) -> torch.Tensor:
    """log π(token k | tokens < k) for k = first+1 .. L-1, [B, L-1-first] (padding positions included: mask them).

    Token k is predicted by the logits at position k-1; `logits_to_keep` computes only those from `first` on.
    """
    keep = batch.input_ids.shape[1] - 1 - first
    out = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=position_ids(batch.attention_mask),
        use_cache=False,
        logits_to_keep=keep + 1,
    )
    logits = out.logits[:, :-1].float()  # drop the last position: it predicts past the end
    ids = batch.input_ids[:, first + 1 :]
    return torch.log_softmax(logits, dim=-1).gather(-1, ids.unsqueeze(-1)).squeeze(-1)


def max_tokens_for(model_dir: Path, requested: int | None) -> int:
    """`requested`, else the official 16384 capped by the model's context length (SmolLM2: 8192)."""
    if requested is not None:
        if requested < 2:
            raise UsageError(f"--max-tokens {requested}: need at least 2 (one prompt and one response token)")
        return requested
    config = json.loads((model_dir / "config.json").read_text())
    return min(MAX_TOKENS, int(config.get("max_position_embeddings") or MAX_TOKENS))


def encode_steps(tokenizer, steps: Sequence[Step], max_tokens: int) -> tuple[list[Encoded | None], int]:
    """Each step's tokens (None where the response does not fit) and how many were skipped."""
    encoded: list[Encoded | None] = []
    for step in steps:
        try:
            encoded.append(encode(tokenizer, step.prompt, step.response, max_tokens))
        except ResponseTooLong:
            encoded.append(None)
    return encoded, sum(e is None for e in encoded)
