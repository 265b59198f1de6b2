"""The memory one GPU needs to train an actor and a critic, planned from the model's config alone (no weights are
loaded): fully or with LoRA, under each ZeRO stage.

Model states are counted as DeepSpeed's own estimators count them (bf16 weights; per trained parameter, fp32
gradients, master weights and Adam's two moments): under ZeRO-2, 2 bytes a parameter plus 18 a trained parameter
over the GPUs; under ZeRO-3, 18 over the GPUs plus 4 bytes a parameter of the largest layer, gathered; with the
optimizer offloaded to CPU memory, the weights only (under ZeRO-3, which offloads them too, the gathered layer). A
frozen parameter (LoRA's base) costs its 2 bytes only. Activations are an estimate for one micro-batch: with gradient
checkpointing every layer keeps its input and one layer recomputes its own (34 bytes a token per hidden unit, with
fused attention: Korthikanti et al., 2022), and the actor's loss holds fp32 logits and their log-softmax.

The actor and the critic train one after the other, and the reference policy's log-probs are computed before
either (one bf16 copy of the actor, alone), so a phase's peak is the larger of the two trainings.
"""

from __future__ import annotations

from dataclasses import dataclass

from webrl.rl.settings import LoraSettings

ZERO_STAGES = (0, 1, 2, 3)


@dataclass(frozen=True)
class Shape:
    """A Llama-family decoder's sizes, as its config.json gives them."""

    vocab: int
    hidden: int
    intermediate: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    tied: bool

    @classmethod
    def from_config(cls, config: dict) -> Shape:
        heads = config["num_attention_heads"]
        return cls(
            vocab=config["vocab_size"],
            hidden=config["hidden_size"],
            intermediate=config["intermediate_size"],
            layers=config["num_hidden_layers"],
            heads=heads,
            kv_heads=config.get("num_key_value_heads") or heads,
            head_dim=config.get("head_dim") or config["hidden_size"] // heads,
            tied=bool(config.get("tie_word_embeddings", False)),
        )

    def linears(self) -> dict[str, tuple[int, int]]:
        """A decoder block's linear layers: (inputs, outputs) of each."""
        h, q, kv, i = self.hidden, self.heads * self.head_dim, self.kv_heads * self.head_dim, self.intermediate
        return {
            "q_proj": (h, q),
            "k_proj": (h, kv),
            "v_proj": (h, kv),
            "o_proj": (q, h),
            "gate_proj": (h, i),
            "up_proj": (h, i),
            "down_proj": (i, h),
        }

    def layer_params(self) -> int:
        return sum(a * b for a, b in self.linears().values()) + 2 * self.hidden  # and two RMSNorms

    def trunk_params(self) -> int:
        """The embedding, the blocks and the final norm: the critic's trunk."""
        return self.vocab * self.hidden + self.layers * self.layer_params() + self.hidden

    def params(self) -> int:
        return self.trunk_params() + (0 if self.tied else self.vocab * self.hidden)

    def adapter_params(self, lora: LoraSettings) -> int:
        targets = set(lora.target_modules)
        return self.layers * sum(lora.rank * (a + b) for name, (a, b) in self.linears().items() if name in targets)

    def critic_head_params(self) -> int:
        """The critic's two heads: Linear(h,h), Linear(h,h), Linear(h,2) each."""
        h = self.hidden
        return 2 * (2 * (h * h + h) + 2 * h + 2)

    def largest_layer(self) -> int:
        """The most parameters one module holds (ZeRO-3 gathers a module's at a time): the embedding or a linear."""
        return max(self.vocab * self.hidden, *(a * b for a, b in self.linears().values()))


@dataclass(frozen=True)
class Training:
    """One training's bytes on each GPU."""

    weights: float
    gradients: float
    optimizer: float
    activations: float

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer + self.activations


# Published configs (config.json on the Hugging Face Hub) of the models the paper trains, so that a plan for them
# needs no download: the paper preset's model plans offline, and the docs' memory table is made from these.
PUBLISHED_SHAPES = {
    "meta-llama/Llama-3.1-8B": Shape(
        vocab=128256, hidden=4096, intermediate=14336, layers=32, heads=32, kv_heads=8, head_dim=128, tied=False
    ),
    "meta-llama/Llama-3.1-70B": Shape(
        vocab=128256, hidden=8192, intermediate=28672, layers=80, heads=64, kv_heads=8, head_dim=128, tied=False
    ),
}
PUBLISHED_SHAPES |= {f"{name}-Instruct": shape for name, shape in list(PUBLISHED_SHAPES.items())}


def model_states(
    trained: int, frozen: int, largest_layer: int, zero_stage: int, gpus: int, offload: bool = False
) -> tuple[float, ...]:
    """(weights, gradients, optimizer states) in bytes per GPU, DeepSpeed's accounting (module docstring). With
    `offload` the optimizer states, and under ZeRO-3 the weights, live in CPU memory."""
    if offload and zero_stage == 3:
        return 4 * largest_layer, 0, 0
    if offload and zero_stage > 0:
        return 2 * (trained + frozen), 0, 0
    shard = gpus if zero_stage >= 1 else 1
    if zero_stage == 3:
        weights = 2 * (trained + frozen) / gpus + 4 * largest_layer
    else:
        weights = 2 * (trained + frozen)
    gradients = {0: 6 * trained, 1: 2 * trained + 4 * trained / gpus, 2: 6 * trained / gpus, 3: 4 * trained / gpus}
    return weights, gradients[zero_stage], 12 * trained / shard


def activations(shape: Shape, tokens: int, checkpointing: bool, logits: bool) -> float:
    """Bytes of one micro-batch of `tokens` tokens (bf16; module docstring)."""
    layer = 34 * tokens * shape.hidden
    kept = 2 * tokens * shape.hidden * shape.layers + layer if checkpointing else layer * shape.layers
    return kept + (8 * tokens * shape.vocab if logits else 0)


def plan(
    shape: Shape,
    lora: LoraSettings,
    zero_stage: int,
    gpus: int,
    tokens: int,
    checkpointing: bool,
    offload: bool = False,
) -> dict[str, Training]:
    """The actor's and the critic's training, each fully (lora rank 0) or with `lora` on the model, per GPU."""
    trunk, head = shape.trunk_params(), shape.critic_head_params()
    if lora.enabled:
        actor = (shape.adapter_params(lora), shape.params())
        critic = (shape.adapter_params(lora) + head, trunk)
    else:
        actor, critic = (shape.params(), 0), (trunk + head, 0)
    largest = shape.largest_layer()
    return {
        "actor": Training(
            *model_states(*actor, largest, zero_stage, gpus, offload), activations(shape, tokens, checkpointing, True)
        ),
        "critic": Training(
            *model_states(*critic, largest, zero_stage, gpus, offload),
            activations(shape, tokens, checkpointing, False),
        ),
    }
