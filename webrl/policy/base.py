"""The `Policy` protocol: what every agent (a model server, a random baseline, a scripted oracle)
offers the environment loop, and the spec strings that name one on the command line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from webrl.errors import UsageError
from webrl.policy.prompt import END_OF_TURN

if TYPE_CHECKING:
    from webrl.env.observation import Observation
    from webrl.tasks.model import Task


@dataclass(frozen=True)
class Sampling:
    """Decoding settings; the defaults are WebRL's evaluation settings (greedy, 2048 new tokens)."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 2048
    stop: tuple[str, ...] = (END_OF_TURN,)
    seed: int | None = None  # makes a sampled answer reproducible (a resumed rollout samples what it would have)


@dataclass
class PolicyInput:
    """One decision: the task, the agent's own past raw responses, and the current observation."""

    task: Task
    history: list[str]
    observation: Observation


@dataclass
class Response:
    text: str
    token_logprobs: list[float] | None = None
    meta: dict = field(default_factory=dict)  # e.g. token counts, latency


class Policy(Protocol):
    name: str

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]: ...


POLICY_FORMS = (
    "oracle                       run each task's scripted solution",
    "random[:SEED]                uniformly random valid actions over the page's element ids",
    ("openai:MODEL@BASE_URL        an OpenAI-compatible server (vLLM or an API); add ?chat for the chat "
     "form; key from $OPENAI_API_KEY"),
    ("vllm:MODEL_SPEC              a vLLM server webrl starts and stops itself (tiny, or an HF folder); "
     "needs scripts/install-vllm.sh"),
    ("hf:MODEL_SPEC                transformers in this process (tiny, smollm2-135m, ORG/NAME or an HF folder; "
     "see `webrl models list`)"),
)


def make_policy(spec: str, models_dir: Path | None = None) -> Policy:
    """Build a policy from its command-line spec (see POLICY_FORMS); model specs of hf:/vllm: are prepared in
    `models_dir` (default: `<state dir>/models` of the environment's configuration)."""
    kind, _, rest = spec.partition(":")
    if kind == "oracle" and not rest:
        from webrl.policy.oracle import OraclePolicy

        return OraclePolicy()
    if kind == "random" and (not rest or rest.isdigit()):
        from webrl.policy.random import RandomPolicy

        return RandomPolicy(int(rest or 0))
    if kind == "openai" and "@" in rest:
        from webrl.policy.openai import OpenAIPolicy

        model, _, url = rest.partition("@")
        url, _, option = url.partition("?")
        if model and url and option in ("", "chat", "completion"):
            return OpenAIPolicy(model=model, base_url=url, chat=option == "chat")
    if kind == "vllm" and rest:
        from webrl.policy.vllm import VLLMPolicy

        return VLLMPolicy(rest, models_dir)
    if kind == "hf" and rest:
        from webrl.policy.hf import HFPolicy

        return HFPolicy(rest, models_dir)
    forms = "\n  ".join(POLICY_FORMS)
    raise UsageError(f"unknown policy spec '{spec}'; valid forms:\n  {forms}")


@contextmanager
def serving(policy: Policy, starting: Callable[[], AbstractContextManager] = nullcontext) -> Iterator[Policy]:
    """Start a policy that runs its own model server (vllm:) before the first episode, inside `starting()` (a
    spinner), so that a failed start is one clear error rather than a policy error per episode; stop it
    afterwards, whatever happens."""
    try:
        if hasattr(policy, "start"):
            with starting():
                policy.start()
        yield policy
    finally:
        if hasattr(policy, "close"):
            policy.close()
