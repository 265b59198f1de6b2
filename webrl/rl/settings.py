"""How one training runs: the engine's settings (TrainSettings) and, on top of them, what an SFT (SftSettings) and a
phase's critic and actor update (UpdateSettings) optimise. Kept apart from the engine so that the CLI builds its
options from these models without importing torch; every field's description is its option's help."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

# The replay buffer keeps earlier successful steps whose actor confidence exp(mean token log-prob) = 1/perplexity
# lies in (low, high]: the paper's best range (Table 2), perplexity in [1/0.95, 1/0.5)
REPLAY_CONFIDENCE = (0.5, 0.95)

GROUP_FORMS = ("grpo", "gigpo")  # the objectives that compare rollouts within a group of the same task

# The objective's own parameters: the forms that use each, and what it is. Given with another form, one is refused
# rather than silently ignored.
FORM_PARAMETERS = {
    "beta": (("paper",), "the paper loss's KL weight; the official loss adapts its own β"),
    "lam": (("paper",), "Eq. 9's λ"),
    "awr_temperature": (("awr",), "AWR's τ"),
    "clip_ratio": (GROUP_FORMS, "the clip ε of the importance ratio"),
    "kl_coef": (GROUP_FORMS, "the weight of the k3 KL to the reference"),
    "trajectory_normaliser": (GROUP_FORMS, "the 1/k weight of a trajectory's steps"),
    "dynamic_sampling": (GROUP_FORMS, "DAPO's dropping of groups without signal"),
    "step_advantage_weight": (("gigpo",), "GiGPO's ω"),
    "step_gamma": (("gigpo",), "GiGPO's discount of the step returns"),
}


# Llama's attention and MLP projections: every linear layer of a decoder block (the names SmolLM2 and reader share)
LLAMA_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


class LoraSettings(BaseModel):
    """Low-rank adapters (LoRA, through PEFT): train an adapter on the frozen model instead of all its weights."""

    model_config = {"extra": "forbid"}

    rank: int = Field(0, ge=0, description="The adapters' rank r (0: no adapters, every weight trains).")
    alpha: float = Field(32.0, gt=0, description="LoRA's α: an adapter's update is scaled by α / r.")
    dropout: float = Field(0.0, ge=0, lt=1, description="Dropout on the adapters' inputs.")
    target_modules: list[str] = Field(
        LLAMA_LINEAR,
        min_length=1,
        description="The linear layers that get adapters, by module name (Llama's attention and MLP "
        "projections; as an option, repeated for several).",
        json_schema_extra={"metavar": "NAME"},
    )

    @property
    def enabled(self) -> bool:
        return self.rank > 0


# WebRL's SFT (paper Table 4) and ORM training (Table 5) schedule; its actor and critic updates keep a constant rate
COSINE_WARMUP = {"lr_schedule": "cosine", "warmup": 0.1}


class TrainSettings(BaseModel):
    """How to train: the optimizer, its schedule, batching and the DeepSpeed engine."""

    model_config = {"extra": "forbid"}

    zero_stage: int = Field(
        2,
        ge=0,
        le=3,
        description="DeepSpeed ZeRO stage: 0 replicates everything, 1 shards "
        "the optimizer states, 2 also the gradients, 3 also the parameters.",
    )
    offload: bool = Field(
        False,
        description="Keep the optimizer states (ZeRO 1-3) and, with ZeRO-3, the parameters in CPU memory (GPU only).",
    )
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto",
        description="Weights and compute in fp32, or in bf16 with fp32 master weights; auto: bf16 on "
        "GPUs, fp32 on CPU (where bf16 training is no faster, often slower).",
    )
    lr: float = Field(1e-6, gt=0, description="AdamW learning rate (the peak one under a cosine schedule).")
    lr_schedule: Literal["constant", "cosine"] = Field(
        "constant",
        description="constant (WebRL's actor and critic updates), or cosine: linear warm-up over "
        "--warmup of the steps, then a cosine decay to 0 (WebRL's SFT and ORM training).",
    )
    warmup: float = Field(
        0.0, ge=0, lt=1, description="Fraction of the steps the cosine schedule warms up over (WebRL's SFT: 0.1)."
    )
    weight_decay: float = Field(0.01, ge=0, description="AdamW weight decay.")
    betas: tuple[float, float] = Field((0.9, 0.999), description="AdamW betas.")
    micro_batch_size: int = Field(1, ge=1, description="Items per forward pass on each process.")
    grad_accum: int = Field(1, ge=1, description="Micro-batches per optimizer step on each process.")
    max_grad_norm: float = Field(1.0, ge=0, description="Clip the global gradient norm to this (0: no clipping).")
    epochs: int = Field(1, ge=1, description="Passes over the data.")
    seed: int = Field(0, description="Seeds the data order and the random number generators.")
    save_every: int = Field(
        0, ge=0, description="Checkpoint every N optimizer steps (0: only at the end; the last step is always saved)."
    )
    gradient_checkpointing: bool = Field(
        False, description="Recompute activations in the backward pass: less memory, about a third more compute."
    )
    lora: LoraSettings = Field(
        default_factory=LoraSettings,
        description="LoRA on the trained model (the actor in an update); rank 0, the default, trains every weight",
    )

    @model_validator(mode="after")
    def _offload_needs_zero(self) -> TrainSettings:
        if self.offload and self.zero_stage == 0:
            raise ValueError("offload needs ZeRO stage 1, 2 or 3")
        return self

    def lr_at(self, step: int, total: int) -> float:
        """The learning rate of optimizer step `step` (1-based) of `total`: with cosine, `lr` x step / w over the
        first w = warmup x total steps, then a half cosine from `lr` toward 0 (the last step's is small, not 0).
        Computed from the step alone, so a resumed training continues the schedule exactly."""
        if self.lr_schedule == "constant":
            return self.lr
        warm = round(self.warmup * total)
        if step <= warm:
            return self.lr * step / warm
        return self.lr * 0.5 * (1 + math.cos(math.pi * (step - warm - 1) / (total - warm)))

    def global_batch(self, world_size: int) -> int:
        return self.micro_batch_size * self.grad_accum * world_size

    def compute_precision(self) -> Literal["fp32", "bf16"]:
        """The precision `auto` stands for on this machine."""
        if self.precision == "auto":
            import torch  # here, so that the CLI can build its options without loading torch

            return "bf16" if torch.cuda.is_available() else "fp32"
        return self.precision


class SftSettings(TrainSettings):
    """Supervised fine-tuning: the token-mean NLL of the answers (WebRL's SFT), optionally of the pages too. Its
    defaults are WebRL's SFT schedule (paper Table 4), so that a settings file naming one field keeps the others."""

    lr: float = Field(1e-5, gt=0, description="AdamW learning rate (the peak one under a cosine schedule).")
    lr_schedule: Literal["constant", "cosine"] = Field(
        COSINE_WARMUP["lr_schedule"], description=TrainSettings.model_fields["lr_schedule"].description
    )
    warmup: float = Field(
        COSINE_WARMUP["warmup"], ge=0, lt=1, description=TrainSettings.model_fields["warmup"].description
    )

    page_loss: float = Field(
        0.0,
        ge=0.0,
        description="Also train a language-model loss on the prompt's tokens, "
        "this weight beside the answer's (0: the answer only, as WebRL; a from-scratch model "
        "such as tiny needs it to read the page).",
    )


class UpdateSettings(TrainSettings):
    """A phase's WebRL update: how the critic trains, which earlier steps are replayed, and the actor's objective."""

    objective: Literal["official", "paper", "awr", "grpo", "gigpo"] = Field(
        "official",
        description="official: the released code's losses and binarised advantage (the published "
        "numbers); paper: Eq. 8, Eq. 9 and the squared KL-regularised loss; awr: the paper's AWR baseline, Eq. 8's "
        "critic, A = r_T - V(s) and the token-mean log-likelihood weighted by min(exp(A / awr_temperature), 20); "
        "grpo: no critic, every step of a rollout gets its reward normalised within the rollouts of its task, "
        "(R - mean) / (std + 1e-6), in a clipped importance-ratio loss; gigpo: grpo's advantage plus "
        "step_advantage_weight times a step advantage over the steps whose page is the same. grpo and gigpo train "
        "on the phase's own rollouts only (no critic, no replay).",
    )
    beta: float = Field(
        1.0,
        ge=0.0,
        description="The paper objective's KL weight β (the paper does not state its value). The paper objective "
        "only: the official one adapts its own β per step.",
    )
    lam: float = Field(
        0.5,
        ge=0.0,
        le=1.0,
        description="Eq. 9's λ: the advantage's weight on the one-step estimate r_t + V(s_t+1) - V(s_t), the "
        "rest on the final r_T - V(s_t) (the paper: 0.5). The paper objective only.",
    )
    awr_temperature: float = Field(
        1.0,
        gt=0.0,
        description="AWR's temperature τ in the weight min(exp(A / τ), 20) (the paper does not state it). The awr "
        "objective only.",
    )
    clip_ratio: float = Field(
        0.2,
        gt=0.0,
        lt=1.0,
        description="ε of the importance ratio's clip to [1 - ε, 1 + ε] (DeepSeekMath: 0.2). grpo and gigpo only.",
    )
    kl_coef: float = Field(
        0.0,
        ge=0.0,
        description="Weight of the k3 estimate of the KL to the reference (the actor at the start of the phase) in "
        "the loss (0: none). grpo and gigpo only.",
    )
    trajectory_normaliser: bool = Field(
        True,
        description="Weight each step by 1/k, k its trajectory's steps (scaled so the mean weight is 1), so that "
        "every trajectory counts once whatever its length; off: every step counts once. grpo and gigpo only.",
    )
    # On by default: a group without signal adds no gradient (at kl_coef 0), only optimizer steps, and Adam's steps
    # are as large whatever the gradient's size; kept, they let the learning benchmark's GRPO actor drift to 0%.
    dynamic_sampling: bool = Field(
        True,
        description="Drop the groups whose rollouts all got the same reward (their advantage is 0 everywhere), "
        "counted in metrics.json (DAPO's dynamic sampling; the batch is not refilled yet). grpo and gigpo only.",
    )
    step_advantage_weight: float = Field(
        1.0,
        ge=0.0,
        description="GiGPO's ω: the weight of the step advantage beside the episode's (the paper: 1). gigpo only.",
    )
    step_gamma: float = Field(
        0.95,
        gt=0.0,
        le=1.0,
        description="GiGPO's γ: a step's return is γ^(steps after it) times the trajectory's reward (the paper: "
        "0.95). gigpo only.",
    )
    critic_lr: float | None = Field(
        None, gt=0, description="The critic's learning rate [default: the actor's lr, as in the official code]."
    )
    critic_lora: LoraSettings = Field(
        default_factory=LoraSettings,
        description="LoRA on the critic's trunk, apart from the actor's (its value heads always train in full)",
    )
    critic_replay: bool = Field(
        True,
        description="The critic trains on the replayed steps too, as in the official "
        "code; off: on the phase's own rollouts only, so that its values (and the next "
        "phase's task band) say where this actor succeeds.",
    )
    replay: bool = Field(
        True,
        description="Train on the filtered replay of earlier successful steps (the "
        "demonstrations, earlier phases) beside the phase's own; off (an ablation): its own only.",
    )
    replay_confidence: tuple[float, float] = Field(
        REPLAY_CONFIDENCE,
        description="Replay an earlier successful step when the actor's confidence in it, "
        "exp(mean token log-prob), lies in (LOW, HIGH] (the paper's best: 0.5 0.95; a HIGH of 1 also replays what "
        "the actor already does surely).",
        json_schema_extra={"metavar": "LOW HIGH"},
    )

    @field_validator("replay_confidence")
    @classmethod
    def _a_confidence_band(cls, bounds: tuple[float, float]) -> tuple[float, float]:
        low, high = bounds
        if not 0 <= low < high <= 1:
            raise ValueError(f"expected 0 <= LOW < HIGH <= 1, got {low} {high}")
        return bounds

    @field_validator(*FORM_PARAMETERS)
    @classmethod
    def _a_parameter_of_the_objective(cls, value: float | bool, info: ValidationInfo) -> float | bool:
        # runs on given values only (pydantic does not validate defaults): a default is never refused
        form = info.data.get("objective")  # absent when the objective itself was refused
        owners, what = FORM_PARAMETERS[info.field_name]
        if form is not None and form not in owners:
            raise ValueError(
                f"{info.field_name} ({what}) applies to the {' and '.join(owners)} objective only, not {form}"
            )
        return value

    @model_serializer(mode="wrap")
    def _without_other_forms_parameters(self, handler: SerializerFunctionWrapHandler) -> dict:
        # so that a dump reads back (--print-config, settings.yaml, job files): the validator refuses them there
        data = handler(self)
        for name, (owners, _) in FORM_PARAMETERS.items():
            if self.objective not in owners:
                data.pop(name, None)
        return data

    def critic_settings(self) -> TrainSettings:
        """How the critic trains: these settings at the critic's learning rate, with the critic's LoRA."""
        return self.train_settings().model_copy(update={"lr": self.critic_lr or self.lr, "lora": self.critic_lora})

    def train_settings(self) -> TrainSettings:
        """The engine's part of these settings (Filtered BC trains the update's way with the SFT loss)."""
        return TrainSettings(**self.model_dump(include=set(TrainSettings.model_fields)))
