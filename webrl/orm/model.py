"""The ORM as a scorer: p(YES) from the logits of "YES" and "NO" at the prompt's last position.

    orm = OutcomeRewardModel.load("THUDM/webrl-orm-llama-3.1-8b")   # or tiny, a folder, ...
    orm.p_yes(examples)     # [0.93, 0.12, ...]
    orm.rewards(examples)   # [1, 0, ...]: 1 where p(YES) >= 0.5

p(YES) = e^l_yes / (e^l_yes + e^l_no): a softmax over the two answer logits only, as the official code.
The answer token ids are the first token of "YES" and of "NO" encoded on their own, which for Llama-3 is the
official `convert_tokens_to_ids("YES")` and works for any tokenizer. Batches are padded on either side; the
logit read is each row's own last real token's, with positions counted over real tokens, so a score does not
depend on what it was batched with.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import torch

from webrl.errors import UsageError
from webrl.orm.data import Example
from webrl.orm.format import ANSWERS, PromptTooLong, orm_input_ids
from webrl.policy.models import load_causal_lm, load_tokenizer, resolve_model
from webrl.rl.data import max_tokens_for, pad_token_id, position_ids
from webrl.rl.passes import pass_device

THRESHOLD = 0.5  # reward = 1 if p(YES) >= THRESHOLD (official)
Side = Literal["left", "right"]


def answer_token_ids(tokenizer) -> tuple[int, int]:
    """(id of "YES", id of "NO"): the first token of each answer encoded without special tokens."""
    ids = []
    for answer in ANSWERS:
        tokens = tokenizer(answer, add_special_tokens=False).input_ids
        if not tokens:
            raise UsageError(f"the tokenizer encodes {answer!r} to no tokens; it cannot be an ORM")
        ids.append(tokens[0])
    if ids[0] == ids[1]:
        raise UsageError(f"the tokenizer's first tokens of {ANSWERS} are the same ({ids[0]}); it cannot be an ORM")
    return ids[0], ids[1]


def encode_examples(tokenizer, examples: Sequence[Example], max_tokens: int) -> list[list[int] | None]:
    """Each example's prompt ids; None where even an empty page does not fit (callers skip and count it)."""
    encoded: list[list[int] | None] = []
    for example in examples:
        try:
            encoded.append(orm_input_ids(tokenizer, example.intent, example.responses, example.html, max_tokens))
        except PromptTooLong:
            encoded.append(None)
    return encoded


def reward(p_yes: float) -> int:
    """The trajectory reward for a p(YES)."""
    return int(p_yes >= THRESHOLD)


def pad_ids(rows: Sequence[Sequence[int]], pad_id: int, side: Side) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids, attention_mask) [B, L] with the rows padded on `side`."""
    length = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), length), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), length), dtype=torch.long)
    for index, row in enumerate(rows):
        span = slice(length - len(row), length) if side == "left" else slice(0, len(row))
        input_ids[index, span] = torch.tensor(row, dtype=torch.long)
        mask[index, span] = 1
    return input_ids, mask


def last_logits(model: torch.nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """The fp32 next-token logits [B, V] at each row's last real token, whichever side the padding is on.
    Only the positions from the earliest such token on are projected onto the vocabulary (`logits_to_keep`):
    one for a left-padded batch, a few for a right-padded batch of similar lengths."""
    length = input_ids.shape[1]
    last = length - 1 - attention_mask.flip(-1).int().argmax(-1)
    keep = length - int(last.min())
    out = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=position_ids(attention_mask),
        use_cache=False,
        logits_to_keep=keep,
    )
    return out.logits[torch.arange(len(last)), last - (length - keep)].float()


def yes_probability(logits: torch.Tensor, yes: int, no: int) -> torch.Tensor:
    """p(YES) [B] from next-token logits [B, V]: a softmax over the two answer logits."""
    return torch.softmax(logits[:, [yes, no]], dim=-1)[:, 0]


class OutcomeRewardModel:
    """A causal LM read as a judge of finished trajectories."""

    def __init__(
        self, model: torch.nn.Module, tokenizer, max_tokens: int, padding_side: Side = "left", batch_size: int = 4
    ):
        """`padding_side` changes no score; left padding projects one position per row onto the vocabulary."""
        self.model, self.tokenizer, self.max_tokens, self.batch_size = model, tokenizer, max_tokens, batch_size
        self.padding_side = padding_side
        self.yes, self.no = answer_token_ids(tokenizer)
        self.pad_id = pad_token_id(tokenizer)

    @classmethod
    def load(
        cls, spec: str, cache_dir: Path | None = None, max_tokens: int | None = None, batch_size: int = 4
    ) -> OutcomeRewardModel:
        """The ORM of a model spec (tiny, ORG/NAME, a folder such as `webrl orm train`'s OUT/orm), on this
        process's GPU in bf16, else on the CPU in fp32. `max_tokens` [default: 16384, capped by the model's
        context] bounds each prompt (the page is cut)."""
        folder = resolve_model(spec, cache_dir)
        device = pass_device()
        model = load_causal_lm(folder, torch.bfloat16 if device.type == "cuda" else torch.float32).to(device)
        return cls(model, load_tokenizer(folder), max_tokens_for(folder, max_tokens), batch_size=batch_size)

    def encode(self, example: Example) -> list[int]:
        """The example's prompt ids (raises format.PromptTooLong when even an empty page does not fit)."""
        return orm_input_ids(self.tokenizer, example.intent, example.responses, example.html, self.max_tokens)

    @torch.no_grad()
    def p_yes_ids(self, rows: Sequence[Sequence[int]]) -> list[float]:
        """p(YES) of encoded prompts, batched by similar length, in input order."""
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        device = next(self.model.parameters()).device
        result = [0.0] * len(rows)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            input_ids, mask = pad_ids([rows[i] for i in chunk], self.pad_id, self.padding_side)
            logits = last_logits(self.model, input_ids.to(device), mask.to(device))
            for index, p in zip(chunk, yes_probability(logits, self.yes, self.no).tolist(), strict=True):
                result[index] = p
        return result

    def p_yes(self, examples: Sequence[Example]) -> list[float]:
        """p(YES) of each example: the ORM's belief that the trajectory succeeded."""
        return self.p_yes_ids([self.encode(example) for example in examples])

    def rewards(self, examples: Sequence[Example]) -> list[int]:
        """The 0/1 outcome reward of each example."""
        return [reward(p) for p in self.p_yes(examples)]
