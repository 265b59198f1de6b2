"""The `Policy` protocol: what every agent (a model server, a random baseline, a scripted oracle) offers the
environment loop. The spec strings that name one on the command line are read in webrl.policy.factory."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

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
    episode: str | None = None  # "task:repeat": a server pool keeps an episode's requests on one server


@dataclass
class Response:
    text: str
    token_logprobs: list[float] | None = None
    meta: dict = field(default_factory=dict)  # e.g. token counts, latency

    def report(self) -> dict:
        """What an episode's step keeps of this answer: the meta, and the sampled tokens' log-probs where the
        policy gave them (an RL update's rollout policy log-probs, webrl.rl.update)."""
        return self.meta if self.token_logprobs is None else {**self.meta, "token_logprobs": self.token_logprobs}


class Policy(Protocol):
    """An agent. The policies subclass it for `start` and `close`, which do nothing unless the policy runs its own
    model server (vllm:): callers call both on every policy."""

    name: str

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]: ...

    def start(self) -> object:
        """Get ready before the first episode (start a model server), so that a failed start is one error."""

    def close(self) -> None:
        """Let go of what `start` (or a first `act`) started."""
