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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from webrl.errors import UsageError, field_problem
from webrl.files import json_object
from webrl.policy.models import config_folder
from webrl.policy.prompt import END_OF_TURN, prompt_token_ids

MAX_TOKENS = 16384  # the official cutoff for SFT, critic and actor
GAMMA = 0.9  # official default.yaml gamma; process_data.py hard-codes it too


@dataclass(frozen=True)
class TrainingStep:
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
    # the rollout policy's own tokens of `response` and their log-probs, as it sampled them (empty: not recorded)
    sampled_ids: tuple[int, ...] = ()
    sampled_logprobs: tuple[float, ...] = ()
    sampled_prompt_tokens: int | None = None  # how many prompt tokens the sampler kept (a long page cut)

    @property
    def next_observation(self) -> str:
        """s' as the official critic and advantage see it: the step's own prompt at the terminal step, so
        V(s') − V(s) = 0 there (kept for the official form; the paper form uses `done` to set V(s_{T+1}) = 0
        instead)."""
        return self.prompt if self.next_prompt is None else self.next_prompt


STEP_SCHEMA_VERSION = 2  # 2: the version on every line; 1: lines written before it (the same fields)


class StepRecord(BaseModel):
    """One line of a step file (a phase's steps.jsonl, the demonstrations' demos.jsonl, what `webrl sft` and
    `webrl rl-update` read): written by webrl.train.rewards and read by `load_steps`, both through this model.
    Strict types: a bool is not a number, a string is not a step."""

    model_config = ConfigDict(strict=True, extra="ignore")

    schema_version: int = STEP_SCHEMA_VERSION
    task_id: int | str
    episode: str | None = None  # the episode's name [default: the task id]
    step: int = Field(ge=0)
    prompt: str = Field(min_length=1)
    response: str
    reward: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)  # the episode's outcome; None: a demo
    # the tokens the rollout policy sampled for `response` and their log-probs (an hf or vllm actor's rollouts)
    sampled_ids: list[int] | None = None
    sampled_logprobs: list[float] | None = None
    sampled_prompt_tokens: int | None = Field(None, ge=1)  # the prompt as the sampler cut it, in tokens

    @property
    def episode_name(self) -> str:
        return str(self.task_id) if self.episode is None else self.episode

    @property
    def outcome(self) -> float:
        """The reward; a demonstration without one is a success."""
        return 1.0 if self.reward is None else self.reward

    def to_line(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_none=True)) + "\n"


def _where(path: Path, line: int, task_id: Any) -> str:
    return f"{path}:{line}: task {task_id!r}"


def _parse_record(raw: str, path: Path, line: int, reward_required: bool) -> StepRecord:
    """One line as a StepRecord; a usage error naming file, line, task id and field for the first problem."""
    data = json_object(raw, f"{path}:{line}")
    where = _where(path, line, data.get("task_id"))
    try:
        record = StepRecord.model_validate({"schema_version": 1, **data})
    except ValidationError as err:
        problem = field_problem(err)
        field = str(problem.loc[0]) if problem.loc else ""
        if problem.kind == "missing":
            raise UsageError(f"{where}: missing field '{field}'") from None
        raise UsageError(f"{where}: field '{field}': {problem.message}, got {problem.value!r}") from None
    if reward_required and record.reward is None:
        raise UsageError(f"{where}: missing field 'reward'")
    if len(record.sampled_ids or ()) != len(record.sampled_logprobs or ()):
        raise UsageError(f"{where}: field 'sampled_logprobs' needs one log-prob per token of 'sampled_ids'")
    return record


def _read_records(path: Path, reward_required: bool) -> list[tuple[int, StepRecord]]:
    """(line number, record) for every non-blank line, validated."""
    try:
        text = path.read_text()
    except OSError as err:
        raise UsageError(f"cannot read step file {path}: {err.strerror or err}") from err
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text (a step file is JSON lines)") from None
    return [
        (number, _parse_record(raw, path, number, reward_required))
        for number, raw in enumerate(text.splitlines(), start=1)
        if raw.strip()
    ]


def mc_returns(reward: float, n_steps: int, gamma: float = GAMMA) -> list[float]:
    """mc_return_t = Σ_{k=t}^{T-1} γ^{k-t}·r with the outcome r on every step (official add_mc_return)."""
    returns, running = [], 0.0
    for _ in range(n_steps):
        running = reward + gamma * running
        returns.append(running)
    return returns[::-1]


