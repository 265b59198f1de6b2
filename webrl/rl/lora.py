"""LoRA through PEFT: the model a training trains, either every weight or low-rank adapters on the frozen ones.

An adapter trains on the frozen base model; only the adapter's matrices (and a critic's value heads) have
gradients and optimizer states, and the engine's checkpoints hold only them. A training's exported adapter is a
PEFT folder (adapter_config.json, adapter_model.safetensors) that also names its base and the base's weights
digest (webrl.policy.models.save_model), so that it is never loaded on other weights.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from webrl.errors import UsageError
from webrl.policy.models import adapter_base, is_adapter, load_causal_lm, load_tokenizer, save_model
from webrl.rl.settings import LoraSettings


def lora_config(lora: LoraSettings):
    from peft import LoraConfig

    return LoraConfig(
        r=lora.rank, lora_alpha=lora.alpha, lora_dropout=lora.dropout, target_modules=list(lora.target_modules)
    )


def trainable_model(
    model_dir: Path, lora: LoraSettings, seed: int, field: str = "lora", further: bool = True
) -> nn.Module:
    """The causal LM of `model_dir` to train under `lora`: every weight (an adapter folder merged into its base),
    else an adapter on frozen weights: the one `model_dir` holds trained further (when `further`), or a new one
    drawn from `seed` (so that a run killed before its first checkpoint starts again from the same adapter) on
    `model_dir`'s weights, an adapter folder's merged. `field` names the settings in errors."""
    if not lora.enabled:
        return load_causal_lm(model_dir)
    from peft import PeftModel, get_peft_model

    if further and is_adapter(model_dir):
        check_shape(model_dir, lora, field)
        return PeftModel.from_pretrained(load_causal_lm(adapter_base(model_dir)), str(model_dir), is_trainable=True)
    torch.manual_seed(seed)
    return get_peft_model(load_causal_lm(model_dir), lora_config(lora))


def check_shape(adapter_dir: Path, lora: LoraSettings, field: str) -> None:
    """The adapter in `adapter_dir` has the rank, α and target modules `lora` says; else a usage error."""
    from peft import PeftConfig

    held = PeftConfig.from_pretrained(str(adapter_dir))
    theirs = {"rank": held.r, "alpha": held.lora_alpha, "target_modules": sorted(held.target_modules)}
    for name, value in theirs.items():
        ours = getattr(lora, name)
        if (sorted(ours) if name == "target_modules" else ours) != value:
            raise UsageError(
                f"{field}.{name}: {ours} differs from the adapter {adapter_dir} it trains further ({value})"
            )


def random_adapter(base: Path, out: Path, lora: LoraSettings, seed: int, scale: float) -> Path:
    """An adapter folder on `base` whose up-projections are drawn from N(0, scale²) (a new adapter's are zero, and
    change nothing): for benches and tests that need adapters whose answers differ."""
    from peft import get_peft_model

    torch.manual_seed(seed)
    model = get_peft_model(load_causal_lm(base), lora_config(lora))
    with torch.no_grad():
        for name, weight in model.named_parameters():
            if "lora_B" in name:
                weight.normal_(0, scale)
    save_model(model, out)
    load_tokenizer(base).save_pretrained(out)
    return out
