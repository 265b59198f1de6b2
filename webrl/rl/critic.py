"""The critic V(s): an LM trunk and two MLP heads with 2-way logits.

The input is the observation (prompt) only. The feature is the trunk's last hidden state at each row's last
real token, found from the attention mask, so any padding side and batch size read the right position
(the official critic reads the last position, wrong with right padding and batches above 1); position ids count
real tokens only, so left padding does not shift them. The head width comes from the model config (the official
gen_task.py hard-codes 4096).

On disk a critic is the whole causal LM as a Hugging Face folder (trained trunk, the LM head it was loaded
with), so the trunk can seed another critic or be loaded by any HF tool, or with LoRA the trunk's adapter folder
(webrl.rl.lora), plus `heads.pt` for the heads.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import Tensor, nn

from webrl.files import atomic_dir
from webrl.policy.models import load_causal_lm, save_model
from webrl.rl.data import position_ids

HEADS_FILE = "heads.pt"
HEAD_INIT_STD = 0.2  # official: layers 0 and 2 ~ N(0, 0.2), bias 0; the last layer keeps PyTorch's default


def make_head(hidden: int) -> nn.Sequential:
    """Linear(h,h) → ReLU → Linear(h,h) → ReLU → Linear(h,2), initialised as the official critic."""
    head = nn.Sequential(
        nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 2)
    )
    for index in (0, 2):
        nn.init.normal_(head[index].weight, mean=0.0, std=HEAD_INIT_STD)
        nn.init.zeros_(head[index].bias)
    return head


def last_real_index(attention_mask: Tensor) -> Tensor:
    """Per row, the index of the last position whose mask is 1 (right, left or no padding)."""
    length = attention_mask.shape[-1]
    return length - 1 - attention_mask.long().flip(-1).argmax(-1)


class Critic(nn.Module):
    """Double critic: `forward(input_ids, attention_mask) -> logits [B, 2 heads, 2]`."""

    def __init__(self, lm: nn.Module):
        super().__init__()
        causal = lm.get_base_model() if hasattr(lm, "get_base_model") else lm  # a PEFT model's wraps the LM
        self.trunk = causal.base_model  # the decoder without the LM head (Llama: `.model`)
        self._lm = (lm,)  # kept unregistered: the head is saved with the folder but is no critic parameter
        hidden = lm.config.hidden_size
        self.heads = nn.ModuleList([make_head(hidden), make_head(hidden)])

    @property
    def name_or_path(self) -> str:
        return self._lm[0].name_or_path

    @classmethod
    def from_pretrained(cls, model_dir: Path, dtype: torch.dtype = torch.float32) -> Critic:
        """A critic whose trunk comes from the causal LM `model_dir` (an adapter merged into its base), with fresh
        heads."""
        return cls(load_causal_lm(model_dir, dtype))

    @classmethod
    def load(cls, critic_dir: Path, dtype: torch.dtype = torch.float32) -> Critic:
        """A critic saved by `save`: the trunk from the folder, the heads from heads.pt."""
        return cls.from_pretrained(critic_dir, dtype).with_heads_of(critic_dir)

    def with_heads_of(self, critic_dir: Path) -> Critic:
        """This critic with the heads a saved critic has."""
        self.heads.load_state_dict(torch.load(Path(critic_dir) / HEADS_FILE, map_location="cpu"))
        return self

    def save(self, out_dir: Path, tokenizer=None) -> None:
        """Write the causal LM (HF folder), heads.pt and optionally the tokenizer; all or nothing.

        Under ZeRO-3 call this with the parameters gathered (deepspeed.zero.GatheredParameters) on rank 0.
        """
        with atomic_dir(Path(out_dir)) as tmp:
            save_model(self._lm[0], tmp)
            torch.save({k: v.detach().cpu() for k, v in self.heads.state_dict().items()}, tmp / HEADS_FILE)
            if tokenizer is not None:
                tokenizer.save_pretrained(tmp)

    def forward(self, input_ids: Tensor, attention_mask: Tensor) -> Tensor:
        hidden = self.trunk(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids(attention_mask),
            use_cache=False,
        ).last_hidden_state
        rows = torch.arange(hidden.shape[0], device=hidden.device)
        feature = hidden[rows, last_real_index(attention_mask)]
        feature = feature.to(self.heads[0][0].weight.dtype)
        return torch.stack([head(feature) for head in self.heads], dim=1)
