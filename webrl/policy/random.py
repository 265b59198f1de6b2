"""A random baseline: uniformly random valid actions over the current page's element ids. Its final answer
is a random word of the page, so it gets an answer right only by chance (never "N/A" for free: a policy that
always gives up would pass every unachievable task)."""

from __future__ import annotations

import json
import random
import re

from webrl.policy.base import Policy, PolicyInput, Response, Sampling

WORDS = ("test", "order", "shoes", "2023", "review", "blue")


class RandomPolicy(Policy):
    def __init__(self, seed: int = 0):
        self.name = f"random:{seed}"
        self.rng = random.Random(seed)

    def act(self, inputs: list[PolicyInput], sampling: Sampling) -> list[Response]:
        return [Response(self._one(x)) for x in inputs]

    def _one(self, x: PolicyInput) -> str:
        ids = x.observation.ids
        choices = ["scroll", "back", "exit"] + (["click", "click", "click", "type"] if ids else [])
        match self.rng.choice(choices):
            case "click":
                return f'do(action="Click", element="{self.rng.choice(ids)}")'
            case "type":
                return f'do(action="Type", argument="{self.rng.choice(WORDS)}", element="{self.rng.choice(ids)}")'
            case "scroll":
                return f'do(action="{self.rng.choice(["Scroll Down", "Scroll Up"])}")'
            case "back":
                return 'do(action="Go Backward")'
            case _:
                words = re.findall(r"[A-Za-z0-9$.,]+", x.observation.text) or list(WORDS)
                return f"exit(message={json.dumps(self.rng.choice(words))})"