def _episode_steps(path: Path, rows: list[tuple[int, StepRecord]], gamma: float) -> list[TrainingStep]:
    """The Steps of one episode, ordered, after checking steps 0..n-1 and one task id and reward."""
    rows = sorted(rows, key=lambda row: row[1].step)
    first = rows[0][1]
    for index, (line, record) in enumerate(rows):
        where = _where(path, line, record.task_id)
        if record.step != index:
            raise UsageError(
                f"{where}: field 'step' is {record.step} but episode {record.episode_name!r} "
                f"needs steps 0..{len(rows) - 1} each once (expected {index})"
            )
        for field, mine, theirs in (
            ("task_id", record.task_id, first.task_id),
            ("reward", record.outcome, first.outcome),
        ):
            if mine != theirs:
                raise UsageError(f"{where}: field '{field}' differs from step 0 of episode {record.episode_name!r}")
    reward = first.outcome
    returns = mc_returns(reward, len(rows), gamma)
    last = len(rows) - 1
    return [
        TrainingStep(
            task_id=record.task_id,
            episode=record.episode_name,
            step=index,
            prompt=record.prompt,
            response=record.response,
            reward=reward,
            next_prompt=None if index == last else rows[index + 1][1].prompt,
            done=index == last,
            mc_return=returns[index],
            sampled_ids=tuple(record.sampled_ids or ()),
            sampled_logprobs=tuple(record.sampled_logprobs or ()),
            sampled_prompt_tokens=record.sampled_prompt_tokens,
        )
        for index, (_, record) in enumerate(rows)
    ]


def load_steps(path: Path, gamma: float = GAMMA, reward_required: bool = False) -> list[TrainingStep]:
    """Every step of a step JSONL file, episodes in order of first appearance, steps in order. A record without
    a reward is a demonstration (reward 1), which SFT data may be; an update's rollouts must say theirs."""
    episodes: dict[str, list[tuple[int, StepRecord]]] = {}
    for line, record in _read_records(Path(path), reward_required):
        episodes.setdefault(record.episode_name, []).append((line, record))
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


def encode(tokenizer, prompt: str, response: str, max_tokens: int, sampled: TrainingStep | None = None) -> Encoded:
    """Prompt ids (BOS, left-cut when needed) + ids of `response + END_OF_TURN` tokenized on their own. Given the
    `sampled` step, its tokens as the sampler drew them and its prompt cut as the sampler cut it, where it said."""
    action = sampled_action(tokenizer, sampled) if sampled and sampled.sampled_ids else None
    action = action or tokenizer(response + END_OF_TURN, add_special_tokens=False).input_ids
    prompt_tokens = sampled.sampled_prompt_tokens if sampled else None
    if len(action) + 1 > max_tokens:  # the first action token needs one prompt position to be predicted from
        raise ResponseTooLong(f"response has {len(action)} tokens; with a prompt token that exceeds {max_tokens}")
    budget = min(max_tokens - len(action), prompt_tokens or max_tokens)
    return Encoded(encode_prompt(tokenizer, prompt, budget) + action, len(action))


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
    """(Σ log π(a_k | s, a_<k) over each row's action tokens [B], number of action tokens [B])."""
    logp, mask = action_token_logprobs(model, batch)
    return torch.where(mask, logp, 0.0).sum(-1), mask.sum(-1)


def action_token_logprobs(model: torch.nn.Module, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """(log π(a_k | s, a_<k) [B, T], True at each row's action tokens [B, T]), T the positions from the earliest
    action token of the batch on: only those get logits, so the vocabulary-sized tensor covers the actions, not the
    prompts. Each row's action tokens are contiguous and in order, so `logp[mask]` lists them row by row."""
    targets = batch.action_mask[:, 1:]
    first = int(targets.int().argmax(-1).min()) if bool(targets.any()) else targets.shape[1] - 1
    return next_token_logprobs(model, batch, first), targets[:, first:]


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
    config = json.loads((config_folder(model_dir) / "config.json").read_text())
    return min(MAX_TOKENS, int(config.get("max_position_embeddings") or MAX_TOKENS))


def sampled_action(tokenizer, step: TrainingStep) -> list[int]:
    """The step's sampled tokens, with END_OF_TURN's appended where the answer was cut at its token limit (its
    tokens decode to the response itself, no end after it): training teaches every answer to end."""
    ids = list(step.sampled_ids)
    if tokenizer.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False) == step.response:
        ids += tokenizer(END_OF_TURN, add_special_tokens=False).input_ids
    return ids


def encode_steps(
    tokenizer, steps: Sequence[TrainingStep], max_tokens: int, as_sampled: bool = False
) -> tuple[list[Encoded | None], int]:
    """Each step's tokens (None where the response does not fit) and how many were skipped; `as_sampled`: as the
    sampler drew them, where it recorded them (an update whose ratio is against the sampler's log-probs)."""
    encoded: list[Encoded | None] = []
    for step in steps:
        try:
            encoded.append(encode(tokenizer, step.prompt, step.response, max_tokens, step if as_sampled else None))
        except ResponseTooLong:
            encoded.append(None)
    return encoded, sum(e is None for e in encoded)
